import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client, Receiver } from '@upstash/qstash';
import { Client as WorkflowClient } from '@upstash/workflow';
import { startRedis, type RedisServer } from '../../../local/redis-server.js';
import { waitFor } from '../../../local/wait.js';
import type { QueueBindingSpec, QueueEnv } from '../../../api/queue-binding.js';
import { createSilentLogger } from '../../../observability/logger.js';
import type { RunningOperator } from '../../../operator/operator.js';
import { createQueueService, type QueueService } from '../../../gateway/queue/index.js';
import { testControlPlane, useTestNamespace } from '../../helpers/kube.js';
import { testQueueConfig } from '../../helpers/queue/queue-config.js';
import {
  conditionOf,
  createBinding,
  createPasswordSecret,
  mergePatchBinding,
  readBinding,
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
import { randomSigningKey } from '../../helpers/queue/signing-keys.js';
import { closeServer } from '../../helpers/queue/test-receiver.js';
import { startWorkflowEndpoints } from '../../helpers/queue/workflow-endpoints.js';

/**
 * The whole queue on the real control plane: the operator writes a binding's env Secret, the
 * gateway's queue service learns the binding from its informers, and an application publishes
 * with nothing but the four VQUEUE_* values and the unchanged SDK, and verifies what arrives with
 * the SDK's Receiver given the two signing keys, and no QSTASH_* variables.
 */
describe('a QueueBinding, from kubectl apply to a verified delivery', () => {
  const ns = useTestNamespace('queue-e2e');
  let redis: RedisServer;
  let destination: RecordingDestination;
  let queue: QueueService;
  let server: http.Server;
  let operator: RunningOperator;

  /** The keys a receiver holds, as GET /v2/keys answers them or the env Secret has them. */
  type KeyPair = { current: string; next: string };
  const pairOf = (env: QueueEnv): KeyPair => ({
    current: env.VQUEUE_CURRENT_SIGNING_KEY,
    next: env.VQUEUE_NEXT_SIGNING_KEY,
  });
  const qstashEnv: Record<string, string | undefined> = {};

  beforeAll(async () => {
    // The SDK's Receiver falls back to QSTASH_* variables when a configured pair is unusable; with
    // none set, only the keys a test passes can verify.
    for (const name of Object.keys(process.env).filter((n) => n.startsWith('QSTASH_'))) {
      qstashEnv[name] = process.env[name];
      delete process.env[name];
    }
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
        // The operator's default, not the free plan's 10: the quota test below reaches it quickly.
        SETTEE_QUEUE_MAX_QUEUES: '2',
      },
    });
  });
  afterAll(async () => {
    await operator?.stop();
    await queue?.stop();
    if (server) await closeServer(server);
    await destination?.close();
    await redis?.stop();
    Object.assign(process.env, qstashEnv);
  });

  /** A binding's spec on the test Redis: database `db` (its default when none), password from Secret `secret`. */
  const redisBinding = (db?: number, secret = 'db-auth'): QueueBindingSpec => ({
    engine: 'redis',
    connection: {
      host: redis.host,
      port: redis.port,
      ...(db !== undefined && { db }),
      passwordSecretRef: { name: secret, key: 'password' },
    },
  });

  /** Publishes with the SDK and returns what the destination received, as a receiver checks it. */
  async function publish(
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
    return {
      signature: String(delivery.headers['upstash-signature']),
      body: delivery.body.toString('utf8'),
      url: `${destination.baseUrl}${path}`,
    };
  }

  function receiverHolding(keys: KeyPair): Receiver {
    return new Receiver({ currentSigningKey: keys.current, nextSigningKey: keys.next });
  }

  /** Whether `received` was signed with exactly `key`: a receiver whose other key is unrelated. */
  const signedWith = (key: string, received: { signature: string; body: string; url: string }) =>
    receiverHolding({ current: key, next: randomSigningKey() })
      .verify(received)
      .catch(() => false);

  it('when a binding is applied, then publishing with its env values delivers, signed with its current key; after a rotation by annotation, with the former next key', async () => {
    await createPasswordSecret(ns.name, 'db-auth', redis.password);
    await createBinding(ns.name, 'db', redisBinding());
    await waitForBinding(ns.name, 'db', 'Ready', (b) => conditionOf(b, 'Ready')?.status === 'True');
    const env = await waitForQueueEnv(ns.name, 'db', 'written', () => true);
    expect(env.VQUEUE_NEXT_SIGNING_KEY).toMatch(/^sig_/);
    expect(env.VQUEUE_NEXT_SIGNING_KEY).not.toBe(env.VQUEUE_CURRENT_SIGNING_KEY);
    await waitFor('the gateway to serve the binding', async () => queue.registry.get(ns.name, 'db'), {
      timeoutMs: 10_000,
    });
    const before = await publish(env, '/before-rotation');
    await expect(receiverHolding(pairOf(env)).verify(before)).resolves.toBe(true);
    expect(await signedWith(env.VQUEUE_CURRENT_SIGNING_KEY, before)).toBe(true);

    await requestRotation(ns.name, 'db', 'rotate-1');
    const rotated = await waitForQueueEnv(
      ns.name,
      'db',
      'rotated',
      (e) => e.VQUEUE_CURRENT_SIGNING_KEY !== env.VQUEUE_CURRENT_SIGNING_KEY,
    );
    expect(rotated.VQUEUE_CURRENT_SIGNING_KEY).toBe(env.VQUEUE_NEXT_SIGNING_KEY);
    await waitFor(
      'the gateway to sign with the new key',
      async () =>
        queue.registry.get(ns.name, 'db')?.signingKey === rotated.VQUEUE_CURRENT_SIGNING_KEY
          ? true
          : undefined,
      { timeoutMs: 10_000 },
    );
    const after = await publish(rotated, '/after-rotation');
    expect(await signedWith(rotated.VQUEUE_CURRENT_SIGNING_KEY, after)).toBe(true);
    // Receivers holding either pair verify the new deliveries; the old pair also verifies the old ones.
    await expect(receiverHolding(pairOf(env)).verify(after)).resolves.toBe(true);
    await expect(receiverHolding(pairOf(rotated)).verify(after)).resolves.toBe(true);
    await expect(receiverHolding(pairOf(env)).verify(before)).resolves.toBe(true);
    // The gateway's /metrics serves this registry: both deliveries counted by their outcome.
    const deliveries = await queue.metrics.getSingleMetricAsString('settee_queue_deliveries_total');
    expect(deliveries).toContain('settee_queue_deliveries_total{outcome="delivered"} 2');
  });

  it('when GET /v2/keys and POST /v2/keys/rotate are called, then the answered pairs verify real deliveries with the SDK Receiver, before and right after the rotation', async () => {
    // Its own database: the other binding's worker must not take (and sign) these messages.
    await createBinding(ns.name, 'keys', redisBinding(1));
    // Another tenant: its own binding and password, in another database.
    await createPasswordSecret(ns.name, 'other-auth', 'other-tenant-password');
    await createBinding(ns.name, 'other', redisBinding(2, 'other-auth'));
    const env = await waitForQueueEnv(ns.name, 'keys', 'written', () => true);
    const otherEnv = await waitForQueueEnv(ns.name, 'other', 'written', () => true);
    expect(otherEnv.VQUEUE_TOKEN).toBe('other-tenant-password');
    await waitFor('the gateway to serve the binding', async () => queue.registry.get(ns.name, 'keys'), {
      timeoutMs: 10_000,
    });
    // @upstash/qstash 2.12 has no call for GET /v2/keys or POST /v2/keys/rotate (no getSigningKeys
    // or rotateSigningKeys in its index.js): applications use HTTP, as here.
    const call = (path: string, method: string, token = env.VQUEUE_TOKEN) =>
      fetch(`${env.VQUEUE_URL}${path}`, { method, headers: { authorization: `Bearer ${token}` } });

    const keys = await call('/v2/keys', 'GET');
    expect(keys.status).toBe(200);
    const steady = (await keys.json()) as KeyPair;
    expect(steady).toEqual(pairOf(env));
    expect(steady.next).toMatch(/^sig_/);
    const steadyDelivery = await publish(env, '/keys/steady');
    await expect(receiverHolding(steady).verify(steadyDelivery)).resolves.toBe(true);

    expect((await call('/v2/keys', 'GET', otherEnv.VQUEUE_TOKEN)).status).toBe(401);
    expect((await call('/v2/keys/rotate', 'POST', otherEnv.VQUEUE_TOKEN)).status).toBe(401);
    expect((await call('/v2/keys', 'DELETE')).status).toBe(405);
    expect(queue.registry.get(ns.name, 'keys')?.signingKey).toBe(steady.current);

    const rotate = await call('/v2/keys/rotate', 'POST');
    expect(rotate.status).toBe(200);
    const answered = (await rotate.json()) as KeyPair;
    // QStash's rotation: the next key becomes current, and a new next key is made.
    expect(answered.current).toBe(steady.next);
    expect(answered.next).toMatch(/^sig_/);
    expect([steady.current, steady.next]).not.toContain(answered.next);
    expect(pairOf(await readQueueEnv(ns.name, 'keys').then((e) => e as QueueEnv))).toEqual(answered);
    expect(await (await call('/v2/keys', 'GET')).json()).toEqual(answered);

    // Right after the answer, this gateway already signs with the new current key.
    const afterDelivery = await publish(env, '/keys/after');
    expect(await signedWith(answered.current, afterDelivery)).toBe(true);
    await expect(receiverHolding(answered).verify(afterDelivery)).resolves.toBe(true);
    // A receiver still holding the pre-rotation pair verifies it with its next key.
    await expect(receiverHolding(steady).verify(afterDelivery)).resolves.toBe(true);
  });

  it('when an attempt signed just before a rotation reaches a receiver already holding the new pair, then that receiver refuses it and the retry, signed with the new key, verifies', async () => {
    const env = await waitForQueueEnv(ns.name, 'keys', 'written', () => true);
    const call = (path: string, method: string) =>
      fetch(`${env.VQUEUE_URL}${path}`, { method, headers: { authorization: `Bearer ${env.VQUEUE_TOKEN}` } });
    const held = (await (await call('/v2/keys', 'GET')).json()) as KeyPair;
    // The first attempt is held at the destination while the keys rotate, then refused as a
    // receiver that already switched to the new pair refuses it.
    let rotatedPair: KeyPair | undefined;
    destination.answer = (request) =>
      request.path === '/keys/in-flight' &&
      destination.requests.filter((r) => r.path === request.path).length === 1
        ? { status: 403, delayMs: 500 }
        : { status: 200 };
    try {
      const client = new Client({
        baseUrl: env.VQUEUE_URL,
        token: env.VQUEUE_TOKEN,
        retry: false,
        enableTelemetry: false,
      });
      const { messageId } = await client.publishJSON({
        url: `${destination.baseUrl}/keys/in-flight`,
        body: { in: 'flight' },
        retries: 1,
        retryDelay: '50',
      });
      await waitFor('the first attempt', async () => destination.attemptsOf(messageId)[0], {
        timeoutMs: 10_000,
        intervalMs: 10,
      });
      const rotate = await call('/v2/keys/rotate', 'POST');
      expect(rotate.status).toBe(200);
      rotatedPair = (await rotate.json()) as KeyPair;
      const attempts = await waitFor(
        'the retry',
        async () =>
          destination.attemptsOf(messageId).length >= 2 ? destination.attemptsOf(messageId) : undefined,
        { timeoutMs: 10_000, intervalMs: 20 },
      );
      const received = (attempt: (typeof attempts)[number]) => ({
        signature: String(attempt.headers['upstash-signature']),
        body: attempt.body.toString('utf8'),
        url: `${destination.baseUrl}/keys/in-flight`,
      });
      const [first, retry] = [received(attempts[0]!), received(attempts[1]!)];
      // The pre-rotation pair verifies both attempts; the new pair only the retry.
      await expect(receiverHolding(held).verify(first)).resolves.toBe(true);
      await expect(receiverHolding(held).verify(retry)).resolves.toBe(true);
      await expect(receiverHolding(rotatedPair).verify(first)).rejects.toThrow();
      await expect(receiverHolding(rotatedPair).verify(retry)).resolves.toBe(true);
    } finally {
      destination.answer = () => ({ status: 200 });
    }
  });

  it("when the operator publishes a binding's limits, then the gateway enforces status.limits: the operator's default, then a spec.limits override", async () => {
    await createBinding(ns.name, 'quota', redisBinding(3));
    const published = await waitForBinding(ns.name, 'quota', 'limits', (b) => !!b.status?.limits);
    expect(published.status?.limits?.maxQueues).toBe(2);
    const env = await waitForQueueEnv(ns.name, 'quota', 'written', () => true);
    await waitFor('the gateway to serve the binding', async () => queue.registry.get(ns.name, 'quota'), {
      timeoutMs: 10_000,
    });
    const client = new Client({
      baseUrl: env.VQUEUE_URL,
      token: env.VQUEUE_TOKEN,
      retry: false,
      enableTelemetry: false,
    });
    await client.queue({ queueName: 'one' }).upsert({ parallelism: 1 });
    await client.queue({ queueName: 'two' }).upsert({ parallelism: 1 });
    await expect(client.queue({ queueName: 'three' }).upsert({ parallelism: 1 })).rejects.toThrow(
      /queue limit reached: the binding has its most queues \(2, QueueBinding spec.limits.maxQueues\)/,
    );

    await mergePatchBinding(ns.name, 'quota', { spec: { limits: { maxQueues: 3 } } });
    await waitFor(
      'the gateway to take the published limit',
      async () => (queue.registry.get(ns.name, 'quota')?.limits.maxQueues === 3 ? true : undefined),
      { timeoutMs: 10_000 },
    );
    expect((await readBinding(ns.name, 'quota')).status?.limits?.maxQueues).toBe(3);
    await client.queue({ queueName: 'three' }).upsert({ parallelism: 1 });
    await expect(client.queue({ queueName: 'four' }).upsert({ parallelism: 1 })).rejects.toThrow(
      /queue limit reached: the binding has its most queues \(3,/,
    );
    expect((await client.queue().list()).map((q) => q.name).sort()).toEqual(['one', 'three', 'two']);
  });

  it("when the workflow SDK is given the env Secret's VQUEUE_QSTASH_TOKEN unchanged, then context.createWebhook builds the binding's webhook URL and a call to it resumes the run", async () => {
    await createBinding(ns.name, 'flows', redisBinding(4));
    const env = await waitForQueueEnv(ns.name, 'flows', 'written', () => true);
    const target = await waitFor(
      'the gateway to serve the binding',
      async () => queue.registry.get(ns.name, 'flows'),
      {
        timeoutMs: 10_000,
      },
    );
    const hooks = new Map<string, string>();
    const received = new Map<string, string>();
    const endpoints = await startWorkflowEndpoints({
      target,
      queueUrl: env.VQUEUE_URL,
      qstashToken: env.VQUEUE_QSTASH_TOKEN,
      workflows: {
        hooked: {
          route: async (context) => {
            const webhook = await context.createWebhook('create');
            await context.run('hand out', () => hooks.set(context.workflowRunId, webhook.webhookUrl));
            const called = await context.waitForWebhook('wait', webhook, '60s');
            const body = called.timeout ? 'timed out' : await called.request!.text();
            await context.run('record', () => received.set(context.workflowRunId, body));
          },
        },
      },
    });
    try {
      const client = new WorkflowClient({ baseUrl: env.VQUEUE_URL, token: env.VQUEUE_QSTASH_TOKEN });
      const { workflowRunId } = await client.trigger({ url: endpoints.expressUrl('hooked'), body: {} });
      const hook = await waitFor('the webhook URL', async () => hooks.get(workflowRunId), {
        timeoutMs: 20_000,
      });
      expect(hook).toMatch(
        new RegExp(
          `^${env.VQUEUE_URL}/v2/workflows/hooks/${ns.name}\\.flows/${workflowRunId}/evt_[A-Za-z0-9_-]+$`,
        ),
      );
      // An outside system, without a token; a call before the wait is kept for it.
      const called = await fetch(hook, { method: 'POST', body: 'shipped' });
      expect(called.status).toBe(200);
      expect(
        await waitFor('the run resumed', async () => received.get(workflowRunId), { timeoutMs: 20_000 }),
      ).toBe('shipped');
      const logs = await waitFor(
        'the run to end',
        async () => {
          const [run] = (await client.logs({ workflowRunId })).runs;
          return run?.workflowState === 'RUN_STARTED' ? undefined : run;
        },
        { timeoutMs: 20_000 },
      );
      expect(logs.workflowState).toBe('RUN_SUCCESS');
    } finally {
      await endpoints.close();
    }
  }, 90_000);
});
