/**
 * Does the operator's memory during a backup or a restore grow with the size of one attachment?
 * For each size in BENCH_ATTACHMENT_MEMORY_SIZES (MB, default 32,96; the pouchdb-server stand-in
 * refuses a single attachment of 128 MB), an engine holding one attachment of that size (random
 * bytes, so gzip cannot shrink it) is backed up into versitygw and restored into an empty engine by
 * the operator's own code (bench/backup/measure-run.ts `backup` and `restore`), and its attachment
 * read through gzip by two HTTP clients (`read-fetch`: Node's fetch(), which CouchReader used
 * before; `read-request`: undici's request(), which it uses now), each run a process of its own so
 * its peak RSS (VmHWM) is its own. BENCH_ATTACHMENT_MEMORY_ROUNDS (2) rounds;
 * BENCH_BACKUP_NODE_OPTIONS (e.g. --max-old-space-size=64) is given to the backup and restore runs.
 * Reported: the median peak RSS and Buffer memory (process.memoryUsage().arrayBuffers) per size, and
 * the slope between the smallest and the largest size in MB of RSS per MB of attachment: about 0 is
 * bounded, 1 or more is an attachment held whole.
 *
 *   npx tsx bench/backup-attachment-memory.ts
 */
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startCouchEngine, type CouchEngine } from '../local/couch-engine/index.js';
import { startS3Server, type S3Server } from '../local/s3-server.js';
import { measureRunEnv } from './backup/run-env.js';
import { startTsProcess } from './lib/processes.js';
import { median, round, spread } from './lib/stats.js';

const SIZES_MB = (process.env.BENCH_ATTACHMENT_MEMORY_SIZES ?? '32,96').split(',').map(Number);
const ROUNDS = Number(process.env.BENCH_ATTACHMENT_MEMORY_ROUNDS ?? 2);
const BUCKET = 'bench-attachment-memory';
const admin = { username: 'bench', password: 'bench-password' };
const authorization = `Basic ${Buffer.from(`${admin.username}:${admin.password}`).toString('base64')}`;

const MODES = ['backup', 'restore', 'read-fetch', 'read-request'] as const;
type Mode = (typeof MODES)[number];

interface Run {
  ms: number;
  peakRssMb: number;
  peakArrayBuffersMb: number;
  peakHeapUsedMb: number;
}

async function withEngine<T>(use: (engine: CouchEngine) => Promise<T>): Promise<T> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'settee-bench-attachment-memory-'));
  const engine = await startCouchEngine({ dataDir, admin });
  try {
    return await use(engine);
  } finally {
    await engine.stop();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}

async function seed(engine: CouchEngine, megabytes: number): Promise<void> {
  for (const [method, url, body, type] of [
    ['PUT', '/files', undefined, 'application/json'],
    ['PUT', '/files/big/blob.bin', crypto.randomBytes(megabytes * 1024 * 1024), 'application/octet-stream'],
  ] as const) {
    const response = await fetch(`${engine.url}${url}`, {
      method,
      headers: { authorization, 'content-type': type },
      ...(body === undefined ? {} : { body }),
    });
    if (!response.ok) throw new Error(`${method} ${url}: ${response.status} ${await response.text()}`);
  }
}

const OPERATOR_NODE_OPTIONS = process.env.BENCH_BACKUP_NODE_OPTIONS;

async function measure(mode: Mode, env: NodeJS.ProcessEnv): Promise<Run> {
  const operatorRun = mode === 'backup' || mode === 'restore';
  const childEnv =
    operatorRun && OPERATOR_NODE_OPTIONS ? { ...env, NODE_OPTIONS: OPERATOR_NODE_OPTIONS } : env;
  const child = startTsProcess(`measure-${mode}`, 'bench/backup/measure-run.ts', [mode], { env: childEnv });
  const exit = await child.exited;
  if (exit !== 0) throw new Error(`${mode} run exited ${exit}: ${child.output()}`);
  return JSON.parse(child.output().trim().split('\n').pop() ?? '') as Run;
}

async function measureSize(s3: S3Server, megabytes: number): Promise<Record<Mode, Run[]>> {
  const runs: Record<Mode, Run[]> = { backup: [], restore: [], 'read-fetch': [], 'read-request': [] };
  await withEngine(async (engine) => {
    await seed(engine, megabytes);
    const env = measureRunEnv(engine, admin, s3, BUCKET);
    for (let i = 0; i < ROUNDS; i++) {
      const roundEnv = { ...env, BENCH_BACKUP_NAME: `size-${megabytes}-round-${i}` };
      runs.backup.push(await measure('backup', roundEnv));
      runs.restore.push(
        await withEngine((target) => measure('restore', { ...roundEnv, BENCH_RESTORE_ORIGIN: target.url })),
      );
      runs['read-fetch'].push(await measure('read-fetch', roundEnv));
      runs['read-request'].push(await measure('read-request', roundEnv));
      console.log(
        `${megabytes} MB: round ${i + 1}: ` +
          MODES.map((mode) => `${mode} ${Math.round(runs[mode].at(-1)?.peakRssMb ?? 0)} MB`).join(', '),
      );
    }
  });
  return runs;
}

const s3 = await startS3Server({ buckets: [BUCKET] });
const bySize = new Map<number, Record<Mode, Run[]>>();
try {
  for (const megabytes of SIZES_MB) bySize.set(megabytes, await measureSize(s3, megabytes));
} finally {
  await s3.stop();
}

const smallest = Math.min(...SIZES_MB);
const largest = Math.max(...SIZES_MB);
console.log(
  `\npeak memory by attachment size (one attachment, ${ROUNDS} rounds, medians; spread in brackets)`,
);
for (const mode of MODES) {
  const cells = SIZES_MB.map((megabytes) => {
    const list = bySize.get(megabytes)?.[mode] ?? [];
    const rss = list.map((run) => run.peakRssMb);
    const mbps = median(list.map((run) => megabytes / (run.ms / 1000)));
    return (
      `${megabytes} MB: RSS ${round(median(rss))} [${spread(rss, 0)}], ` +
      `buffers ${round(median(list.map((run) => run.peakArrayBuffersMb)))}, ` +
      `heap ${round(median(list.map((run) => run.peakHeapUsedMb)))}, ${round(mbps, 1)} MB/s`
    );
  });
  const rssAt = (megabytes: number) => median((bySize.get(megabytes)?.[mode] ?? []).map((r) => r.peakRssMb));
  const slope = (rssAt(largest) - rssAt(smallest)) / (largest - smallest);
  console.log(`  ${mode}: ${cells.join('; ')}; slope ${round(slope, 2)} MB RSS per MB of attachment`);
}
