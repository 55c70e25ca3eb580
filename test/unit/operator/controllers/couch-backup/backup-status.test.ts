import type { CouchBackup, CouchBackupPhase, CouchBackupTrigger } from '../../../../../api/couch-backup.js';
import type { CouchInstance } from '../../../../../api/couch-instance.js';
import { decideHibernatedRun } from '../../../../../operator/controllers/couch-backup/backup-status.js';

const instance = (hibernatedAt?: string): CouchInstance => ({
  apiVersion: 'settee.dev/v1alpha1',
  kind: 'CouchInstance',
  metadata: { name: 'shop', namespace: 'team' },
  spec: { plan: 'paid' },
  status: hibernatedAt ? { phase: 'Hibernated', hibernatedAt } : { phase: 'Running' },
});
const backup = (
  trigger: CouchBackupTrigger,
  phase?: CouchBackupPhase,
  completedAt?: string,
): CouchBackup => ({
  apiVersion: 'settee.dev/v1alpha1',
  kind: 'CouchBackup',
  metadata: { name: `b-${trigger}-${completedAt ?? 'new'}` },
  spec: { instance: 'shop', trigger },
  status: { ...(phase ? { phase } : {}), ...(completedAt ? { completedAt } : {}) },
});

describe('decideHibernatedRun', () => {
  it('when the instance is awake, then the backup runs', () => {
    expect(decideHibernatedRun(backup('Scheduled'), instance(), [])).toEqual({ action: 'run' });
  });

  it('when a scheduled run finds it hibernated after a completed backup, then it is skipped as unchanged', () => {
    const others = [backup('Hibernation', 'Completed', '2026-01-01T10:00:00Z')];
    expect(decideHibernatedRun(backup('Scheduled'), instance('2026-01-01T10:00:01Z'), others)).toEqual({
      action: 'skip',
      message: 'skipped: unchanged since the last backup',
    });
  });

  it('when the final backup before hibernation failed after the last good one, then the skip says the data changed', () => {
    const others = [
      backup('Scheduled', 'Completed', '2026-01-01T03:00:00Z'),
      backup('Hibernation', 'Failed', '2026-01-01T10:00:00Z'),
    ];
    const decision = decideHibernatedRun(backup('Scheduled'), instance('2026-01-01T10:00:01Z'), others);
    expect(decision).toMatchObject({ action: 'skip' });
    expect(decision.action === 'skip' && decision.message).toMatch(/final backup before hibernation failed/);
  });

  it('when a manual backup finds it hibernated, then it waits rather than wake it', () => {
    expect(decideHibernatedRun(backup('Manual'), instance('2026-01-01T10:00:01Z'), [])).toMatchObject({
      action: 'wait',
    });
  });
});
