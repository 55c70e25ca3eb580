/**
 * Two tenants on one gateway: tenant B's latency (queue publishes and CouchDB document reads,
 * each on a fixed schedule, measured from the scheduled send time) alone, while tenant A sends at its limits (publishes at its
 * binding's spec.limits.maxRequestsPerSecond, reads and writes at the free plan's 20 and 10 a
 * second, each on schedule), and while A floods (as fast as answered, over those limits; its
 * binding refuses the publishes above its limit with 429). Each tenant has its own Redis and its
 * own CouchDB engine, as tenants do; the gateway runs compiled, as the production image runs it
 * (bench/lib/compiled-platform.ts), with the free envelope's rates raised above the load so that
 * B's requests are never refused (A is held to them by its own schedule instead).
 *
 * A's load generator and B's probe are processes of their own (tenant-isolation/), and the
 * processes are pinned as a cluster places them: A's load, Redis and engine on CPU 0, as on nodes
 * of their own, with this bench's process (the receiver of both tenants' deliveries, a webhook
 * endpoint elsewhere); the gateway, the one part the tenants share, on CPU 1 with B's probe, Redis
 * and engine. So what B loses with A at its limits is what the gateway's work for A costs it; the
 * "on the gateway's CPU" windows move A's processes onto CPU 1 for the window, which is what this
 * machine adds by sharing its two cores. B's probe measures without a break while A's load comes
 * and goes on a shared clock: BENCH_ROUNDS rounds of the windows in schedule.ts's ROUND, each
 * BENCH_SECONDS long with BENCH_GAP_MS between them. B alone is set against B alone (the run's
 * noise) and B with A at its limits against B alone (issue 29's goal: at most 1.1x), beside B's
 * direct requests to its own Redis and engine and the gateway's event-loop delay and CPU.
 *
 *   npx tsx bench/tenant-isolation.ts     (BENCH_ROUNDS=18, BENCH_SECONDS=2, BENCH_GAP_MS=500,
 *                                          BENCH_FLOOD_CONNECTIONS=16; BENCH_SAVE=<file>: the
 *                                          run's samples as JSON, for another look at them;
 *                                          BENCH_TRACE=<folder>: the gateway's and the probe's
 *                                          GCs and loop stalls, tenant-isolation/stall-trace.mjs;
 *                                          BENCH_GATEWAY_NODE_ARGS: node flags for the gateway;
 *                                          BENCH_LAYOUT=gateway-alone: B's processes on A's CPU)
 */
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
} from '@kubernetes/client-node';
import { SETTEE_API_VERSION, SETTEE_GROUP, SETTEE_VERSION } from '../api/contract.js';
import {
  LABEL_QUEUE_BINDING,
  QUEUE_BINDING_KIND,
  QUEUE_BINDING_PLURAL,
  QueueEnvKey,
  queueEnvSecretName,
} from '../api/queue-binding.js';
import { startCouchEngine, type CouchEngine } from '../local/couch-engine/index.js';
import { getFreePort } from '../local/ports.js';
import type { ManagedProcess } from '../local/process.js';
import { startRedis, type RedisServer } from '../local/redis-server.js';
import { waitFor } from '../local/wait.js';
import {
  createCouchInstance,
  setInstancePod,
  UNLIMITED_FREE_RATES,
} from '../test/helpers/gateway/gateway-harness.js';
import { basicAuth } from '../test/helpers/gateway/http-request.js';
import { randomSigningKey } from '../test/helpers/queue/signing-keys.js';
import { seedBenchDocument, startBenchCluster } from './lib/bench-cluster.js';
import { compilePlatform } from './lib/compiled-platform.js';
import { processTree } from './lib/process-tree-cpu.js';
import { ROOT } from './lib/processes.js';
import { buildCompiledGatewayEnv } from './lib/gateway-bench-env.js';
import { startCountingReceiver } from './queue/counting-receiver.js';
import { printReport } from './tenant-isolation/report.js';
import { buildWindows, ROUND, runWindows, sleepUntil } from './tenant-isolation/schedule.js';
import { runTenantALoad } from './tenant-isolation/tenant-a-load.js';
import { waitThroughGateway } from './tenant-isolation/setup-diagnosis.js';
import { runTenantBProbe } from './tenant-isolation/tenant-b-probe.js';
import {
  A_LIMIT_PER_SECOND,
  ADMIN,
  publishInit,
  readInit,
  type Tenant,
} from './tenant-isolation/tenant-load.js';
import { monitorWindows, pinToCpu } from './tenant-isolation/window-monitor.js';

const NAMESPACE = 'isolation';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 18);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 2);
const GAP_MS = Number(process.env.BENCH_GAP_MS ?? 500);
const FLOOD_CONNECTIONS = Number(process.env.BENCH_FLOOD_CONNECTIONS ?? 16);
const SAVE = process.env.BENCH_SAVE;
/** A folder: the gateway and B's probe write their GCs and event-loop stalls there (stall-trace.mjs). */
const TRACE = process.env.BENCH_TRACE;
/**
 * Node flags added to the gateway image's CMD (e.g. a GC setting), so a setting is measured as the
 * production image would run it; the report's header names them.
 */
const GATEWAY_NODE_ARGS = (process.env.BENCH_GATEWAY_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
const traceFlags = TRACE
  ? ['--import', pathToFileURL(path.join(ROOT, 'bench/tenant-isolation/stall-trace.mjs')).href]
  : [];
/** The CPU of A's processes (and of this bench's), and that of the gateway and B's. */
const [A_CPU, GATEWAY_CPU] = [0, 1];
/**
 * BENCH_LAYOUT=gateway-alone pins B's probe, Redis and engine to A's CPU too, so the gateway's CPU
 * holds the gateway alone (and whatever else the machine runs there): what B then loses with A at
 * its limits is the gateway's event loop's, not the CPU the gateway's work for A takes from B's own
 * Redis and engine (B's direct requests then carry A's processes beside them instead).
 */
const GATEWAY_ALONE = process.env.BENCH_LAYOUT === 'gateway-alone';
const B_CPU = GATEWAY_ALONE ? A_CPU : GATEWAY_CPU;
/** B's requests scheduled in a window's first 300 ms are not counted: A's load is still starting or stopping. */
const SETTLE_MS = 300;
const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

/** A QueueBinding as the operator leaves it: its env Secret written and named in its status. */
async function createBinding(
  kubeConfig: KubeConfig,
  name: string,
  redis: RedisServer,
): Promise<{ token: string }> {
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const custom = kubeConfig.makeApiClient(CustomObjectsApi);
  await core.createNamespacedSecret({
    namespace: NAMESPACE,
    body: { metadata: { name: `${name}-auth` }, stringData: { password: redis.password } },
  });
  const api = {
    group: SETTEE_GROUP,
    version: SETTEE_VERSION,
    namespace: NAMESPACE,
    plural: QUEUE_BINDING_PLURAL,
  };
  await custom.createNamespacedCustomObject({
    ...api,
    body: {
      apiVersion: SETTEE_API_VERSION,
      kind: QUEUE_BINDING_KIND,
      metadata: { name },
      spec: {
        engine: 'redis',
        connection: {
          host: redis.host,
          port: redis.port,
          passwordSecretRef: { name: `${name}-auth`, key: 'password' },
        },
      },
    },
  });
  await core.createNamespacedSecret({
    namespace: NAMESPACE,
    body: {
      metadata: { name: queueEnvSecretName(name), labels: { [LABEL_QUEUE_BINDING]: name } },
      stringData: {
        [QueueEnvKey.Token]: redis.password,
        [QueueEnvKey.CurrentSigningKey]: randomSigningKey(),
        [QueueEnvKey.NextSigningKey]: randomSigningKey(),
      },
    },
  });
  await custom.patchNamespacedCustomObjectStatus(
    { ...api, name, body: { status: { envSecret: queueEnvSecretName(name) } } },
    mergePatch,
  );
  return { token: redis.password };
}

async function main(): Promise<void> {
  if (os.cpus().length < 2) throw new Error('the bench pins the tenants to two CPUs; this machine has one');
  const stops: Array<() => Promise<void>> = [];
  try {
    console.log('==> control plane, two tenants (a Redis and a CouchDB engine each), a receiver');
    const { plane, kubeConfig } = await startBenchCluster(NAMESPACE, { testNodes: true });
    stops.push(() => plane.stop());
    const receiver = await startCountingReceiver();
    stops.push(() => receiver.close());

    const gatewayPort = await getFreePort();
    const gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
    const tenants: Array<Tenant & { redis: RedisServer; engine: CouchEngine }> = [];
    for (const name of ['a', 'b']) {
      const redis = await startRedis();
      stops.push(() => redis.stop());
      const dataDir = await fsp.mkdtemp(path.join(os.tmpdir(), 'settee-bench-engine-'));
      const engine = await startCouchEngine({ dataDir, admin: ADMIN });
      stops.push(async () => {
        await engine.stop();
        await fsp.rm(dataDir, { recursive: true, force: true });
      });
      await seedBenchDocument(engine.url, basicAuth(ADMIN.username, ADMIN.password));
      await createCouchInstance(kubeConfig, { namespace: NAMESPACE, name });
      await setInstancePod(kubeConfig, { namespace: NAMESPACE, name }, { port: engine.port, ready: true });
      const { token } = await createBinding(kubeConfig, name, redis);
      tenants.push({
        name,
        token,
        redis,
        engine,
        publishUrl: `${gatewayUrl}/queue/${NAMESPACE}/${name}/v2/publish/${receiver.url}`,
        docUrl: `${gatewayUrl}/db/${NAMESPACE}/${name}/bench/doc`,
      });
    }
    const [a, b] = tenants as [(typeof tenants)[number], (typeof tenants)[number]];

    console.log(
      `==> gateway (compiled as in the production image${GATEWAY_NODE_ARGS.length > 0 ? `, with ${GATEWAY_NODE_ARGS.join(' ')}` : ''})`,
    );
    const compiled = await compilePlatform();
    stops.push(() => compiled.remove());
    const gateway = compiled.start(
      'gateway',
      {
        ...buildCompiledGatewayEnv(
          { kubeconfigPath: plane.kubeconfigPath, port: gatewayPort, namespace: NAMESPACE },
          UNLIMITED_FREE_RATES,
        ),
        SETTEE_TRACE_NAME: 'gateway',
      },
      [...traceFlags, ...GATEWAY_NODE_ARGS],
    );
    stops.push(() => gateway.stop());
    for (const tenant of tenants) {
      // Longer than waitForHttp's minute: a loaded machine starts the compiled gateway slowly.
      await waitThroughGateway({
        what: `tenant ${tenant.name}'s instance`,
        url: tenant.docUrl,
        init: () => readInit,
        timeoutMs: 180_000,
        gateway,
      });
      await waitThroughGateway({
        what: `tenant ${tenant.name}'s queue`,
        url: tenant.publishUrl,
        init: () => publishInit(tenant),
        expected: 201,
        timeoutMs: 60_000,
        gateway,
        redis: tenant.redis,
      });
    }

    // A's binding refuses its publishes above its limit; the gateway's informer has the limit
    // once A's burst of more than it in a second sees a 429.
    await kubeConfig.makeApiClient(CustomObjectsApi).patchNamespacedCustomObject(
      {
        group: SETTEE_GROUP,
        version: SETTEE_VERSION,
        namespace: NAMESPACE,
        plural: QUEUE_BINDING_PLURAL,
        name: a.name,
        body: { spec: { limits: { maxRequestsPerSecond: A_LIMIT_PER_SECOND } } },
      },
      mergePatch,
    );
    await waitFor(
      "tenant A's limit in force",
      async () => {
        const answers = await Promise.all(
          Array.from({ length: A_LIMIT_PER_SECOND + 20 }, () =>
            fetch(a.publishUrl, publishInit(a)).then((r) => r.status),
          ),
        );
        return answers.includes(429) ? true : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 500 },
    );

    const windows = buildWindows(ROUNDS, SECONDS, GAP_MS);
    console.log(
      `==> ${ROUNDS} rounds of ${ROUND.join(', ')}, ${SECONDS} s each with ${GAP_MS} ms between; A's load and B's probe each in a process of its own; A's processes and the receiver pinned to CPU ${A_CPU}, the gateway to CPU ${GATEWAY_CPU}, B's to CPU ${B_CPU}`,
    );
    const startFile = path.join(await fsp.mkdtemp(path.join(os.tmpdir(), 'settee-isolation-')), 'start');
    stops.push(() => fsp.rm(path.dirname(startFile), { recursive: true, force: true }));
    const pids: { a?: number; b?: number } = {};
    let markReady = (): void => undefined;
    const bothReady = new Promise<void>((resolve) => (markReady = resolve));
    const ready = (side: 'a' | 'b') => (pid: number) => {
      pids[side] = pid;
      if (pids.a !== undefined && pids.b !== undefined) markReady();
    };
    // Only what a request needs goes to the processes (not the servers' handles).
    const asTenant = ({ name, token, publishUrl, docUrl }: Tenant): Tenant => ({
      name,
      token,
      publishUrl,
      docUrl,
    });
    // Each child is stopped on every way out (a failure before the start file too), so none is left running.
    const stopOnExit = (proc: ManagedProcess) => stops.push(() => proc.stop());
    const aLoad = runTenantALoad(
      { a: asTenant(a), windows, startFile, floodConnections: FLOOD_CONNECTIONS },
      ready('a'),
      stopOnExit,
    );
    const probe = runTenantBProbe(
      {
        b: asTenant(b),
        redis: { host: b.redis.host, port: b.redis.port, password: b.redis.password },
        engineDocUrl: `${b.engine.url}/bench/doc`,
        windows,
        startFile,
        settleMs: SETTLE_MS,
      },
      ready('b'),
      stopOnExit,
      { flags: traceFlags, env: { ...process.env, SETTEE_TRACE_NAME: 'probe' } },
    );
    // A process that fails before it is ready ends the wait with its error.
    await Promise.race([bothReady, Promise.all([aLoad, probe])]);
    const stacks = {
      a: { 'A Redis': [a.redis.pid], 'A engine': processTree(a.engine.pid), 'A load': [pids.a!] },
      b: { 'B Redis': [b.redis.pid], 'B engine': processTree(b.engine.pid), 'B probe': [pids.b!] },
    };
    const aProcesses = Object.values(stacks.a).flat();
    await pinToCpu([...aProcesses, process.pid], A_CPU);
    await pinToCpu([gateway.pid], GATEWAY_CPU);
    await pinToCpu(Object.values(stacks.b).flat(), B_CPU);
    const startAt = Date.now() + 1000;
    await fsp.writeFile(startFile, String(startAt));
    // A child that fails mid-run ends the run with its error, not after the last window.
    const [readings, aSent, probeWindows] = await Promise.all([
      monitorWindows({
        startAt,
        windows,
        metricsUrl: `${gatewayUrl}/metrics`,
        groups: { gateway: [gateway.pid], ...stacks.a, ...stacks.b, 'bench and receiver': [process.pid] },
        gateway: {
          pid: gateway.pid,
          cpu: GATEWAY_CPU,
          pinnedGroups: ['gateway', ...(GATEWAY_ALONE ? [] : Object.keys(stacks.b))],
        },
      }),
      aLoad,
      probe,
      runWindows(
        startAt,
        windows.filter((w) => w.phase === "A at its limits, on the gateway's CPU"),
        async (window) => {
          await pinToCpu(aProcesses, GATEWAY_CPU);
          await sleepUntil(startAt + window.toMs);
          await pinToCpu(aProcesses, A_CPU);
        },
      ),
    ]);
    console.log(
      `\nMachine: ${os.cpus().length} cores, load average ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}, shared with the other engineers' work: the figures are ratios within this run`,
    );
    // The report's intervals take seconds of CPU: on every CPU again, not on A's alone.
    await pinToCpu([process.pid], `0-${os.cpus().length - 1}`);
    const run = {
      windows,
      probe: probeWindows.windows,
      readings,
      aLoad: aSent,
      seconds: SECONDS,
    };
    if (SAVE) await fsp.writeFile(SAVE, JSON.stringify({ startAt, ...run }));
    printReport(run);
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
  }
}

await main();
