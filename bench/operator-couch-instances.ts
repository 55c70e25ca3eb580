/**
 * 500 CouchInstances applied at once to a fresh control plane with the operator running as its own
 * process: how long until every instance has its objects and status, the operator's peak memory,
 * and the API requests per reconcile (counted by the API server itself; the operator's own writes
 * are estimated as those less what the controller-manager and the scheduler say they sent, whose
 * client-side throttling is printed too).
 *
 *   npx tsx bench/operator-couch-instances.ts        (BENCH_INSTANCES=500, BENCH_CREATE_CONCURRENCY=50,
 *                                                     BENCH_CONVERGE_SECONDS=180,
 *                                                     BENCH_CPU_PROF=<dir> writes the operator's CPU profile,
 *                                                     BENCH_HEAP_SNAPSHOT=<dir> its heap once all converged,
 *                                                     BENCH_OPERATOR_NODE_ARGS='--a --b' node flags for the
 *                                                     operator before its image's, e.g. to compare V8 flags,
 *                                                     BENCH_TIMELINE_SECONDS=10 how often the timeline samples,
 *                                                     BENCH_OPERATOR_HEAP=pod|machine: V8's heap as in the chart's
 *                                                     pod, from its memory limit (chart-heap-limit.ts), or as
 *                                                     this machine's free memory would size it,
 *                                                     BENCH_RESTART=0 leaves out the restart phase,
 *                                                     BENCH_PODS_SECONDS=900 how long it first waits for
 *                                                     every StatefulSet pod,
 *                                                     BENCH_COMPONENT_API_LIMITS=100/100 the controller-
 *                                                     manager's and scheduler's --kube-api-qps/-burst)
 *
 * "Converged" is each instance's status showing a phase and its endpoint, with its StatefulSet,
 * Services, ConfigMap and Secret created. New instances start awake (replicas 1, hibernating only
 * once idle), so the real StatefulSet controller creates their pods and claims meanwhile; there is
 * no kubelet, so they stop at phase Starting. The timeline (convergence-timeline.ts) shows which
 * stage lags and which process takes the cores meanwhile; CPU seconds per process are printed for
 * the whole run. Then, unless BENCH_RESTART=0, once the StatefulSet controller has made every pod,
 * the operator is stopped and a new one started over the converged instances (operator-restart.ts):
 * the requests and writes it sends, its CPU and the time until it has reconciled every instance.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { AppsV1Api, CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { startControlPlane } from '../local/control-plane.js';
import { getFreePort } from '../local/ports.js';
import { waitFor } from '../local/wait.js';
import { createCouchInstance } from '../test/helpers/gateway/gateway-harness.js';
import { ConditionReason } from '../api/conditions.js';
import { COUCH_OWNED_SELECTOR } from '../api/well-known.js';
import { isAlreadyExists } from '../kube/errors.js';
import { apiserverRequestCounts, TOO_MANY_REQUESTS } from '../test/helpers/kube/apiserver-requests.js';
import { compilePlatform } from './lib/compiled-platform.js';
import { formatTimeline, startConvergenceTimeline } from './lib/convergence-timeline.js';
import { chartOperatorMemoryLimitBytes, v8OldGenerationMb } from './lib/chart-heap-limit.js';
import { watchInstancesReaching } from './lib/instance-watch.js';
import { measureRestart } from './lib/operator-restart.js';
import {
  formatApplyPhase,
  formatRestartPhase,
  type CouchInstanceApplyPhase,
  type CouchInstanceBenchResult,
} from './lib/couch-instance-report.js';
import { inPool } from './lib/pool.js';
import { peakRssMb, rssMb } from './lib/proc-memory.js';
import { cpuBetween, cpuByProcess } from './lib/process-tree-cpu.js';
import { cpuSeconds } from './lib/process-usage.js';
import { quantileOfSorted } from './lib/stats.js';
import { componentClientsBetween, componentWrites, readComponentClients } from './lib/component-metrics.js';
import { sumOverPages } from './lib/paged-list.js';
import { waitForStatefulSetPods } from './lib/statefulset-pods.js';

const NAMESPACE = 'bench';
const CPU_PROF_DIR = process.env.BENCH_CPU_PROF;
const HEAP_SNAPSHOT_DIR = process.env.BENCH_HEAP_SNAPSHOT;
const OPERATOR_NODE_ARGS = (process.env.BENCH_OPERATOR_NODE_ARGS ?? '').split(' ').filter(Boolean);
/** How long after the last create the bench waits for every status (on a loaded machine 2,000 need more than 180 s). */
const CONVERGE_SECONDS = Number(process.env.BENCH_CONVERGE_SECONDS ?? 180);
const TIMELINE_SECONDS = Number(process.env.BENCH_TIMELINE_SECONDS ?? 10);
const OPERATOR_HEAP = process.env.BENCH_OPERATOR_HEAP ?? 'pod';
const RESTART = process.env.BENCH_RESTART !== '0';
/** BENCH_COMPONENT_API_LIMITS=qps/burst: the controller-manager's and scheduler's client limits. */
const COMPONENT_API_LIMITS = ((value) => {
  if (!value) return undefined;
  const [qps, burst] = value.split('/').map(Number);
  if (!(qps && qps > 0 && burst && burst > 0))
    throw new Error(`BENCH_COMPONENT_API_LIMITS: want <qps>/<burst>, e.g. 100/100, got ${value}`);
  return { qps, burst };
})(process.env.BENCH_COMPONENT_API_LIMITS);
/** How long the restart phase waits for the StatefulSet controller to make every pod first. */
const PODS_SECONDS = Number(process.env.BENCH_PODS_SECONDS ?? 900);

async function operatorMetric(port: number, prefix: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  return text
    .split('\n')
    .filter((line) => line.startsWith(prefix))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}

/** Has the operator write a heap snapshot (SIGUSR2) and waits until its event loop is free again. */
async function writeHeapSnapshot(
  pid: number,
  metricsPort: number,
  log: (line: string) => void,
): Promise<void> {
  const before = new Set(await fs.readdir(HEAP_SNAPSHOT_DIR ?? '.'));
  process.kill(pid, 'SIGUSR2');
  const file = await waitFor(
    'the heap snapshot',
    async () => (await fs.readdir(HEAP_SNAPSHOT_DIR ?? '.')).find((name) => !before.has(name)),
    { timeoutMs: 300_000, intervalMs: 200 },
  );
  // The snapshot is written on the main thread: once /metrics answers again, the file is complete
  // (while it is written, a scrape may be refused or cut off).
  await waitFor(
    'the operator to answer after its heap snapshot',
    () =>
      operatorMetric(metricsPort, 'settee_leader ').then(
        () => true as const,
        () => undefined,
      ),
    { timeoutMs: 300_000, intervalMs: 1_000 },
  );
  log(`operator heap snapshot: ${path.join(HEAP_SNAPSHOT_DIR ?? '.', file)}`);
}

/**
 * Creates one CouchInstance; a connection the loaded API server reset is tried again (a create that
 * landed before the reset then answers AlreadyExists, which is the instance created).
 */
async function createRetryingResets(kubeConfig: KubeConfig, name: string): Promise<void> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      await createCouchInstance(kubeConfig, { namespace: NAMESPACE, name }, {});
      return;
    } catch (err) {
      if (attempt > 1 && isAlreadyExists(err)) return;
      if ((err as { code?: unknown }).code !== 'ECONNRESET' || attempt === 5) throw err;
    }
  }
}

export async function runCouchInstanceBench(
  options: { instances?: number; concurrency?: number; log?: (line: string) => void } = {},
): Promise<CouchInstanceBenchResult> {
  const count = options.instances ?? 500;
  const log = options.log ?? ((line: string) => console.log(line));
  const plane = await startControlPlane({
    log: (m) => log(`[control plane] ${m}`),
    componentMetrics: true,
    ...(COMPONENT_API_LIMITS ? { componentApiLimits: COMPONENT_API_LIMITS } : {}),
  });
  const ports = plane.componentMetricsPorts;
  if (!ports) throw new Error('the control plane serves no component metrics');
  const cleanups: (() => Promise<void>)[] = [];
  try {
    const core = plane.kubeConfig.makeApiClient(CoreV1Api);
    const apps = plane.kubeConfig.makeApiClient(AppsV1Api);
    await core.createNamespace({ body: { metadata: { name: NAMESPACE } } });

    // Compiled, as the image runs it: tsx's loader alone would add about 90 MB to the RSS measured.
    const compiled = await compilePlatform();
    cleanups.push(() => compiled.remove());
    const metricsPort = await getFreePort();
    const oldGenerationMb =
      OPERATOR_HEAP === 'machine' ? undefined : v8OldGenerationMb(await chartOperatorMemoryLimitBytes());
    const startOperator = async () => {
      const started = compiled.start(
        'operator',
        {
          ...process.env,
          KUBECONFIG: plane.kubeconfigPath,
          SETTEE_WATCH_NAMESPACE: NAMESPACE,
          SETTEE_LEADER_ELECTION_NAMESPACE: NAMESPACE,
          // Hundreds of free instances in one namespace: the free-instance limit would hold all but 5.
          SETTEE_FREE_INSTANCES_PER_NAMESPACE: '1000000',
          SETTEE_METRICS_PORT: String(metricsPort),
          SETTEE_LOG_LEVEL: 'warn',
          // One replica: at load 30-37 the API server answered a Lease renewal after more than 7.8 s,
          // and the operator stepped down and exited as it must (three runs ended so, 09:22-09:32 on
          // 2026-11-28); the Lease's requests are not what this bench measures.
          SETTEE_LEADER_ELECTION: 'false',
        },
        [
          ...(oldGenerationMb === undefined ? [] : [`--max-old-space-size=${oldGenerationMb}`]),
          ...OPERATOR_NODE_ARGS,
          ...(CPU_PROF_DIR ? ['--cpu-prof', `--cpu-prof-dir=${CPU_PROF_DIR}`] : []),
          ...(HEAP_SNAPSHOT_DIR
            ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${HEAP_SNAPSHOT_DIR}`]
            : []),
        ],
      );
      cleanups.unshift(() => started.stop());
      await waitFor(
        'the operator to lead',
        async () => ((await operatorMetric(metricsPort, 'settee_leader ')) === 1 ? true : undefined),
        { timeoutMs: 60_000, intervalMs: 200, abort: started.exited },
      );
      return started;
    };
    const operator = await startOperator();
    const idleRssMb = await peakRssMb(operator.pid);
    log(`operator pid ${operator.pid} leads; peak RSS so far ${idleRssMb.toFixed(0)} MB`);

    const requestsBefore = await apiserverRequestCounts(plane.kubeConfig);
    const componentsBefore = await readComponentClients(ports);
    const reconcilesBefore = await operatorMetric(
      metricsPort,
      'settee_reconcile_total{controller="couch-instance"',
    );
    const names = Array.from({ length: count }, (_, i) => `bench-${String(i).padStart(4, '0')}`);
    const createdAt = new Map<string, number>();
    // A failed pass writes status too (phase kept, endpoint, Degraded ReconcileFailed): on a loaded
    // machine an apply that timed out had one instance counted with a Service missing (2,000 run,
    // 10:08, load 28), so such a status is not converged.
    const watch = await watchInstancesReaching(plane.kubeConfig, NAMESPACE, count, (instance) =>
      Boolean(
        instance.status?.phase &&
        instance.status.endpoint &&
        !instance.status.conditions?.some((c) => c.reason === ConditionReason.ReconcileFailed),
      ),
    );
    cleanups.unshift(async () => watch.stop());
    const timeline = startConvergenceTimeline({
      kubeConfig: plane.kubeConfig,
      namespace: NAMESPACE,
      intervalMs: TIMELINE_SECONDS * 1000,
      created: () => createdAt.size,
      converged: () => watch.progress(),
      operatorMetrics: () => fetch(`http://127.0.0.1:${metricsPort}/metrics`).then((r) => r.text()),
    });
    cleanups.unshift(async () => void (await timeline.stop()));
    const started = Date.now();
    const cpuBefore = cpuSeconds(operator.pid);
    const cpuByProcessBefore = cpuByProcess();
    await inPool(names, options.concurrency ?? 50, async (name) => {
      await createRetryingResets(plane.kubeConfig, name);
      createdAt.set(name, Date.now());
    });
    log(`created ${count} CouchInstances in ${Date.now() - started} ms`);
    let timer: NodeJS.Timeout | undefined;
    // An operator that exits (a lost Lease exits on purpose) ends the run now, saying why; its exit
    // at the end of the run must not be an unhandled rejection.
    const exitedEarly = operator.exited.then((exit) => {
      throw new Error(`the operator exited (${exit}) before all converged:\n${operator.output()}`);
    });
    exitedEarly.catch(() => undefined);
    const statusSeenAt = await Promise.race([
      watch.reached,
      exitedEarly,
      new Promise<never>(
        (_, reject) =>
          (timer = setTimeout(
            () =>
              reject(
                new Error(
                  `not converged within ${CONVERGE_SECONDS} s of the last create: ${watch.progress()} of ${count} had objects and status`,
                ),
              ),
            CONVERGE_SECONDS * 1000,
          )),
      ),
    ]).finally(() => clearTimeout(timer));
    const operatorCpuSeconds = cpuSeconds(operator.pid) - cpuBefore;
    const cpuSecondsByProcess = new Map(
      [...cpuBetween(cpuByProcessBefore, cpuByProcess())].map(([label, ms]) => [label, ms / 1000]),
    );
    const timelineRows = await timeline.stop();
    const totalMs = Math.max(...statusSeenAt.values()) - started;

    const owner = { namespace: NAMESPACE, labelSelector: COUCH_OWNED_SELECTOR };
    const owned = {
      statefulSets: await sumOverPages((page) => apps.listNamespacedStatefulSet({ ...owner, ...page })),
      services: await sumOverPages((page) => core.listNamespacedService({ ...owner, ...page })),
      configMaps: await sumOverPages((page) => core.listNamespacedConfigMap({ ...owner, ...page })),
      secrets: await sumOverPages((page) => core.listNamespacedSecret({ ...owner, ...page })),
    };
    if (
      owned.statefulSets !== count ||
      owned.services !== 2 * count ||
      owned.configMaps !== count ||
      owned.secrets !== count
    )
      throw new Error(`status without all objects: ${JSON.stringify(owned)}`);

    // Let trailing reconciles (each owned object's add event maps back to its instance) finish.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const requestsAfter = await apiserverRequestCounts(plane.kubeConfig);
    const componentClients = componentClientsBetween(componentsBefore, await readComponentClients(ports));
    const reconciles =
      (await operatorMetric(metricsPort, 'settee_reconcile_total{controller="couch-instance"')) -
      reconcilesBefore;
    const byKey: Record<string, number> = {};
    for (const [key, after] of requestsAfter) {
      const delta = after - (requestsBefore.get(key) ?? 0);
      const [verb] = key.split(' ');
      // LIST and WATCH are the informers' and the bench's streams; POST couchinstances is the bench;
      // endpoints and leases are the API server's own (the `kubernetes` Service, its identity Lease:
      // the operator runs without leader election here).
      if (delta <= 0 || verb === 'LIST' || verb === 'WATCH') continue;
      if (key === 'POST couchinstances' || key === TOO_MANY_REQUESTS) continue;
      if (key.endsWith(' endpoints') || key.endsWith(' leases')) continue;
      byKey[key] = delta;
    }
    const allClientRequests = Object.values(byKey).reduce((a, b) => a + b, 0);
    const allClientWrites = Object.entries(byKey)
      .filter(([key]) => !key.startsWith('GET '))
      .reduce((sum, [, n]) => sum + n, 0);
    const operatorWrites = allClientWrites - componentWrites(componentClients);
    // Read before the snapshot, which itself takes about as much memory again as the heap.
    const operatorPeakRssMb = await peakRssMb(operator.pid);
    const operatorSettledRssMb = await rssMb(operator.pid);
    const latencies = names
      .map((name) => (statusSeenAt.get(name) ?? NaN) - (createdAt.get(name) ?? NaN))
      .sort((a, b) => a - b);
    const applied: CouchInstanceApplyPhase = {
      instances: count,
      totalMs,
      latencyMs: {
        p50: quantileOfSorted(latencies, 0.5),
        p99: quantileOfSorted(latencies, 0.99),
        max: latencies.at(-1) ?? NaN,
      },
      operatorOldGenerationMb: oldGenerationMb,
      operatorPeakRssMb,
      operatorSettledRssMb,
      operatorCpuSeconds,
      reconciles,
      requestsByVerbAndResource: byKey,
      allClientRequests,
      allClientRequestsPerReconcile: allClientRequests / reconciles,
      componentClients,
      operatorWrites,
      operatorWritesPerReconcile: operatorWrites / reconciles,
      operatorWritesPerInstance: operatorWrites / count,
      cpuSecondsByProcess,
      tooManyRequests:
        (requestsAfter.get(TOO_MANY_REQUESTS) ?? 0) - (requestsBefore.get(TOO_MANY_REQUESTS) ?? 0),
      timeline: formatTimeline(timelineRows),
    };
    // Printed now: the restart phase waits for every pod first, which a loaded machine can time out.
    for (const line of formatApplyPhase(applied)) log(line);
    if (HEAP_SNAPSHOT_DIR) await writeHeapSnapshot(operator.pid, metricsPort, log);
    // The restart phase measures the operator alone: every pod exists first.
    const pods = RESTART
      ? await waitForStatefulSetPods({
          kubeConfig: plane.kubeConfig,
          namespace: NAMESPACE,
          timeoutMs: PODS_SECONDS * 1000,
          log,
        })
      : undefined;
    const podsMadeMs = pods === undefined ? undefined : Date.now() - started;
    const restart = RESTART
      ? await measureRestart({
          kubeConfig: plane.kubeConfig,
          instances: count,
          stop: () => operator.stop(),
          start: startOperator,
          metric: (prefix) => operatorMetric(metricsPort, prefix),
          componentWrites: async () => componentWrites(await readComponentClients(ports)),
          timeoutMs: CONVERGE_SECONDS * 1000,
        })
      : undefined;
    return {
      ...applied,
      restart,
      podsMadeMs,
      benchPeakRssMb: await peakRssMb(process.pid),
    };
  } finally {
    for (const cleanup of cleanups) await cleanup();
    await plane.stop();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const result = await runCouchInstanceBench({
    instances: Number(process.env.BENCH_INSTANCES ?? 500),
    concurrency: Number(process.env.BENCH_CREATE_CONCURRENCY ?? 50),
  });
  for (const line of formatRestartPhase(result)) console.log(line);
}
