/**
 * Which of B's samples the probe itself held. A sample's latency runs from its scheduled send
 * time to the probe reading its answer, so it also holds the time the probe could not send it (its
 * event loop busy with its own work or GC, or no CPU for it) and the time it could not read the
 * answer. Neither is the gateway's: the gateway sees a request only once it is sent, and a gateway
 * that stalls delays every request sent into it, all counted (the probe sends on schedule whatever
 * the answers). A sample the probe held more than PROBE_HOLD_MS is left out of the p99s and counted;
 * when more than MAX_HELD_SHARE of a phase's samples are left out, its p99 would be that of what is
 * left, so the verdict stays undecided.
 */
import { SERIES, type ProbeWindow, type Series } from './tenant-b-probe.js';

/** A sample the probe held longer than this (ms) is the probe's, not the gateway's. */
export const PROBE_HOLD_MS = 5;
/** More left out than this share of a phase's samples, and its p99 is not B's: undecided. */
export const MAX_HELD_SHARE = 0.01;

/** The probe's stalls, [from, to) ms after the run's start, in order and apart (its ticker's). */
export type Stalls = ReadonlyArray<readonly [number, number]>;

/** How much of [from, to) `stalls` cover (ms). */
function stalledWithin(stalls: Stalls, from: number, to: number): number {
  // The first stall that ends after `from`.
  let [low, high] = [0, stalls.length];
  while (low < high) {
    const mid = (low + high) >> 1;
    if (stalls[mid]![1] <= from) low = mid + 1;
    else high = mid;
  }
  let covered = 0;
  for (let i = low; i < stalls.length && stalls[i]![0] < to; i++)
    covered += Math.min(to, stalls[i]![1]) - Math.max(from, stalls[i]![0]);
  return covered;
}

/**
 * How long the probe held a sample (ms): how late it sent it, and how long it was stalled while
 * the request was out (an answer that came meanwhile waited for it; an upper bound).
 */
export function probeHeldMs(
  stalls: Stalls,
  scheduledMs: number,
  sendLateMs: number,
  latencyMs: number,
): number {
  return sendLateMs + stalledWithin(stalls, scheduledMs + sendLateMs, scheduledMs + latencyMs);
}

/** Each window's samples without those the probe held over PROBE_HOLD_MS, and how many of each series were. */
export function withoutProbeHeld(
  probe: readonly ProbeWindow[],
  stalls: Stalls,
): { probe: ProbeWindow[]; heldOut: Array<Record<Series, number>> } {
  const heldOut = probe.map(() => ({ publish: 0, read: 0, redis: 0, engine: 0 }));
  const kept = probe.map((window, w) => {
    const pick = (series: Series) => {
      const keep = window.latenciesUs[series].map(
        (latency, i) =>
          probeHeldMs(
            stalls,
            window.scheduledMs[series][i]!,
            window.sendLateUs[series][i]! / 1000,
            latency / 1000,
          ) <= PROBE_HOLD_MS,
      );
      heldOut[w]![series] = keep.filter((k) => !k).length;
      return (values: number[]) => values.filter((_, i) => keep[i]);
    };
    const filters = Object.fromEntries(SERIES.map((series) => [series, pick(series)])) as Record<
      Series,
      (values: number[]) => number[]
    >;
    const each = (field: Record<Series, number[]>) =>
      Object.fromEntries(SERIES.map((series) => [series, filters[series](field[series])])) as Record<
        Series,
        number[]
      >;
    return {
      ...window,
      latenciesUs: each(window.latenciesUs),
      sendLateUs: each(window.sendLateUs),
      scheduledMs: each(window.scheduledMs),
    };
  });
  return { probe: kept, heldOut };
}
