import type { Condition } from '../../../../../api/conditions.js';
import type { HibernationDecision } from '../../../../../operator/controllers/couch-instance/hibernation.js';
import {
  computeStatus,
  type StatusInput,
} from '../../../../../operator/controllers/couch-instance/status.js';

const NOW = '2026-01-01T12:00:00.000Z';
const awake: HibernationDecision = { replicas: 1, reason: 'RecentActivity', recheckAfterMs: 1000 };
const asleep: HibernationDecision = {
  replicas: 0,
  reason: 'Hibernated',
  hibernatedAt: '2026-01-01T11:00:00.000Z',
};

const input = (overrides: Partial<StatusInput>): StatusInput => ({
  previous: undefined,
  generation: 3,
  now: NOW,
  endpoint: 'http://127.0.0.1:8080/db/ns/orders',
  credentialsSecret: 'orders-admin',
  specViolations: [],
  idleAfter: '10s',
  ...overrides,
});

const condition = (conditions: Condition[] | undefined, type: string) =>
  conditions?.find((c) => c.type === type);

describe('computeStatus', () => {
  it('when the StatefulSet has a ready replica, then the phase is Running and Ready, Active are True', () => {
    const status = computeStatus(input({ decision: awake, statefulSet: { replicas: 1, readyReplicas: 1 } }));
    expect(status).toMatchObject({
      phase: 'Running',
      endpoint: 'http://127.0.0.1:8080/db/ns/orders',
      credentialsSecret: 'orders-admin',
      readyReplicas: 1,
      observedGeneration: 3,
    });
    expect(condition(status.conditions, 'Ready')).toMatchObject({
      status: 'True',
      reason: 'Running',
      observedGeneration: 3,
    });
    expect(condition(status.conditions, 'Active')).toMatchObject({ status: 'True' });
    expect(condition(status.conditions, 'Progressing')).toMatchObject({ status: 'False' });
    expect(condition(status.conditions, 'Degraded')).toMatchObject({ status: 'False', reason: 'AsExpected' });
  });

  it('when replication jobs keep it awake, then Active is True with the reason ReplicationRunning', () => {
    const replicating: HibernationDecision = { ...awake, reason: 'ReplicationRunning' };
    const status = computeStatus(
      input({ decision: replicating, statefulSet: { replicas: 1, readyReplicas: 1 } }),
    );
    expect(status.phase).toBe('Running');
    expect(condition(status.conditions, 'Active')).toMatchObject({
      status: 'True',
      reason: 'ReplicationRunning',
      message: expect.stringContaining('replication jobs'),
    });
  });

  it('when first scaled up and not yet ready, then the phase is Starting', () => {
    expect(
      computeStatus(input({ decision: awake, statefulSet: { replicas: 0, readyReplicas: 0 } })).phase,
    ).toBe('Starting');
  });

  it('when its pod is ready but its system databases are not there yet, then the phase is Starting and Ready says why', () => {
    const missing = 'CouchDB answers, but its system databases do not: _users does not exist yet';
    const status = computeStatus(
      input({
        decision: awake,
        statefulSet: { replicas: 1, readyReplicas: 1 },
        systemDatabasesMissing: missing,
      }),
    );
    expect(status.phase).toBe('Starting');
    expect(condition(status.conditions, 'Ready')).toMatchObject({ status: 'False', message: missing });
  });

  it('when scaled up after hibernation and not yet ready, then the phase is Waking', () => {
    const woken: HibernationDecision = { ...awake, reason: 'WakeRequested', transition: 'Wake' };
    expect(
      computeStatus(input({ decision: woken, statefulSet: { replicas: 0, readyReplicas: 0 } })).phase,
    ).toBe('Waking');
    const later = computeStatus(
      input({
        previous: { phase: 'Waking' },
        decision: awake,
        statefulSet: { replicas: 1, readyReplicas: 0 },
      }),
    );
    expect(later.phase).toBe('Waking');
  });

  it('when hibernated, then Active is False, which is not Degraded, and hibernatedAt is kept', () => {
    const status = computeStatus(input({ decision: asleep, statefulSet: { replicas: 0, readyReplicas: 0 } }));
    expect(status.phase).toBe('Hibernated');
    expect(status.hibernatedAt).toBe('2026-01-01T11:00:00.000Z');
    expect(condition(status.conditions, 'Active')).toMatchObject({ status: 'False', reason: 'Hibernated' });
    expect(condition(status.conditions, 'Ready')).toMatchObject({ status: 'False', reason: 'Hibernated' });
    expect(condition(status.conditions, 'Degraded')).toMatchObject({ status: 'False' });
  });

  it('when scaled to zero while the pod still answers, then the phase is Hibernating', () => {
    expect(
      computeStatus(input({ decision: asleep, statefulSet: { replicas: 1, readyReplicas: 1 } })).phase,
    ).toBe('Hibernating');
  });

  it('when the StatefulSet does not exist yet, then the phase is Pending', () => {
    expect(computeStatus(input({ decision: awake })).phase).toBe('Pending');
  });

  it('when the spec is invalid, then the phase is Failed and Degraded carries every violation', () => {
    const status = computeStatus(input({ specViolations: ['keepAlive requires plan: paid', 'bad version'] }));
    expect(status.phase).toBe('Failed');
    expect(condition(status.conditions, 'Degraded')).toMatchObject({
      status: 'True',
      reason: 'InvalidSpec',
      message: 'keepAlive requires plan: paid; bad version',
    });
  });

  it('when a reconcile failed, then the last phase is kept and Degraded says why', () => {
    const status = computeStatus(input({ previous: { phase: 'Running' }, reconcileError: 'apply refused' }));
    expect(status.phase).toBe('Running');
    expect(condition(status.conditions, 'Degraded')).toMatchObject({
      status: 'True',
      reason: 'ReconcileFailed',
      message: 'apply refused',
    });
  });

  describe('usage', () => {
    const measuredBefore = { storageBytes: 100, databases: 1, measuredAt: '2026-01-01T11:59:00.000Z' };
    const running = { decision: awake, statefulSet: { replicas: 1, readyReplicas: 1 } };

    it('when a measurement succeeded, then status.usage holds it and UsageMeasured is True', () => {
      const usage = { storageBytes: 2048, databases: 3, measuredAt: NOW };
      const status = computeStatus(
        input({ ...running, previous: { usage: measuredBefore }, usage: { result: 'measured', usage } }),
      );
      expect(status.usage).toEqual(usage);
      expect(condition(status.conditions, 'UsageMeasured')).toMatchObject({
        status: 'True',
        reason: 'Measured',
        message: '2048 bytes in 3 databases',
      });
    });

    it('when a measurement failed, then the last usage is kept and UsageMeasured is False with the error', () => {
      const status = computeStatus(
        input({
          ...running,
          previous: { usage: measuredBefore },
          usage: { result: 'failed', error: 'http://10.0.0.1:5984/_all_dbs answered 500' },
        }),
      );
      expect(status.usage).toEqual(measuredBefore);
      expect(condition(status.conditions, 'UsageMeasured')).toMatchObject({
        status: 'False',
        reason: 'MeasurementFailed',
        message: expect.stringContaining('answered 500; status.usage keeps the last measurement') as unknown,
      });
    });

    it('when nothing was measured (hibernated, not due, or an invalid spec), then usage and its condition stay as they were', () => {
      const previousCondition: Condition = {
        type: 'UsageMeasured',
        status: 'True',
        reason: 'Measured',
        message: '100 bytes in 1 databases',
        lastTransitionTime: '2026-01-01T11:59:00.000Z',
      };
      const previous = { usage: measuredBefore, conditions: [previousCondition] };
      for (const status of [
        computeStatus(input({ decision: asleep, statefulSet: { replicas: 0, readyReplicas: 0 }, previous })),
        computeStatus(input({ previous, specViolations: ['keepAlive requires plan: paid'] })),
      ]) {
        expect(status.usage).toEqual(measuredBefore);
        expect(condition(status.conditions, 'UsageMeasured')).toEqual(previousCondition);
      }
    });
  });

  it('when the namespace has no room for another free instance, then the phase is Pending, Ready is False and Degraded says why with InstanceLimitExceeded', () => {
    const message = 'namespace ns already has 5 free instances, the free limit is 5: delete one';
    const status = computeStatus(input({ instanceLimit: message }));
    expect(status.phase).toBe('Pending');
    expect(condition(status.conditions, 'Degraded')).toMatchObject({
      status: 'True',
      reason: 'InstanceLimitExceeded',
      message,
    });
    expect(condition(status.conditions, 'Ready')).toMatchObject({
      status: 'False',
      reason: 'InstanceLimitExceeded',
    });
    expect(condition(status.conditions, 'Progressing')).toMatchObject({ status: 'False' });
  });
});
