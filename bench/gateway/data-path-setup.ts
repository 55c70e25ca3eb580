import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import { startCouchEngine, type CouchEngine, type CouchEngineAdmin } from '../../local/couch-engine/index.js';
import type { ControlPlane } from '../../local/control-plane.js';
import { getFreePort } from '../../local/ports.js';
import { createCouchInstance, setInstancePod } from '../../test/helpers/gateway/gateway-harness.js';
import { startBenchCluster } from '../lib/bench-cluster.js';
import { startTsProcess, waitForHttp } from '../lib/processes.js';

/** What the data-path benches proxy to, and the control plane their gateways route by. */
export interface DataPathSetup<Engine extends CouchEngine | undefined> {
  plane: ControlPlane;
  kubeConfig: KubeConfig;
  upstreamPort: number;
  /** The minimal upstream's process id, for its CPU time. */
  upstreamPid: number;
  engine: Engine;
  admin: CouchEngineAdmin;
  /** Each instance's name (`fast`, then `engine` when it runs) and the port its pod answers on. */
  routes: Array<[string, number]>;
}

/**
 * What bench/gateway-proxy.ts and bench/gateway-hybrid.ts both stand behind their proxies: a
 * control plane with `namespace` and the tests' nodes, the minimal upstream (bench/gateway/
 * minimal-upstream.ts, so the proxies are the bottleneck) as instance `fast`, and with `engine`
 * the default CouchDB engine in a fresh data dir as instance `engine`, each instance's pod Ready
 * on its port. What it starts is pushed onto `stops` as it starts, so that a failure half way
 * still stops the rest: the caller runs them in reverse.
 */
export function startDataPathSetup(
  stops: Array<() => Promise<void>>,
  options: { namespace: string; engine: true },
): Promise<DataPathSetup<CouchEngine>>;
export function startDataPathSetup(
  stops: Array<() => Promise<void>>,
  options: { namespace: string; engine: boolean },
): Promise<DataPathSetup<CouchEngine | undefined>>;
export async function startDataPathSetup(
  stops: Array<() => Promise<void>>,
  options: { namespace: string; engine: boolean },
): Promise<DataPathSetup<CouchEngine | undefined>> {
  const { namespace } = options;
  console.log('==> control plane');
  const { plane, kubeConfig } = await startBenchCluster(namespace, { testNodes: true });
  stops.push(() => plane.stop());

  const upstreamPort = await getFreePort();
  const upstream = startTsProcess('minimal-upstream', 'bench/gateway/minimal-upstream.ts', [
    String(upstreamPort),
  ]);
  stops.push(() => upstream.stop());
  await waitForHttp(`http://127.0.0.1:${upstreamPort}/_up`, 'the minimal upstream');

  const dataDir = await fsp.mkdtemp(path.join(os.tmpdir(), 'settee-bench-engine-'));
  const admin = { username: 'admin', password: 'bench' };
  const engine = options.engine ? await startCouchEngine({ dataDir, admin }) : undefined;
  stops.push(async () => {
    await engine?.stop();
    await fsp.rm(dataDir, { recursive: true, force: true });
  });

  const routes: Array<[string, number]> = [['fast', upstreamPort]];
  if (engine) routes.push(['engine', engine.port]);
  for (const [name, port] of routes) {
    await createCouchInstance(kubeConfig, { namespace, name });
    await setInstancePod(kubeConfig, { namespace, name }, { port, ready: true });
  }
  return { plane, kubeConfig, upstreamPort, upstreamPid: upstream.pid, engine, admin, routes };
}
