import type { CouchBackup, CouchBackupPhase } from '../../../../../api/couch-backup.js';
import { selectBackupsToDelete } from '../../../../../operator/controllers/couch-backup/retention.js';

const backup = (name: string, phase: CouchBackupPhase | undefined, completedAt?: string): CouchBackup => ({
  apiVersion: 'settee.dev/v1alpha1',
  kind: 'CouchBackup',
  metadata: { name, creationTimestamp: new Date(completedAt ?? '2026-01-01T00:00:00Z') },
  spec: { instance: 'shop' },
  status: { ...(phase ? { phase } : {}), ...(completedAt ? { completedAt } : {}) },
});
const names = (backups: CouchBackup[]) => backups.map((b) => b.metadata.name).sort();

describe('selectBackupsToDelete', () => {
  it('when more completed backups exist than retain, then the oldest beyond retain are chosen', () => {
    const all = [
      backup('d1', 'Completed', '2026-01-01T03:00:00Z'),
      backup('d3', 'Completed', '2026-01-03T03:00:00Z'),
      backup('d2', 'Completed', '2026-01-02T03:00:00Z'),
      backup('d4', 'Completed', '2026-01-04T03:00:00Z'),
    ];
    expect(names(selectBackupsToDelete(all, 2))).toEqual(['d1', 'd2']);
  });

  it('when the newest backups failed, then no completed backup is deleted for them', () => {
    const all = [
      backup('good1', 'Completed', '2026-01-01T03:00:00Z'),
      backup('good2', 'Completed', '2026-01-02T03:00:00Z'),
      backup('bad3', 'Failed', '2026-01-03T03:00:00Z'),
      backup('bad4', 'Failed', '2026-01-04T03:00:00Z'),
    ];
    expect(selectBackupsToDelete(all, 2)).toEqual([]);
  });

  it('when failed or skipped records are older than the oldest kept backup, or beyond retain of them, then they go too', () => {
    const all = [
      backup('old-fail', 'Failed', '2026-01-01T01:00:00Z'),
      backup('good2', 'Completed', '2026-01-02T03:00:00Z'),
      backup('skip3', 'Skipped', '2026-01-03T03:00:00Z'),
      backup('skip4', 'Skipped', '2026-01-04T03:00:00Z'),
      backup('good5', 'Completed', '2026-01-05T03:00:00Z'),
      backup('skip6', 'Skipped', '2026-01-06T03:00:00Z'),
    ];
    expect(names(selectBackupsToDelete(all, 2))).toEqual(['old-fail', 'skip3']);
  });

  it('when a backup is pending or running, then it is never chosen', () => {
    const all = [
      backup('running', 'Running'),
      backup('new', undefined),
      backup('good', 'Completed', '2026-01-05T03:00:00Z'),
    ];
    expect(selectBackupsToDelete(all, 1)).toEqual([]);
  });
});
