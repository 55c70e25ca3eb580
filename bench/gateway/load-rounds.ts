/**
 * How bench/gateway-proxy.ts loads its targets and sums up what it measured: rounds that alternate
 * between targets, back-to-back pairs for a ratio of two, medians and spreads.
 */
import fs from 'node:fs';
import { median, medianSpread, minMax, round, type MedianSpread } from '../lib/stats.js';
import { runLoad, type LoadResult } from './load-generator.js';

export interface Target {
  name: string;
  url: string;
  headers?: Record<string, string>;
}

export interface Summary {
  rps: number;
  /** The rounds' lowest and highest throughput: the spread around the median. */
  rpsSpread: [number, number];
  p50Us: number;
  p50SpreadUs: [number, number];
  p99Us: number;
  little: number;
  errors: number;
}

export function summarize(results: LoadResult[]): Summary {
  return {
    rps: round(median(results.map((r) => r.rps))),
    rpsSpread: minMax(results.map((r) => r.rps)),
    p50Us: round(median(results.map((r) => r.latencyUs.p50))),
    p50SpreadUs: minMax(results.map((r) => r.latencyUs.p50)),
    p99Us: round(median(results.map((r) => r.latencyUs.p99))),
    little: round(median(results.map((r) => r.littleConcurrency)), 2),
    errors: results.reduce((sum, r) => sum + r.errors + r.non2xx, 0),
  };
}

/** The process's CPU time so far (user + system), in microseconds, from /proc (Linux). */
function cpuMicros(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  // utime and stime are fields 14 and 15 of stat, 12 and 13 after the command; in clock ticks (100 Hz).
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

export interface PairedComparison {
  pairs: number;
  /**
   * The gateway's own CPU time per forwarded request, median of the pairs, and on / off per pair:
   * what the checks cost, less swayed than throughput by other work on a shared machine.
   */
  cpuUsPerRequest: { on: number; off: number };
  /** Of the per-pair ratios (on / off). */
  cpuRatio: MedianSpread;
  throughputRatio: MedianSpread;
  /** Of the per-pair differences (on - off), one connection. */
  addedP50Us: MedianSpread;
  /** Median of the per-pair differences. */
  addedP99Us: number;
  on: Summary;
  off: Summary;
}

/**
 * Two targets measured back to back in pairs, which one goes first alternating, each pair giving
 * one ratio: on this shared machine the load from other work drifts within seconds, and a ratio
 * of neighbours is steadier than a ratio of medians taken minutes apart.
 */
export async function comparePaired(
  on: Target & { pid: number },
  off: Target & { pid: number },
  run: { pairs: number; seconds: number; connections: number },
): Promise<PairedComparison> {
  const results = { on: [] as LoadResult[], off: [] as LoadResult[] };
  const cpu = { on: [] as number[], off: [] as number[] };
  const latency = { on: [] as LoadResult[], off: [] as LoadResult[] };
  for (let pair = 0; pair < run.pairs; pair++) {
    const order = pair % 2 === 0 ? (['on', 'off'] as const) : (['off', 'on'] as const);
    for (const which of order) {
      const target = which === 'on' ? on : off;
      const load = { url: target.url, durationMs: run.seconds * 1000, warmupMs: 500 };
      const before = cpuMicros(target.pid);
      const result = await runLoad({ ...load, connections: run.connections });
      // The warm-up's requests are in the CPU time but not in the count: both targets alike.
      cpu[which].push((cpuMicros(target.pid) - before) / result.requests);
      results[which].push(result);
    }
    for (const which of order) {
      const target = which === 'on' ? on : off;
      latency[which].push(
        await runLoad({ url: target.url, durationMs: run.seconds * 1000, warmupMs: 500, connections: 1 }),
      );
    }
  }
  const ratios = results.on.map((r, i) => r.rps / (results.off[i]?.rps ?? Number.NaN));
  const cpuRatios = cpu.on.map((c, i) => c / (cpu.off[i] ?? Number.NaN));
  const addedP50 = latency.on.map((r, i) => r.latencyUs.p50 - (latency.off[i]?.latencyUs.p50 ?? Number.NaN));
  const addedP99 = latency.on.map((r, i) => r.latencyUs.p99 - (latency.off[i]?.latencyUs.p99 ?? Number.NaN));
  return {
    pairs: run.pairs,
    cpuUsPerRequest: { on: round(median(cpu.on), 1), off: round(median(cpu.off), 1) },
    cpuRatio: medianSpread(cpuRatios, 3),
    throughputRatio: medianSpread(ratios, 3),
    addedP50Us: medianSpread(addedP50),
    addedP99Us: round(median(addedP99)),
    on: summarize([...results.on]),
    off: summarize([...results.off]),
  };
}

/**
 * Round by round ratios of one target's figure to another's (each round runs every target back to
 * back): median and spread, steadier on a shared machine than a ratio of two medians.
 */
export function roundRatios(
  rounds: Rounds,
  of: string,
  to: string,
  figure: (r: LoadResult) => number,
): MedianSpread | null {
  const a = rounds.get(of);
  const b = rounds.get(to);
  if (!a || !b) return null;
  return medianSpread(
    a.map((r, i) => figure(r) / figure(b[i] as LoadResult)),
    3,
  );
}

export type Rounds = Map<string, LoadResult[]>;

/** Where measure() keeps its rounds, out of the JSON report. */
export const ROUNDS_OF = Symbol('rounds');

/** Alternates the targets round by round, so drift in the machine's load hits them all alike. */
export async function measure(
  targets: Target[],
  run: { rounds: number; seconds: number; connections: number },
): Promise<Record<string, Summary> & { [ROUNDS_OF]: Rounds }> {
  const results = new Map<string, LoadResult[]>(targets.map((t) => [t.name, []]));
  for (let round = 0; round < run.rounds; round++) {
    for (const target of targets) {
      const result = await runLoad({
        url: target.url,
        connections: run.connections,
        durationMs: run.seconds * 1000,
        warmupMs: 500,
        headers: target.headers,
      });
      results.get(target.name)?.push(result);
    }
  }
  const summaries: Record<string, Summary> = Object.fromEntries(
    [...results].map(([name, list]) => [name, summarize(list)]),
  );
  return Object.assign(summaries, { [ROUNDS_OF]: results });
}
