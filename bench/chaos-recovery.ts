/**
 * Each fault's recovery measured alone: the soak's local platform (two gateway and two operator
 * replicas, the soak's Lease settings) without its workload, one fault at a time, the kinds in
 * turn. Prints every recovery and the median and range per kind.
 * RECOVERY_KINDS (kill-gateway,kill-operator-leader,kill-kube-apiserver), RECOVERY_ROUNDS (4),
 * RECOVERY_GAP_SECONDS (25, between two faults: with three kinds a process is hit again 75 s
 * after its last fault at the soonest, past the supervisor's 60 s stable time, so each crash is a
 * first one).
 */
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { startLocalPlatform } from '../local/platform.js';
import { FAULT_KINDS, injectFault, sleep, type FaultKind } from './chaos/nemesis.js';
import { seededRandom } from './lib/seeded-random.js';
import { SOAK_PLATFORM_ENV } from './chaos/soak.js';
import { median } from './lib/stats.js';

/** The kinds whose probe needs no soak instance or queue database. */
const MEASURABLE: FaultKind[] = [
  'kill-gateway',
  'pause-gateway',
  'kill-operator-leader',
  'kill-kubelet-stand-in',
  'kill-kube-apiserver',
  'kill-etcd',
];
const kinds = (process.env.RECOVERY_KINDS ?? 'kill-gateway,kill-operator-leader,kill-kube-apiserver')
  .split(',')
  .map((k) => k.trim()) as FaultKind[];
const rounds = Number(process.env.RECOVERY_ROUNDS ?? 4);
const gapMs = Number(process.env.RECOVERY_GAP_SECONDS ?? 25) * 1000;
const unknown = kinds.filter((k) => !MEASURABLE.includes(k));
if (unknown.length > 0 || !(rounds > 0) || !(gapMs >= 0)) {
  console.error(
    `RECOVERY_KINDS: some of ${MEASURABLE.join(', ')} (not ${unknown.join(', ') || '-'}; all kinds: ${FAULT_KINDS.join(', ')}); RECOVERY_ROUNDS and RECOVERY_GAP_SECONDS: positive numbers`,
  );
  process.exit(2);
}

Object.assign(process.env, SOAK_PLATFORM_ENV, { SETTEE_LOG_LEVEL: process.env.SETTEE_LOG_LEVEL ?? 'warn' });
const stateDir = await fsp.mkdtemp(path.join(os.tmpdir(), 'settee-recovery-'));
const platform = await startLocalPlatform({ stateDir, replicas: { gateways: 2, operators: 2 } });
const kubeConfig = new KubeConfig();
kubeConfig.loadFromFile(platform.kubeconfigPath);
const notMeasured = (): Promise<never> => Promise.reject(new Error('not measured by this bench'));
const context = {
  kubeConfig,
  running: () => platform.running(),
  gatewayUrls: platform.gatewayUrls,
  redisAnswers: notMeasured,
  instancesAnswer: notMeasured,
  wakeInstance: notMeasured,
  instancePods: notMeasured,
  log: (m: string) => console.log(`[recovery] ${m}`),
};
const random = seededRandom(29);
const results = new Map<FaultKind, number[]>(kinds.map((k) => [k, []]));
const startedAt = Date.now();
try {
  // Operators take a moment to elect a leader; the first fault waits for the platform to settle.
  await sleep(gapMs);
  for (let round = 1; round <= rounds; round++)
    for (const kind of kinds) {
      const fault = await injectFault(kind, context, random, startedAt);
      const seconds = fault.recoveryMs === undefined ? 'none' : `${(fault.recoveryMs / 1000).toFixed(1)} s`;
      console.log(
        `round ${round} ${kind}: ${fault.target} recovered in ${seconds} (load ${os.loadavg()[0]?.toFixed(1)})`,
      );
      if (fault.recoveryMs !== undefined) results.get(kind)?.push(fault.recoveryMs);
      await sleep(gapMs);
    }
} finally {
  await platform.stop();
  await fsp.rm(stateDir, { recursive: true, force: true }).catch(() => undefined);
}
console.log('\n| fault | recoveries | median | range |\n|---|---|---|---|');
for (const [kind, ms] of results) {
  const s = (v: number): string => (v / 1000).toFixed(1);
  console.log(
    `| ${kind} | ${ms.length} of ${rounds} | ${s(median(ms))} s | ${s(Math.min(...ms))}-${s(Math.max(...ms))} s |`,
  );
}
