/**
 * B's samples as the report counts them: each latency from when the probe actually sent the
 * request, and without the samples it sent more than PROBE_HOLD_MS late. A late send is the
 * probe's own stall (its event loop busy with its own work or GC, or no CPU for it) before the
 * gateway saw anything; once sent, everything until the answer is read counts, a stall of the
 * probe's meanwhile too: on the gateway's CPU that stall may be the gateway's work for A, the very
 * effect measured, so leaving such samples out would hide the tail. The probe sends on schedule
 * whatever the answers, so a gateway that stalls still delays every request sent into it, each
 * counted from its send. The samples left out are counted: when more than MAX_HELD_SHARE of a
 * compared phase's are, the verdict stays undecided; that share is a tenth of the 1% above a p99,
 * so what is left out can never be the whole tail.
 */
import { SERIES, type ProbeWindow, type Series } from './tenant-b-probe.js';

/** A request the probe sent later than this (ms) after its scheduled time is left out. */
export const PROBE_HOLD_MS = 5;
/** More left out than this share of a phase's samples, and its p99 is not B's: undecided. */
export const MAX_HELD_SHARE = 0.001;

/**
 * Each window's samples with their latencies from the request's send, without those sent over
 * PROBE_HOLD_MS late; and how many of each series were left out.
 */
export function withoutProbeHeld(probe: readonly ProbeWindow[]): {
  probe: ProbeWindow[];
  heldOut: Array<Record<Series, number>>;
} {
  const heldOut = probe.map(() => ({ publish: 0, read: 0, redis: 0, engine: 0 }));
  const kept = probe.map((window, w) => {
    const bySeries = SERIES.map((series) => {
      const lateUs = window.sendLateUs[series];
      const keep = lateUs.map((late) => late <= PROBE_HOLD_MS * 1000);
      heldOut[w]![series] = keep.filter((k) => !k).length;
      const pick = (values: number[]) => values.filter((_, i) => keep[i]);
      return {
        latenciesUs: pick(window.latenciesUs[series].map((latency, i) => latency - lateUs[i]!)),
        sendLateUs: pick(lateUs),
        scheduledMs: pick(window.scheduledMs[series]),
      };
    });
    const field = (name: keyof (typeof bySeries)[number]) =>
      Object.fromEntries(SERIES.map((series, s) => [series, bySeries[s]![name]])) as Record<Series, number[]>;
    return {
      ...window,
      latenciesUs: field('latenciesUs'),
      sendLateUs: field('sendLateUs'),
      scheduledMs: field('scheduledMs'),
    };
  });
  return { probe: kept, heldOut };
}
