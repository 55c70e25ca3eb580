import type { V1Secret } from '@kubernetes/client-node';
import type { QueueBinding } from '../../../../api/queue-binding.js';
import { buildQueueTarget } from '../../../../gateway/queue/bindings/queue-target.js';

const binding: QueueBinding = {
  apiVersion: 'settee.dev/v1alpha1',
  kind: 'QueueBinding',
  metadata: { name: 'cache', namespace: 'ns' },
  spec: {
    engine: 'redis',
    connection: { host: 'redis.ns.svc', passwordSecretRef: { name: 'auth', key: 'password' } },
  },
  status: { envSecret: 'cache-vqueue' },
};
const b64 = (text: string) => Buffer.from(text).toString('base64');
const envSecret = (data: Record<string, string>, owner = 'cache'): V1Secret => ({
  metadata: { name: 'cache-vqueue', namespace: 'ns', labels: { 'settee.dev/queue-binding': owner } },
  data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, b64(v)])),
});

describe('the gateway view of a binding', () => {
  it('when the binding and its env Secret exist, then the target has the token, the current key and the defaulted connection', () => {
    const target = buildQueueTarget(
      binding,
      envSecret({
        VQUEUE_TOKEN: 'pw',
        VQUEUE_CURRENT_SIGNING_KEY: 'sig_a',
        VQUEUE_NEXT_SIGNING_KEY: 'sig_b',
      }),
    );
    expect(target).toEqual({
      key: 'ns/cache',
      namespace: 'ns',
      name: 'cache',
      token: 'pw',
      signingKey: 'sig_a',
      nextSigningKey: 'sig_b',
      signingKeyRotation: '',
      requestedSigningKeyRotation: '',
      connection: { host: 'redis.ns.svc', port: 6379, tls: false, db: 0 },
      limits: {
        maxDelayMs: 7 * 86_400_000,
        maxTimeoutMs: 15 * 60_000,
        deduplicationWindowMs: 600_000,
        deadLetterRetentionMs: 7 * 86_400_000,
        eventRetentionMs: 3 * 86_400_000,
        maxEvents: 100_000,
        workflowRunRetentionMs: 3 * 86_400_000,
        maxWorkflowRuns: 10_000,
        maxWorkflowSteps: 1_000,
        maxWorkflowContextBytes: 104_857_600,
        maxMessagesPerDay: 0,
        maxRequestsPerSecond: 0,
        // QStash's free plan figures: what an operator with default settings publishes.
        maxDeadLetters: 10_000,
        maxQueues: 10,
        maxQueueParallelism: 100,
        maxSchedules: 10,
        maxUrlGroups: 1,
        maxUrlGroupEndpoints: 100,
      },
    });
  });

  it('when status.limits is published, then the target enforces it, not spec.limits nor the built-in defaults', () => {
    const secret = envSecret({ VQUEUE_TOKEN: 'pw', VQUEUE_CURRENT_SIGNING_KEY: 'sig_a' });
    const published = {
      ...binding,
      spec: { ...binding.spec, limits: { maxQueues: 99 } },
      status: {
        ...binding.status,
        limits: {
          maxDelay: '1d',
          maxTimeout: '90s',
          deduplicationWindow: '10m',
          deadLetterRetention: '7d',
          maxDeadLetters: 20,
          eventRetention: '3d',
          maxEvents: 1_000,
          workflowRunRetention: '12h',
          maxWorkflowRuns: 500,
          maxWorkflowSteps: 50,
          maxWorkflowContextBytes: 4096,
          maxQueues: 2,
          maxQueueParallelism: 3,
          maxSchedules: 4,
          maxUrlGroups: 5,
          maxUrlGroupEndpoints: 6,
          maxMessagesPerDay: 7,
          maxRequestsPerSecond: 8,
        },
      },
    };
    expect(buildQueueTarget(published, secret)?.limits).toEqual({
      maxDelayMs: 86_400_000,
      maxTimeoutMs: 90_000,
      deduplicationWindowMs: 600_000,
      deadLetterRetentionMs: 7 * 86_400_000,
      maxDeadLetters: 20,
      eventRetentionMs: 3 * 86_400_000,
      maxEvents: 1_000,
      workflowRunRetentionMs: 12 * 3_600_000,
      maxWorkflowRuns: 500,
      maxWorkflowSteps: 50,
      maxWorkflowContextBytes: 4096,
      maxQueues: 2,
      maxQueueParallelism: 3,
      maxSchedules: 4,
      maxUrlGroups: 5,
      maxUrlGroupEndpoints: 6,
      maxMessagesPerDay: 7,
      maxRequestsPerSecond: 8,
    });
  });

  it('when status.limits is not published yet (an older operator), then spec.limits over the built-in defaults apply, durations in milliseconds', () => {
    const secret = envSecret({ VQUEUE_TOKEN: 'pw', VQUEUE_CURRENT_SIGNING_KEY: 'sig_a' });
    const limitedBinding = {
      ...binding,
      spec: {
        ...binding.spec,
        limits: {
          maxDelay: '36h',
          deduplicationWindow: '1h30m',
          deadLetterRetention: '1d',
          maxDeadLetters: 50,
          workflowRunRetention: '2d',
          maxWorkflowSteps: 30,
          maxQueues: 3,
          maxQueueParallelism: 7,
          maxSchedules: 4,
          maxUrlGroups: 5,
          maxUrlGroupEndpoints: 6,
        },
      },
    };
    expect(buildQueueTarget(limitedBinding, secret)?.limits).toEqual({
      maxDelayMs: 129_600_000,
      maxTimeoutMs: 15 * 60_000,
      deduplicationWindowMs: 5_400_000,
      deadLetterRetentionMs: 86_400_000,
      maxDeadLetters: 50,
      eventRetentionMs: 3 * 86_400_000,
      maxEvents: 100_000,
      workflowRunRetentionMs: 2 * 86_400_000,
      maxWorkflowRuns: 10_000,
      maxWorkflowSteps: 30,
      maxWorkflowContextBytes: 104_857_600,
      maxMessagesPerDay: 0,
      maxRequestsPerSecond: 0,
      maxQueues: 3,
      maxQueueParallelism: 7,
      maxSchedules: 4,
      maxUrlGroups: 5,
      maxUrlGroupEndpoints: 6,
    });
  });

  it('when the env Secret is missing, belongs to another binding, or lacks the token or key, then there is no target', () => {
    expect(buildQueueTarget(binding, undefined)).toBeUndefined();
    expect(
      buildQueueTarget(
        binding,
        envSecret({ VQUEUE_TOKEN: 'pw', VQUEUE_CURRENT_SIGNING_KEY: 'sig_a' }, 'other'),
      ),
    ).toBeUndefined();
    expect(buildQueueTarget(binding, envSecret({ VQUEUE_CURRENT_SIGNING_KEY: 'sig_a' }))).toBeUndefined();
    expect(
      buildQueueTarget(binding, envSecret({ VQUEUE_TOKEN: 'pw', VQUEUE_CURRENT_SIGNING_KEY: '' })),
    ).toBeUndefined();
  });
});
