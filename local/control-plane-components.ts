import fs from 'node:fs/promises';
import path from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import type { KubeTools } from './kube-tools.js';
import type { KeyPair } from './pki.js';
import { ProcessExitedError, startProcess, type ManagedProcess } from './process.js';

/** The files the controller manager and the scheduler are started with. */
export interface ComponentFiles {
  caCert: string;
  caKey: string;
  serviceAccountPrivate: string;
}

export interface ComponentOptions {
  tools: KubeTools;
  workDir: string;
  server: string;
  caPem: string;
  files: ComponentFiles;
  controllerManager: KeyPair;
  scheduler: KeyPair;
  /** Their API clients' limits (ControlPlaneOptions.componentApiLimits). Default: each one's own. */
  apiLimits?: { qps: number; burst: number } | undefined;
  /** Serve each one's /metrics on this loopback port (ControlPlaneOptions.componentMetrics). Default: no port. */
  metricsPorts?: { controllerManager: number; scheduler: number } | undefined;
}

function limitArgs(limits: { qps: number; burst: number } | undefined): string[] {
  return limits ? [`--kube-api-qps=${limits.qps}`, `--kube-api-burst=${limits.burst}`] : [];
}

/**
 * A loopback HTTPS port (a self-signed certificate made in memory) whose /metrics anyone may read,
 * as Kubernetes' scalability jobs run both components (--authorization-always-allow-paths with
 * /metrics in their CONTROLLER_MANAGER_TEST_ARGS and SCHEDULER_TEST_ARGS); everything else on it is
 * refused (no authorization kubeconfig). Undefined: no port.
 */
function servingArgs(port: number | undefined): string[] {
  if (port === undefined) return ['--secure-port=0'];
  return [
    `--secure-port=${port}`,
    '--bind-address=127.0.0.1',
    '--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics',
  ];
}

/**
 * kube-controller-manager's controllers, as kubeadm runs them: every default one, but those of the
 * API groups the local API server does not serve (UNSERVED_API_GROUPS: Jobs, CronJobs and their
 * TTL, certificate signing requests), whose informers would retry a list it refuses for good, and
 * the endpoint controllers: the kubelet stand-in's pods have loopback addresses, which the API
 * server refuses in Endpoints and EndpointSlices (422), so in a cluster they write once per pod
 * change and here they retried every write with a Warning Event, about 36 refused writes a wake,
 * most of them while the engine boots (docs/cold-start.md). Nothing local reads them: the gateway
 * follows pods.
 */
export const CONTROLLERS = [
  '*',
  '-job-controller',
  '-cronjob-controller',
  '-ttl-after-finished-controller',
  '-certificatesigningrequest-signing-controller',
  '-certificatesigningrequest-approving-controller',
  '-certificatesigningrequest-cleaner-controller',
  '-endpoints-controller',
  '-endpointslice-controller',
  '-endpointslice-mirroring-controller',
];

/** A component's first run, and how to start it again the same way. */
export interface StartedComponent {
  process: ManagedProcess;
  restart(): ManagedProcess;
}

/**
 * Starts kube-controller-manager and kube-scheduler against `server`, each with a kubeconfig of
 * its own identity, as kubeadm does. No leader election (each control plane runs one of each) and
 * no serving port unless `metricsPorts` asks (port 0 keeps several control planes apart).
 */
export async function startControllersAndScheduler(options: ComponentOptions): Promise<StartedComponent[]> {
  const { tools, workDir, files } = options;
  const [controllerManagerConfig, schedulerConfig] = await Promise.all([
    writeComponentKubeconfig(
      path.join(workDir, 'controller-manager.kubeconfig'),
      options,
      options.controllerManager,
    ),
    writeComponentKubeconfig(path.join(workDir, 'scheduler.kubeconfig'), options, options.scheduler),
  ]);
  const controllerManager = (): ManagedProcess =>
    startProcess({
      name: 'kube-controller-manager',
      command: tools.kubeControllerManager,
      args: [
        `--kubeconfig=${controllerManagerConfig}`,
        ...servingArgs(options.metricsPorts?.controllerManager),
        ...limitArgs(options.apiLimits),
        '--leader-elect=false',
        `--controllers=${CONTROLLERS.join(',')}`,
        // Each controller acts with its own service account's token (which the token controller and
        // TokenRequest mint with the signing key), so the bootstrap RBAC applies as in a cluster.
        '--use-service-account-credentials=true',
        `--service-account-private-key-file=${files.serviceAccountPrivate}`,
        `--root-ca-file=${files.caCert}`,
        `--cluster-signing-cert-file=${files.caCert}`,
        `--cluster-signing-key-file=${files.caKey}`,
        '--cluster-name=settee-local',
        '--profiling=false',
        '--v=0',
      ],
      logFile: path.join(workDir, 'kube-controller-manager.log'),
    });
  const scheduler = (): ManagedProcess =>
    startProcess({
      name: 'kube-scheduler',
      command: tools.kubeScheduler,
      args: [
        `--kubeconfig=${schedulerConfig}`,
        ...servingArgs(options.metricsPorts?.scheduler),
        // Honoured while no --config file is given (the flag is deprecated in its favour).
        ...limitArgs(options.apiLimits),
        '--leader-elect=false',
        '--profiling=false',
        '--v=0',
      ],
      logFile: path.join(workDir, 'kube-scheduler.log'),
    });
  return [controllerManager, scheduler].map((start) => ({ process: start(), restart: start }));
}

/** Throws a ProcessExitedError for the first of `processes` that has already ended. */
export async function assertStillRunning(processes: readonly ManagedProcess[]): Promise<void> {
  for (const proc of processes) {
    const exit = await Promise.race([proc.exited, Promise.resolve(undefined)]);
    if (exit !== undefined) throw new ProcessExitedError(proc.name, exit, proc.output());
  }
}

async function writeComponentKubeconfig(
  file: string,
  options: { server: string; caPem: string },
  identity: KeyPair,
): Promise<string> {
  const b64 = (pem: string): string => Buffer.from(pem).toString('base64');
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [{ name: 'settee-local', server: options.server, caData: b64(options.caPem) }],
    users: [{ name: 'component', certData: b64(identity.certPem), keyData: b64(identity.keyPem) }],
    contexts: [{ name: 'settee-local', cluster: 'settee-local', user: 'component' }],
    currentContext: 'settee-local',
  });
  await fs.writeFile(file, kubeConfig.exportConfig(), { mode: 0o600 });
  return file;
}
