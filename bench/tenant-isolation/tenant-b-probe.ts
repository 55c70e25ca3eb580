/**
 * Tenant B's probe, a process of its own: from the run's start to its end, without a break, it
 * sends B's publishes and document reads through the gateway and, beside them, B's own Redis a
 * PING and B's own CouchDB engine a read directly, which no part of the gateway or of tenant A
 * touches: when those rise as much as B's requests through the gateway do, what B waits for is
 * the machine, not the gateway. Every series is sent on a fixed schedule (an open model, as a
 * tenant's many clients send whatever the answers) and its latency runs from the scheduled send
 * time, so a stall delays every request scheduled during it instead of counting once (coordinated
 * omission); beside it, how late the probe sent it, so the report counts it from its send and
 * leaves out what the probe itself sent late (probe-hold.ts). A request counts in the window it was
 * scheduled in (after the window's settling time), however long it took: a slow request is never
 * dropped for ending after its window. The probe's own GCs and stalls: BENCH_TRACE
 * (stall-trace.mjs).
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import { Pool, type Dispatcher } from 'undici';
import type { ManagedProcess } from '../../local/process.js';
import { runLoadProcess, serveLoadProcess } from '../lib/load-process.js';
import { runWindows, sleepUntil, waitForStart, type Window } from './schedule.js';
import { publishInit, readInit, type Tenant } from './tenant-load.js';

/** B's request kinds: through the gateway, and straight to B's own Redis and engine. */
export const SERIES = ['publish', 'read', 'redis', 'engine'] as const;
export type Series = (typeof SERIES)[number];
/** Requests a second of each series through the gateway: a p99 of ~1,000 samples per phase. */
const GATEWAY_PER_SECOND = 100;
/** Requests a second of each direct series: a steady sample that costs the machine little. */
const DIRECT_PER_SECOND = 50;
/**
 * How long the probe waits, after the last window, for requests still unanswered or, when it fell
 * that far behind its schedule, unsent: those left are cut off by the run's end, counted (and
 * printed) instead of given a latency.
 */
export const CUT_OFF_AFTER_MS = 10_000;
const LOOP_RESOLUTION_MS = 10;

export interface TenantBProbeSpec {
  b: Tenant;
  /** B's Redis and B's engine's bench document, straight (not through the gateway). */
  redis: { host: string; port: number; password: string };
  engineDocUrl: string;
  windows: Window[];
  startFile: string;
  /** Requests that started within this much of a window's start are not counted. */
  settleMs: number;
}

export interface ProbeWindow {
  /** Latencies (µs, whole) of the requests counted in this window, per series. */
  latenciesUs: Record<Series, number[]>;
  /**
   * Beside each latency: how late the probe sent the request (µs after its scheduled time, the
   * probe's own delay: its event loop or its CPU) and when it was scheduled (ms after the start).
   */
  sendLateUs: Record<Series, number[]>;
  scheduledMs: Record<Series, number[]>;
  errors: number;
  /** Requests scheduled in this window unsent or unanswered CUT_OFF_AFTER_MS after the run's end. */
  cutOff: number;
  /** The p99 of the probe's own event-loop delay in the window (ms). */
  probeLoopP99Ms: number;
}

export interface ProbeResult {
  windows: ProbeWindow[];
}

async function run(spec: TenantBProbeSpec): Promise<ProbeResult> {
  const redis = new Redis({ ...spec.redis, protocol: 2, lazyConnect: true });
  await redis.connect();
  const results: ProbeWindow[] = spec.windows.map(() => ({
    latenciesUs: { publish: [], read: [], redis: [], engine: [] },
    sendLateUs: { publish: [], read: [], redis: [], engine: [] },
    scheduledMs: { publish: [], read: [], redis: [], engine: [] },
    errors: 0,
    cutOff: 0,
    probeLoopP99Ms: 0,
  }));
  console.log(`ready ${process.pid}`);
  const startAt = await waitForStart(spec.startFile);
  // The schedule and the latencies on one clock, performance.now(), with the run's start on it.
  const start = performance.now() + (startAt - Date.now());
  const endMs = spec.windows.at(-1)?.toMs ?? 0;
  /** The window a request scheduled `atMs` after the start counts in, whenever it is answered. */
  const windowOf = (atMs: number): ProbeWindow | undefined => {
    const index = spec.windows.findIndex((w) => atMs >= w.fromMs + spec.settleMs && atMs < w.toMs);
    return index < 0 ? undefined : results[index];
  };
  /**
   * Counted requests not answered yet; what is left here at the cut-off is cut off. Their promises
   * are not kept beyond their answer: kept for the whole run (tens of thousands), they grew the
   * probe's heap and with it its own GC pauses, which its samples then carried.
   */
  const pending = new Set<{ window: ProbeWindow }>();
  let allAnswered = (): void => undefined;
  const onSchedule = async (
    series: Series,
    perSecond: number,
    request: () => Promise<boolean>,
  ): Promise<void> => {
    for (let n = 0; (n * 1000) / perSecond < endMs; n++) {
      const atMs = (n * 1000) / perSecond;
      const wait = start + atMs - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      const window = windowOf(atMs);
      // A probe starved of CPU so long that it is still sending after the cut-off: what is left
      // is cut off unsent, so a run on an overloaded machine ends in bounded time.
      if (performance.now() > start + endMs + CUT_OFF_AFTER_MS) {
        if (window) window.cutOff += 1;
        continue;
      }
      // Sent in the gaps and settling times too, so B's load is the same all along.
      const lateUs = Math.round((performance.now() - start - atMs) * 1000);
      const answered = request().catch(() => false);
      if (!window) continue;
      const entry = { window };
      pending.add(entry);
      void answered.then((ok) => {
        if (!pending.delete(entry)) return;
        if (ok) {
          window.latenciesUs[series].push(Math.round((performance.now() - start - atMs) * 1000));
          window.sendLateUs[series].push(lateUs);
          window.scheduledMs[series].push(atMs);
        } else window.errors += 1;
        if (pending.size === 0) allAnswered();
      });
    }
  };
  // Each series' request is prepared once and sent through an undici Pool per origin, not fetch:
  // fetch cost the probe ~450 us of CPU a request against ~55 for Pool.request (loopback, 2026-11-29),
  // so at its 300 requests a second the probe took ~14% of the core it shares with the gateway,
  // and its own GCs and waits for that core sent ~10% of B's requests over 5 ms late (loaded run).
  const pools = new Map<string, Pool>();
  const answered = (url: string, init: RequestInit) => {
    const { origin, pathname, search } = new URL(url);
    let pool = pools.get(origin);
    if (!pool) pools.set(origin, (pool = new Pool(origin)));
    const body = typeof init.body === 'string' ? Buffer.from(init.body) : undefined;
    const options: Dispatcher.RequestOptions = {
      path: pathname + search,
      method: (init.method ?? 'GET') as Dispatcher.HttpMethod,
      headers: { ...(init.headers as Record<string, string>) },
      body,
    };
    const client = pool;
    return async (): Promise<boolean> => {
      const response = await client.request(options);
      await response.body.arrayBuffer();
      return response.statusCode >= 200 && response.statusCode < 300;
    };
  };
  // Its values are the whole time between the calls of a timer of this period: taken off below.
  const loopDelay = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS });
  loopDelay.enable();
  await Promise.all([
    onSchedule('publish', GATEWAY_PER_SECOND, answered(spec.b.publishUrl, publishInit(spec.b))),
    onSchedule('read', GATEWAY_PER_SECOND, answered(spec.b.docUrl, readInit)),
    onSchedule('redis', DIRECT_PER_SECOND, async () => (await redis.ping()) === 'PONG'),
    onSchedule('engine', DIRECT_PER_SECOND, answered(spec.engineDocUrl, readInit)),
    runWindows(
      startAt,
      spec.windows.map((window, index) => ({ ...window, index })),
      async (window) => {
        loopDelay.reset();
        await sleepUntil(startAt + window.toMs);
        results[window.index]!.probeLoopP99Ms = Math.max(
          0,
          loopDelay.percentile(99) / 1e6 - LOOP_RESOLUTION_MS,
        );
      },
    ),
  ]);
  loopDelay.disable();
  let cutOffTimer: NodeJS.Timeout | undefined;
  await new Promise<void>((resolve) => {
    allAnswered = resolve;
    if (pending.size === 0) resolve();
    cutOffTimer = setTimeout(resolve, CUT_OFF_AFTER_MS);
  });
  clearTimeout(cutOffTimer);
  for (const { window } of pending) window.cutOff += 1;
  pending.clear();
  redis.disconnect();
  await Promise.all([...pools.values()].map((pool) => pool.destroy()));
  return { windows: results };
}

serveLoadProcess(import.meta.url, run);

/**
 * Tenant B's probe in its own process; `onStart` with the process once started (to stop it on
 * failure), `onReady` with its pid once it waits for the start time.
 */
export function runTenantBProbe(
  spec: TenantBProbeSpec,
  onReady: (pid: number) => void,
  onStart: (proc: ManagedProcess) => void,
  trace: { flags: readonly string[]; env: NodeJS.ProcessEnv } = { flags: [], env: process.env },
): Promise<ProbeResult> {
  return runLoadProcess<TenantBProbeSpec, ProbeResult>('bench/tenant-isolation/tenant-b-probe.ts', spec, {
    onLine: (line) => {
      const ready = /^ready (\d+)$/.exec(line);
      if (ready) onReady(Number(ready[1]));
    },
    onStart,
    ...trace,
  });
}
