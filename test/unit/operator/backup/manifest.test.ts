import {
  buildManifest,
  computeDataFingerprint,
  type DatabaseManifest,
} from '../../../../operator/backup/manifest.js';

const db = (name: string, docCount: number, attachmentBytes = 0): DatabaseManifest => ({
  name,
  docCount,
  reportedDocCount: docCount,
  updateSeq: `${docCount}-g1AAAA`,
  fileSize: 1000,
  attachments: attachmentBytes > 0 ? 1 : 0,
  attachmentBytes,
  sha256: 'ab'.repeat(32),
});

describe('computeDataFingerprint', () => {
  it('when the same databases come in another order, then the fingerprint is the same', () => {
    const a = [
      { name: 'b', updateSeq: '2' },
      { name: 'a', updateSeq: '1' },
    ];
    expect(computeDataFingerprint(a)).toBe(computeDataFingerprint([...a].reverse()));
    expect(computeDataFingerprint(a)).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it('when one update sequence moves or a database is added, then the fingerprint changes', () => {
    const base = computeDataFingerprint([{ name: 'a', updateSeq: '1' }]);
    expect(computeDataFingerprint([{ name: 'a', updateSeq: '2' }])).not.toBe(base);
    expect(
      computeDataFingerprint([
        { name: 'a', updateSeq: '1' },
        { name: '_users', updateSeq: '1' },
      ]),
    ).not.toBe(base);
  });
});

describe('buildManifest', () => {
  it('when databases are given, then totals add them up and the fingerprint is of their sequences', () => {
    const databases = [db('_users', 1), db('_replicator', 1), db('orders', 100, 5000)];
    const manifest = buildManifest({
      instance: { namespace: 'team', name: 'shop', uid: 'uid-1' },
      backup: 'shop-sched-20260101t030000z',
      couchdbVersion: '3.5.1',
      startedAt: '2026-01-01T03:00:00.000Z',
      completedAt: '2026-01-01T03:00:05.000Z',
      archive: { key: 'p/team/shop/b/backup.ndjson.gz', size: 1234, sha256: 'cd'.repeat(32) },
      databases,
    });
    expect(manifest).toMatchObject({
      format: 'settee-couch-backup',
      version: 1,
      archive: { compression: 'gzip', size: 1234 },
      totals: { databases: 3, documents: 102, attachments: 1, attachmentBytes: 5000 },
      dataFingerprint: computeDataFingerprint(databases),
    });
    expect(manifest.databases).toEqual(databases);
  });
});
