/**
 * How long the operator's and the gateway's caches stay blind after a kube-apiserver outage: a
 * real control plane, informers built as the operator (InformerFactory) and the gateway
 * (ResilientInformer, kube-binding-source.ts) build theirs, with their default restart back-off;
 * the API server is killed and started again after each outage length (5, 15, 30 s), then a
 * ConfigMap is created as soon as the API server takes a write, and the time until every informer
 * holds it is the blind time. Also prints the longest restart delay each informer had scheduled.
 *
 *   npx tsx bench/informer-outage.ts     (BENCH_OUTAGES=5,15,30 seconds, BENCH_ROUNDS=1 each,
 *                                         BENCH_OUTAGE_OF=kube-apiserver or etcd)
 */
import { CoreV1Api, type V1ConfigMap } from '@kubernetes/client-node';
import winston from 'winston';
import Transport from 'winston-transport';
import { startControlPlane, type ControlPlaneProcessName } from '../local/control-plane.js';
import { waitFor } from '../local/wait.js';
import { InformerFactory } from '../kube/informer-factory.js';
import { DEFAULT_INFORMER_RESTART_BACKOFF, ResilientInformer, type Informer } from '../kube/informer.js';
import type { WatchedResource } from '../kube/resource-path.js';
import { round } from './lib/stats.js';

const OUTAGES_S = (process.env.BENCH_OUTAGES ?? '5,15,30').split(',').map(Number);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 1);
const OUTAGE_OF: ControlPlaneProcessName = process.env.BENCH_OUTAGE_OF === 'etcd' ? 'etcd' : 'kube-apiserver';
const NAMESPACE = 'default';

/** The restart delays the informers scheduled (their warn entries' delayMs), by informer. */
class DelayTransport extends Transport {
  readonly delays: number[] = [];
  override log(info: Record<string, unknown>, next: () => void): void {
    if (typeof info.delayMs === 'number') this.delays.push(info.delayMs);
    next();
  }
}

function watched(): WatchedResource {
  return { apiVersion: 'v1', kind: 'ConfigMap', plural: 'configmaps', namespace: NAMESPACE };
}

async function main(): Promise<void> {
  console.log(`restart back-off: ${JSON.stringify(DEFAULT_INFORMER_RESTART_BACKOFF)}`);
  const plane = await startControlPlane({ log: (m) => console.log(`[control plane] ${m}`) });
  const core = plane.kubeConfig.makeApiClient(CoreV1Api);
  const operatorDelays = new DelayTransport();
  const gatewayDelays = new DelayTransport();
  const factory = new InformerFactory({
    kubeConfig: plane.kubeConfig,
    logger: winston.createLogger({ level: 'warn', transports: [operatorDelays] }),
  });
  const operator = factory.informerFor<V1ConfigMap>(watched());
  const gateway = new ResilientInformer<V1ConfigMap>({
    kubeConfig: plane.kubeConfig,
    resource: watched(),
    logger: winston.createLogger({ level: 'warn', transports: [gatewayDelays] }),
    restartBackoff: DEFAULT_INFORMER_RESTART_BACKOFF,
  });
  const informers: Array<[string, Informer<V1ConfigMap>, DelayTransport]> = [
    ['operator', operator, operatorDelays],
    ['gateway', gateway, gatewayDelays],
  ];
  factory.startAll();
  gateway.start();
  await Promise.all([factory.waitForSync(), gateway.synced]);
  const rows: string[] = [];
  try {
    for (const outageS of OUTAGES_S) {
      for (let round_ = 0; round_ < ROUNDS; round_++) {
        for (const [, , delays] of informers) delays.delays.length = 0;
        const load = (await import('node:os')).loadavg()[0]?.toFixed(1);
        await plane.outage(OUTAGE_OF, outageS * 1000);
        const name = `outage-${outageS}-${round_}-${Date.now()}`;
        // The API server is back when it takes a write; the blind time counts from that write.
        await waitFor(
          'the API server to take a write',
          () =>
            core
              .createNamespacedConfigMap({ namespace: NAMESPACE, body: { metadata: { name } } })
              .then(() => true as const),
          { timeoutMs: 120_000, intervalMs: 50 },
        );
        const written = performance.now();
        const seen = await Promise.all(
          informers.map(async ([who, informer, delays]) => {
            await waitFor(
              `${who} to see ${name}`,
              async () => (informer.get({ namespace: NAMESPACE, name }) ? true : undefined),
              { timeoutMs: 120_000, intervalMs: 20 },
            );
            return `${who} ${round((performance.now() - written) / 1000, 2)} s (longest delay ${Math.max(0, ...delays.delays)} ms, ${delays.delays.length} restarts)`;
          }),
        );
        const row = `${OUTAGE_OF} outage ${outageS} s (load ${load}): ${seen.join('; ')}`;
        console.log(row);
        rows.push(row);
      }
    }
  } finally {
    await Promise.all([factory.stopAll(), gateway.stop()]);
    await plane.stop();
  }
  console.log(`\nblind time after the API server took a write again:\n${rows.join('\n')}`);
}

await main();
