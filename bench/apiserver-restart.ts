/**
 * Where a kube-apiserver restart's time and CPU go, and what a flag changes in it. Each variant has
 * a control plane of its own, started as the tests' (etcd on tmpfs, the CRDs, the StorageClass, the
 * admission policy) with the variant's kube-apiserver flags after the local platform's own; each
 * round restarts every plane's API server (SIGKILL, started again at once on its port and data, as
 * the soak's supervisor does), the variants alternating, BENCH_ROUNDS (5) rounds after one
 * uncounted restart each. From the new process's spawn its /readyz?verbose is read every 100 ms:
 * when it first answers, when each check (every post-start hook) first passes, and its CPU at
 * each (/proc).
 *
 *   npx tsx bench/apiserver-restart.ts
 *   BENCH_VARIANTS='{"as run":[],"batch on":["--runtime-config=batch/v1=true"]}' npx tsx bench/apiserver-restart.ts
 *
 * Each variant restarts its own plane, so what the API server finds in etcd (the APIServices its
 * own earlier run registered) matches its flags, as in a cluster: a second API server with other
 * flags beside a plane's own (this bench's first version) measured 0.73 against 1.00 s of CPU for
 * four groups off, a difference the consistent restart below did not keep (docs/guarantees.md).
 *
 * Where the CPU goes: BENCH_PERF_DIR=<folder> records each restart with `perf record -g` (attached
 * at the spawn, stopped at /readyz); `make deps` strips its binaries, so for symbols set
 * KUBEBUILDER_ASSETS to a folder holding an unstripped kube-apiserver of the same release beside
 * the other binaries (docs/guarantees.md says how).
 */
import { spawn } from 'node:child_process';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { startControlPlane, type ControlPlane } from '../local/control-plane.js';
import { cpuSeconds } from './lib/process-usage.js';
import { median, medianSpreadText } from './lib/stats.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const VARIANTS = JSON.parse(process.env.BENCH_VARIANTS ?? '{"as run":[]}') as Record<string, string[]>;
const POLL_MS = 100;
const READY_TIMEOUT_MS = Number(process.env.BENCH_READY_TIMEOUT_MS ?? 120_000);
const PERF_DIR = process.env.BENCH_PERF_DIR;

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

interface Tls {
  ca: string;
  cert: string;
  key: string;
}

function readyzVerbose(server: string, tls: Tls): Promise<{ status: number; body: string } | undefined> {
  return new Promise((resolve) => {
    const request = https.get(`${server}/readyz?verbose`, { ...tls, timeout: 2_000 }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
      response.on('error', () => resolve(undefined));
    });
    request.once('timeout', () => request.destroy());
    request.once('error', () => resolve(undefined));
  });
}

function tlsOf(plane: ControlPlane): Tls {
  const decode = (b64: string | undefined): string => Buffer.from(b64 ?? '', 'base64').toString();
  const user = plane.kubeConfig.getCurrentUser();
  return {
    ca: decode(plane.kubeConfig.getCurrentCluster()?.caData),
    cert: decode(user?.certData),
    key: decode(user?.keyData),
  };
}

/** Kills the plane's API server, starts it again at once, and times the new one to /readyz. */
async function timeRestart(plane: ControlPlane, tls: Tls): Promise<Start> {
  await plane.outage('kube-apiserver', 0);
  const started = performance.now();
  const pid = plane.running().find((p) => p.name === 'kube-apiserver')?.pid ?? -1;
  const perf = PERF_DIR
    ? spawn(
        'perf',
        ['record', '-q', '-F', '499', '-g', '-p', String(pid), '-o', path.join(PERF_DIR, `${pid}.data`)],
        {
          stdio: 'ignore',
        },
      )
    : undefined;
  const at = (): Milestone => ({ ms: performance.now() - started, cpuS: cpuSeconds(pid) });
  const checks: Record<string, Milestone> = {};
  let answered: Milestone | undefined;
  let failing = 'no answer';
  try {
    while (performance.now() - started < READY_TIMEOUT_MS) {
      const answer = await readyzVerbose(plane.server, tls);
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
  }
}

function printSummary(results: Map<string, Start[]>): void {
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
    console.log(`\n${name}: each check when it first passed (median over ${starts.length} restarts)`);
    const checkNames = [...new Set(starts.flatMap((s) => Object.keys(s.checks)))];
    const rows = checkNames.map((check) => {
      const seen = starts.flatMap((s) => (s.checks[check] ? [s.checks[check]] : []));
      return { check, ms: median(seen.map((m) => m.ms)), cpuS: median(seen.map((m) => m.cpuS)) };
    });
    for (const row of rows.sort((a, b) => a.ms - b.ms))
      console.log(`  ${(row.ms / 1000).toFixed(2)} s, CPU ${row.cpuS.toFixed(2)} s  ${row.check}`);
  }
}

async function main(): Promise<void> {
  const names = Object.keys(VARIANTS);
  const planes = new Map<string, ControlPlane>();
  try {
    for (const name of names)
      planes.set(name, await startControlPlane({ apiserverArgs: VARIANTS[name] ?? [] }));
    const results = new Map<string, Start[]>(names.map((n) => [n, []]));
    for (const plane of planes.values()) await timeRestart(plane, tlsOf(plane));
    for (let round = 1; round <= ROUNDS; round++)
      for (const name of round % 2 ? names : [...names].reverse()) {
        const plane = planes.get(name) as ControlPlane;
        const start = await timeRestart(plane, tlsOf(plane));
        results.get(name)?.push(start);
        console.log(
          `round ${round} ${name}: ready ${(start.ready.ms / 1000).toFixed(2)} s, CPU ${start.ready.cpuS.toFixed(2)} s (serving at ${(start.answered.ms / 1000).toFixed(2)} s, ${start.answered.cpuS.toFixed(2)} s CPU), load ${start.load.toFixed(1)}`,
        );
      }
    console.log(
      `\nload ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')} at the end`,
    );
    printSummary(results);
  } finally {
    for (const plane of planes.values()) await plane.stop();
  }
}

await main();
