/**
 * A gateway's start, from its spawn to its /healthz answering (its informers synced, listening),
 * with the CPU it had used by then: what the chaos soak's kill-gateway recovery waits for once the
 * supervisor has restarted it. Side by side, alternating, on one control plane:
 * - `external`: the anchor, the ES module bundle with npm packages loaded from node_modules
 *   (bundleEntry, as the platform ran the gateway before);
 * - `bundled`: one CommonJS file with its packages (bundleWithCodeCache's), no code cache;
 * - `bundled + code cache`: the same through local/bundle-runner.ts with its cache written (the
 *   platform's way now; the cache is written by a first start, not measured).
 * Medians and spread (min-max) of GATEWAY_START_ROUNDS (5) rounds, and the load average.
 *
 *   npx tsx bench/gateway-start.ts
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import { bundleEntry, bundleWithCodeCache } from '../local/bundle.js';
import { startControlPlane } from '../local/control-plane.js';
import { getFreePort } from '../local/ports.js';
import { startProcess } from '../local/process.js';
import { waitFor } from '../local/wait.js';
import { buildCompiledGatewayEnv } from './lib/gateway-bench-env.js';
import { cpuSeconds } from './lib/process-usage.js';
import { ROOT } from './lib/processes.js';
import { median, spread } from './lib/stats.js';

const ROUNDS = Number(process.env.GATEWAY_START_ROUNDS ?? 5);
const NAMESPACE = 'default';

const [external, [runner, bundled]] = await Promise.all([
  bundleEntry('gateway/main.ts'),
  bundleWithCodeCache('gateway/main.ts'),
]);
if (runner === undefined || bundled === undefined) throw new Error('bundleWithCodeCache gave no bundle');
const sides: Record<string, string[]> = {
  external: [external],
  bundled: [bundled],
  'bundled + code cache': [runner, bundled],
};
await fs.rm(`${bundled}.v8cache`, { force: true });

const plane = await startControlPlane();
const results = new Map<string, { wallS: number[]; cpuS: number[]; load: number[] }>();
try {
  // Round 0 warms the page cache and writes the code cache; it is not counted.
  for (let round = 0; round <= ROUNDS; round++)
    for (const [side, args] of Object.entries(sides)) {
      const port = await getFreePort();
      const started = performance.now();
      const proc = startProcess({
        name: 'gateway',
        command: process.execPath,
        args,
        cwd: ROOT,
        env: buildCompiledGatewayEnv({ kubeconfigPath: plane.kubeconfigPath, port, namespace: NAMESPACE }),
      });
      let cpuS = 0;
      try {
        await waitFor(
          'the gateway to answer /healthz',
          async () => {
            const ok = await fetch(`http://127.0.0.1:${port}/healthz`).then(
              (answer) => answer.ok,
              () => false,
            );
            // Read at once: what the start used, not what it uses after.
            if (ok) cpuS = cpuSeconds(proc.pid);
            return ok || undefined;
          },
          { timeoutMs: 120_000, intervalMs: 20, abort: proc.exited },
        );
      } finally {
        await proc.stop();
      }
      const wallS = (performance.now() - started) / 1000;
      const load = os.loadavg()[0] ?? 0;
      console.log(
        `${round === 0 ? 'warm-up' : `round ${round}`} ${side}: ${wallS.toFixed(2)} s, ${cpuS.toFixed(2)} s CPU, load ${load.toFixed(1)}`,
      );
      if (round === 0) continue;
      const result = results.get(side) ?? { wallS: [], cpuS: [], load: [] };
      result.wallS.push(wallS);
      result.cpuS.push(cpuS);
      result.load.push(load);
      results.set(side, result);
    }
} finally {
  await plane.stop();
}

const anchor = results.get('external');
console.log(
  '\n| gateway start | spawn to /healthz | CPU by then | CPU / external | load |\n|---|---|---|---|---|',
);
for (const [side, { wallS, cpuS, load }] of results) {
  const ratio = anchor ? (median(cpuS) / median(anchor.cpuS)).toFixed(2) : '-';
  console.log(
    `| ${side} | ${median(wallS).toFixed(2)} s [${spread(wallS, 2)}] | ${median(cpuS).toFixed(2)} s [${spread(cpuS, 2)}] | ${ratio}x | ${spread(load, 0)} |`,
  );
}
