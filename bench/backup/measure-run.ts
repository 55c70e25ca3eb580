/**
 * One measured run in a process of its own, so its peak memory (VmHWM) is the run's alone:
 * `backup` streams the instance into the bucket with the operator's own code (runBackup); `restore`
 * fills an empty engine from that backup with the operator's own code (runRestore, verified against
 * the manifest); `anchor` reads the same data as a client would, _all_docs?include_docs=true and
 * each attachment's bytes, and throws it away; `read-fetch` and `read-request` read every
 * attachment through gzip (what a backup does to it) with fetch() or with undici's request(), to
 * show which client reads ahead of its consumer. Prints one JSON line: {ms, bytes, peakRssMb,
 * peakArrayBuffersMb, peakHeapUsedMb, requestMs}, where requestMs are the times to the answer's
 * headers of every CouchDB request the run made (for per-request medians and p99), and the peaks the
 * largest `process.memoryUsage()` arrayBuffers (Buffers, outside V8's heap) and heapUsed (V8's heap,
 * garbage included) seen.
 *
 * Input (environment): BENCH_COUCH_ORIGIN, BENCH_COUCH_USER, BENCH_COUCH_PASSWORD; for backup and
 * restore BENCH_S3_ENDPOINT, BENCH_S3_BUCKET, BENCH_S3_ACCESS_KEY_ID, BENCH_S3_SECRET_ACCESS_KEY and
 * BENCH_BACKUP_NAME; for backup BENCH_BACKUP_COMPRESSION (JSON CompressionOptions, optional); for
 * restore BENCH_RESTORE_ORIGIN (the engine to fill) and BENCH_RESTORE_WRITES_IN_FLIGHT (optional).
 */
import diagnostics from 'node:diagnostics_channel';
import fs from 'node:fs';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import { request } from 'undici';
import type { CompressionOptions } from '../../operator/backup/archive-compressor.js';
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

/**
 * Times to headers of the requests to CouchDB, from undici's diagnostics channels (fetch() and
 * request() both publish there; object-storage calls go through the SDK's node:http handler).
 */
const requestMs: number[] = [];
const requestStarts = new WeakMap<object, number>();
diagnostics.subscribe('undici:request:create', (message) => {
  requestStarts.set((message as { request: object }).request, performance.now());
});
diagnostics.subscribe('undici:request:headers', (message) => {
  const started = requestStarts.get((message as { request: object }).request);
  if (started !== undefined) requestMs.push(performance.now() - started);
});

let peakArrayBuffers = 0;
let peakHeapUsed = 0;
const sampler = setInterval(() => {
  const { arrayBuffers, heapUsed } = process.memoryUsage();
  peakArrayBuffers = Math.max(peakArrayBuffers, arrayBuffers);
  peakHeapUsed = Math.max(peakHeapUsed, heapUsed);
}, 20);

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
      // One of the bench's variants (backup-throughput.ts); none: the operator's defaults.
      compression: JSON.parse(process.env.BENCH_BACKUP_COMPRESSION ?? '{}') as Partial<CompressionOptions>,
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
      ...(process.env.BENCH_RESTORE_WRITES_IN_FLIGHT
        ? { writesInFlight: Number(process.env.BENCH_RESTORE_WRITES_IN_FLIGHT) }
        : {}),
    });
    return result.manifest.archive.size;
  } finally {
    storage.destroy();
  }
}

const authorization = `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString('base64')}`;

interface AttachmentRef {
  url: string;
}

/** Every document as _all_docs?include_docs=true gives it, and the URL of every attachment. */
async function readAllDocs(): Promise<{ bytes: number; attachments: AttachmentRef[] }> {
  const reader = new CouchReader({ origin, credentials, timeoutMs: 300_000 });
  let bytes = 0;
  const attachments: AttachmentRef[] = [];
  for (const db of await reader.allDatabases()) {
    const response = await request(`${origin}/${encodeURIComponent(db)}/_all_docs?include_docs=true`, {
      headers: { authorization },
    });
    const text = await response.body.text();
    bytes += Buffer.byteLength(text);
    const rows = (
      JSON.parse(text) as { rows: { doc?: { _id: string; _attachments?: Record<string, unknown> } }[] }
    ).rows;
    for (const row of rows)
      for (const name of Object.keys(row.doc?._attachments ?? {}))
        attachments.push({
          url: `${origin}/${encodeURIComponent(db)}/${documentPath(row.doc?._id ?? '')}/${encodeURIComponent(name)}`,
        });
  }
  return { bytes, attachments };
}

/** What a client reading everything gets: every document, then every attachment's bytes. */
async function anchor(): Promise<number> {
  const all = await readAllDocs();
  let bytes = all.bytes;
  for (const { url } of all.attachments) {
    const response = await request(url, { headers: { authorization } });
    for await (const chunk of response.body) bytes += (chunk as Buffer).length;
  }
  return bytes;
}

/** Each attachment through gzip into nothing: the pace of a backup's consumer, without the upload. */
async function readThroughGzip(open: (url: string) => Promise<AsyncIterable<Uint8Array>>): Promise<number> {
  let bytes = 0;
  const discard = new Writable({
    write(chunk: Buffer, _encoding, done) {
      bytes += chunk.length;
      done();
    },
  });
  for (const { url } of (await readAllDocs()).attachments)
    await pipeline(await open(url), zlib.createGzip({ level: 6 }), discard, { end: false });
  return bytes;
}

const readFetch = () =>
  readThroughGzip(async (url) => {
    const response = await fetch(url, { headers: { authorization } });
    if (!response.body) throw new Error(`${url}: no body`);
    return response.body;
  });

const readRequest = () =>
  readThroughGzip(async (url) => (await request(url, { headers: { authorization } })).body);

const modes = { backup, restore, anchor, 'read-fetch': readFetch, 'read-request': readRequest } as const;
const mode = process.argv[2] as keyof typeof modes;
if (!(mode in modes)) throw new Error(`mode ${mode}: expected one of ${Object.keys(modes).join(', ')}`);
const started = performance.now();
const bytes = await modes[mode]();
clearInterval(sampler);
console.log(
  JSON.stringify({
    ms: performance.now() - started,
    bytes,
    peakRssMb: peakRssMb(),
    peakArrayBuffersMb: Math.round(peakArrayBuffers / 1048576),
    peakHeapUsedMb: Math.round(peakHeapUsed / 1048576),
    requestMs: requestMs.map((ms) => Math.round(ms * 10) / 10),
  }),
);
