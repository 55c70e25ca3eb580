/**
 * The figures bench/cold-start.ts reports from its per-wake measurements: quantiles, the platform's
 * overhead over the engine alone, the CPU each process used and the API writes seen during a wake.
 */
import { median, quantile, round } from '../lib/stats.js';
import type { SeenWrite } from '../lib/wake-timeline.js';

export function percentiles(ms: readonly number[]): { p50: number; p95: number; p99: number } {
  return { p50: round(quantile(ms, 0.5)), p95: round(quantile(ms, 0.95)), p99: round(quantile(ms, 0.99)) };
}

/** What the platform adds to the engine's start, at the median and at p95. */
export function overhead(
  coldMs: readonly number[],
  engineMs: readonly number[],
): { p50: number; p95: number } {
  return {
    p50: round(quantile(coldMs, 0.5) - quantile(engineMs, 0.5)),
    p95: round(quantile(coldMs, 0.95) - quantile(engineMs, 0.95)),
  };
}

/**
 * The CPU each kind of process used from sending a wake's request to its answer, median over the
 * wakes, largest first: the engine's boot competes with all the others for the machine's cores.
 */
export function cpuDuringWake(perWake: ReadonlyArray<ReadonlyMap<string, number>>): Record<string, number> {
  const labels = new Set(perWake.flatMap((wake) => [...wake.keys()]));
  const medians = [...labels].map(
    (label) => [label, round(median(perWake.map((w) => w.get(label) ?? 0)))] as const,
  );
  return Object.fromEntries(medians.filter(([, ms]) => ms > 0).sort((a, b) => b[1] - a[1]));
}

/** One wake's writes and the window of it to count them in. */
export interface WriteWindow {
  writes: readonly SeenWrite[];
  from: number | undefined;
  to: number | undefined;
}

/**
 * The writes the API watches showed between `from` and `to` of each wake, by what was written:
 * the median count per wake, and the median of their total.
 */
export function writesBetween(perWake: readonly WriteWindow[]): Record<string, number> {
  const counted = perWake.map(({ writes, from, to }) => {
    const counts = new Map<string, number>();
    if (from === undefined || to === undefined) return counts;
    for (const { what, at } of writes)
      if (at >= from && at <= to) counts.set(what, (counts.get(what) ?? 0) + 1);
    return counts;
  });
  const labels = new Set(counted.flatMap((counts) => [...counts.keys()]));
  const medians = [...labels].map(
    (label) => [label, round(median(counted.map((c) => c.get(label) ?? 0)), 1)] as const,
  );
  const total = round(median(counted.map((c) => [...c.values()].reduce((sum, n) => sum + n, 0))), 1);
  return { total, ...Object.fromEntries(medians.filter(([, n]) => n > 0).sort((a, b) => b[1] - a[1])) };
}
