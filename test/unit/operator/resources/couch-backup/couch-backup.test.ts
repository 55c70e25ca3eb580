import type { CouchInstance } from '../../../../../api/couch-instance.js';
import {
  buildCouchBackup,
  couchBackupName,
} from '../../../../../operator/resources/couch-backup/couch-backup.js';

const instance: CouchInstance = {
  apiVersion: 'settee.dev/v1alpha1',
  kind: 'CouchInstance',
  metadata: { name: 'shop', namespace: 'team', uid: 'uid-1' },
  spec: { plan: 'paid', addons: { backups: { schedule: '0 3 * * *' } } },
};

describe('buildCouchBackup', () => {
  it('when a scheduled run is due, then the backup is named after its cron time, labelled, annotated and owned by the instance', () => {
    const backup = buildCouchBackup({
      instance,
      trigger: 'Scheduled',
      time: new Date('2026-01-24T03:00:00Z'),
    });
    expect(backup).toEqual({
      apiVersion: 'settee.dev/v1alpha1',
      kind: 'CouchBackup',
      metadata: {
        name: 'shop-sched-20260124t030000z',
        namespace: 'team',
        labels: { 'settee.dev/instance': 'shop', 'settee.dev/backup-trigger': 'Scheduled' },
        annotations: { 'settee.dev/scheduled-for': '2026-01-24T03:00:00.000Z' },
        ownerReferences: [
          {
            apiVersion: 'settee.dev/v1alpha1',
            kind: 'CouchInstance',
            name: 'shop',
            uid: 'uid-1',
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
      },
      spec: { instance: 'shop', trigger: 'Scheduled' },
    });
  });

  it('when the final backup before hibernation is built, then it says final and carries no schedule annotation', () => {
    const backup = buildCouchBackup({
      instance,
      trigger: 'Hibernation',
      time: new Date('2026-01-24T10:11:12.345Z'),
    });
    expect(backup.metadata.name).toBe('shop-final-20260124t101112z');
    expect(backup.metadata.annotations).toEqual({});
  });

  it('when the instance name is very long, then the name stays within 253 characters and two long names stay apart', () => {
    const time = new Date('2026-01-24T03:00:00Z');
    const a = couchBackupName(`${'a'.repeat(250)}x`, 'Scheduled', time);
    const b = couchBackupName(`${'a'.repeat(250)}y`, 'Scheduled', time);
    expect(a.length).toBeLessThanOrEqual(253);
    expect(a).not.toBe(b);
  });
});
