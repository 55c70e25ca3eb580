/**
 * One measured run in a process of its own, so its peak memory (VmHWM) is the run's alone:
 * `backup` streams the instance into the bucket with the operator's own code (runBackup); `restore`
 * fills an empty engine from that backup with the operator's own code (runRestore, verified against
 * the manifest); `anchor` reads the same data as a client would, _all_docs?include_docs=true and
 * each attachment's bytes, and throws it away. Prints one JSON line: {ms, bytes, peakRssMb,
 * requestMs}, where requestMs are the times to the answer's headers of every CouchDB request the
 * run made (for per-request medians and p99).
 *
 * Input (environment): BENCH_COUCH_ORIGIN, BENCH_COUCH_USER, BENCH_COUCH_PASSWORD; for backup and
 * restore BENCH_S3_ENDPOINT, BENCH_S3_BUCKET, BENCH_S3_ACCESS_KEY_ID, BENCH_S3_SECRET_ACCESS_KEY and
 * BENCH_BACKUP_NAME; for restore BENCH_RESTORE_ORIGIN (the engine to fill).
 */
import fs from 'node:fs';
import { CouchReader, documentPath } from '../../operator/backup/couch-reader.js';
import { ObjectStorage } from '../../operator/backup/object-storage.js';
import { backupFolder, runBackup } from '../../operator/backup/run-backup.js';
import { runRestore } from '../../operator/backup/run-restore.js';

const env = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};
const credentials = { username: env('BENCH_COUCH_USER'), password: env('BENCH_COUCH_PASSWORD') };
const origin = env('BENCH_COUCH_ORIGIN');
const instance = { namespace: 'bench', name: 'bench', uid: 'bench' };

/** Times to headers of the requests to CouchDB (object-storage calls go through the SDK, not fetch). */
const requestMs: number[] = [];
const plainFetch = globalThis.fetch;
globalThis.fetch = async (input, init) => {
  const started = performance.now();
  const response = await plainFetch(input, init);
  requestMs.push(performance.now() - started);
  return response;
};

function peakRssMb(): number {
  const line = fs
    .readFileSync('/proc/self/status', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmHWM:'));
  return Number(line?.replace(/\D+/g, '') ?? 0) / 1024;
}

function openStorage(): ObjectStorage {
  return new ObjectStorage(
    {
      endpoint: env('BENCH_S3_ENDPOINT'),
      bucket: env('BENCH_S3_BUCKET'),
      region: 'us-east-1',
      prefix: 'bench',
      forcePathStyle: true,
      accessKeyId: env('BENCH_S3_ACCESS_KEY_ID'),
      secretAccessKey: env('BENCH_S3_SECRET_ACCESS_KEY'),
    },
    { requestTimeoutMs: 300_000, maxAttempts: 1 },
  );
}

async function backup(): Promise<number> {
  const storage = openStorage();
  try {
    const result = await runBackup({
      couch: { origin, credentials, timeoutMs: 300_000 },
      storage,
      instance,
      backup: env('BENCH_BACKUP_NAME'),
    });
    return result.manifest.archive.size;
  } finally {
    storage.destroy();
  }
}

async function restore(): Promise<number> {
  const storage = openStorage();
  try {
    const result = await runRestore({
      couch: { origin: env('BENCH_RESTORE_ORIGIN'), credentials, timeoutMs: 300_000 },
      storage,
      folder: backupFolder(instance, env('BENCH_BACKUP_NAME')),
    });
    return result.manifest.archive.size;
  } finally {
    storage.destroy();
  }
}

/** What a client reading everything gets: every document, then every attachment's bytes. */
async function anchor(): Promise<number> {
  const reader = new CouchReader({ origin, credentials, timeoutMs: 300_000 });
  const authorization = `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString('base64')}`;
  let bytes = 0;
  for (const db of await reader.allDatabases()) {
    const response = await fetch(`${origin}/${encodeURIComponent(db)}/_all_docs?include_docs=true`, {
      headers: { authorization },
    });
    const text = await response.text();
    bytes += Buffer.byteLength(text);
    const rows = (
      JSON.parse(text) as { rows: { doc?: { _id: string; _attachments?: Record<string, unknown> } }[] }
    ).rows;
    for (const row of rows) {
      for (const name of Object.keys(row.doc?._attachments ?? {})) {
        const url = `${origin}/${encodeURIComponent(db)}/${documentPath(row.doc?._id ?? '')}/${encodeURIComponent(name)}`;
        const attachment = await fetch(url, { headers: { authorization } });
        for await (const chunk of attachment.body ?? []) bytes += chunk.length;
      }
    }
  }
  return bytes;
}

const modes = { backup, restore, anchor } as const;
const mode = process.argv[2] as keyof typeof modes;
if (!(mode in modes)) throw new Error(`mode ${mode}: expected backup, restore or anchor`);
const started = performance.now();
const bytes = await modes[mode]();
console.log(
  JSON.stringify({
    ms: performance.now() - started,
    bytes,
    peakRssMb: peakRssMb(),
    requestMs: requestMs.map((ms) => Math.round(ms * 10) / 10),
  }),
);
