import type { V1Secret } from '@kubernetes/client-node';
import {
  resolveStorageTarget,
  StorageTargetError,
} from '../../../../../operator/controllers/couch-backup/storage-target.js';
import type { ObjectStorageTarget } from '../../../../../operator/backup/object-storage.js';

const cluster: ObjectStorageTarget = {
  endpoint: 'http://127.0.0.1:9000',
  bucket: 'cluster',
  region: 'us-east-1',
  prefix: 'backups',
  forcePathStyle: true,
  accessKeyId: 'ak',
  secretAccessKey: 'sk',
};
const secret = (data: Record<string, string>): V1Secret => ({
  metadata: { name: 'mine' },
  data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
});

describe('resolveStorageTarget', () => {
  it('when the instance names no Secret, then the cluster storage is used', () => {
    expect(
      resolveStorageTarget({ cluster, secretName: undefined, secret: undefined, namespace: 'team' }),
    ).toBe(cluster);
  });

  it('when neither exists, then the error says what to configure', () => {
    expect(() =>
      resolveStorageTarget({
        cluster: undefined,
        secretName: undefined,
        secret: undefined,
        namespace: 'team',
      }),
    ).toThrow(/SETTEE_BACKUP_S3_BUCKET/);
  });

  it("when the instance's Secret names its own bucket, then it replaces the cluster's, prefix trimmed and path style read", () => {
    const target = resolveStorageTarget({
      cluster,
      secretName: 'mine',
      secret: secret({
        bucket: 'own',
        accessKeyId: 'a',
        secretAccessKey: 's',
        prefix: '/team/',
        forcePathStyle: 'true',
      }),
      namespace: 'team',
    });
    expect(target).toEqual({
      endpoint: undefined,
      bucket: 'own',
      region: 'us-east-1',
      prefix: 'team',
      forcePathStyle: true,
      accessKeyId: 'a',
      secretAccessKey: 's',
    });
  });

  it('when the Secret is missing from the namespace or lacks keys, then a StorageTargetError names what', () => {
    expect(() =>
      resolveStorageTarget({ cluster, secretName: 'mine', secret: undefined, namespace: 'team' }),
    ).toThrow(new StorageTargetError('Secret mine not found in namespace team'));
    expect(() =>
      resolveStorageTarget({
        cluster,
        secretName: 'mine',
        secret: secret({ bucket: 'own' }),
        namespace: 'team',
      }),
    ).toThrow('Secret mine has no accessKeyId, secretAccessKey');
  });
});
