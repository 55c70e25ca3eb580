/**
 * Browser memory under live updates: Chromium shows the instance list of 500 instances while their
 * phases change for 10 minutes (status writes to the API server -> the console's watch -> server-sent
 * events -> the page), and the page's JavaScript heap and DOM size are read through Chromium's
 * DevTools protocol (Performance.getMetrics) every 30 s, each time after a forced garbage collection
 * (HeapProfiler.collectGarbage), so what is read is what the page keeps, not garbage not yet collected.
 *
 *   npx tsx bench/console-browser-memory.ts
 *     (BENCH_INSTANCES=500, BENCH_LIVE_MINUTES=10, BENCH_UPDATES_PER_SECOND=10, BENCH_SAMPLE_SECONDS=30)
 *
 * The console runs compiled as its image runs it; the browser is the loopback-only Chromium of the
 * tests. At the end the page must show the last phase written for every instance (it is caught up),
 * or the run fails: memory of a page that dropped updates would say nothing.
 */
import { pathToFileURL } from 'node:url';
import { CustomObjectsApi } from '@kubernetes/client-node';
import type { CDPSession, Page } from 'playwright-core';
import { startControlPlane } from '../local/control-plane.js';
import { provisionTenant } from '../local/tenant-access.js';
import { waitFor } from '../local/wait.js';
import { launchLoopbackChromium } from '../test/helpers/gateway/loopback-browser.js';
import { compilePlatform } from './lib/compiled-platform.js';
import {
  BENCH_PHASES,
  benchInstanceName,
  benchSignIn,
  createBenchInstances,
  setBenchPhase,
  startBenchConsole,
} from './lib/console-bench.js';
import { median, quantile, round } from './lib/stats.js';

const INSTANCES = Number(process.env.BENCH_INSTANCES ?? 500);
const LIVE_MS = Number(process.env.BENCH_LIVE_MINUTES ?? 10) * 60_000;
const UPDATES_PER_SECOND = Number(process.env.BENCH_UPDATES_PER_SECOND ?? 10);
const SAMPLE_MS = Number(process.env.BENCH_SAMPLE_SECONDS ?? 30) * 1000;
const NAMESPACE = 'bench-live';

const log = (message: string): void => console.error(`[bench] ${message}`);

interface Sample {
  atMs: number;
  heapUsedMb: number;
  heapTotalMb: number;
  domNodes: number;
  listeners: number;
}

/** `since`: the live period's start; a sample's time is when its reading was taken, after the GC. */
async function measure(cdp: CDPSession, since: number): Promise<Sample> {
  await cdp.send('HeapProfiler.collectGarbage');
  const { metrics } = await cdp.send('Performance.getMetrics');
  const metric = (name: string): number => metrics.find((m) => m.name === name)?.value ?? Number.NaN;
  return {
    atMs: Date.now() - since,
    heapUsedMb: metric('JSHeapUsedSize') / 2 ** 20,
    heapTotalMb: metric('JSHeapTotalSize') / 2 ** 20,
    domNodes: metric('Nodes'),
    listeners: metric('JSEventListeners'),
  };
}

/** Least-squares slope of heap used against time, in MB per minute: a leak shows as a steady rise. */
function slopePerMinute(samples: readonly Sample[]): number {
  const xs = samples.map((s) => s.atMs / 60_000);
  const ys = samples.map((s) => s.heapUsedMb);
  const mx = xs.reduce((a, b) => a + b, 0) / xs.length;
  const my = ys.reduce((a, b) => a + b, 0) / ys.length;
  let num = 0;
  let den = 0;
  xs.forEach((x, i) => {
    num += (x - mx) * ((ys[i] ?? 0) - my);
    den += (x - mx) ** 2;
  });
  return den === 0 ? 0 : num / den;
}

/** Phase changes at a steady rate, each to a random instance, until `stop` is aborted. */
async function writeUpdates(
  custom: CustomObjectsApi,
  stop: AbortSignal,
  last: Map<string, string>,
): Promise<{ written: number; failed: number }> {
  let written = 0;
  let failed = 0;
  const interval = 1000 / UPDATES_PER_SECOND;
  const started = Date.now();
  while (!stop.aborted) {
    const name = benchInstanceName(Math.floor(Math.random() * INSTANCES));
    const next = BENCH_PHASES[(BENCH_PHASES.indexOf(last.get(name) as never) + 1) % BENCH_PHASES.length];
    try {
      await setBenchPhase(custom, { namespace: NAMESPACE, name, phase: next ?? 'Running' });
      last.set(name, next ?? 'Running');
      written++;
    } catch {
      failed++;
    }
    const due = started + (written + failed) * interval;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, due - Date.now())));
  }
  return { written, failed };
}

async function shownPhases(page: Page): Promise<Map<string, string>> {
  const rows = (await page.evaluate(
    `[...document.querySelectorAll('tr[data-instance]')].map((row) => [row.getAttribute('data-instance'), row.querySelector('.badge')?.textContent ?? ''])`,
  )) as [string, string][];
  return new Map(rows);
}

export async function main(): Promise<void> {
  const plane = await startControlPlane({ log: (m) => log(`[control plane] ${m}`) });
  const platform = await compilePlatform();
  const cleanups: (() => Promise<void>)[] = [() => platform.remove(), () => plane.stop()];
  try {
    const admin = plane.kubeConfig;
    const custom = admin.makeApiClient(CustomObjectsApi);
    const tenant = await provisionTenant(admin, { namespace: NAMESPACE, serviceAccount: 'user' });
    log(`creating ${INSTANCES} instances`);
    await createBenchInstances(admin, NAMESPACE, INSTANCES);
    const last = new Map<string, string>();
    for (let i = 0; i < INSTANCES; i++)
      last.set(benchInstanceName(i), BENCH_PHASES[i % BENCH_PHASES.length] ?? 'Running');
    const { base, process: consoleProcess } = await startBenchConsole({
      plane,
      platform,
      namespace: NAMESPACE,
    });
    cleanups.unshift(() => consoleProcess.stop(5_000));

    const browser = await launchLoopbackChromium();
    cleanups.unshift(() => browser.close());
    const cookie = await benchSignIn(base, tenant.token);
    await browser.context.addCookies([
      { name: 'settee-console', value: cookie.slice(cookie.indexOf('=') + 1), url: base },
    ]);
    const page = await browser.context.newPage();
    await page.goto(`${base}/instances`);
    await page
      .locator('tr[data-instance]')
      .nth(INSTANCES - 1)
      .waitFor({ timeout: 120_000 });
    const cdp = await browser.context.newCDPSession(page);
    await cdp.send('Performance.enable');
    const baseline = await measure(cdp, Date.now());
    log(`first render: ${round(baseline.heapUsedMb, 1)} MB heap, ${baseline.domNodes} DOM nodes`);

    const stop = new AbortController();
    const started = Date.now();
    const writer = writeUpdates(custom, stop.signal, last);
    const samples: Sample[] = [];
    while (Date.now() - started < LIVE_MS) {
      await new Promise((resolve) =>
        setTimeout(resolve, Math.min(SAMPLE_MS, LIVE_MS - (Date.now() - started))),
      );
      const sample = await measure(cdp, started);
      samples.push(sample);
      log(
        `${round(sample.atMs / 1000)} s: ${round(sample.heapUsedMb, 1)} MB heap used, ${sample.domNodes} DOM nodes, ${sample.listeners} listeners`,
      );
    }
    stop.abort();
    const tally = await writer;
    const liveSeconds = (Date.now() - started) / 1000;

    // The page must have kept up: every row shows the last phase written.
    const caughtUpAfter = Date.now();
    await waitFor(
      'the page to show every last phase',
      async () => {
        const shown = await shownPhases(page);
        for (const [name, phase] of last) if (shown.get(name) !== phase) return undefined;
        return true;
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    );
    const catchUpMs = Date.now() - caughtUpAfter;

    const heap = samples.map((s) => s.heapUsedMb);
    const final = samples[samples.length - 1] ?? baseline;
    const result = {
      instances: INSTANCES,
      liveMinutes: round(liveSeconds / 60, 1),
      updates: {
        written: tally.written,
        failedWrites: tally.failed,
        perSecond: round(tally.written / liveSeconds, 1),
        pageCaughtUpWithinMs: catchUpMs,
      },
      heapUsedMb: {
        afterFirstRender: round(baseline.heapUsedMb, 2),
        final: round(final.heapUsedMb, 2),
        finalToFirstRenderRatio: round(final.heapUsedMb / baseline.heapUsedMb, 2),
        samples: samples.length,
        median: round(median(heap), 2),
        p99: round(quantile(heap, 0.99), 2),
        min: round(Math.min(...heap), 2),
        max: round(Math.max(...heap), 2),
        slopeMbPerMinute: round(slopePerMinute(samples), 3),
      },
      heapTotalMbMedian: round(median(samples.map((s) => s.heapTotalMb)), 1),
      domNodes: {
        afterFirstRender: baseline.domNodes,
        median: median(samples.map((s) => s.domNodes)),
        max: Math.max(...samples.map((s) => s.domNodes)),
      },
      eventListeners: {
        afterFirstRender: baseline.listeners,
        max: Math.max(...samples.map((s) => s.listeners)),
      },
    };
    console.log(JSON.stringify(result, null, 2));
  } finally {
    for (const cleanup of cleanups) await cleanup().catch((err: unknown) => log(String(err)));
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
