/**
 * B's slowest samples laid beside the gateway's trace: for a run saved with BENCH_SAVE and traced
 * with BENCH_TRACE (stall-trace.mjs), per phase and series, the slowest 1% of B's samples (counted
 * from their send) and what the gateway's event loop was doing while each was out: its GCs
 * (scavenges, mark-compacts) and its stalls, each stall split into the time its main thread ran
 * (its own work) and the time it was ready but waited for a CPU (the machine's), beside the same
 * for a sample of every 20th request (the base rate).
 *
 *   npx tsx bench/tenant-isolation/trace-tail.ts <BENCH_TRACE folder> <BENCH_SAVE file>
 */
import fs from 'node:fs';
import path from 'node:path';
import { quantile } from '../lib/stats.js';
import type { Window } from './schedule.js';
import type { ProbeWindow, Series } from './tenant-b-probe.js';

interface TraceEvent {
  kind: 'scavenge' | 'mark-compact' | 'other gc' | 'stall';
  /** Epoch ms. */
  from: number;
  to: number;
  /** A stall's main-thread time: ran, and waited for a CPU (ms). */
  ran: number;
  waited: number;
}

/** perf_hooks' gc kinds: 1 minor (a scavenge), 4 major (a mark-compact). */
const GC_KINDS: Record<string, TraceEvent['kind']> = { '1': 'scavenge', '4': 'mark-compact' };

export function parseTrace(text: string): TraceEvent[] {
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [type, at, ms, ran, waited] = line.split(' ');
      const from = Number(at);
      const to = from + Number(ms);
      if (type === 'gc') return { kind: GC_KINDS[ran!] ?? 'other gc', from, to, ran: 0, waited: 0 };
      return { kind: 'stall', from, to, ran: Number(ran), waited: Number(waited) };
    });
}

interface Sample {
  sent: number;
  answered: number;
  latencyMs: number;
}

function samplesOf(run: SavedRun, phase: string, series: Series): Sample[] {
  return run.windows.flatMap((window, w) => {
    if (window.phase !== phase) return [];
    const probe = run.probe[w]!;
    return probe.latenciesUs[series].map((latencyUs, i) => {
      const scheduled = run.startAt + probe.scheduledMs[series][i]!;
      const lateMs = probe.sendLateUs[series][i]! / 1000;
      return {
        sent: scheduled + lateMs,
        answered: scheduled + latencyUs / 1000,
        latencyMs: latencyUs / 1000 - lateMs,
      };
    });
  });
}

/** Of `samples`, how many overlapped an event of `kind`, and the events' ran / waited ms while out, per sample. */
function overlap(samples: readonly Sample[], trace: readonly TraceEvent[], kind: TraceEvent['kind']): string {
  let hit = 0;
  let ran = 0;
  let waited = 0;
  for (const sample of samples) {
    const events = trace.filter((e) => e.kind === kind && e.from < sample.answered && e.to > sample.sent);
    if (events.length > 0) hit += 1;
    for (const e of events) [ran, waited] = [ran + e.ran, waited + e.waited];
  }
  const share = `${Math.round((hit / Math.max(1, samples.length)) * 100)}%`;
  return kind === 'stall'
    ? `${share} (ran ${(ran / Math.max(1, samples.length)).toFixed(1)} / waited ${(waited / Math.max(1, samples.length)).toFixed(1)} ms)`
    : share;
}

interface SavedRun {
  startAt: number;
  windows: Window[];
  probe: ProbeWindow[];
}

function main(): void {
  const [folder, saved] = process.argv.slice(2);
  if (!folder || !saved) throw new Error('usage: trace-tail.ts <BENCH_TRACE folder> <BENCH_SAVE file>');
  const run = JSON.parse(fs.readFileSync(saved, 'utf8')) as SavedRun;
  const gateway = parseTrace(fs.readFileSync(path.join(folder, 'gateway.trace'), 'utf8'));
  const kinds = ['scavenge', 'mark-compact', 'stall'] as const;
  console.log(
    `| series | phase | p99 ms | slowest 1% overlapping the gateway's: ${kinds.join(', ')} | every 20th request: ${kinds.join(', ')} |`,
  );
  console.log('|---|---|---|---|---|');
  for (const series of ['publish', 'read'] as const)
    for (const phase of [...new Set(run.windows.map((w) => w.phase))]) {
      const samples = samplesOf(run, phase, series).sort((a, b) => b.latencyMs - a.latencyMs);
      const p99 = quantile(
        samples.map((s) => s.latencyMs),
        0.99,
      );
      const slowest = samples.slice(0, Math.ceil(samples.length / 100));
      const base = samples.filter((_, i) => i % 20 === 0);
      const cells = (of: readonly Sample[]) => kinds.map((kind) => overlap(of, gateway, kind)).join(', ');
      console.log(`| ${series} | ${phase} | ${p99.toFixed(1)} | ${cells(slowest)} | ${cells(base)} |`);
    }
}

main();
