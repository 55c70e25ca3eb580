/**
 * Two tenants on one gateway: tenant B's latency (a queue publish and a CouchDB document read,
 * one connection each, closed loop) alone, while tenant A sends at its limits (publishes at its
 * binding's spec.limits.maxRequestsPerSecond, reads and writes at the free plan's 20 and 10 a
 * second, each on schedule), and while A floods (as fast as answered, over those limits; its
 * binding refuses the publishes above its limit with 429). Each tenant has its own Redis and its
 * own CouchDB engine, as tenants do; the gateway runs compiled, as the production image runs it
 * (bench/lib/compiled-platform.ts), with the free envelope's rates raised above the load so that
 * B's closed loop is never refused (A is held to them by its own schedule instead). Phases
 * alternate in BENCH_ROUNDS (3) rounds of BENCH_SECONDS (5) each; each figure is the median of the
 * rounds with their spread, and B's p99 is given as a ratio to B's p99 alone in the same round set,
 * beside the goal (<= 2x alone; issue 29 asks for 10% more at most for a tenant at its limit).
 *
 *   npx tsx bench/tenant-isolation.ts     (BENCH_ROUNDS=3, BENCH_SECONDS=5, BENCH_FLOOD_CONNECTIONS=16)
 */
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
} from '@kubernetes/client-node';
import { SETTEE_API_VERSION, SETTEE_GROUP, SETTEE_VERSION } from '../api/contract.js';
import { DEFAULT_FREE_LIMITS } from '../api/free-envelope.js';
import {
  LABEL_QUEUE_BINDING,
  QUEUE_BINDING_KIND,
  QUEUE_BINDING_PLURAL,
  QueueEnvKey,
  queueEnvSecretName,
} from '../api/queue-binding.js';
import { startCouchEngine } from '../local/couch-engine/index.js';
import { getFreePort } from '../local/ports.js';
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
import { runClosedLoop, type LoopControl } from './lib/closed-loop.js';
import { compilePlatform } from './lib/compiled-platform.js';
import { buildCompiledGatewayEnv } from './lib/gateway-bench-env.js';
import { cpuSeconds } from './lib/process-usage.js';
import { median, quantileOfSorted, round, spread } from './lib/stats.js';
import { startCountingReceiver } from './queue/counting-receiver.js';

const NAMESPACE = 'isolation';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const FLOOD_CONNECTIONS = Number(process.env.BENCH_FLOOD_CONNECTIONS ?? 16);
/** Tenant A's binding's spec.limits.maxRequestsPerSecond, which it publishes at in 'A at its limits'. */
const A_LIMIT_PER_SECOND = 200;
const GOAL_RATIO = 2;
/** Issue 29's own goal: a tenant at its limit raises another's p99 by 10% at most. */
const ISSUE_GOAL_RATIO = 1.1;
const ADMIN = { username: 'admin', password: 'bench' };
const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

interface Tenant {
  name: string;
  publishUrl: string;
  docUrl: string;
  token: string;
}

type Phase = 'alone' | 'A at its limits' | 'A floods';
const PHASES: Phase[] = ['alone', 'A at its limits', 'A floods'];

/** One request of a closed loop, timed; its answer's body is read to the end. */
async function timed(loop: LoopControl, url: string, init: RequestInit): Promise<void> {
  const started = performance.now();
  try {
    const response = await fetch(url, init);
    await response.arrayBuffer();
    loop.record((performance.now() - started) * 1000, response.ok);
  } catch {
    loop.error();
  }
}

const publishInit = (tenant: Tenant): RequestInit => ({
  method: 'POST',
  headers: { authorization: `Bearer ${tenant.token}`, 'content-type': 'application/json' },
  body: '{"event":"order.created","id":12345}',
});
const readInit: RequestInit = { headers: { authorization: basicAuth(ADMIN.username, ADMIN.password) } };

/** Tenant A's flood: half its connections publish, half read and write documents, as fast as answered. */
async function flood(tenant: Tenant, stop: () => boolean): Promise<{ requests: number; refused: number }> {
  let requests = 0;
  let refused = 0;
  const connection = async (i: number): Promise<void> => {
    for (let n = 0; !stop(); n++) {
      const write = n % 4 === 0;
      const [url, init] =
        i % 2 === 0
          ? [tenant.publishUrl, publishInit(tenant)]
          : write
            ? [
                `${tenant.docUrl.replace(/\/doc$/, '')}/d-${i}-${n}`,
                { ...readInit, method: 'PUT', body: '{"n":1}' },
              ]
            : [tenant.docUrl, readInit];
      const response = await fetch(url, init).catch(() => undefined);
      await response?.arrayBuffer().catch(() => undefined);
      requests += 1;
      if (response?.status === 429) refused += 1;
    }
  };
  await Promise.all(Array.from({ length: FLOOD_CONNECTIONS }, (_, i) => connection(i)));
  return { requests, refused };
}

/** Sends `send` `rate` times a second on schedule (open model) until `stop`; counts 429s. */
async function paced(
  rate: number,
  stop: () => boolean,
  send: (n: number) => Promise<Response | undefined>,
): Promise<{ requests: number; refused: number }> {
  let requests = 0;
  let refused = 0;
  const inFlight: Array<Promise<void>> = [];
  const started = performance.now();
  for (let n = 0; !stop(); n++) {
    const wait = started + (n * 1000) / rate - performance.now();
    if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
    inFlight.push(
      send(n).then(async (response) => {
        await response?.arrayBuffer().catch(() => undefined);
        requests += 1;
        if (response?.status === 429) refused += 1;
      }),
    );
  }
  await Promise.all(inFlight);
  return { requests, refused };
}

/** Tenant A at its limits: its publishes, reads and writes each at its limit, on schedule. */
async function atItsLimits(
  tenant: Tenant,
  stop: () => boolean,
): Promise<{ requests: number; refused: number }> {
  const ignoreFailure = () => undefined;
  const streams = await Promise.all([
    paced(A_LIMIT_PER_SECOND, stop, () => fetch(tenant.publishUrl, publishInit(tenant)).catch(ignoreFailure)),
    paced(DEFAULT_FREE_LIMITS.readsPerSecond, stop, () =>
      fetch(tenant.docUrl, readInit).catch(ignoreFailure),
    ),
    paced(DEFAULT_FREE_LIMITS.writesPerSecond, stop, (n) =>
      fetch(`${tenant.docUrl.replace(/\/doc$/, '')}/paced-${Date.now()}-${n}`, {
        ...readInit,
        method: 'PUT',
        body: '{"n":1}',
      }).catch(ignoreFailure),
    ),
  ]);
  return {
    requests: streams.reduce((n, s) => n + s.requests, 0),
    refused: streams.reduce((n, s) => n + s.refused, 0),
  };
}

/** B's publish and read latencies (ms, p50 and p99) for one phase, beside what A sends. */
async function measurePhase(phase: Phase, a: Tenant, b: Tenant, gatewayPid: number) {
  const cpuBefore = cpuSeconds(gatewayPid);
  const started = performance.now();
  let stopped = false;
  const stop = () => stopped;
  const flooding =
    phase === 'alone' ? undefined : phase === 'A floods' ? flood(a, stop) : atItsLimits(a, stop);
  const spec = { connections: 1, durationMs: SECONDS * 1000, warmupMs: 500 };
  const [publishes, reads] = await Promise.all([
    runClosedLoop(spec, async (loop) => {
      while (loop.running()) await timed(loop, b.publishUrl, publishInit(b));
    }),
    runClosedLoop(spec, async (loop) => {
      while (loop.running()) await timed(loop, b.docUrl, readInit);
    }),
  ]);
  stopped = true;
  const flooded = await flooding;
  const ms = (sorted: Float64Array, q: number) => quantileOfSorted(sorted, q) / 1000;
  return {
    publishP50: ms(publishes.latenciesUs, 0.5),
    publishP99: ms(publishes.latenciesUs, 0.99),
    readP50: ms(reads.latenciesUs, 0.5),
    readP99: ms(reads.latenciesUs, 0.99),
    errors: publishes.errors + reads.errors + publishes.non2xx + reads.non2xx,
    floodPerSecond: flooded ? flooded.requests / SECONDS : 0,
    floodRefused: flooded?.refused ?? 0,
    // The share of one core the gateway's process used: near 100% its one event loop is what B waits on.
    gatewayCpu: (cpuSeconds(gatewayPid) - cpuBefore) / ((performance.now() - started) / 1000),
  };
}

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
  const stops: Array<() => Promise<void>> = [];
  try {
    console.log('==> control plane, two tenants (a Redis and a CouchDB engine each), a receiver');
    const { plane, kubeConfig } = await startBenchCluster(NAMESPACE, { testNodes: true });
    stops.push(() => plane.stop());
    const receiver = await startCountingReceiver();
    stops.push(() => receiver.close());

    const gatewayPort = await getFreePort();
    const gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
    const tenants: Tenant[] = [];
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
        publishUrl: `${gatewayUrl}/queue/${NAMESPACE}/${name}/v2/publish/${receiver.url}`,
        docUrl: `${gatewayUrl}/db/${NAMESPACE}/${name}/bench/doc`,
      });
    }
    const [a, b] = tenants as [Tenant, Tenant];

    console.log('==> gateway (compiled as in the production image)');
    const compiled = await compilePlatform();
    stops.push(() => compiled.remove());
    const gateway = compiled.start(
      'gateway',
      buildCompiledGatewayEnv(
        { kubeconfigPath: plane.kubeconfigPath, port: gatewayPort, namespace: NAMESPACE },
        UNLIMITED_FREE_RATES,
      ),
    );
    stops.push(() => gateway.stop());
    for (const tenant of tenants) {
      // Longer than waitForHttp's minute: a loaded machine starts the compiled gateway slowly.
      await waitFor(
        `tenant ${tenant.name}'s instance`,
        async () => ((await fetch(tenant.docUrl, readInit).catch(() => undefined))?.ok ? true : undefined),
        { timeoutMs: 180_000, intervalMs: 200, abort: gateway.exited },
      );
      await waitFor(
        `tenant ${tenant.name}'s queue`,
        async () => ((await fetch(tenant.publishUrl, publishInit(tenant))).status === 201 ? true : undefined),
        { timeoutMs: 60_000, intervalMs: 200 },
      );
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

    console.log(
      `==> ${ROUNDS} rounds of ${SECONDS}s per phase: B alone, B while A sends at its limits (${A_LIMIT_PER_SECOND} publishes, ${DEFAULT_FREE_LIMITS.readsPerSecond} reads, ${DEFAULT_FREE_LIMITS.writesPerSecond} writes a second), B while A floods (${FLOOD_CONNECTIONS} connections)`,
    );
    const results = new Map<Phase, Array<Awaited<ReturnType<typeof measurePhase>>>>(
      PHASES.map((p) => [p, []]),
    );
    for (let round_ = 0; round_ < ROUNDS; round_++) {
      for (const phase of PHASES) results.get(phase)?.push(await measurePhase(phase, a, b, gateway.pid));
    }

    const figure = (phase: Phase, key: 'publishP50' | 'publishP99' | 'readP50' | 'readP99'): string => {
      const values = (results.get(phase) ?? []).map((r) => r[key]);
      return `${round(median(values), 2)} [${spread(values, 2)}]`;
    };
    const medianOf = (phase: Phase, key: 'publishP99' | 'readP99'): number =>
      median((results.get(phase) ?? []).map((r) => r[key]));
    console.log(
      `\nMachine: ${os.cpus().length} cores, load average ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')} (shared: figures are ratios within this run)`,
    );
    console.log(
      '| phase | A sent/s (429s) | B publish p50 / p99 ms | B read p50 / p99 ms | B errors | gateway CPU, % of a core |',
    );
    console.log('|---|---|---|---|---|---|');
    for (const phase of PHASES) {
      const list = results.get(phase) ?? [];
      const offered = round(median(list.map((r) => r.floodPerSecond)));
      const refused = list.reduce((n, r) => n + r.floodRefused, 0);
      console.log(
        `| ${phase} | ${offered} (${refused}) | ${figure(phase, 'publishP50')} / ${figure(phase, 'publishP99')} | ${figure(phase, 'readP50')} / ${figure(phase, 'readP99')} | ${list.reduce((n, r) => n + r.errors, 0)} | ${round(median(list.map((r) => r.gatewayCpu * 100)))} |`,
      );
    }
    console.log(`\n| B's p99 against B alone | publish | read | goal |`);
    console.log('|---|---|---|---|');
    for (const phase of PHASES.slice(1)) {
      const publish = medianOf(phase, 'publishP99') / medianOf('alone', 'publishP99');
      const read = medianOf(phase, 'readP99') / medianOf('alone', 'readP99');
      // The goal is about a tenant at its limits; a flood over them is shown for what it costs.
      const met = (ratio: number) => (publish <= ratio && read <= ratio ? 'met' : 'MISSED');
      const goal =
        phase === 'A floods'
          ? 'none (over its limits)'
          : `<= ${GOAL_RATIO}x: ${met(GOAL_RATIO)}; issue 29's <= ${ISSUE_GOAL_RATIO}x: ${met(ISSUE_GOAL_RATIO)}`;
      console.log(`| ${phase} | ${publish.toFixed(2)}x | ${read.toFixed(2)}x | ${goal} |`);
    }
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
  }
}

await main();
