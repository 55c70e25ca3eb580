/**
 * The console with many instances: how long Chromium takes to first render the instance list with
 * 500 instances (against 10, side by side, alternating), and the console server's resident memory
 * per open session (signed in, with the live-update stream of 500 instances open).
 *
 *   npx tsx bench/console.ts     (BENCH_INSTANCES=500, BENCH_RENDER_ROUNDS=10, BENCH_SESSIONS=100, BENCH_MEMORY_ROUNDS=3)
 *
 * The console runs as its image runs it (compiled, its Dockerfile stage's CMD), as its own
 * ServiceAccount; a tenant ServiceAccount signs in. Instances are CouchInstance objects with a
 * status (no operator runs): the list and the stream are what is measured.
 */
import fs from 'node:fs';
import { pathToFileURL } from 'node:url';
import { startControlPlane } from '../local/control-plane.js';
import { provisionTenant } from '../local/tenant-access.js';
import { launchLoopbackChromium } from '../test/helpers/gateway/loopback-browser.js';
import { compilePlatform } from './lib/compiled-platform.js';
import { benchSignIn, createBenchInstances, startBenchConsole } from './lib/console-bench.js';
import { median, quantile, round } from './lib/stats.js';

const INSTANCES = Number(process.env.BENCH_INSTANCES ?? 500);
const SMALL = 10;
const RENDER_ROUNDS = Number(process.env.BENCH_RENDER_ROUNDS ?? 10);
const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 100);
const MEMORY_ROUNDS = Number(process.env.BENCH_MEMORY_ROUNDS ?? 3);

const log = (message: string): void => console.error(`[bench] ${message}`);

function rssMb(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024;
}

export async function main(): Promise<void> {
  const plane = await startControlPlane({ log: (m) => log(`[control plane] ${m}`) });
  const platform = await compilePlatform();
  const cleanups: (() => Promise<void>)[] = [() => platform.remove(), () => plane.stop()];
  try {
    const admin = plane.kubeConfig;
    const large = await provisionTenant(admin, { namespace: 'bench-large', serviceAccount: 'user' });
    const small = await provisionTenant(admin, { namespace: 'bench-small', serviceAccount: 'user' });
    log(`creating ${INSTANCES} + ${SMALL} instances`);
    await createBenchInstances(admin, 'bench-large', INSTANCES);
    await createBenchInstances(admin, 'bench-small', SMALL);
    const { base, process: consoleProcess } = await startBenchConsole({
      plane,
      platform,
      namespace: 'bench-large',
    });
    cleanups.unshift(() => consoleProcess.stop(5_000));

    log('console ready; measuring first render');
    // --- time to first render, 500 against 10, alternating
    const browser = await launchLoopbackChromium();
    cleanups.unshift(() => browser.close());
    const render: Record<'large' | 'small', number[]> = { large: [], small: [] };
    const contexts = {
      large: await browser.browser.newContext(),
      small: await browser.browser.newContext(),
    };
    for (const [which, token] of [
      ['large', large.token],
      ['small', small.token],
    ] as const) {
      const cookie = await benchSignIn(base, token);
      await contexts[which].addCookies([
        { name: 'settee-console', value: cookie.slice(cookie.indexOf('=') + 1), url: base },
      ]);
    }
    const expected = { large: INSTANCES, small: SMALL };
    for (let round_ = 0; round_ <= RENDER_ROUNDS; round_++) {
      for (const which of ['large', 'small'] as const) {
        const page = await contexts[which].newPage();
        await page.goto(`${base}/instances`);
        // The last row being there is the list rendered (waitForFunction would need eval, which the CSP refuses).
        await page
          .locator('tr[data-instance]')
          .nth(expected[which] - 1)
          .waitFor({ timeout: 60_000 });
        const ms = (await page.evaluate('performance.now()')) as number;
        // Round 0 warms the browser's and the server's caches and is not counted.
        if (round_ > 0) render[which].push(ms);
        log(`render ${which} round ${round_}: ${round(ms)} ms`);
        await page.close();
      }
    }
    await contexts.large.close();
    await contexts.small.close();

    log(`measuring memory with ${SESSIONS} sessions`);
    // --- memory per open session (each with the stream of the 500-instance namespace open)
    const perSession: number[] = [];
    const idle: number[] = [];
    for (let round_ = 0; round_ < MEMORY_ROUNDS; round_++) {
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      const before = rssMb(consoleProcess.pid);
      idle.push(before);
      const controllers: AbortController[] = [];
      for (let i = 0; i < SESSIONS; i++) {
        const cookie = await benchSignIn(base, large.token);
        const controller = new AbortController();
        controllers.push(controller);
        const response = await fetch(`${base}/api/namespaces/bench-large/instances/stream`, {
          headers: { cookie },
          signal: controller.signal,
        });
        if (response.status !== 200) throw new Error(`stream answered ${response.status}`);
        // Read the snapshot, then leave the stream open and unread, as an idle tab does.
        const reader = response.body!.getReader();
        let text = '';
        while (!text.includes('\n\n')) text += new TextDecoder().decode((await reader.read()).value);
      }
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      const after = rssMb(consoleProcess.pid);
      perSession.push(((after - before) * 1024) / SESSIONS);
      log(`round ${round_ + 1}: ${round(before)} MB idle, ${round(after)} MB with ${SESSIONS} sessions`);
      for (const controller of controllers) controller.abort();
    }

    const stat = (values: number[]) => ({
      median: round(median(values), 1),
      p99: round(quantile(values, 0.99), 1),
      min: round(Math.min(...values), 1),
      max: round(Math.max(...values), 1),
    });
    const result = {
      instances: INSTANCES,
      firstRenderMs: { [`${INSTANCES}`]: stat(render.large), [`${SMALL}`]: stat(render.small) },
      firstRenderRatio: round(median(render.large) / median(render.small), 2),
      sessions: SESSIONS,
      memoryPerSessionKb: stat(perSession),
      idleRssMb: stat(idle),
    };
    console.log(JSON.stringify(result, null, 2));
  } finally {
    for (const cleanup of cleanups) await cleanup().catch((err: unknown) => log(String(err)));
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
