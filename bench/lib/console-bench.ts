import fs from 'node:fs';
import path from 'node:path';
import { CustomObjectsApi, KubeConfig, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { SETTEE_GROUP, SETTEE_VERSION } from '../../api/contract.js';
import type { ControlPlane } from '../../local/control-plane.js';
import { getFreePort } from '../../local/ports.js';
import type { ManagedProcess } from '../../local/process.js';
import { provisionConsoleIdentity } from '../../local/tenant-access.js';
import type { CompiledPlatform } from './compiled-platform.js';
import { ROOT, waitForHttp } from './processes.js';

/** The phases a benchmark's instances cycle through (no operator runs: the status is written directly). */
export const BENCH_PHASES = ['Running', 'Hibernated', 'Waking', 'Starting'] as const;

const instanceRef = (namespace: string) => ({
  group: SETTEE_GROUP,
  version: SETTEE_VERSION,
  namespace,
  plural: 'couchinstances',
});

export const benchInstanceName = (i: number): string => `db-${String(i).padStart(4, '0')}`;

/** Writes one instance's status phase (a merge patch, as the operator's status writes are). */
export async function setBenchPhase(
  custom: CustomObjectsApi,
  ref: { namespace: string; name: string; phase: string },
): Promise<void> {
  await custom.patchNamespacedCustomObjectStatus(
    {
      ...instanceRef(ref.namespace),
      name: ref.name,
      body: {
        status: {
          phase: ref.phase,
          endpoint: `https://${ref.name}.${ref.namespace}.couch.example.com`,
          conditions: [
            {
              type: 'Active',
              status: ref.phase === 'Running' ? 'True' : 'False',
              reason: ref.phase,
              message: '',
              lastTransitionTime: new Date().toISOString(),
            },
          ],
        },
      },
    },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
}

/** `count` CouchInstances with a status, 50 at a time; every fifth is paid with Keep alive. */
export async function createBenchInstances(
  kubeConfig: KubeConfig,
  namespace: string,
  count: number,
): Promise<void> {
  const custom = kubeConfig.makeApiClient(CustomObjectsApi);
  const one = async (i: number): Promise<void> => {
    const name = benchInstanceName(i);
    await custom.createNamespacedCustomObject({
      ...instanceRef(namespace),
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
    await setBenchPhase(custom, {
      namespace,
      name,
      phase: BENCH_PHASES[i % BENCH_PHASES.length] ?? 'Running',
    });
  };
  for (let i = 0; i < count; i += 50)
    await Promise.all(Array.from({ length: Math.min(50, count - i) }, (_, k) => one(i + k)));
}

/** Signs in as a browser would and returns the session cookie (`name=value`). */
export async function benchSignIn(base: string, token: string): Promise<string> {
  const response = await fetch(`${base}/api/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: base },
    body: JSON.stringify({ token }),
  });
  if (response.status !== 201) throw new Error(`sign-in answered ${response.status}`);
  return (response.headers.getSetCookie()[0] ?? '').split(';')[0] ?? '';
}

export interface BenchConsole {
  base: string;
  process: ManagedProcess;
}

/**
 * The console compiled as its image runs it, as its own ServiceAccount (TokenReview rights only),
 * on a free loopback port. The caller stops the process.
 */
export async function startBenchConsole(options: {
  plane: ControlPlane;
  platform: CompiledPlatform;
  /** Where the console's ServiceAccount lives. */
  namespace: string;
}): Promise<BenchConsole> {
  if (!fs.existsSync(path.join(ROOT, 'console', 'web', 'dist', 'index.html')))
    throw new Error('the console page is not built: npm run build:web');
  const admin = options.plane.kubeConfig;
  const consoleToken = await provisionConsoleIdentity(admin, {
    namespace: options.namespace,
    serviceAccount: 'console',
  });
  const cluster = admin.getCurrentCluster();
  if (!cluster) throw new Error('no cluster');
  const own = new KubeConfig();
  own.loadFromOptions({
    clusters: [cluster],
    users: [{ name: 'console', token: consoleToken }],
    contexts: [{ name: 'console', cluster: cluster.name, user: 'console' }],
    currentContext: 'console',
  });
  const kubeconfigPath = path.join(path.dirname(options.plane.kubeconfigPath), 'console-bench.kubeconfig');
  fs.writeFileSync(kubeconfigPath, own.exportConfig(), { mode: 0o600 });
  const port = await getFreePort();
  const base = `http://127.0.0.1:${port}`;
  const process_ = options.platform.start('console', {
    PATH: process.env.PATH,
    KUBECONFIG: kubeconfigPath,
    SETTEE_CONSOLE_HOST: '127.0.0.1',
    SETTEE_CONSOLE_PORT: String(port),
    SETTEE_CONSOLE_SESSION_SECRET: 'bench-session-secret-0123456789abcdef',
    SETTEE_CONSOLE_MAX_STREAMS_PER_SESSION: '4',
    SETTEE_LOG_LEVEL: 'warn',
  });
  try {
    await waitForHttp(`${base}/readyz`, 'the console', 200, process_.exited);
  } catch (err) {
    await process_.stop(5_000);
    throw err;
  }
  return { base, process: process_ };
}
