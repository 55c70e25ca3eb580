/**
 * Backup and restore throughput and memory: an instance's data streamed by the operator's backup
 * code (operator/backup/run-backup.ts: _changes + _bulk_get + attachments, gzip, multipart upload)
 * into versitygw, and restored from there into a fresh engine by its restore code (run-restore.ts),
 * against the anchor of reading the same data as a client would (_all_docs?include_docs=true, then
 * each attachment's bytes). Two data sets on one pouchdb-server engine, each measured alone:
 * BENCH_BACKUP_DOCS small documents (default 100,000), and BENCH_BACKUP_ATTACHMENT_MB of random
 * attachments in BENCH_BACKUP_PIECE_MB pieces (default 256 in 32 MB attachments; the issue's 1 GB is
 * BENCH_BACKUP_ATTACHMENT_MB=1024). Each run is a process of its own (bench/backup/measure-run.ts),
 * so its peak RSS is its own; BENCH_BACKUP_ROUNDS (3) alternating rounds: medians and spread of the
 * runs, and the median and p99 of every CouchDB request's time to headers over all rounds.
 *
 *   npx tsx bench/backup-throughput.ts
 */
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startCouchEngine, type CouchEngine } from '../local/couch-engine/index.js';
import { startS3Server } from '../local/s3-server.js';
import type { CompressionOptions } from '../operator/backup/archive-compressor.js';
import { measureRunEnv } from './backup/run-env.js';
import { startTsProcess } from './lib/processes.js';
import { median, quantile, round, spread } from './lib/stats.js';

const DOCS = Number(process.env.BENCH_BACKUP_DOCS ?? 100_000);
const ATTACHMENT_MB = Number(process.env.BENCH_BACKUP_ATTACHMENT_MB ?? 256);
const ROUNDS = Number(process.env.BENCH_BACKUP_ROUNDS ?? 3);
/** Which data sets to measure: small, attachments, or both (the default), comma-separated. */
const DATA_SETS = (process.env.BENCH_BACKUP_DATA ?? 'small,attachments').split(',');
const PIECE_MB = Number(process.env.BENCH_BACKUP_PIECE_MB ?? 32);
const BUCKET = 'bench-backups';
const admin = { username: 'bench', password: 'bench-password' };
const authorization = `Basic ${Buffer.from(`${admin.username}:${admin.password}`).toString('base64')}`;

interface Run {
  ms: number;
  bytes: number;
  peakRssMb: number;
  requestMs: number[];
}

/**
 * The backup's compression as it was (one gzip stream at level 6 on one thread) and each change
 * added in turn (archive-compressor.ts), so each one's gain shows against the same anchor in one
 * run. BENCH_BACKUP_VARIANTS=now measures only the operator's defaults.
 */
const VARIANTS: Record<string, Partial<CompressionOptions>> = {
  'before: level 6, one thread': { level: 6, parallel: 1, packing: false },
  'level 1, one thread': { level: 1, parallel: 1, packing: false },
  'level 1, Huffman only for packed attachments, one thread': { level: 1, parallel: 1, packing: true },
  'now: level 1, packed Huffman only, two threads': {},
};
const BEFORE = 'before: level 6, one thread';
const NOW = 'now: level 1, packed Huffman only, two threads';
const BACKUPS = process.env.BENCH_BACKUP_VARIANTS === 'now' ? [NOW] : Object.keys(VARIANTS);
/** Restores of the archive as it was written before and as it is now. */
const RESTORES = BACKUPS.includes(BEFORE) ? [BEFORE, NOW] : [NOW];
/** The archive as written now, restored waiting for each write's answer before the next (as before). */
const ONE_WRITE = `restore (${NOW}, one write at a time)`;
const MODES = [
  'anchor',
  ...BACKUPS.map((v) => `backup (${v})`),
  ...RESTORES.map((v) => `restore (${v})`),
  ONE_WRITE,
];
type Mode = string;

async function send(
  engine: CouchEngine,
  method: string,
  url: string,
  body?: Buffer | string,
  type = 'application/json',
) {
  const response = await fetch(`${engine.url}${url}`, {
    method,
    headers: { authorization, 'content-type': type },
    ...(body === undefined ? {} : { body }),
  });
  if (!response.ok) throw new Error(`${method} ${url}: ${response.status} ${await response.text()}`);
  return response;
}

async function seedDocs(engine: CouchEngine): Promise<void> {
  await send(engine, 'PUT', '/small');
  for (let start = 0; start < DOCS; start += 2_000) {
    const docs = Array.from({ length: Math.min(2_000, DOCS - start) }, (_, i) => ({
      _id: `doc-${String(start + i).padStart(7, '0')}`,
      n: start + i,
      name: `customer ${start + i}`,
      tags: ['a', 'b', 'c'],
      note: crypto.randomBytes(48).toString('hex'),
    }));
    await send(engine, 'POST', '/small/_bulk_docs', JSON.stringify({ docs }));
  }
}

async function seedAttachments(engine: CouchEngine): Promise<void> {
  await send(engine, 'PUT', '/files');
  for (let i = 0; i < Math.ceil(ATTACHMENT_MB / PIECE_MB); i++) {
    const id = `file-${i}`;
    // Random bytes, so gzip cannot shrink them: the bytes moved are the bytes stored.
    await send(
      engine,
      'PUT',
      `/files/${id}/blob.bin`,
      crypto.randomBytes(PIECE_MB * 1024 * 1024),
      'application/octet-stream',
    );
  }
}

/**
 * BENCH_BACKUP_NODE_OPTIONS (e.g. --max-old-space-size=128) is given to the backup and restore runs
 * only: with V8's heap capped they show what the operator's code needs, not what V8 lets grow.
 */
const OPERATOR_NODE_OPTIONS = process.env.BENCH_BACKUP_NODE_OPTIONS;

async function measure(mode: 'anchor' | 'backup' | 'restore', env: NodeJS.ProcessEnv): Promise<Run> {
  const childEnv =
    mode !== 'anchor' && OPERATOR_NODE_OPTIONS ? { ...env, NODE_OPTIONS: OPERATOR_NODE_OPTIONS } : env;
  const child = startTsProcess(`measure-${mode}`, 'bench/backup/measure-run.ts', [mode], { env: childEnv });
  const exit = await child.exited;
  const line = child.output().trim().split('\n').pop() ?? '';
  if (exit !== 0) throw new Error(`${mode} run exited ${exit}: ${child.output()}`);
  return JSON.parse(line) as Run;
}

/** A restore fills an empty engine: a fresh one for every run, gone afterwards. */
async function measureRestore(env: NodeJS.ProcessEnv): Promise<Run> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'settee-bench-restore-'));
  const target = await startCouchEngine({ dataDir, admin });
  try {
    return await measure('restore', { ...env, BENCH_RESTORE_ORIGIN: target.url });
  } finally {
    await target.stop();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}

function report(label: string, runs: Record<Mode, Run[]>, dataMb: number, docs: number): void {
  const mbps = (list: Run[]) => list.map((r) => dataMb / (r.ms / 1000));
  const anchorMbps = median(mbps(runs.anchor ?? []));
  console.log(`\n${label}: ${docs} documents, ${round(dataMb, 1)} MB of data, ${ROUNDS} rounds`);
  for (const mode of MODES) {
    const list = runs[mode] ?? [];
    const rates = mbps(list);
    const requests = list.flatMap((r) => r.requestMs);
    const name = mode === 'anchor' ? 'anchor (_all_docs?include_docs=true + attachment GETs)' : mode;
    console.log(
      `  ${name}: median ${round(median(rates), 1)} MB/s (spread ${spread(rates)}), ` +
        `${round(median(list.map((r) => docs / (r.ms / 1000))))} docs/s, ` +
        `${round(median(list.map((r) => r.ms)) / 1000, 1)} s (spread ${spread(list.map((r) => r.ms / 1000))}), ` +
        `peak RSS median ${round(median(list.map((r) => r.peakRssMb)))} MB (spread ${spread(
          list.map((r) => r.peakRssMb),
          0,
        )}), ` +
        `CouchDB requests ${requests.length}: median ${round(median(requests), 1)} ms, p99 ${round(quantile(requests, 0.99), 1)} ms` +
        (mode === 'anchor' ? '' : `, / anchor ${round(median(rates) / anchorMbps, 2)}`),
    );
  }
  for (const variant of BACKUPS)
    console.log(
      `  archive (${variant}) ${round(median((runs[`backup (${variant})`] ?? []).map((r) => r.bytes)) / 1e6, 1)} MB`,
    );
}

async function benchDataSet(
  label: string,
  seed: (engine: CouchEngine) => Promise<void>,
  dataMb: (engine: CouchEngine) => Promise<number>,
  docs: number,
): Promise<void> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'settee-bench-backup-'));
  const [engine, s3] = await Promise.all([
    startCouchEngine({ dataDir, admin }),
    startS3Server({ buckets: [BUCKET] }),
  ]);
  try {
    const seeding = performance.now();
    await seed(engine);
    console.log(`${label}: seeded in ${round((performance.now() - seeding) / 1000, 1)} s`);
    const env = measureRunEnv(engine, admin, s3, BUCKET);
    const runs: Record<Mode, Run[]> = Object.fromEntries(MODES.map((mode) => [mode, []]));
    const add = (mode: Mode, run: Run) => runs[mode]?.push(run);
    await measure('anchor', env); // warms the engine's caches for both
    for (let i = 0; i < ROUNDS; i++) {
      const variantEnv = (variant: string) => ({
        ...env,
        BENCH_BACKUP_NAME: `round-${i}-${BACKUPS.indexOf(variant)}`,
        BENCH_BACKUP_COMPRESSION: JSON.stringify(VARIANTS[variant]),
      });
      add('anchor', await measure('anchor', env));
      for (const variant of BACKUPS) add(`backup (${variant})`, await measure('backup', variantEnv(variant)));
      for (const variant of RESTORES) add(`restore (${variant})`, await measureRestore(variantEnv(variant)));
      add(ONE_WRITE, await measureRestore({ ...variantEnv(NOW), BENCH_RESTORE_WRITES_IN_FLIGHT: '1' }));
      console.log(
        `${label}: round ${i + 1}: ` +
          MODES.map((mode) => `${mode} ${seconds(runs[mode]?.at(-1)?.ms ?? 0)}`).join(', '),
      );
    }
    report(label, runs, await dataMb(engine), docs);
  } finally {
    await Promise.all([engine.stop(), s3.stop()]);
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}

const seconds = (ms: number) => `${round(ms / 1000, 1)} s`;

/** The bytes a client reads: the documents as _all_docs gives them, plus every attachment. */
async function readableMb(engine: CouchEngine): Promise<number> {
  let bytes = 0;
  for (const db of ['small', 'files']) {
    const response = await fetch(`${engine.url}/${db}`, { headers: { authorization } });
    if (!response.ok) continue;
    const all = await (await send(engine, 'GET', `/${db}/_all_docs?include_docs=true`)).text();
    bytes += Buffer.byteLength(all);
  }
  return bytes / 1e6;
}

if (DATA_SETS.includes('small')) await benchDataSet('small documents', seedDocs, readableMb, DOCS);
if (DATA_SETS.includes('attachments'))
  await benchDataSet(
    'attachments',
    seedAttachments,
    async (engine) => (await readableMb(engine)) + Math.ceil(ATTACHMENT_MB / PIECE_MB) * PIECE_MB * 1.048576,
    Math.ceil(ATTACHMENT_MB / PIECE_MB),
  );
