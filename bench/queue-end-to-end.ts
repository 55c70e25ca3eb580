/**
 * The webhook queue end to end, as users run it: the official SDK's `Client.publish`, 20 publishes
 * in flight, through the gateway compiled as the production image holds it (with its delivery
 * workers on, its QueueBinding and env Secret written by the compiled operator on a local control
 * plane) to a receiver on loopback; Redis persists with AOF everysec. The same load through Node's
 * fetch (undici, the SDK's own transport, without the SDK) and through raw sockets (no client at
 * all) shows what the client costs. Per round and mode: publishes/s and publish latency
 * p50/p99 from the load generator (its own process), deliveries/s counted at the receiver over the
 * same period. Modes alternate round by round; figures are medians over rounds with min-max.
 * The isolated publish and delivery figures are bench/queue-publish.ts's.
 *
 *   npx tsx bench/queue-end-to-end.ts     (BENCH_ROUNDS=5, BENCH_SECONDS=3, BENCH_IN_FLIGHT=20;
 *                                          BENCH_CPU_PROF=<dir> writes the gateway's CPU profile)
 */
import { CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import fs from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { SETTEE_GROUP, SETTEE_VERSION } from '../api/contract.js';
import {
  QUEUE_BINDING_KIND,
  QUEUE_BINDING_PLURAL,
  QueueEnvKey,
  queueEnvSecretName,
} from '../api/queue-binding.js';
import { getFreePort } from '../local/ports.js';
import { startRedis } from '../local/redis-server.js';
import { waitFor } from '../local/wait.js';
import { startBenchCluster } from './lib/bench-cluster.js';
import { compilePlatform } from './lib/compiled-platform.js';
import { buildCompiledGatewayEnv } from './lib/gateway-bench-env.js';
import { median, round, spread } from './lib/stats.js';
import { runSdkPublishLoad, type SdkLoadMode, type SdkPublishLoadResult } from './queue/sdk-publish-load.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const IN_FLIGHT = Number(process.env.BENCH_IN_FLIGHT ?? 20);
const CPU_PROF_DIR = process.env.BENCH_CPU_PROF;
const NAMESPACE = 'bench';
const BINDING = 'orders';
const MODES: readonly SdkLoadMode[] = ['sdk', 'fetch', 'raw'];
const BODY = JSON.stringify({ event: 'order.created', id: 12345, amount: 42.5, currency: 'EUR' });
const MASTER_SECRET = 'bench-master-secret-0123456789abcdef0123';

interface Receiver {
  url: string;
  /** Arrival times (epoch ms) of every delivery. */
  arrivals: number[];
  close(): Promise<void>;
}

async function startReceiver(): Promise<Receiver> {
  const arrivals: number[] = [];
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      arrivals.push(Date.now());
      res.writeHead(200, { 'content-length': '0' }).end();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    arrivals,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

interface RoundResult {
  load: SdkPublishLoadResult;
  deliveredPerSecond: number;
  /** CPU time per message (publish and delivery) of the gateway and of Redis, µs. */
  gatewayCpuUs: number;
  redisCpuUs: number;
}

const TICKS_PER_SECOND = 100;

/** User + system CPU time of a process so far, µs (Linux /proc). */
async function cpuTimeUs(pid: number): Promise<number> {
  const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1_000_000) / TICKS_PER_SECOND;
}

async function main(): Promise<void> {
  const stops: (() => Promise<void>)[] = [];
  try {
    const { plane, kubeConfig } = await startBenchCluster(NAMESPACE);
    stops.unshift(() => plane.stop());
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'settee-queue-e2e-'));
    const redis = await startRedis({ dataDir });
    stops.unshift(async () => {
      await redis.stop();
      await fs.rm(dataDir, { recursive: true, force: true });
    });
    const receiver = await startReceiver();
    stops.unshift(() => receiver.close());

    const compiled = await compilePlatform();
    stops.unshift(() => compiled.remove());
    const gatewayPort = await getFreePort();
    const gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
    const operator = compiled.start('operator', {
      ...process.env,
      KUBECONFIG: plane.kubeconfigPath,
      SETTEE_WATCH_NAMESPACE: NAMESPACE,
      SETTEE_LEADER_ELECTION: 'false',
      SETTEE_METRICS_PORT: '0',
      SETTEE_LOG_LEVEL: 'warn',
      SETTEE_SIGNING_MASTER_SECRET: MASTER_SECRET,
      SETTEE_QUEUE_BASE_URL: gatewayUrl,
    });
    stops.unshift(() => operator.stop());
    if (CPU_PROF_DIR) await fs.mkdir(CPU_PROF_DIR, { recursive: true });
    const gateway = compiled.start(
      'gateway',
      buildCompiledGatewayEnv({
        kubeconfigPath: plane.kubeconfigPath,
        port: gatewayPort,
        namespace: NAMESPACE,
      }),
      CPU_PROF_DIR ? ['--cpu-prof', `--cpu-prof-dir=${CPU_PROF_DIR}`] : [],
    );
    stops.unshift(() => gateway.stop(10_000));

    const core = kubeConfig.makeApiClient(CoreV1Api);
    await core.createNamespacedSecret({
      namespace: NAMESPACE,
      body: { metadata: { name: 'orders-redis' }, stringData: { password: redis.password } },
    });
    await kubeConfig.makeApiClient(CustomObjectsApi).createNamespacedCustomObject({
      group: SETTEE_GROUP,
      version: SETTEE_VERSION,
      namespace: NAMESPACE,
      plural: QUEUE_BINDING_PLURAL,
      body: {
        apiVersion: `${SETTEE_GROUP}/${SETTEE_VERSION}`,
        kind: QUEUE_BINDING_KIND,
        metadata: { name: BINDING, namespace: NAMESPACE },
        spec: {
          engine: 'redis',
          connection: {
            host: redis.host,
            port: redis.port,
            passwordSecretRef: { name: 'orders-redis', key: 'password' },
          },
        },
      },
    });
    const env = await waitFor(
      'the env Secret',
      async () => {
        try {
          const secret = await core.readNamespacedSecret({
            namespace: NAMESPACE,
            name: queueEnvSecretName(BINDING),
          });
          const read = (key: string) => Buffer.from(secret.data?.[key] ?? '', 'base64').toString('utf8');
          return read(QueueEnvKey.Url)
            ? { url: read(QueueEnvKey.Url), token: read(QueueEnvKey.Token) }
            : undefined;
        } catch {
          return undefined;
        }
      },
      { timeoutMs: 60_000, intervalMs: 200, abort: operator.exited },
    );
    await waitFor(
      'the gateway to serve the binding',
      async () => {
        const response = await fetch(`${env.url}/v2/publish/${receiver.url}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${env.token}` },
          body: '{}',
        });
        await response.body?.cancel();
        return response.status === 201 ? true : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 200, abort: gateway.exited },
    );

    console.log(
      `queue end to end: ${os.cpus().length} CPUs, ${ROUNDS} rounds x ${SECONDS} s per mode, ${IN_FLIGHT} publishes in flight, compiled gateway with delivery workers on`,
    );
    const results = new Map<SdkLoadMode, RoundResult[]>(MODES.map((mode) => [mode, []]));
    for (let r = 0; r < ROUNDS; r++) {
      for (const mode of MODES) {
        const arrivalsBefore = receiver.arrivals.length;
        const gatewayCpuBefore = await cpuTimeUs(gateway.pid);
        const redisCpuBefore = await cpuTimeUs(redis.pid);
        const load = await runSdkPublishLoad({
          mode,
          queueUrl: env.url,
          token: env.token,
          destination: receiver.url,
          body: BODY,
          inFlight: IN_FLIGHT,
          durationMs: SECONDS * 1_000,
          warmupMs: 1_000,
        });
        const delivered = receiver.arrivals.filter(
          (at) => at >= load.measuredFrom && at < load.measuredTo,
        ).length;
        // The next mode starts on an empty queue: what one left behind must not slow the next.
        await waitFor(
          'the deliveries of the round',
          async () => {
            const seen = receiver.arrivals.length;
            await new Promise((resolve) => setTimeout(resolve, 300));
            return receiver.arrivals.length === seen ? true : undefined;
          },
          { timeoutMs: 60_000, intervalMs: 0 },
        );
        const messages = Math.max(1, receiver.arrivals.length - arrivalsBefore);
        results.get(mode)!.push({
          load,
          deliveredPerSecond: (delivered / (load.measuredTo - load.measuredFrom)) * 1_000,
          gatewayCpuUs: ((await cpuTimeUs(gateway.pid)) - gatewayCpuBefore) / messages,
          redisCpuUs: ((await cpuTimeUs(redis.pid)) - redisCpuBefore) / messages,
        });
      }
    }

    console.log(
      'mode     publishes/s (min-max)   delivered/s (min-max)   publish p50 / p99 (ms)   CPU µs/msg client gateway redis   errors',
    );
    const report: Record<string, unknown> = {};
    for (const mode of MODES) {
      const rounds = results.get(mode)!;
      const publishes = rounds.map((x) => x.load.publishesPerSecond);
      const delivered = rounds.map((x) => x.deliveredPerSecond);
      const p50 = median(rounds.map((x) => x.load.latencyUs.p50)) / 1_000;
      const p99 = median(rounds.map((x) => x.load.latencyUs.p99)) / 1_000;
      const errors = rounds.reduce((sum, x) => sum + x.load.errors + x.load.non2xx, 0);
      const cpu = {
        client: median(rounds.map((x) => x.load.cpuUsPerPublish)),
        gateway: median(rounds.map((x) => x.gatewayCpuUs)),
        redis: median(rounds.map((x) => x.redisCpuUs)),
      };
      console.log(
        `${mode.padEnd(8)} ${String(Math.round(median(publishes))).padStart(6)} (${spread(publishes, 0)})`.padEnd(
          33,
        ) +
          `${String(Math.round(median(delivered))).padStart(6)} (${spread(delivered, 0)})`.padEnd(24) +
          `${round(p50, 2)} / ${round(p99, 2)}`.padEnd(25) +
          `${Math.round(cpu.client)} ${Math.round(cpu.gateway)} ${Math.round(cpu.redis)}`.padEnd(35) +
          String(errors),
      );
      report[mode] = {
        publishesPerSecond: round(median(publishes)),
        deliveredPerSecond: round(median(delivered)),
        p50Ms: round(p50, 2),
        p99Ms: round(p99, 2),
        cpuUsPerMessage: { client: round(cpu.client), gateway: round(cpu.gateway), redis: round(cpu.redis) },
        publishesPerSecondRounds: publishes.map((x) => round(x)),
        errors,
      };
    }
    console.log(
      JSON.stringify({
        cpus: os.cpus().length,
        rounds: ROUNDS,
        seconds: SECONDS,
        inFlight: IN_FLIGHT,
        ...report,
      }),
    );
  } finally {
    for (const stop of stops) await stop().catch(() => undefined);
  }
}

await main();
