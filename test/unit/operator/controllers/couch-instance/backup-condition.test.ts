import type { CouchBackup, CouchBackupPhase } from '../../../../../api/couch-backup.js';
import type { CouchInstance } from '../../../../../api/couch-instance.js';
import {
  backupConditionFor,
  computeBackupCondition,
} from '../../../../../operator/controllers/couch-instance/backup-condition.js';

const HOUR = 3_600_000;
const now = Date.parse('2026-01-10T12:00:00Z');
const backup = (name: string, phase: CouchBackupPhase, hoursAgo: number, message?: string): CouchBackup => ({
  apiVersion: 'settee.dev/v1alpha1',
  kind: 'CouchBackup',
  metadata: { name },
  spec: { instance: 'shop' },
  status: {
    phase,
    completedAt: new Date(now - hoursAgo * HOUR).toISOString(),
    ...(message ? { message } : {}),
  },
});

describe('computeBackupCondition', () => {
  it('when the newest backup completed within the period, then BackedUp is True', () => {
    expect(
      computeBackupCondition({ backups: [backup('b1', 'Completed', 1)], periodMs: 24 * HOUR, now }),
    ).toMatchObject({
      type: 'BackedUp',
      status: 'True',
      reason: 'BackupCompleted',
    });
  });

  it('when the newest backup failed, then BackedUp is False with its message', () => {
    const condition = computeBackupCondition({
      backups: [backup('good', 'Completed', 5), backup('bad', 'Failed', 1, 'bucket unreachable')],
      periodMs: 24 * HOUR,
      now,
    });
    expect(condition).toMatchObject({ status: 'False', reason: 'BackupFailed' });
    expect(condition.message).toContain('bad, failed: bucket unreachable');
  });

  it('when the newest good backup is older than twice the period, then BackedUp is False (overdue)', () => {
    expect(
      computeBackupCondition({ backups: [backup('old', 'Completed', 49)], periodMs: 24 * HOUR, now }),
    ).toMatchObject({
      status: 'False',
      reason: 'BackupOverdue',
    });
  });

  it('when later scheduled runs were skipped as unchanged, then the old backup still counts as recent', () => {
    const backups = [
      backup('old', 'Completed', 72),
      backup('skip', 'Skipped', 2, 'skipped: unchanged since the last backup'),
    ];
    expect(computeBackupCondition({ backups, periodMs: 24 * HOUR, now })).toMatchObject({ status: 'True' });
  });

  it('when no backup completed yet, then BackedUp is Unknown', () => {
    expect(computeBackupCondition({ backups: [], periodMs: HOUR, now })).toMatchObject({
      status: 'Unknown',
      reason: 'NoBackupYet',
    });
  });
});

describe('backupConditionFor', () => {
  const instance = (spec: CouchInstance['spec']): CouchInstance => ({
    apiVersion: 'settee.dev/v1alpha1',
    kind: 'CouchInstance',
    metadata: { name: 'shop', namespace: 'team' },
    spec,
  });

  it('when the instance has no backups add-on, or a schedule cron-parser refuses, then there is no condition', () => {
    expect(
      backupConditionFor({ instance: instance({ plan: 'paid' }), backups: [], now: new Date(now) }),
    ).toBeUndefined();
    expect(
      backupConditionFor({
        instance: instance({ plan: 'paid', addons: { backups: { schedule: '99 * * * *' } } }),
        backups: [],
        now: new Date(now),
      }),
    ).toBeUndefined();
  });

  it("when another instance's backups are in the namespace, then only its own count", () => {
    const other = { ...backup('theirs', 'Completed', 1), spec: { instance: 'other' } };
    const condition = backupConditionFor({
      instance: instance({ plan: 'paid', addons: { backups: { schedule: '0 3 * * *' } } }),
      backups: [other],
      now: new Date(now),
    });
    expect(condition).toMatchObject({ status: 'Unknown' });
  });
});
