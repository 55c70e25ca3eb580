/**
 * Where a kube-apiserver restart's time and CPU go, and what a flag changes in it. A control plane
 * is started as the tests' (etcd on tmpfs, the CRDs, the StorageClass, the admission policy);
 * then, against its etcd, a second kube-apiserver is started with the plane's own arguments (read
 * from its command line) on another port, plus each variant's flags, timed to /readyz and killed
 * (SIGKILL), the variants alternating, BENCH_ROUNDS (5) rounds after one uncounted start. Its
 * /readyz?verbose is read every 100 ms from the spawn: when the server first answers, when each
 * check (every post-start hook) first passes, and the process's CPU at each (/proc). A restart in
 * the soak is this start with the old process gone.
 *
 *   npx tsx bench/apiserver-restart.ts
 *   BENCH_VARIANTS='{"as run":[],"no batch":["--runtime-config=batch/v1=false"]}' npx tsx bench/apiserver-restart.ts
 *
 * A variant's flag replaces the plane's flag of the same name, or is added.
 *
 * Where the CPU goes: BENCH_PERF_DIR=<folder> records each start with `perf record -g` (attached
 * at the spawn, stopped at /readyz) into that folder; `make deps` strips its binaries, so point
 * BENCH_APISERVER_BINARY at an unstripped build of the same release (docs/guarantees.md says how).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { startControlPlane } from '../local/control-plane.js';
import { getFreePort } from '../local/ports.js';
import { cpuSeconds } from './lib/process-usage.js';
import { median, medianSpreadText, round } from './lib/stats.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const VARIANTS = JSON.parse(process.env.BENCH_VARIANTS ?? '{"as run":[]}') as Record<string, string[]>;
const POLL_MS = 100;
const READY_TIMEOUT_MS = Number(process.env.BENCH_READY_TIMEOUT_MS ?? 120_000);
const PERF_DIR = process.env.BENCH_PERF_DIR;
const BINARY = process.env.BENCH_APISERVER_BINARY;

interface Milestone {
  ms: number;
  cpuS: number;
}

interface Start {
  /** The first answer of any kind (the secure port serving). */
  answered: Milestone;
  /** Each /readyz check when it first passed. */
  checks: Record<string, Milestone>;
  ready: Milestone;
  load: number;
}

/** The plane's kube-apiserver's arguments, from its command line. */
function argumentsOf(pid: number): { command: string; args: string[] } {
  const [command, ...args] = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
  return { command: command ?? '', args };
}

function withFlags(args: readonly string[], flags: readonly string[]): string[] {
  const name = (flag: string): string => flag.split('=')[0] ?? flag;
  const replaced = new Set(flags.map(name));
  return [...args.filter((a) => !replaced.has(name(a))), ...flags];
}

function readyzVerbose(
  port: number,
  tls: { ca: string; cert: string; key: string },
): Promise<{ status: number; body: string } | undefined> {
  return new Promise((resolve) => {
    const request = https.get(
      `https://127.0.0.1:${port}/readyz?verbose`,
      { ...tls, timeout: 2_000 },
      (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (body += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
        response.on('error', () => resolve(undefined));
      },
    );
    request.once('timeout', () => request.destroy());
    request.once('error', () => resolve(undefined));
  });
}

async function timeStart(
  base: { command: string; args: string[] },
  flags: readonly string[],
  tls: { ca: string; cert: string; key: string },
  workDir: string,
): Promise<Start> {
  const port = await getFreePort();
  const certDir = await fsp.mkdtemp(path.join(workDir, 'certs-'));
  const args = withFlags(base.args, [`--secure-port=${port}`, `--cert-dir=${certDir}`, ...flags]);
  const logFile = path.join(workDir, 'kube-apiserver.log');
  const log = fs.openSync(logFile, 'w');
  const started = performance.now();
  const child: ChildProcess = spawn(BINARY ?? base.command, args, { stdio: ['ignore', log, log] });
  const pid = child.pid ?? -1;
  const perf = PERF_DIR
    ? spawn(
        'perf',
        ['record', '-q', '-F', '499', '-g', '-p', String(pid), '-o', path.join(PERF_DIR, `${pid}.data`)],
        {
          stdio: 'ignore',
        },
      )
    : undefined;
  const at = (): Milestone => ({ ms: round(performance.now() - started), cpuS: cpuSeconds(pid) });
  const checks: Record<string, Milestone> = {};
  let answered: Milestone | undefined;
  let failing = 'no answer';
  try {
    while (performance.now() - started < READY_TIMEOUT_MS) {
      if (child.exitCode !== null)
        throw new Error(
          `kube-apiserver exited ${child.exitCode}: ${fs.readFileSync(logFile, 'utf8').slice(-2_000)}`,
        );
      const answer = await readyzVerbose(port, tls);
      if (answer) {
        const now = at();
        answered ??= now;
        for (const [, check] of answer.body.matchAll(/^\[\+\](\S+) ok$/gm))
          if (check && !checks[check]) checks[check] = now;
        if (answer.status === 200) return { answered, checks, ready: now, load: os.loadavg()[0] ?? 0 };
        failing = [...answer.body.matchAll(/^\[-\](\S+)/gm)].map((m) => m[1]).join(', ');
      }
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
    throw new Error(`kube-apiserver not ready within ${READY_TIMEOUT_MS} ms (failing: ${failing})`);
  } finally {
    if (perf) {
      perf.kill('SIGINT');
      if (perf.exitCode === null) await new Promise((resolve) => perf.once('exit', resolve));
    }
    child.kill('SIGKILL');
    if (child.exitCode === null) await new Promise((resolve) => child.once('exit', resolve));
    fs.closeSync(log);
    await fsp.rm(certDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const workDir = await fsp.mkdtemp(path.join(os.tmpdir(), 'settee-bench-apiserver-'));
  const plane = await startControlPlane();
  try {
    const apiserver = plane.running().find((p) => p.name === 'kube-apiserver');
    if (!apiserver) throw new Error('the control plane has no kube-apiserver');
    const base = argumentsOf(apiserver.pid);
    const user = plane.kubeConfig.getCurrentUser();
    const cluster = plane.kubeConfig.getCurrentCluster();
    const decode = (b64: string | undefined): string => Buffer.from(b64 ?? '', 'base64').toString();
    const tls = { ca: decode(cluster?.caData), cert: decode(user?.certData), key: decode(user?.keyData) };
    const names = Object.keys(VARIANTS);
    const results = new Map<string, Start[]>(names.map((n) => [n, []]));
    await timeStart(base, VARIANTS[names[0] ?? ''] ?? [], tls, workDir);
    for (let round_ = 1; round_ <= ROUNDS; round_++)
      for (const name of round_ % 2 ? names : [...names].reverse()) {
        const start = await timeStart(base, VARIANTS[name] ?? [], tls, workDir);
        results.get(name)?.push(start);
        console.log(
          `round ${round_} ${name}: ready ${(start.ready.ms / 1000).toFixed(2)} s, CPU ${start.ready.cpuS.toFixed(2)} s (serving at ${(start.answered.ms / 1000).toFixed(2)} s, ${start.answered.cpuS.toFixed(2)} s CPU), load ${start.load.toFixed(1)}`,
        );
      }
    console.log(
      `\nload ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')} at the end`,
    );
    console.log(
      '| variant | ready, s | CPU at ready, s | serving, s | CPU at serving, s |\n|---|---|---|---|---|',
    );
    for (const [name, starts] of results)
      console.log(
        `| ${name} | ${[
          starts.map((s) => s.ready.ms / 1000),
          starts.map((s) => s.ready.cpuS),
          starts.map((s) => s.answered.ms / 1000),
          starts.map((s) => s.answered.cpuS),
        ]
          .map((values) => medianSpreadText(values, 2))
          .join(' | ')} |`,
      );
    for (const [name, starts] of results) {
      console.log(`\n${name}: each check when it first passed (median over ${starts.length} starts)`);
      const checkNames = [...new Set(starts.flatMap((s) => Object.keys(s.checks)))];
      const rows = checkNames.map((check) => {
        const seen = starts.flatMap((s) => (s.checks[check] ? [s.checks[check]] : []));
        return { check, ms: median(seen.map((m) => m.ms)), cpuS: median(seen.map((m) => m.cpuS)) };
      });
      for (const row of rows.sort((a, b) => a.ms - b.ms))
        console.log(`  ${(row.ms / 1000).toFixed(2)} s, CPU ${row.cpuS.toFixed(2)} s  ${row.check}`);
    }
  } finally {
    await plane.stop();
    await fsp.rm(workDir, { recursive: true, force: true });
  }
}

await main();
