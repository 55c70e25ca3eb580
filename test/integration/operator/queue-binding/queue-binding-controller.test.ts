import { execFileSync } from 'node:child_process';
import { CoreV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { DATABASE_SERVER_BINS, startRedis, type RedisServer } from '../../../../local/redis-server.js';
import { getFreePort } from '../../../../local/ports.js';
import { waitFor } from '../../../../local/wait.js';
import { buildQStashFormatToken } from '../../../../api/qstash-token.js';
import {
  deriveSigningKey,
  SIGNING_KEY_PATTERN,
} from '../../../../operator/resources/queue-binding/signing-keys.js';
import type { RunningOperator } from '../../../../operator/operator.js';
import { testControlPlane, useTestNamespace } from '../../../helpers/kube.js';
import {
  conditionOf,
  createBinding,
  createPasswordSecret,
  eventsFor,
  mergePatchBinding,
  readQueueEnv,
  replacePasswordSecret,
  requestRotation,
  startQueueBindingOperator,
  TEST_MASTER_SECRET,
  waitForBinding,
  waitForEventReasons,
  waitForQueueEnv,
} from '../../../helpers/queue/queue-binding-harness.js';

/**
 * The QueueBinding controller against the real API server, with a real redis-server on loopback
 * (and a valkey-server for the engine the operator detects).
 */
describe('the QueueBinding controller', () => {
  const ns = useTestNamespace('queue-binding');
  let operator: RunningOperator;
  let redis: RedisServer;
  let valkey: RedisServer;

  beforeAll(async () => {
    [redis, valkey] = await Promise.all([
      startRedis({ bin: DATABASE_SERVER_BINS.redis }),
      startRedis({ bin: DATABASE_SERVER_BINS.valkey }),
    ]);
    operator = await startQueueBindingOperator({
      namespace: ns.name,
      env: { SETTEE_QUEUE_MAX_SCHEDULES: '7', SETTEE_QUEUE_MAX_URL_GROUPS: '3' },
    });
  });
  afterAll(async () => {
    await operator?.stop();
    await Promise.all([redis?.stop(), valkey?.stop()]);
  });

  const spec = (secret: string, port = redis.port) => ({
    engine: 'valkey' as const,
    connection: { host: '127.0.0.1', port, passwordSecretRef: { name: secret, key: 'password' } },
  });
  /** `kubectl get qb <name>`: its header and row, printer columns included. */
  const kubectlGetBinding = (name: string): string => {
    const plane = testControlPlane();
    return execFileSync(plane.kubectl, [
      '--kubeconfig',
      plane.kubeconfigPath,
      '-n',
      ns.name,
      'get',
      'qb',
      name,
    ]).toString();
  };
  const keyOf = (uid: string, generation: number) =>
    deriveSigningKey({ masterSecret: TEST_MASTER_SECRET, bindingUid: uid, generation });

  it('when a binding is applied, then its env Secret has exactly the four keys with matching values, and it is Ready', async () => {
    await createPasswordSecret(ns.name, 'cache-auth', redis.password);
    const created = await createBinding(ns.name, 'cache', spec('cache-auth'));
    const ready = await waitForBinding(
      ns.name,
      'cache',
      'Ready',
      (b) => conditionOf(b, 'Ready')?.status === 'True',
    );
    const env = await readQueueEnv(ns.name, 'cache');
    expect(env).toEqual({
      VQUEUE_URL: `http://127.0.0.1:8080/queue/${ns.name}/cache`,
      VQUEUE_TOKEN: redis.password,
      VQUEUE_QSTASH_TOKEN: buildQStashFormatToken(`${ns.name}.cache`, redis.password),
      VQUEUE_CURRENT_SIGNING_KEY: keyOf(created.metadata.uid ?? '', 0),
      VQUEUE_NEXT_SIGNING_KEY: keyOf(created.metadata.uid ?? '', 1),
    });
    expect(env?.VQUEUE_CURRENT_SIGNING_KEY).toMatch(SIGNING_KEY_PATTERN);
    expect(env?.VQUEUE_NEXT_SIGNING_KEY).toMatch(SIGNING_KEY_PATTERN);
    expect(ready.status).toMatchObject({
      queueUrl: env?.VQUEUE_URL,
      envSecret: 'cache-vqueue',
      observedGeneration: created.metadata.generation,
      signingKeys: { currentGeneration: 0, nextGeneration: 1 },
    });
    // The server is Redis, whatever spec.engine says: the status tells both.
    expect(ready.status?.server).toEqual({
      engine: 'redis',
      version: expect.stringMatching(/^\d+\.\d+\.\d+$/),
    });
    expect(conditionOf(ready, 'DatabaseReachable')).toMatchObject({
      status: 'True',
      reason: 'Reachable',
      message: expect.stringContaining('though spec.engine says valkey'),
    });
    // Recorded after the status write seen above.
    await waitForEventReasons(ns.name, 'cache', ['EnvSecretCreated', 'DatabaseReachable']);
  });

  it('when a binding points at a Valkey server, then status.server says valkey at its valkey_version and kubectl shows it', async () => {
    await createPasswordSecret(ns.name, 'kv-auth', valkey.password);
    await createBinding(ns.name, 'kv', spec('kv-auth', valkey.port));
    const ready = await waitForBinding(
      ns.name,
      'kv',
      'Ready',
      (b) => conditionOf(b, 'Ready')?.status === 'True',
    );
    const server = ready.status?.server;
    expect(server).toEqual({ engine: 'valkey', version: expect.stringMatching(/^\d+\.\d+\.\d+$/) });
    // Valkey 8 answers redis_version 7.2.4 beside its own version.
    expect(server?.version).not.toBe('7.2.4');
    expect(conditionOf(ready, 'DatabaseReachable')?.message).toBe(
      `connected and authenticated (valkey ${server?.version})`,
    );
    const out = kubectlGetBinding('kv');
    const [, row = ''] = out.trim().split('\n');
    expect(row.split(/\s{2,}/).slice(0, 4)).toEqual(['kv', 'valkey', 'valkey', server?.version]);
  });

  it('when kubectl lists bindings, then the Engine, Server, Version, Queue URL and Ready columns show', async () => {
    await waitForBinding(ns.name, 'cache', 'Ready', (b) => conditionOf(b, 'Ready')?.status === 'True');
    const plane = testControlPlane();
    const out = kubectlGetBinding('cache');
    const [header = '', row = ''] = out.trim().split('\n');
    expect(header.split(/\s{2,}/)).toEqual([
      'NAME',
      'ENGINE',
      'SERVER',
      'VERSION',
      'QUEUE URL',
      'READY',
      'AGE',
    ]);
    expect(row).toMatch(
      new RegExp(
        `^cache\\s+valkey\\s+redis\\s+[\\d.]+\\s+http://127\\.0\\.0\\.1:8080/queue/${ns.name}/cache\\s+True`,
      ),
    );
    const explained = execFileSync(plane.kubectl, [
      '--kubeconfig',
      plane.kubeconfigPath,
      'explain',
      'queuebinding.spec.connection.passwordSecretRef',
    ]).toString();
    expect(explained).toMatch(/queue token \(VQUEUE_TOKEN\)/);
    const keys = execFileSync(plane.kubectl, [
      '--kubeconfig',
      plane.kubeconfigPath,
      'explain',
      'queuebinding.status.signingKeys.nextGeneration',
    ]).toString();
    expect(keys).toMatch(/VQUEUE_NEXT_SIGNING_KEY\), always\s+currentGeneration \+ 1/);
    const secret = execFileSync(plane.kubectl, [
      '--kubeconfig',
      plane.kubeconfigPath,
      'explain',
      'queuebinding.status.envSecret',
    ]).toString();
    expect(secret.replace(/\s+/g, ' ')).toMatch(/VQUEUE_QSTASH_TOKEN \(the same token in QStash's format/);
  });

  it('when a rotation is requested, then the next key becomes current and a new next key is published, in one step', async () => {
    await createPasswordSecret(ns.name, 'rotating-auth', redis.password);
    const created = await createBinding(ns.name, 'rotating', spec('rotating-auth'));
    const uid = created.metadata.uid ?? '';
    await waitForQueueEnv(
      ns.name,
      'rotating',
      'written',
      (env) => env.VQUEUE_CURRENT_SIGNING_KEY === keyOf(uid, 0),
    );
    await requestRotation(ns.name, 'rotating', '2030-01-01T00:00:00Z');
    const rotated = await waitForQueueEnv(
      ns.name,
      'rotating',
      'rotated',
      (env) => env.VQUEUE_CURRENT_SIGNING_KEY !== keyOf(uid, 0),
    );
    expect(rotated.VQUEUE_CURRENT_SIGNING_KEY).toBe(keyOf(uid, 1));
    expect(rotated.VQUEUE_NEXT_SIGNING_KEY).toBe(keyOf(uid, 2));
    const binding = await waitForBinding(
      ns.name,
      'rotating',
      'generation 1',
      (b) => b.status?.signingKeys?.currentGeneration === 1,
    );
    expect(binding.status?.signingKeys).toEqual({
      currentGeneration: 1,
      nextGeneration: 2,
      rotationRequest: '2030-01-01T00:00:00Z',
    });
    // The reconciler records its Events after the status write the wait above saw.
    const rotatedEvent = await waitFor(
      'the rotation Event',
      async () => (await eventsFor(ns.name, 'rotating')).find((e) => e.reason === 'SigningKeyRotated'),
      { timeoutMs: 10_000, intervalMs: 100 },
    );
    expect(rotatedEvent.message).toMatch(
      /signed with signing key generation 1 .*VQUEUE_NEXT_SIGNING_KEY is generation 2/,
    );

    // The same request value seen again by later passes does not rotate again.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect((await readQueueEnv(ns.name, 'rotating'))?.VQUEUE_CURRENT_SIGNING_KEY).toBe(keyOf(uid, 1));
  });

  it("when a binding leaves limits out, then status.limits has the operator's defaults; a spec.limits value, set or changed later, wins", async () => {
    await createPasswordSecret(ns.name, 'limited-auth', redis.password);
    await createBinding(ns.name, 'limited', {
      ...spec('limited-auth'),
      limits: { maxUrlGroups: 5, maxDelay: '1d' },
    });
    const first = await waitForBinding(ns.name, 'limited', 'limits published', (b) => !!b.status?.limits);
    expect(first.status?.limits).toEqual({
      maxDelay: '1d',
      maxTimeout: '15m',
      deduplicationWindow: '10m',
      deadLetterRetention: '7d',
      maxDeadLetters: 10_000,
      eventRetention: '3d',
      maxEvents: 100_000,
      workflowRunRetention: '3d',
      maxWorkflowRuns: 10_000,
      maxWorkflowSteps: 1_000,
      maxWorkflowContextBytes: 104_857_600,
      maxQueues: 10,
      maxQueueParallelism: 100,
      // SETTEE_QUEUE_MAX_SCHEDULES on the operator; spec.limits.maxUrlGroups over its default of 3.
      maxSchedules: 7,
      maxUrlGroups: 5,
      maxUrlGroupEndpoints: 100,
      // No plan: no rate limits (they come from spec.plan or spec.limits only).
      maxMessagesPerDay: 0,
      maxRequestsPerSecond: 0,
    });
    await mergePatchBinding(ns.name, 'limited', {
      spec: { limits: { maxSchedules: 2, maxUrlGroups: null } },
    });
    const changed = await waitForBinding(
      ns.name,
      'limited',
      'changed limits published',
      (b) => b.status?.limits?.maxSchedules === 2,
    );
    expect(changed.status?.limits).toMatchObject({ maxSchedules: 2, maxUrlGroups: 3, maxDelay: '1d' });
    expect(changed.status?.observedGeneration).toBe(changed.metadata.generation);
    // spec.plan: paid takes the paid row of the plan table where spec.limits is silent.
    await mergePatchBinding(ns.name, 'limited', { spec: { plan: 'paid' } });
    const paid = await waitForBinding(
      ns.name,
      'limited',
      'paid limits published',
      (b) => b.status?.limits?.maxTimeout === '2h',
    );
    expect(paid.status?.limits).toMatchObject({
      maxTimeout: '2h',
      maxQueues: 100,
      maxUrlGroups: 100,
      maxSchedules: 2,
      maxDelay: '1d',
    });
    await expect(mergePatchBinding(ns.name, 'limited', { spec: { plan: 'gold' } })).rejects.toThrow(
      /Unsupported value|422/,
    );
    const plane = testControlPlane();
    const explained = execFileSync(plane.kubectl, [
      '--kubeconfig',
      plane.kubeconfigPath,
      'explain',
      'queuebinding.status.limits',
    ]).toString();
    expect(explained).toMatch(/as\s+the\s+gateway\s+enforces\s+it/);
  });

  it('when the password is wrong, then DatabaseReachable is False (AuthenticationFailed); once corrected, it turns True', async () => {
    await createPasswordSecret(ns.name, 'wrong-auth', 'not-the-password');
    await createBinding(ns.name, 'wrong', spec('wrong-auth'));
    const refused = await waitForBinding(
      ns.name,
      'wrong',
      'refused',
      (b) => conditionOf(b, 'DatabaseReachable')?.status === 'False',
    );
    expect(conditionOf(refused, 'DatabaseReachable')).toMatchObject({ reason: 'AuthenticationFailed' });
    expect(conditionOf(refused, 'Ready')).toMatchObject({ status: 'False', reason: 'DatabaseNotReachable' });
    await waitForEventReasons(ns.name, 'wrong', ['DatabaseUnreachable']);
    await replacePasswordSecret(ns.name, 'wrong-auth', redis.password);
    await waitForBinding(
      ns.name,
      'wrong',
      'Ready after the fix',
      (b) => conditionOf(b, 'Ready')?.status === 'True',
    );
    const fixed = await readQueueEnv(ns.name, 'wrong');
    expect(fixed?.VQUEUE_TOKEN).toBe(redis.password);
    // The QStash-format token follows the password: it wraps the new one.
    expect(fixed?.VQUEUE_QSTASH_TOKEN).toBe(buildQStashFormatToken(`${ns.name}.wrong`, redis.password));
  });

  it('when nothing listens at the address, then DatabaseReachable is False with Unreachable', async () => {
    await createPasswordSecret(ns.name, 'nowhere-auth', 'x');
    await createBinding(ns.name, 'nowhere', spec('nowhere-auth', await getFreePort()));
    const binding = await waitForBinding(
      ns.name,
      'nowhere',
      'unreachable',
      (b) => conditionOf(b, 'DatabaseReachable')?.status === 'False',
    );
    expect(conditionOf(binding, 'DatabaseReachable')).toMatchObject({
      reason: 'Unreachable',
      message: expect.stringMatching(/ECONNREFUSED/),
    });
  });

  it('when the password Secret is missing, then the binding says so and gets no env Secret; once created, it is Ready', async () => {
    await createBinding(ns.name, 'early', spec('early-auth'));
    const waiting = await waitForBinding(
      ns.name,
      'early',
      'password missing',
      (b) => conditionOf(b, 'Ready')?.reason === 'PasswordSecretMissing',
    );
    expect(conditionOf(waiting, 'DatabaseReachable')).toMatchObject({
      status: 'False',
      reason: 'PasswordSecretMissing',
    });
    expect(await readQueueEnv(ns.name, 'early')).toBeUndefined();
    await createPasswordSecret(ns.name, 'early-auth', redis.password);
    await waitForBinding(ns.name, 'early', 'Ready', (b) => conditionOf(b, 'Ready')?.status === 'True');
  });

  it('when a binding names another engine, then the API server rejects it with its message', async () => {
    await expect(
      createBinding(ns.name, 'memcached', { ...spec('cache-auth'), engine: 'memcached' }),
    ).rejects.toMatchObject({
      code: 422,
      body: expect.stringContaining(
        'spec.engine: Unsupported value: \\"memcached\\": supported values: \\"valkey\\", \\"redis\\"',
      ),
    });
  });

  it('when the env Secret is edited by hand, then it is written back', async () => {
    const before = await waitForQueueEnv(ns.name, 'cache', 'present', () => true);
    const core = testControlPlane().kubeConfig.makeApiClient(CoreV1Api);
    await core.patchNamespacedSecret(
      {
        name: 'cache-vqueue',
        namespace: ns.name,
        body: { data: { VQUEUE_TOKEN: Buffer.from('tampered').toString('base64') } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    await waitForQueueEnv(ns.name, 'cache', 'restored', (env) => env.VQUEUE_TOKEN === before.VQUEUE_TOKEN);
  });
});
