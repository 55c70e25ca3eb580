/**
 * Backup throughput and memory: an instance's data streamed by the operator's backup code
 * (operator/backup/run-backup.ts: _changes + _bulk_get + attachments, gzip, multipart upload) into
 * versitygw, against the anchor of reading the same data as a client would
 * (_all_docs?include_docs=true, then each attachment's bytes). Two data sets on one pouchdb-server
 * engine, each measured alone: BENCH_BACKUP_DOCS small documents (default 100,000), and
 * BENCH_BACKUP_ATTACHMENT_MB of random attachments in 8 MB pieces (default 256; the issue's 1 GB
 * is BENCH_BACKUP_ATTACHMENT_MB=1024). Each run is a process of its own (bench/backup/measure-run.ts),
 * so its peak RSS is its own; BENCH_BACKUP_ROUNDS (3) alternating rounds, medians and spread.
 *
 *   npx tsx bench/backup-throughput.ts
 */
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startCouchEngine, type CouchEngine } from '../local/couch-engine/index.js';
import { startS3Server } from '../local/s3-server.js';
import { startTsProcess } from './lib/processes.js';
import { median, round } from './lib/stats.js';

const DOCS = Number(process.env.BENCH_BACKUP_DOCS ?? 100_000);
const ATTACHMENT_MB = Number(process.env.BENCH_BACKUP_ATTACHMENT_MB ?? 256);
const ROUNDS = Number(process.env.BENCH_BACKUP_ROUNDS ?? 3);
const PIECE_MB = 8;
const BUCKET = 'bench-backups';
const admin = { username: 'bench', password: 'bench-password' };
const authorization = `Basic ${Buffer.from(`${admin.username}:${admin.password}`).toString('base64')}`;

interface Run {
  ms: number;
  bytes: number;
  peakRssMb: number;
}

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

async function measure(mode: 'backup' | 'anchor', env: NodeJS.ProcessEnv): Promise<Run> {
  const child = startTsProcess(`measure-${mode}`, 'bench/backup/measure-run.ts', [mode], env);
  const exit = await child.exited;
  const line = child.output().trim().split('\n').pop() ?? '';
  if (exit !== 0) throw new Error(`${mode} run exited ${exit}: ${child.output()}`);
  return JSON.parse(line) as Run;
}

function report(label: string, runs: { backup: Run[]; anchor: Run[] }, dataMb: number, docs: number): void {
  const rate = (list: Run[]) => list.map((r) => dataMb / (r.ms / 1000));
  const docRate = (list: Run[]) => list.map((r) => docs / (r.ms / 1000));
  const backupMbps = rate(runs.backup);
  const anchorMbps = rate(runs.anchor);
  const spread = (values: number[]) => `${round(Math.min(...values), 1)}-${round(Math.max(...values), 1)}`;
  console.log(`\n${label}: ${docs} documents, ${round(dataMb, 1)} MB of data, ${ROUNDS} rounds`);
  console.log(
    `  backup: median ${round(median(backupMbps), 1)} MB/s (${spread(backupMbps)}), ${round(median(docRate(runs.backup)))} docs/s, archive ${round(median(runs.backup.map((r) => r.bytes)) / 1e6, 1)} MB, peak RSS median ${round(median(runs.backup.map((r) => r.peakRssMb)))} MB (max ${round(Math.max(...runs.backup.map((r) => r.peakRssMb)))})`,
  );
  console.log(
    `  anchor (_all_docs?include_docs=true + attachment GETs): median ${round(median(anchorMbps), 1)} MB/s (${spread(anchorMbps)}), ${round(median(docRate(runs.anchor)))} docs/s, peak RSS median ${round(median(runs.anchor.map((r) => r.peakRssMb)))} MB`,
  );
  console.log(`  backup / anchor throughput: ${round(median(backupMbps) / median(anchorMbps), 2)}`);
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
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      BENCH_COUCH_ORIGIN: engine.url,
      BENCH_COUCH_USER: admin.username,
      BENCH_COUCH_PASSWORD: admin.password,
      BENCH_S3_ENDPOINT: s3.endpoint,
      BENCH_S3_BUCKET: BUCKET,
      BENCH_S3_ACCESS_KEY_ID: s3.accessKeyId,
      BENCH_S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
    };
    const runs = { backup: [] as Run[], anchor: [] as Run[] };
    await measure('anchor', env); // warms the engine's caches for both
    for (let round = 0; round < ROUNDS; round++) {
      runs.anchor.push(await measure('anchor', env));
      runs.backup.push(await measure('backup', env));
    }
    report(label, runs, await dataMb(engine), docs);
  } finally {
    await Promise.all([engine.stop(), s3.stop()]);
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}

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

await benchDataSet('small documents', seedDocs, readableMb, DOCS);
await benchDataSet(
  'attachments',
  seedAttachments,
  async (engine) => (await readableMb(engine)) + Math.ceil(ATTACHMENT_MB / PIECE_MB) * PIECE_MB * 1.048576,
  Math.ceil(ATTACHMENT_MB / PIECE_MB),
);
