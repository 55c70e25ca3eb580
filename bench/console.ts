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
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { CustomObjectsApi, KubeConfig, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { SETTEE_GROUP, SETTEE_VERSION } from '../api/contract.js';
import { startControlPlane } from '../local/control-plane.js';
import { getFreePort } from '../local/ports.js';
import { provisionConsoleIdentity, provisionTenant } from '../local/tenant-access.js';
import { launchLoopbackChromium } from '../test/helpers/gateway/loopback-browser.js';
import { compilePlatform } from './lib/compiled-platform.js';
import { ROOT, waitForHttp } from './lib/processes.js';
import { median, quantile, round } from './lib/stats.js';

const INSTANCES = Number(process.env.BENCH_INSTANCES ?? 500);
const SMALL = 10;
const RENDER_ROUNDS = Number(process.env.BENCH_RENDER_ROUNDS ?? 10);
const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 100);
const MEMORY_ROUNDS = Number(process.env.BENCH_MEMORY_ROUNDS ?? 3);
const PHASES = ['Running', 'Hibernated', 'Waking', 'Starting'] as const;

const log = (message: string): void => console.error(`[bench] ${message}`);

async function createInstances(kubeConfig: KubeConfig, namespace: string, count: number): Promise<void> {
  const custom = kubeConfig.makeApiClient(CustomObjectsApi);
  const ref = { group: SETTEE_GROUP, version: SETTEE_VERSION, namespace, plural: 'couchinstances' };
  const one = async (i: number): Promise<void> => {
    const name = `db-${String(i).padStart(4, '0')}`;
    await custom.createNamespacedCustomObject({
      ...ref,
      body: {
        apiVersion: `${SETTEE_GROUP}/${SETTEE_VERSION}`,
        kind: 'CouchInstance',
        metadata: { name },
        spec:
          i % 5 === 0
            ? { plan: 'paid', keepAlive: true }
            : { plan: 'free', hibernation: { idleAfter: '10m' } },
      },
    });
    await custom.patchNamespacedCustomObjectStatus(
      {
        ...ref,
        name,
        body: {
          status: {
            phase: PHASES[i % PHASES.length],
            endpoint: `https://${name}.${namespace}.couch.example.com`,
            conditions: [
              {
                type: 'Active',
                status: 'True',
                reason: 'Running',
                message: '',
                lastTransitionTime: new Date().toISOString(),
              },
            ],
          },
        },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
  };
  for (let i = 0; i < count; i += 50)
    await Promise.all(Array.from({ length: Math.min(50, count - i) }, (_, k) => one(i + k)));
}

function rssMb(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024;
}

async function signIn(base: string, token: string): Promise<string> {
  const response = await fetch(`${base}/api/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: base },
    body: JSON.stringify({ token }),
  });
  if (response.status !== 201) throw new Error(`sign-in answered ${response.status}`);
  return (response.headers.getSetCookie()[0] ?? '').split(';')[0] ?? '';
}

export async function main(): Promise<void> {
  if (!fs.existsSync(path.join(ROOT, 'console', 'web', 'dist', 'index.html')))
    throw new Error('the console page is not built: npm run build:web');
  const plane = await startControlPlane({ log: (m) => log(`[control plane] ${m}`) });
  const platform = await compilePlatform();
  const cleanups: (() => Promise<void>)[] = [() => platform.remove(), () => plane.stop()];
  try {
    const admin = plane.kubeConfig;
    const large = await provisionTenant(admin, { namespace: 'bench-large', serviceAccount: 'user' });
    const small = await provisionTenant(admin, { namespace: 'bench-small', serviceAccount: 'user' });
    const consoleToken = await provisionConsoleIdentity(admin, {
      namespace: 'bench-large',
      serviceAccount: 'console',
    });
    log(`creating ${INSTANCES} + ${SMALL} instances`);
    await createInstances(admin, 'bench-large', INSTANCES);
    await createInstances(admin, 'bench-small', SMALL);

    const cluster = admin.getCurrentCluster();
    if (!cluster) throw new Error('no cluster');
    const own = new KubeConfig();
    own.loadFromOptions({
      clusters: [cluster],
      users: [{ name: 'console', token: consoleToken }],
      contexts: [{ name: 'console', cluster: cluster.name, user: 'console' }],
      currentContext: 'console',
    });
    const kubeconfigPath = path.join(path.dirname(plane.kubeconfigPath), 'console-bench.kubeconfig');
    fs.writeFileSync(kubeconfigPath, own.exportConfig(), { mode: 0o600 });
    const port = await getFreePort();
    const base = `http://127.0.0.1:${port}`;
    const consoleProcess = platform.start('console', {
      PATH: process.env.PATH,
      KUBECONFIG: kubeconfigPath,
      SETTEE_CONSOLE_HOST: '127.0.0.1',
      SETTEE_CONSOLE_PORT: String(port),
      SETTEE_CONSOLE_SESSION_SECRET: 'bench-session-secret-0123456789abcdef',
      SETTEE_CONSOLE_MAX_STREAMS_PER_SESSION: '4',
      SETTEE_LOG_LEVEL: 'warn',
    });
    cleanups.unshift(() => consoleProcess.stop(5_000));
    await waitForHttp(`${base}/readyz`, 'the console', 200, consoleProcess.exited);

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
      const cookie = await signIn(base, token);
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
        const cookie = await signIn(base, large.token);
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
