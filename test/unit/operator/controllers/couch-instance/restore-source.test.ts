import type { CouchBackup, CouchBackupPhase } from '../../../../../api/couch-backup.js';
import {
  chooseBucketBackup,
  decideRestoreSource,
  restoresFromBucket,
} from '../../../../../operator/controllers/couch-instance/restore-source.js';

const backup = (
  name: string,
  instance: string,
  phase: CouchBackupPhase,
  completedAt?: string,
): CouchBackup => ({
  apiVersion: 'settee.dev/v1alpha1',
  kind: 'CouchBackup',
  metadata: { name, namespace: 'tenant' },
  spec: { instance },
  status: { phase, ...(completedAt ? { completedAt } : {}) },
});

const backups = [
  backup('shop-1', 'shop', 'Completed', '2026-11-20T03:00:40Z'),
  backup('shop-2', 'shop', 'Completed', '2026-11-21T03:00:40Z'),
  backup('shop-3', 'shop', 'Failed', '2026-11-22T03:00:40Z'),
  backup('shop-4', 'shop', 'Running'),
  backup('blog-1', 'blog', 'Completed', '2026-11-23T03:00:40Z'),
];
const decide = (source: { backup?: string; instance?: string; before?: string }, pinned?: string) =>
  decideRestoreSource({ source, pinned, backups, namespace: 'tenant', self: 'copy' });
const chosen = (decision: ReturnType<typeof decide>) =>
  decision.action === 'restore' ? decision.backup.metadata.name : decision;

describe('decideRestoreSource', () => {
  it('when spec.restore names a Completed backup, then that one is restored', () => {
    expect(chosen(decide({ backup: 'shop-1' }))).toBe('shop-1');
  });

  it('when the named backup is Pending or Running, then the restore waits; Failed or missing, then it fails naming why', () => {
    expect(decide({ backup: 'shop-4' })).toEqual({
      action: 'wait',
      backup: 'shop-4',
      message: 'waiting for CouchBackup shop-4 to complete (Running)',
    });
    expect(decide({ backup: 'shop-3' })).toEqual({
      action: 'fail',
      backup: 'shop-3',
      message: 'CouchBackup shop-3 is Failed, not Completed',
    });
    expect(decide({ backup: 'nope' })).toEqual({
      action: 'fail',
      backup: 'nope',
      message: 'CouchBackup nope not found in namespace tenant',
    });
  });

  it("when spec.restore names an instance, then its newest Completed backup is chosen, never another instance's or a Failed one", () => {
    expect(chosen(decide({ instance: 'shop' }))).toBe('shop-2');
    expect(chosen(decide({ instance: 'blog' }))).toBe('blog-1');
  });

  it('when spec.restore names an instance and a time, then the newest backup completed at or before it is chosen', () => {
    expect(chosen(decide({ instance: 'shop', before: '2026-11-21T00:00:00Z' }))).toBe('shop-1');
    expect(chosen(decide({ instance: 'shop', before: '2026-11-21T03:00:40Z' }))).toBe('shop-2');
    expect(decide({ instance: 'shop', before: '2026-11-01T00:00:00Z' })).toEqual({
      action: 'fail',
      message:
        'no Completed CouchBackup of instance shop in namespace tenant completed at or before 2026-11-01T00:00:00Z',
    });
    expect(decide({ instance: 'nobody' })).toMatchObject({ action: 'fail' });
  });

  it('when an earlier reconcile pinned its choice, then a newer backup does not change it', () => {
    expect(chosen(decide({ instance: 'shop' }, 'shop-1'))).toBe('shop-1');
  });

  it('when spec.restore names the instance itself, then it fails', () => {
    expect(
      decideRestoreSource({
        source: { instance: 'copy' },
        pinned: undefined,
        backups,
        namespace: 'tenant',
        self: 'copy',
      }),
    ).toMatchObject({ action: 'fail', message: expect.stringContaining('this instance itself') });
  });
});

describe('restoresFromBucket', () => {
  const asks = (instance: string | undefined, self = 'copy') =>
    restoresFromBucket({
      source: instance === undefined ? { backup: 'shop-1' } : { instance },
      backups,
      self,
    });

  it('when no CouchBackup of the named instance is left in the namespace, then the bucket is read', () => {
    expect(asks('gone')).toBe(true);
  });

  it('when any CouchBackup of it is left (even a Failed or Running one), or a backup is named, or the instance names itself, then the CouchBackups decide', () => {
    expect(asks('shop')).toBe(false);
    expect(asks(undefined)).toBe(false);
    expect(asks('copy', 'copy')).toBe(false);
  });
});

describe('chooseBucketBackup', () => {
  const found = [
    { backup: 'gone-sched-2', completedAt: '2026-11-21T03:00:40Z' },
    { backup: 'gone-sched-1', completedAt: '2026-11-20T03:00:40Z' },
    { backup: 'gone-sched-3', completedAt: '2026-11-22T03:00:40Z' },
  ];

  it('when no time is given, then the newest manifest is chosen; with a time, the newest completed at or before it', () => {
    expect(chooseBucketBackup({ found, before: undefined, pinned: undefined })?.backup).toBe('gone-sched-3');
    expect(chooseBucketBackup({ found, before: '2026-11-21T03:00:40Z', pinned: undefined })?.backup).toBe(
      'gone-sched-2',
    );
    expect(chooseBucketBackup({ found, before: '2026-11-19T00:00:00Z', pinned: undefined })).toBeUndefined();
  });

  it('when an earlier try pinned a backup, then that one is read even if a newer one is there, and none if it is gone', () => {
    expect(chooseBucketBackup({ found, before: undefined, pinned: 'gone-sched-1' })?.backup).toBe(
      'gone-sched-1',
    );
    expect(chooseBucketBackup({ found, before: undefined, pinned: 'gone-sched-9' })).toBeUndefined();
  });
});
