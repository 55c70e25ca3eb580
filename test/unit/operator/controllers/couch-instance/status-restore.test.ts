import type { Condition } from '../../../../../api/conditions.js';
import type { HibernationDecision } from '../../../../../operator/controllers/couch-instance/hibernation.js';
import {
  computeStatus,
  type StatusInput,
} from '../../../../../operator/controllers/couch-instance/status.js';

const awake: HibernationDecision = { replicas: 1, reason: 'RecentActivity', recheckAfterMs: 1000 };
const input = (overrides: Partial<StatusInput>): StatusInput => ({
  previous: undefined,
  generation: 1,
  now: '2026-01-01T12:00:00.000Z',
  endpoint: 'http://127.0.0.1:8080/db/ns/copy',
  credentialsSecret: 'copy-admin',
  specViolations: [],
  idleAfter: '15m',
  decision: awake,
  statefulSet: { replicas: 1, readyReplicas: 1 },
  ...overrides,
});
const condition = (conditions: Condition[] | undefined, type: string) =>
  conditions?.find((c) => c.type === type);

describe('computeStatus with spec.restore', () => {
  it('when CouchDB answers but the restore is still running, then the phase is Restoring and Ready is False', () => {
    const status = computeStatus(input({ restore: { backup: 'b1', phase: 'Restoring' } }));
    expect(status.phase).toBe('Restoring');
    expect(status.restore).toEqual({ backup: 'b1', phase: 'Restoring' });
    expect(condition(status.conditions, 'Ready')).toMatchObject({ status: 'False', reason: 'Restoring' });
    expect(condition(status.conditions, 'Progressing')).toMatchObject({
      status: 'True',
      reason: 'Restoring',
    });
  });

  it('when the restore completed, then the phase is Running and the restore stays recorded', () => {
    const restore = { backup: 'b1', phase: 'Completed' as const, databases: 3, documents: 10 };
    const status = computeStatus(input({ restore }));
    expect(status.phase).toBe('Running');
    expect(computeStatus(input({ previous: status })).restore).toEqual(restore);
  });

  it('when the restore failed, then the phase is Failed, and Ready and Degraded say RestoreFailed with the reason', () => {
    const status = computeStatus(
      input({ restore: { backup: 'gone', phase: 'Failed', message: 'CouchBackup gone not found' } }),
    );
    expect(status.phase).toBe('Failed');
    expect(condition(status.conditions, 'Ready')).toMatchObject({ status: 'False', reason: 'RestoreFailed' });
    expect(condition(status.conditions, 'Degraded')).toMatchObject({
      status: 'True',
      reason: 'RestoreFailed',
      message: 'the restore from gone failed: CouchBackup gone not found',
    });
  });

  it('when a failed try waits to be retried, then the phase stays Restoring and Degraded says RestoreRetrying with why', () => {
    const restore = {
      backup: 'b1',
      phase: 'Restoring' as const,
      attempts: 1,
      nextAttemptAt: '2026-01-01T12:00:15.000Z',
      message: 'attempt 1 failed: bucket unreachable; retrying in 15s',
    };
    const status = computeStatus(input({ restore }));
    expect(status.phase).toBe('Restoring');
    expect(condition(status.conditions, 'Degraded')).toMatchObject({
      status: 'True',
      reason: 'RestoreRetrying',
      message: 'the restore from b1: attempt 1 failed: bucket unreachable; retrying in 15s',
    });
    expect(condition(status.conditions, 'Ready')?.message).toContain('retrying in 15s');
  });

  it('when no backup could be chosen, then the failure names no backup', () => {
    const status = computeStatus(
      input({ restore: { phase: 'Failed', message: 'no Completed CouchBackup of instance shop' } }),
    );
    expect(condition(status.conditions, 'Degraded')?.message).toBe(
      'the restore failed: no Completed CouchBackup of instance shop',
    );
  });
});
