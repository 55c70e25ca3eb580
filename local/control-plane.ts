import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  ApiextensionsV1Api,
  CoreV1Api,
  KubeConfig,
  StorageV1Api,
  type V1CustomResourceDefinition,
} from '@kubernetes/client-node';
import { applyObject, makeObjectClient } from '../kube/apply.js';
import { assertStillRunning, startControllersAndScheduler } from './control-plane-components.js';
import { Outages, type OutageTarget } from './control-plane-outage.js';
import { installFreePlanChangePolicy } from './free-plan-change-policy.js';
import { startApiserver } from './kube-apiserver.js';
import { locateKubeTools, type KubeTools } from './kube-tools.js';
import { buildLocalStorageClass } from './kubelet-stand-in/local-volumes.js';
import { loadManifests } from './manifests.js';
import { loadOrGeneratePki } from './persisted-pki.js';
import { generateControlPlanePki, type ControlPlanePki } from './pki.js';
import { launchOnFreePort, type Restartable } from './launch.js';
import { getFreePort } from './ports.js';
import { startProcess, type ManagedProcess } from './process.js';
import { supervise } from './supervise.js';
import { waitFor } from './wait.js';

export const DEFAULT_CRD_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'crds');

export interface ControlPlaneOptions {
  /** CRDs to install and wait for (default: the repository's crds/). */
  crdDir?: string;
  /** Where to write the kubeconfig (default: inside the control plane's temporary folder). */
  kubeconfigPath?: string;
  /** Progress messages (default: none). */
  log?: (message: string) => void;
  /**
   * Where etcd keeps the cluster's state across restarts (make run: .settee/local/etcd, beside the
   * volumes, so instances, credentials and data come back together). Default: a temporary folder
   * on tmpfs, removed on stop (tests).
   */
  etcdDataDir?: string;
  /**
   * Where the certificates and service-account keys are kept across restarts, with etcdDataDir
   * (persisted-pki.ts), so tokens and kubeconfigs of an earlier run stay valid. Default: fresh
   * ones on every start (tests).
   */
  pkiDir?: string;
  /**
   * Start etcd, kube-apiserver, the controller manager and the scheduler again (on the same ports,
   * with the same data) whenever one exits without being stopped, as the kubelet restarts a static
   * pod, telling `log` (make run). Default: off (tests see a crash as a failure).
   */
  restartOnExit?: { log: (message: string) => void };
  /**
   * Serve the controller manager's and the scheduler's /metrics on a free loopback port each, so a
   * bench can read their API clients' requests and client-side throttling (bench/lib/component-metrics.ts).
   * Default: off, no serving port.
   */
  componentMetrics?: boolean;
  /**
   * --kube-api-qps and --kube-api-burst of the controller manager's and the scheduler's clients
   * (a bench compares them; Kubernetes' 5,000-node validation ran both at 100/100). Default: their
   * own, 20/30 (kube-controller-manager's command-line reference) and 50/100 (the scheduler's
   * clientConnection), one limiter per controller as each acts with its own service account. The
   * local platform keeps them: at 2,000 instances raising them only moved the StatefulSet and
   * EndpointSlice controllers' writes into the window the operator converges in (README, session 15).
   */
  componentApiLimits?: { qps: number; burst: number };
  /**
   * kube-apiserver flags after the local platform's own, a later value winning (a bench compares a
   * restart's cost with and without one, bench/apiserver-restart.ts). Default: none.
   */
  apiserverArgs?: readonly string[];
}

/** A running etcd, kube-apiserver, kube-controller-manager and kube-scheduler on loopback, with an admin kubeconfig. */
export interface ControlPlane {
  /** https://127.0.0.1:<port> */
  server: string;
  kubeconfigPath: string;
  kubeConfig: KubeConfig;
  tools: KubeTools;
  /** etcd, kube-apiserver, the controller manager and the scheduler as they run now. */
  running(): Array<{ name: string; pid: number }>;
  /** Where the controller manager and the scheduler serve /metrics, with componentMetrics. */
  componentMetricsPorts: { controllerManager: number; scheduler: number } | undefined;
  /**
   * Kills `name` (SIGKILL, a crash) and starts it again on the same port and data `downMs` later:
   * an outage as its clients see it, refused connections, for tests and benches of how they come
   * back. Resolves once it is started again (not yet ready). Not with restartOnExit, whose
   * supervisor restarts at once.
   */
  outage(name: ControlPlaneProcessName, downMs: number): Promise<void>;
  /** Stops every process and removes the temporary data. Safe to call twice. */
  stop(): Promise<void>;
}

export type ControlPlaneProcessName = 'etcd' | 'kube-apiserver';

const READY_TIMEOUT_MS = 60_000;

/**
 * Starts a real etcd and kube-apiserver on free loopback ports with freshly generated certificates,
 * waits for /readyz, starts the real kube-controller-manager and kube-scheduler, writes a
 * kubeconfig, installs the CRDs (waiting until they are Established) and the default StorageClass
 * (settee-local). There is no kubelet: the kubelet stand-in (local/kubelet-stand-in) registers the
 * nodes, runs their pods and provisions that class's volumes.
 */
export async function startControlPlane(options: ControlPlaneOptions = {}): Promise<ControlPlane> {
  const log = options.log ?? (() => undefined);
  const tools = await locateKubeTools();
  const workDir = await fs.mkdtemp(path.join(fastTempRoot(), 'settee-control-plane-'));
  // Each process as it runs now; an outage replaces an unsupervised one by its restart.
  const processes: Array<OutageTarget & { name: string }> = [];
  // Once started and seen ready, each process is kept running from here on (with restartOnExit).
  const keep = (name: string, first: ManagedProcess, again: () => ManagedProcess): void => {
    const restartOnExit = options.restartOnExit;
    if (restartOnExit) {
      const kept = supervise({ name, first, start: again, log: restartOnExit.log });
      processes.push({
        name,
        current: () => ({ pid: kept.current().pid, stop: (grace) => kept.stop(grace) }),
      });
      return;
    }
    let proc = first;
    processes.push({ name, current: () => proc, again, replace: (next) => (proc = next) });
  };
  const outages = new Outages();
  const outage = (name: ControlPlaneProcessName, downMs: number): Promise<void> =>
    outages.run(
      name,
      processes.find((p) => p.name === name),
      downMs,
    );
  const stop = async (): Promise<void> => {
    // Before the processes: an outage in its sleep would start its process again after them.
    await outages.stop();
    for (const entry of processes.reverse()) await entry.current().stop();
    processes.length = 0;
    await fs.rm(workDir, { recursive: true, force: true });
  };
  try {
    log('starting etcd');
    // The keys are generated off the event loop while etcd starts.
    const [pki, etcd] = await Promise.all([
      options.pkiDir ? keptPki(options.pkiDir, log) : generateControlPlanePki(),
      startEtcd(tools, { workDir, dataDir: options.etcdDataDir }),
    ]);
    keep('etcd', etcd.process, () => etcd.restart());
    const files = await writePki(workDir, pki);
    log('starting kube-apiserver');
    const etcdUrl = `http://127.0.0.1:${etcd.port}`;
    const apiserver = await startApiserver(tools, {
      workDir,
      files,
      etcdUrl,
      pki,
      readyTimeoutMs: READY_TIMEOUT_MS,
      extraArgs: options.apiserverArgs,
    });
    keep('kube-apiserver', apiserver.process, () => apiserver.restart());
    const server = `https://127.0.0.1:${apiserver.port}`;
    const kubeconfigPath = options.kubeconfigPath ?? path.join(workDir, 'kubeconfig');
    const kubeConfig = await writeKubeconfig(kubeconfigPath, server, pki);
    log('starting kube-controller-manager and kube-scheduler');
    // Free now; another process could take one before the component binds it, which ends that
    // component and so this start (waitForControllers): acceptable for the benches that ask.
    const componentMetricsPorts = options.componentMetrics
      ? { controllerManager: await getFreePort(), scheduler: await getFreePort() }
      : undefined;
    const components = await startControllersAndScheduler({
      metricsPorts: componentMetricsPorts,
      apiLimits: options.componentApiLimits,
      tools,
      workDir,
      server,
      caPem: pki.ca.certPem,
      files,
      controllerManager: pki.controllerManager,
      scheduler: pki.scheduler,
    });
    for (const component of components)
      keep(component.process.name, component.process, () => component.restart());
    log('installing CRDs and the default StorageClass');
    await installCrds(kubeConfig, options.crdDir ?? DEFAULT_CRD_DIR);
    await ensureLocalStorageClass(kubeConfig);
    await installFreePlanChangePolicy(kubeConfig);
    await waitForControllers(
      kubeConfig,
      components.map((c) => c.process),
    );
    return {
      server,
      kubeconfigPath,
      kubeConfig,
      tools,
      stop,
      outage,
      running: () => processes.map((p) => ({ name: p.name, pid: p.current().pid })),
      componentMetricsPorts,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/**
 * Waits until the controller manager's controllers run: the service account controller has given
 * the default namespace its ServiceAccount (the controllers start together, once their caches
 * have synced), so the first StatefulSet a caller creates is acted on at once.
 */
async function waitForControllers(kubeConfig: KubeConfig, components: ManagedProcess[]): Promise<void> {
  const core = kubeConfig.makeApiClient(CoreV1Api);
  await waitFor(
    'kube-controller-manager to run its controllers',
    async () => {
      await assertStillRunning(components);
      return core.readNamespacedServiceAccount({ name: 'default', namespace: 'default' }).then(
        () => true as const,
        () => undefined,
      );
    },
    { timeoutMs: READY_TIMEOUT_MS, intervalMs: 100 },
  );
  await assertStillRunning(components);
}

function fastTempRoot(): string {
  // etcd fsyncs every write; tmpfs keeps a test run's thousands of writes cheap.
  return process.platform === 'linux' && os.freemem() > 2 * 1024 ** 3 ? '/dev/shm' : os.tmpdir();
}

interface PkiFiles {
  caCert: string;
  caKey: string;
  apiserverCert: string;
  apiserverKey: string;
  serviceAccountPublic: string;
  serviceAccountPrivate: string;
}

async function keptPki(dir: string, log: (message: string) => void): Promise<ControlPlanePki> {
  const loaded = await loadOrGeneratePki(dir);
  if (loaded.source === 'reused') log(`reusing the certificates and service-account keys in ${dir}`);
  else if (loaded.reason)
    log(
      `new certificates and service-account keys in ${dir} (the stored ones were refused: ${loaded.reason}); ` +
        'ServiceAccount tokens of earlier runs no longer authenticate',
    );
  else log(`new certificates and service-account keys, kept in ${dir}`);
  return loaded.pki;
}

async function writePki(workDir: string, pki: ControlPlanePki): Promise<PkiFiles> {
  const dir = path.join(workDir, 'pki');
  await fs.mkdir(dir, { mode: 0o700 });
  const files: PkiFiles = {
    caCert: path.join(dir, 'ca.crt'),
    caKey: path.join(dir, 'ca.key'),
    apiserverCert: path.join(dir, 'apiserver.crt'),
    apiserverKey: path.join(dir, 'apiserver.key'),
    serviceAccountPublic: path.join(dir, 'sa.pub'),
    serviceAccountPrivate: path.join(dir, 'sa.key'),
  };
  await Promise.all([
    fs.writeFile(files.caCert, pki.ca.certPem),
    fs.writeFile(files.caKey, pki.ca.keyPem, { mode: 0o600 }),
    fs.writeFile(files.apiserverCert, pki.apiserver.certPem),
    fs.writeFile(files.apiserverKey, pki.apiserver.keyPem, { mode: 0o600 }),
    fs.writeFile(files.serviceAccountPublic, pki.serviceAccount.publicKeyPem),
    fs.writeFile(files.serviceAccountPrivate, pki.serviceAccount.privateKeyPem, { mode: 0o600 }),
  ]);
  return files;
}

/**
 * Applies the default StorageClass. A class kept in etcd from an older run may differ in a field
 * that cannot change (volumeBindingMode): it is replaced then; volumes bound through it stay bound.
 */
async function ensureLocalStorageClass(kubeConfig: KubeConfig): Promise<void> {
  const wanted = buildLocalStorageClass();
  const storage = kubeConfig.makeApiClient(StorageV1Api);
  const name = wanted.metadata?.name ?? '';
  const existing = await storage.readStorageClass({ name }).catch(() => undefined);
  if (existing && existing.volumeBindingMode !== wanted.volumeBindingMode)
    await storage.deleteStorageClass({ name });
  await applyObject(makeObjectClient(kubeConfig), wanted, { fieldManager: 'settee-local' });
}

async function startEtcd(
  tools: KubeTools,
  options: { workDir: string; dataDir?: string | undefined },
): Promise<Restartable> {
  const { workDir, dataDir } = options;
  const start = (port: number): ManagedProcess => {
    const url = `http://127.0.0.1:${port}`;
    return startProcess({
      name: 'etcd',
      command: tools.etcd,
      args: [
        `--data-dir=${dataDir ?? path.join(workDir, `etcd-${port}`)}`,
        `--listen-client-urls=${url}`,
        `--advertise-client-urls=${url}`,
        // A one-member cluster never dials its peers; port 0 keeps the peer listener off any fixed port.
        '--listen-peer-urls=http://127.0.0.1:0',
        '--log-level=error',
      ],
      logFile: path.join(workDir, 'etcd.log'),
    });
  };
  const launched = await launchOnFreePort({
    what: 'etcd',
    start,
    isReady: (port) => etcdHealthy(`http://127.0.0.1:${port}`),
    readyTimeoutMs: READY_TIMEOUT_MS,
  });
  return { ...launched, restart: () => start(launched.port) };
}

async function etcdHealthy(url: string): Promise<true | undefined> {
  const response = await fetch(`${url}/health`);
  const body = (await response.json()) as { health?: string };
  return body.health === 'true' ? true : undefined;
}

async function writeKubeconfig(file: string, server: string, pki: ControlPlanePki): Promise<KubeConfig> {
  const b64 = (pem: string): string => Buffer.from(pem).toString('base64');
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [{ name: 'settee-local', server, caData: b64(pki.ca.certPem) }],
    users: [{ name: 'settee-admin', certData: b64(pki.admin.certPem), keyData: b64(pki.admin.keyPem) }],
    contexts: [{ name: 'settee-local', cluster: 'settee-local', user: 'settee-admin', namespace: 'default' }],
    currentContext: 'settee-local',
  });
  await fs.mkdir(path.dirname(file), { recursive: true });
  await fs.writeFile(file, kubeConfig.exportConfig(), { mode: 0o600 });
  return kubeConfig;
}

/** Applies every CustomResourceDefinition in `dir` and waits until each is Established. */
export async function installCrds(kubeConfig: KubeConfig, dir: string): Promise<string[]> {
  const crds = (await loadManifests(dir)).filter((o) => o.kind === 'CustomResourceDefinition');
  const objects = makeObjectClient(kubeConfig);
  const extensions = kubeConfig.makeApiClient(ApiextensionsV1Api);
  const names: string[] = [];
  for (const crd of crds) {
    await applyObject(objects, crd, { fieldManager: 'settee-local' });
    names.push(crd.metadata?.name ?? '');
  }
  await Promise.all(
    names.map((name) =>
      waitFor(
        `CRD ${name} to be Established`,
        async () =>
          isEstablished(await extensions.readCustomResourceDefinition({ name })) ? true : undefined,
        { timeoutMs: 30_000, intervalMs: 100 },
      ),
    ),
  );
  return names;
}

function isEstablished(crd: V1CustomResourceDefinition): boolean {
  return crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') ?? false;
}
