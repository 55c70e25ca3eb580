import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client, Receiver } from '@upstash/qstash';
import { startRedis, type RedisServer } from '../../../local/redis-server.js';
import { waitFor } from '../../../local/wait.js';
import type { QueueEnv } from '../../../api/queue-binding.js';
import { createSilentLogger } from '../../../observability/logger.js';
import type { RunningOperator } from '../../../operator/operator.js';
import { createQueueService, type QueueService } from '../../../gateway/queue/index.js';
import { testControlPlane, useTestNamespace } from '../../helpers/kube.js';
import { testQueueConfig } from '../../helpers/queue/queue-config.js';
import {
  conditionOf,
  createBinding,
  createPasswordSecret,
  readQueueEnv,
  requestRotation,
  startQueueBindingOperator,
  waitForBinding,
  waitForQueueEnv,
} from '../../helpers/queue/queue-binding-harness.js';
import {
  startRecordingDestination,
  type RecordingDestination,
} from '../../helpers/queue/recording-destination.js';
import { closeServer } from '../../helpers/queue/test-receiver.js';

/**
 * The whole queue on the real control plane: the operator writes a binding's env Secret, the
 * gateway's queue service learns the binding from its informers, and an application publishes
 * with nothing but the four VQUEUE_* values and the unchanged SDK, and verifies what arrives.
 */
describe('a QueueBinding, from kubectl apply to a verified delivery', () => {
  const ns = useTestNamespace('queue-e2e');
  let redis: RedisServer;
  let destination: RecordingDestination;
  let queue: QueueService;
  let server: http.Server;
  let operator: RunningOperator;

  beforeAll(async () => {
    redis = await startRedis();
    destination = await startRecordingDestination();
    queue = createQueueService({
      kubeConfig: testControlPlane().kubeConfig,
      config: testQueueConfig(),
      logger: createSilentLogger(),
      namespace: ns.name,
    });
    server = http.createServer(queue.handler);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    await queue.start();
    operator = await startQueueBindingOperator({
      namespace: ns.name,
      env: {
        SETTEE_QUEUE_BASE_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        SETTEE_SIGNING_KEY_ROTATION_GRACE: '2s',
      },
    });
  });
  afterAll(async () => {
    await operator?.stop();
    await queue?.stop();
    if (server) await closeServer(server);
    await destination?.close();
    await redis?.stop();
  });

  async function publishAndVerify(
    env: QueueEnv,
    path: string,
  ): Promise<{ signature: string; body: string; url: string }> {
    const client = new Client({
      baseUrl: env.VQUEUE_URL,
      token: env.VQUEUE_TOKEN,
      retry: false,
      enableTelemetry: false,
    });
    const { messageId } = await client.publishJSON({ url: `${destination.baseUrl}${path}`, body: { path } });
    const delivery = await waitFor('the delivery', async () => destination.attemptsOf(messageId)[0], {
      timeoutMs: 10_000,
      intervalMs: 20,
    });
    const received = {
      signature: String(delivery.headers['upstash-signature']),
      body: delivery.body.toString('utf8'),
      url: `${destination.baseUrl}${path}`,
    };
    const receiver = new Receiver({
      currentSigningKey: env.VQUEUE_CURRENT_SIGNING_KEY,
      nextSigningKey: env.VQUEUE_NEXT_SIGNING_KEY || env.VQUEUE_CURRENT_SIGNING_KEY,
    });
    await expect(receiver.verify(received)).resolves.toBe(true);
    return received;
  }

  it('when a binding is applied, then publishing with its env values delivers, signed with its current key; after a rotation, with the new one', async () => {
    await createPasswordSecret(ns.name, 'db-auth', redis.password);
    await createBinding(ns.name, 'db', {
      engine: 'redis',
      connection: {
        host: redis.host,
        port: redis.port,
        passwordSecretRef: { name: 'db-auth', key: 'password' },
      },
    });
    await waitForBinding(ns.name, 'db', 'Ready', (b) => conditionOf(b, 'Ready')?.status === 'True');
    const env = await waitForQueueEnv(ns.name, 'db', 'written', () => true);
    await waitFor('the gateway to serve the binding', async () => queue.registry.get(ns.name, 'db'), {
      timeoutMs: 10_000,
    });
    const before = await publishAndVerify(env, '/before-rotation');

    await requestRotation(ns.name, 'db', 'rotate-1');
    const pending = await waitForQueueEnv(
      ns.name,
      'db',
      'next key published',
      (e) => e.VQUEUE_NEXT_SIGNING_KEY !== '',
    );
    // While the rotation is pending, deliveries are still signed with the current key.
    await publishAndVerify(pending, '/during-rotation');
    const rotated = await waitForQueueEnv(
      ns.name,
      'db',
      'next key promoted',
      (e) => e.VQUEUE_NEXT_SIGNING_KEY === '',
    );
    expect(rotated.VQUEUE_CURRENT_SIGNING_KEY).toBe(pending.VQUEUE_NEXT_SIGNING_KEY);
    await waitFor(
      'the gateway to sign with the new key',
      async () =>
        queue.registry.get(ns.name, 'db')?.signingKey === rotated.VQUEUE_CURRENT_SIGNING_KEY
          ? true
          : undefined,
      { timeoutMs: 10_000 },
    );
    const after = await publishAndVerify(rotated, '/after-rotation');

    // Receivers that never updated their keys no longer accept new deliveries; ones holding the
    // pending pair accept both sides of the rotation.
    const stale = new Receiver({
      currentSigningKey: env.VQUEUE_CURRENT_SIGNING_KEY,
      nextSigningKey: env.VQUEUE_CURRENT_SIGNING_KEY,
    });
    await expect(stale.verify(after)).rejects.toThrow();
    const holdingPair = new Receiver({
      currentSigningKey: pending.VQUEUE_CURRENT_SIGNING_KEY,
      nextSigningKey: pending.VQUEUE_NEXT_SIGNING_KEY,
    });
    await expect(holdingPair.verify(before)).resolves.toBe(true);
    await expect(holdingPair.verify(after)).resolves.toBe(true);
  });

  it("when POST /v2/keys/rotate is called, then it answers the operator's new keys, and deliveries on both sides of the rotation verify with them", async () => {
    await createBinding(ns.name, 'keys', {
      engine: 'redis',
      connection: {
        host: redis.host,
        port: redis.port,
        // Its own database: the other binding's worker must not take (and sign) these messages.
        db: 1,
        passwordSecretRef: { name: 'db-auth', key: 'password' },
      },
    });
    const env = await waitForQueueEnv(ns.name, 'keys', 'written', () => true);
    await waitFor('the gateway to serve the binding', async () => queue.registry.get(ns.name, 'keys'), {
      timeoutMs: 10_000,
    });
    const call = (path: string, method: string, token = env.VQUEUE_TOKEN) =>
      fetch(`${env.VQUEUE_URL}${path}`, { method, headers: { authorization: `Bearer ${token}` } });

    const keys = await call('/v2/keys', 'GET');
    expect(keys.status).toBe(200);
    expect(await keys.json()).toEqual({ current: env.VQUEUE_CURRENT_SIGNING_KEY, next: '' });
    expect((await call('/v2/keys', 'GET', 'not-the-token')).status).toBe(401);
    expect((await call('/v2/keys/rotate', 'POST', 'not-the-token')).status).toBe(401);
    expect((await call('/v2/keys', 'DELETE')).status).toBe(405);

    const rotate = await call('/v2/keys/rotate', 'POST');
    expect(rotate.status).toBe(200);
    const answered = (await rotate.json()) as { current: string; next: string };
    expect(answered.current).toBe(env.VQUEUE_CURRENT_SIGNING_KEY);
    expect(answered.next).toMatch(/^sig_/);
    expect(answered.next).not.toBe(answered.current);
    const pending = await readQueueEnv(ns.name, 'keys');
    expect(pending?.VQUEUE_NEXT_SIGNING_KEY).toBe(answered.next);
    const again = await call('/v2/keys/rotate', 'POST');
    expect(again.status).toBe(409);
    expect(((await again.json()) as { error: string }).error).toMatch(/already pending/);

    const during = await publishAndVerify({ ...env, VQUEUE_NEXT_SIGNING_KEY: answered.next }, '/keys/during');
    const promoted = await waitFor(
      'the operator to promote the next key',
      async () => {
        const target = queue.registry.get(ns.name, 'keys');
        return target?.signingKey === answered.next ? target : undefined;
      },
      { timeoutMs: 15_000 },
    );
    expect(promoted.nextSigningKey).toBe('');
    const now = await call('/v2/keys', 'GET');
    expect(await now.json()).toEqual({ current: answered.next, next: '' });
    const after = await publishAndVerify(
      { ...env, VQUEUE_CURRENT_SIGNING_KEY: answered.next, VQUEUE_NEXT_SIGNING_KEY: '' },
      '/keys/after',
    );
    const holdingAnswer = new Receiver({
      currentSigningKey: answered.current,
      nextSigningKey: answered.next,
    });
    await expect(holdingAnswer.verify(during)).resolves.toBe(true);
    await expect(holdingAnswer.verify(after)).resolves.toBe(true);
  });
});
