import readline from 'node:readline';
import zlib from 'node:zlib';
import type { KubeConfig } from '@kubernetes/client-node';
import type { Condition } from '../../../api/conditions.js';
import type { ArchiveRecord } from '../../../operator/backup/archive-format.js';
import type { BackupManifest } from '../../../operator/backup/manifest.js';
import { ObjectStorage } from '../../../operator/backup/object-storage.js';
import { startS3Server, type S3Server } from '../../../local/s3-server.js';
import { podAddress } from '../../../api/pod-address.js';
import {
  COUCH_BACKUP_KIND,
  COUCH_BACKUP_PLURAL,
  type CouchBackup,
  type CouchBackupSpec,
} from '../../../api/couch-backup.js';
import { customObjectHelpers } from '../custom-objects.js';
import { basicAuth } from '../gateway/http-request.js';
import { readAdminCredentials } from '../gateway/platform-harness.js';
import { testClients } from '../operator/couch-instance-harness.js';

export const BACKUP_BUCKET = 'settee-backups';
export const BACKUP_PREFIX = 'tests';

/** CouchBackup has no conditions; the shared helpers' constraint asks only that it could. */
type TestCouchBackup = CouchBackup & { status?: { conditions?: Condition[] } };

export const backups = customObjectHelpers<TestCouchBackup, CouchBackupSpec>({
  kind: COUCH_BACKUP_KIND,
  plural: COUCH_BACKUP_PLURAL,
  defaultTimeoutMs: 60_000,
});

/**
 * A daily backup schedule whose run is about twelve hours from now, for suites that need the
 * add-on on but make and count their backups by hand: a fixed time such as `0 3 * * *` brings a
 * scheduled backup into a run that passes 03:00 UTC, which changes what they count, retain and
 * restore. No suite runs for hours, so no run of it comes due while one does.
 */
export function scheduleNotDueDuringTests(): string {
  return `0 ${(new Date().getUTCHours() + 12) % 24} * * *`;
}

/** The versitygw every backup suite stores into, with the bucket made. */
export function startBackupStorage(): Promise<S3Server> {
  return startS3Server({ buckets: [BACKUP_BUCKET] });
}

/** The operator's settings for the cluster's object storage, pointing at `server`. */
export function backupOperatorEnv(
  server: S3Server,
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    SETTEE_BACKUP_S3_ENDPOINT: server.endpoint,
    SETTEE_BACKUP_S3_BUCKET: BACKUP_BUCKET,
    SETTEE_BACKUP_S3_REGION: server.region,
    SETTEE_BACKUP_S3_PREFIX: BACKUP_PREFIX,
    SETTEE_BACKUP_S3_FORCE_PATH_STYLE: 'true',
    SETTEE_BACKUP_S3_ACCESS_KEY_ID: server.accessKeyId,
    SETTEE_BACKUP_S3_SECRET_ACCESS_KEY: server.secretAccessKey,
    ...extra,
  };
}

/** The bucket as the tests read it, with the server's root keys. */
export function bucketOf(server: S3Server): ObjectStorage {
  return new ObjectStorage(
    {
      endpoint: server.endpoint,
      bucket: BACKUP_BUCKET,
      region: server.region,
      prefix: '',
      forcePathStyle: true,
      accessKeyId: server.accessKeyId,
      secretAccessKey: server.secretAccessKey,
    },
    { requestTimeoutMs: 10_000, maxAttempts: 1 },
  );
}

/** The key of an s3://bucket/key location. */
export function keyOf(location: string | undefined): string {
  return (location ?? '').replace(`s3://${BACKUP_BUCKET}/`, '');
}

export async function readManifest(bucket: ObjectStorage, backup: CouchBackup): Promise<BackupManifest> {
  return bucket.readJson<BackupManifest>(keyOf(backup.status?.manifest));
}

/** Every record of a backup's archive, gunzipped and parsed line by line. */
export async function readArchive(bucket: ObjectStorage, backup: CouchBackup): Promise<ArchiveRecord[]> {
  const body = (await bucket.read(keyOf(backup.status?.location))).pipe(zlib.createGunzip());
  const records: ArchiveRecord[] = [];
  for await (const line of readline.createInterface({ input: body, crlfDelay: Infinity }))
    if (line) records.push(JSON.parse(line) as ArchiveRecord);
  return records;
}

/** Talks to an instance's CouchDB at its pod address, as the operator does (not through the gateway). */
export async function instanceCouch(kubeConfig: KubeConfig, ref: { namespace: string; name: string }) {
  const admin = await readAdminCredentials(kubeConfig, ref);
  const pod = await testClients(kubeConfig).core.readNamespacedPod({
    namespace: ref.namespace,
    name: `${ref.name}-0`,
  });
  const origin = podAddress(pod)?.origin ?? '';
  const authorization = basicAuth(admin.username, admin.password);
  return async (
    method: string,
    path: string,
    body?: unknown,
    contentType = 'application/json',
  ): Promise<Response> =>
    fetch(`${origin}${path}`, {
      method,
      headers: { authorization, 'content-type': contentType, accept: 'application/json' },
      ...(body === undefined ? {} : { body: Buffer.isBuffer(body) ? body : JSON.stringify(body) }),
    });
}

export const hasBackupPhase = (phase: string) => (backup: CouchBackup) => backup.status?.phase === phase;

/** The CouchBackups of one instance, newest first. */
export async function listBackups(namespace: string, instance: string): Promise<CouchBackup[]> {
  const list = (await testClients().custom.listNamespacedCustomObject(backups.api(namespace))) as {
    items: CouchBackup[];
  };
  return list.items
    .filter((backup) => backup.spec.instance === instance)
    .sort((a, b) => String(b.metadata.creationTimestamp).localeCompare(String(a.metadata.creationTimestamp)));
}

// Shared with the instance suites, which have the same Events after status to wait for.
export { waitForEventReasons } from '../operator/couch-instance-harness.js';
