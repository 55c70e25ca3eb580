/**
 * Tenant B's probe, a process of its own: from the run's start to its end, without a break, it
 * sends B's publishes and document reads through the gateway (one connection each, closed loop)
 * and, beside them, B's own Redis a PING and B's own CouchDB engine a read directly, on schedule,
 * which no part of the gateway or of tenant A touches: when those rise as much as B's requests
 * through the gateway do, what B waits for is the machine, not the gateway. Each answered request
 * counts in the window it started and ended in (after the window's settling time), so B is
 * measured the same way in every phase. In the "in B's process" windows it also runs A's load
 * itself, as the former bench did.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import type { ManagedProcess } from '../../local/process.js';
import { runLoadProcess, serveLoadProcess } from '../lib/load-process.js';
import { runWindows, sleepUntil, waitForStart, type Window } from './schedule.js';
import { atItsLimits, publishInit, readInit, type SentTally, type Tenant } from './tenant-load.js';

/** B's request kinds: through the gateway, and straight to B's own Redis and engine. */
export const SERIES = ['publish', 'read', 'redis', 'engine'] as const;
export type Series = (typeof SERIES)[number];
/** The direct requests' rate a second each: a steady sample that costs the machine little. */
const DIRECT_PER_SECOND = 50;

export interface TenantBProbeSpec {
  a: Tenant;
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
  errors: number;
  /** The p99 of the probe's own event-loop delay in the window (ms). */
  probeLoopP99Ms: number;
  /** What A sent from inside the probe ("in B's process" windows only). */
  inProcess?: SentTally;
}

async function run(spec: TenantBProbeSpec): Promise<{ windows: ProbeWindow[] }> {
  const redis = new Redis({ ...spec.redis, protocol: 2, lazyConnect: true });
  await redis.connect();
  const results: ProbeWindow[] = spec.windows.map(() => ({
    latenciesUs: { publish: [], read: [], redis: [], engine: [] },
    errors: 0,
    probeLoopP99Ms: 0,
  }));
  console.log(`ready ${process.pid}`);
  const startAt = await waitForStart(spec.startFile);
  const endAt = startAt + (spec.windows.at(-1)?.toMs ?? 0);
  const windowOf = (from: number, to: number): ProbeWindow | undefined => {
    const index = spec.windows.findIndex((w) => from >= w.fromMs + spec.settleMs && to <= w.toMs);
    return index < 0 ? undefined : results[index];
  };
  const timed = async (series: Series, request: () => Promise<boolean>): Promise<void> => {
    const from = Date.now() - startAt;
    const started = performance.now();
    const ok = await request().catch(() => false);
    const window = windowOf(from, Date.now() - startAt);
    if (!window) return;
    if (ok) window.latenciesUs[series].push(Math.round((performance.now() - started) * 1000));
    else window.errors += 1;
  };
  const answered = (url: string, init: RequestInit) => async (): Promise<boolean> => {
    const response = await fetch(url, init);
    await response.arrayBuffer();
    return response.ok;
  };
  const closedLoop = async (series: Series, request: () => Promise<boolean>): Promise<void> => {
    while (Date.now() < endAt) await timed(series, request);
  };
  const onSchedule = async (series: Series, request: () => Promise<boolean>): Promise<void> => {
    const inFlight: Array<Promise<void>> = [];
    for (let n = 0; startAt + (n * 1000) / DIRECT_PER_SECOND < endAt; n++) {
      await sleepUntil(startAt + (n * 1000) / DIRECT_PER_SECOND);
      inFlight.push(timed(series, request));
    }
    await Promise.all(inFlight);
  };
  const loopDelay = monitorEventLoopDelay({ resolution: 10 });
  loopDelay.enable();
  await sleepUntil(startAt);
  await Promise.all([
    closedLoop('publish', answered(spec.b.publishUrl, publishInit(spec.b))),
    closedLoop('read', answered(spec.b.docUrl, readInit)),
    onSchedule('redis', async () => (await redis.ping()) === 'PONG'),
    onSchedule('engine', answered(spec.engineDocUrl, readInit)),
    runWindows(
      startAt,
      spec.windows.map((window, index) => ({ ...window, index })),
      async (window, stop) => {
        loopDelay.reset();
        const result = results[window.index]!;
        if (window.phase === "A at its limits, in B's process")
          result.inProcess = await atItsLimits(spec.a, stop);
        else await sleepUntil(startAt + window.toMs);
        result.probeLoopP99Ms = loopDelay.percentile(99) / 1e6;
      },
    ),
  ]);
  loopDelay.disable();
  redis.disconnect();
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
): Promise<{ windows: ProbeWindow[] }> {
  return runLoadProcess<TenantBProbeSpec, { windows: ProbeWindow[] }>(
    'bench/tenant-isolation/tenant-b-probe.ts',
    spec,
    {
      onLine: (line) => {
        const ready = /^ready (\d+)$/.exec(line);
        if (ready) onReady(Number(ready[1]));
      },
      onStart,
    },
  );
}
