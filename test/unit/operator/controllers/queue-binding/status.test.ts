import type { QueueBindingStatus } from '../../../../../api/queue-binding.js';
import { QUEUE_LIMIT_DEFAULTS, resolveQueueLimits } from '../../../../../api/queue-limits.js';
import {
  computeQueueBindingStatus,
  type QueueBindingObservation,
} from '../../../../../operator/controllers/queue-binding/status.js';

const healthy: QueueBindingObservation = {
  generation: 3,
  queueUrl: 'https://q.example/queue/ns/db',
  envSecret: 'db-vqueue',
  signingKeys: { currentGeneration: 0, nextGeneration: 1 },
  limits: resolveQueueLimits({ maxQueues: 3 }, QUEUE_LIMIT_DEFAULTS),
  passwordProblem: undefined,
  database: { reachable: true, server: { engine: 'valkey', version: '8.0.1' } },
  declaredEngine: 'valkey',
};
const t1 = '2030-01-01T00:00:00.000Z';
const t2 = '2030-01-01T00:05:00.000Z';
const conditionsOf = (status: QueueBindingStatus) =>
  Object.fromEntries((status.conditions ?? []).map((c) => [c.type, c]));

describe('QueueBinding status', () => {
  it('when the env Secret is written and the database answers, then Ready and DatabaseReachable are True', () => {
    const status = computeQueueBindingStatus(undefined, healthy, t1);
    expect(status).toMatchObject({
      queueUrl: healthy.queueUrl,
      envSecret: 'db-vqueue',
      observedGeneration: 3,
      signingKeys: { currentGeneration: 0, nextGeneration: 1 },
      limits: { maxQueues: 3, maxSchedules: 10, maxDelay: '7d' },
      server: { engine: 'valkey', version: '8.0.1' },
    });
    expect(conditionsOf(status)).toEqual({
      Ready: expect.objectContaining({
        status: 'True',
        reason: 'QueueReady',
        lastTransitionTime: t1,
        observedGeneration: 3,
      }),
      DatabaseReachable: expect.objectContaining({
        status: 'True',
        reason: 'Reachable',
        lastTransitionTime: t1,
      }),
    });
  });

  it('when the server is another engine than spec.engine says, then DatabaseReachable says both', () => {
    const status = computeQueueBindingStatus(
      undefined,
      { ...healthy, database: { reachable: true, server: { engine: 'redis', version: '7.0.15' } } },
      t1,
    );
    expect(status.server).toEqual({ engine: 'redis', version: '7.0.15' });
    expect(conditionsOf(status).DatabaseReachable!.message).toBe(
      'connected and authenticated (redis 7.0.15, though spec.engine says valkey)',
    );
  });

  it('when the database cannot be reached, then status.server keeps what the last check found', () => {
    const before = computeQueueBindingStatus(undefined, healthy, t1);
    const status = computeQueueBindingStatus(
      before,
      { ...healthy, database: { reachable: false, reason: 'Unreachable', message: 'refused' } },
      t2,
    );
    expect(status.server).toEqual({ engine: 'valkey', version: '8.0.1' });
  });

  it('when the database refuses the password, then DatabaseReachable is False with AuthenticationFailed and Ready False', () => {
    const status = computeQueueBindingStatus(
      undefined,
      { ...healthy, database: { reachable: false, reason: 'AuthenticationFailed', message: 'refused' } },
      t1,
    );
    expect(conditionsOf(status).DatabaseReachable).toMatchObject({
      status: 'False',
      reason: 'AuthenticationFailed',
    });
    expect(conditionsOf(status).Ready).toMatchObject({ status: 'False', reason: 'DatabaseNotReachable' });
  });

  it('when the password Secret is missing, then both conditions say so and the database is not judged', () => {
    const status = computeQueueBindingStatus(
      undefined,
      {
        ...healthy,
        envSecret: undefined,
        database: undefined,
        passwordProblem: { reason: 'PasswordSecretMissing', message: 'Secret db-auth does not exist' },
      },
      t1,
    );
    expect(conditionsOf(status).DatabaseReachable).toMatchObject({
      status: 'False',
      reason: 'PasswordSecretMissing',
    });
    expect(conditionsOf(status).Ready).toMatchObject({ status: 'False', reason: 'PasswordSecretMissing' });
    expect(status.envSecret).toBeUndefined();
  });

  it('when no master secret is configured, then Ready is False with SigningSecretMissing', () => {
    const status = computeQueueBindingStatus(
      undefined,
      { ...healthy, signingKeys: undefined, envSecret: undefined },
      t1,
    );
    expect(conditionsOf(status).Ready).toMatchObject({ status: 'False', reason: 'SigningSecretMissing' });
  });

  it("when a condition's status is unchanged, then its lastTransitionTime is kept; when it changes, it moves", () => {
    const first = computeQueueBindingStatus(undefined, healthy, t1);
    const same = computeQueueBindingStatus(first, healthy, t2);
    expect(conditionsOf(same).Ready?.lastTransitionTime).toBe(t1);
    const down = computeQueueBindingStatus(
      same,
      { ...healthy, database: { reachable: false, reason: 'Unreachable', message: 'ECONNREFUSED' } },
      t2,
    );
    expect(conditionsOf(down).DatabaseReachable).toMatchObject({ status: 'False', lastTransitionTime: t2 });
  });
});
