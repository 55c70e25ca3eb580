import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { CoreV1Api, CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { Client } from '@upstash/qstash';
import { LABEL_INSTANCE, SETTEE_API_VERSION, SETTEE_GROUP, SETTEE_VERSION } from '../../api/contract.js';
import { COUCH_INSTANCE_KIND, COUCH_INSTANCE_PLURAL, type CouchInstance } from '../../api/couch-instance.js';
import { QueueEnvKey } from '../../api/queue-binding.js';
import { startLocalPlatform } from '../../local/platform.js';
import { processesWithEnv } from '../../local/process.js';
import { waitFor } from '../../local/wait.js';
import { seededRandom } from '../lib/seeded-random.js';
import { CATCH_UP_FAULTS, CATCH_UP_MS, catchUpFaults } from './catch-up.js';
import { faultKindSchedule, injectFault, sleep, type FaultRecord, type InstancePod } from './nemesis.js';
import {
  instanceStateOf,
  isSettled,
  isStuck,
  type InstanceEnd,
  type InstanceState,
  type SoakReport,
} from './report.js';
import { connectBindingRedis } from './binding-redis.js';
import { aofStateOf, describeLostPublishes, redisLateAofLines } from './lost-evidence.js';
import { SoakReceiver } from './receiver.js';
import { couchFetch, publishOne, QUEUE_NAME, QUEUE_PARALLELISM, writeOne, type Ledger } from './workload.js';

export interface SoakOptions {
  minutes: number;
  faultsPerMinute: number;
  seed: number;
  instances?: number;
  /**
   * The gateway's SETTEE_QUEUE_RETRY_DELAY_SCALE (default 1, QStash's backoff): the short soak
   * shortens it so that a delivery failed twice is retried within its settling time.
   */
  retryDelayScale?: number;
  /**
   * The queue's Redis appendfsync. Default `always`: a SIGKILLed Redis loses nothing it answered,
   * so the soak's 0 lost is Settee's. With `everysec` (Redis's and a tenant's default) a kill may
   * lose up to ~2 s of answered writes by design (docs/guarantees.md); each kill-redis logs whether
   * Redis held answered writes unwritten (aofState).
   */
  redisAppendfsync?: 'always' | 'everysec';
  log?: (message: string) => void;
}

const BINDING = { namespace: 'default', name: 'cache' };
const IDLE_AFTER = '15s';
const PUBLISH_EVERY_MS = 300;
const WRITE_EVERY_MS = 1_000;
const MAX_IN_FLIGHT = 8;
const SETTLE_MS = 150_000;

/**
 * The platform's settings of the soak (and of bench/chaos-recovery.ts): a short operator Lease so
 * a killed leader's standby takes over within seconds, as a production setting would be tuned.
 */
export const SOAK_PLATFORM_ENV: Readonly<Record<string, string>> = Object.freeze({
  SETTEE_LEASE_DURATION: '6s',
  SETTEE_LEASE_RENEW_DEADLINE: '4s',
  SETTEE_LEASE_RETRY_PERIOD: '1s',
});

/**
 * The chaos soak: the local platform with two gateway and two operator replicas, a workload of
 * SDK publishes and CouchDB writes recorded with their acknowledgements, a seeded nemesis, and a
 * checker that reads everything back once the faults stop and the platform settles.
 */
export async function runChaosSoak(options: SoakOptions): Promise<SoakReport> {
  const log = options.log ?? ((m: string) => console.log(m));
  const random = seededRandom(options.seed);
  const marker = `chaos-${process.pid}-${Date.now()}`;
  // Inherited by every child, so a leaked one is found by it.
  Object.assign(process.env, SOAK_PLATFORM_ENV, {
    SETTEE_CHAOS_RUN: marker,
    SETTEE_QUEUE_RETRY_DELAY_SCALE: String(options.retryDelayScale ?? 1),
    SETTEE_LOG_LEVEL: process.env.SETTEE_LOG_LEVEL ?? 'warn',
  });
  const stateDir = await fsp.mkdtemp(path.join(os.tmpdir(), 'settee-chaos-'));
  const redisAppendfsync = options.redisAppendfsync ?? 'always';
  const platform = await startLocalPlatform({
    stateDir,
    replicas: { gateways: 2, operators: 2 },
    queueDatabaseAppendfsync: redisAppendfsync,
  });
  const receiver = new SoakReceiver(random);
  const ledger: Ledger = { publishes: [], writes: [], failed: new Map() };
  const faults: FaultRecord[] = [];
  let report: SoakReport | undefined;
  let keepStateDir = false;
  try {
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromFile(platform.kubeconfigPath);
    const core = kubeConfig.makeApiClient(CoreV1Api);
    const custom = kubeConfig.makeApiClient(CustomObjectsApi);
    await receiver.start();
    const env = await waitFor(
      'the queue environment Secret',
      async () =>
        (
          await core
            .readNamespacedSecret({ name: `${BINDING.name}-vqueue`, namespace: BINDING.namespace })
            .catch(() => undefined)
        )?.data,
      { timeoutMs: 120_000, intervalMs: 500 },
    );
    const decode = (key: string): string => Buffer.from(env[key] ?? '', 'base64').toString('utf8');
    const queueUrl = new URL(decode(QueueEnvKey.Url));
    const token = decode(QueueEnvKey.Token);
    const queueUrls = platform.gatewayUrls.map((g) => `${g}${queueUrl.pathname.replace(/\/$/, '')}`);
    // Every replica must know the binding (its informer may lag the Secret) before the load starts.
    for (const baseUrl of queueUrls)
      await waitFor(
        `the queue at ${baseUrl}`,
        () =>
          new Client({ baseUrl, token, retry: false, enableTelemetry: false })
            .queue({ queueName: QUEUE_NAME })
            .upsert({ parallelism: QUEUE_PARALLELISM })
            .then(
              () => true as const,
              () => undefined,
            ),
        { timeoutMs: 120_000, intervalMs: 500 },
      );

    const instanceNames = Array.from({ length: options.instances ?? 3 }, (_, i) => `chaos-${i}`);
    const crd = {
      group: SETTEE_GROUP,
      version: SETTEE_VERSION,
      plural: COUCH_INSTANCE_PLURAL,
      namespace: 'default',
    };
    for (const name of instanceNames)
      await custom.createNamespacedCustomObject({
        ...crd,
        body: {
          apiVersion: SETTEE_API_VERSION,
          kind: COUCH_INSTANCE_KIND,
          metadata: { name },
          spec: { plan: 'free', hibernation: { idleAfter: IDLE_AFTER } },
        },
      });
    // Each instance's first start (system databases made) is the slow part: side by side.
    const instances = new Map<string, string[]>(
      await Promise.all(
        instanceNames.map(async (name) => {
          const secret = await waitFor(
            `Secret ${name}-admin`,
            async () =>
              (
                await core
                  .readNamespacedSecret({ name: `${name}-admin`, namespace: 'default' })
                  .catch(() => undefined)
              )?.data?.url,
            { timeoutMs: 180_000, intervalMs: 500 },
          );
          const url = new URL(Buffer.from(secret, 'base64').toString('utf8'));
          const urls = platform.gatewayUrls.map((g) =>
            `${g}${url.pathname.replace(/\/$/, '')}`.replace('://', `://${url.username}:${url.password}@`),
          );
          await waitFor(
            `database soak on ${name}`,
            async () => {
              const status = (
                await couchFetch(`${urls[0]}/soak`, { method: 'PUT', signal: AbortSignal.timeout(60_000) })
              ).status;
              return status === 201 || status === 412 ? true : undefined;
            },
            { timeoutMs: 180_000, intervalMs: 1_000 },
          );
          return [name, urls] as const;
        }),
      ),
    );
    const redis = connectBindingRedis(queueUrl, token, platform.running());
    const context = {
      kubeConfig,
      running: () => platform.running(),
      gatewayUrls: platform.gatewayUrls,
      redisAnswers: async () => (await redis().ping()) === 'PONG',
      redisAofState: async () => aofStateOf(await redis().info('persistence')),
      instancesAnswer: async () => {
        for (const urls of instances.values())
          if ((await couchFetch(`${urls[0]}/`, { signal: AbortSignal.timeout(60_000) })).status !== 200)
            return false;
        return true;
      },
      wakeInstance: async () => {
        for (const urls of instances.values())
          for (const url of urls) {
            const answer = await couchFetch(`${url}/`, { signal: AbortSignal.timeout(60_000) }).catch(
              () => undefined,
            );
            if (answer?.status === 200) return true;
          }
        return false;
      },
      instancePods: async (): Promise<InstancePod[]> =>
        (
          await core.listNamespacedPod({
            namespace: 'default',
            labelSelector: `${LABEL_INSTANCE} in (${[...instances.keys()].join(',')})`,
          })
        ).items.flatMap((pod) =>
          pod.status?.podIP
            ? [
                {
                  name: pod.metadata?.name ?? '',
                  podIP: pod.status.podIP,
                  waitingMessage: pod.status.containerStatuses?.[0]?.state?.waiting?.message,
                },
              ]
            : [],
        ),
      log,
    };
    const listInstances = async (): Promise<InstanceState[]> =>
      ((await custom.listNamespacedCustomObject(crd)) as { items: CouchInstance[] }).items.map(
        instanceStateOf,
      );
    // What no fault caused: an instance no node can take from the start stays so (isStuck). The
    // operator says so a moment after the scheduler does: wait (bounded) for every verdict.
    let beforeFaults: InstanceState[] = [];
    await waitFor(
      'every instance settled or unschedulable before the faults',
      async () => {
        beforeFaults = await listInstances();
        return beforeFaults.every((i) => i.unschedulable !== undefined || isSettled(i.phase))
          ? true
          : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 1_000 },
    ).catch(() => undefined);
    log(
      `workload and nemesis start: ${options.minutes} min, ${options.faultsPerMinute} faults/min, seed ${options.seed}`,
    );

    const startedAt = Date.now();
    const endAt = startedAt + options.minutes * 60_000;
    let seq = 0;
    let inFlight = 0;
    const running: Array<Promise<void>> = [];
    // The load goes on until the nemesis is done, so a fault recovering or caught up after the
    // planned end still meets it (with every kind hit in time, that is only the last recovery).
    let nemesisRunning = true;
    const loop = async (everyMs: number, step: () => Promise<void>): Promise<void> => {
      while (Date.now() < endAt || nemesisRunning) {
        if (inFlight < MAX_IN_FLIGHT) {
          inFlight += 1;
          running.push(step().finally(() => (inFlight -= 1)));
        }
        await sleep(everyMs);
      }
    };
    const nemesis = async (): Promise<void> => {
      const everyMs = 60_000 / options.faultsPerMinute;
      const times: number[] = [];
      for (let next = startedAt + everyMs / 2; next < endAt; next += everyMs) times.push(next);
      const kinds = faultKindSchedule(random, times.length);
      for (const time of times) {
        await sleep(Math.max(0, time - Date.now()));
        const fault = await injectFault(kinds.shift() ?? 'kill-gateway', context, random, startedAt);
        faults.push(fault);
        // A kind skipped for want of a target is tried again at the next time, before the others,
        // so a short soak still hits every kind (its spare times are a second round's repeats).
        if (fault.target === 'none') kinds.unshift(fault.kind);
      }
      // Kinds still not hit (skipped at every try), within a bound; none when every kind was hit.
      await catchUpFaults(faults, (kind) => injectFault(kind, context, random, startedAt), {
        maxFaults: CATCH_UP_FAULTS,
        untilMs: Math.max(Date.now(), endAt) + CATCH_UP_MS,
      });
    };
    await Promise.all([
      loop(PUBLISH_EVERY_MS, () =>
        publishOne({ queueUrls, token, destination: receiver.url, random, ledger, seq: seq++ }),
      ),
      loop(WRITE_EVERY_MS, () => writeOne({ instances, random, ledger, seq: seq++ })),
      nemesis().finally(() => (nemesisRunning = false)),
    ]);
    await Promise.all(running);
    log(
      `faults stopped; settling (up to ${SETTLE_MS / 1000} s) until every acknowledged publish is delivered`,
    );
    const delivered = (op: string): boolean =>
      (receiver.deliveries.get(op) ?? []).some((d) => d.status < 300);
    await waitFor(
      'acknowledged publishes delivered',
      async () => (ledger.publishes.every((p) => delivered(p.op)) ? true : undefined),
      {
        timeoutMs: SETTLE_MS,
        intervalMs: 1_000,
      },
    ).catch(() => undefined);
    const lost = ledger.publishes.filter((p) => !delivered(p.op));
    if (lost.length) {
      keepStateDir = true;
      const evidence = await describeLostPublishes({
        lost,
        deliveries: receiver.deliveries,
        faults,
        startedAt,
        redis: redis(),
        token,
      }).catch((err: unknown) => [`lost publishes' evidence unreadable: ${String(err)}`]);
      for (const line of evidence) log(line);
    }

    const readable: string[] = [];
    const lostWrites: string[] = [];
    for (const write of ledger.writes) {
      const found = await readBack(instances.get(write.instance)?.[0] ?? '', write.doc);
      if (found === write.content) readable.push(write.doc);
      else
        lostWrites.push(
          `${write.instance}/${write.doc} (${found === undefined ? 'no answer' : found === null ? '404' : 'other content'})`,
        );
    }
    let last: InstanceEnd[] = [];
    const phases = await waitFor(
      'every instance Running or Hibernated',
      async () => {
        const before = new Map(beforeFaults.map((i) => [i.name, i]));
        last = (await listInstances()).map((i) => ({
          ...i,
          unschedulableBeforeFaults: before.get(i.name)?.unschedulable !== undefined,
        }));
        return last.some(isStuck) ? undefined : last;
      },
      { timeoutMs: 120_000, intervalMs: 1_000 },
    ).catch(() => last);
    redis().disconnect();
    if (lostWrites.length) keepStateDir = true;
    if (keepStateDir)
      for (const line of await redisLateAofLines(stateDir, startedAt).catch(() => []))
        log(`redis wrote its append-only file late: ${line}`);

    const lateness = ledger.publishes.flatMap((p) => {
      const first = (receiver.deliveries.get(p.op) ?? []).find((d) => d.status < 300);
      return first ? [first.at - Math.max(p.ackedAt, p.notBefore)] : [];
    });
    report = {
      seed: options.seed,
      minutes: options.minutes,
      redisAppendfsync,
      faults,
      publishes: {
        acked: ledger.publishes.length,
        delivered: ledger.publishes.filter((p) => delivered(p.op)).length,
        lost: lost.map((p) => `${p.kind} ${p.op}`),
        duplicates: ledger.publishes.filter(
          (p) => (receiver.deliveries.get(p.op) ?? []).filter((d) => d.status < 300).length > 1,
        ).length,
        early: receiver.early,
        maxLateMs: Math.max(0, ...lateness),
      },
      parallelism: [...receiver.maxInFlight].map(([group, m]) => ({ group, ...m })),
      writes: { acked: ledger.writes.length, readable: readable.length, lost: lostWrites },
      failedAttempts: Object.fromEntries(ledger.failed),
      instances: phases,
      leakedProcesses: [],
    };
  } finally {
    await receiver.stop();
    await platform.stop();
  }
  // The platform's stop ends every child; anything still carrying the run's marker leaked.
  await sleep(1_000);
  report.leakedProcesses = processesWithEnv(`SETTEE_CHAOS_RUN=${marker}`);
  // A failed soak keeps its evidence: Redis's append-only file and log, the platform's logs.
  if (keepStateDir) log(`state dir kept for the lost operations: ${stateDir}`);
  else await fsp.rm(stateDir, { recursive: true, force: true }).catch(() => undefined);
  return report;
}

/**
 * An acknowledged document's content as read back: a hibernated instance wakes on the read, so a
 * 502/503 or no answer is asked again (bounded); null is a 404, undefined no answer at all.
 */
async function readBack(base: string, doc: string): Promise<string | null | undefined> {
  for (let attempt = 0; attempt < 6; attempt++) {
    const response = await couchFetch(`${base}/soak/${doc}`, { signal: AbortSignal.timeout(60_000) }).catch(
      () => undefined,
    );
    if (response?.status === 404) return null;
    if (response?.ok) return ((await response.json()) as { content?: string }).content ?? '';
    await sleep(2_000);
  }
  return undefined;
}
