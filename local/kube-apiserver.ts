import https from 'node:https';
import path from 'node:path';
import type { KubeTools } from './kube-tools.js';
import { launchOnFreePort, type Restartable } from './launch.js';
import type { ControlPlanePki } from './pki.js';
import { startProcess, type ManagedProcess } from './process.js';

/** The files the API server is started with. */
export interface ApiserverFiles {
  caCert: string;
  apiserverCert: string;
  apiserverKey: string;
  serviceAccountPublic: string;
  serviceAccountPrivate: string;
}

/**
 * The API server's environment: Go's default GC (GOGC 100, as kubeadm, GKE and EKS run it), an
 * inherited GOGC left out, unless KUBE_APISERVER_GOGC is set, opt-in for a soak or a bench to
 * compare. Read at each start, so a restart takes the value set then. Measured once: CPU from a
 * restart to its first answered list 0.78 s [0.57-0.89] at 400 against 1.11 s [0.93-1.19] at the
 * default, 7 samples each, alternating within each of two runs (17:40-17:48 UTC, 4 + 3 each),
 * load 18-27, for about 75 MB more peak memory (310-335 MB against 235-260 MB); the chaos soak of
 * seed 2951 ran at 400, seed 2950's at the default (docs/guarantees.md).
 */
export function apiserverEnvironment(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const { GOGC: _inherited, KUBE_APISERVER_GOGC: gogc, ...rest } = env;
  return gogc ? { ...rest, GOGC: gogc } : rest;
}

/**
 * API group versions served by default that nothing of Settee's (operator, gateway, console, chart,
 * kubelet stand-in, tests) nor the scheduler uses, and whose controllers the controller manager
 * does not run (control-plane-components.ts): Jobs and CronJobs, certificate signing requests, and
 * priority-and-fairness's configuration (off above). Every group version an API server serves costs
 * each start its OpenAPI v2 and v3 building, about half of a start's CPU (a profile of a restart,
 * docs/guarantees.md): these four off, a restart's CPU until it serves fell 0.92 -> 0.78 s, lower in
 * each of 6 alternating rounds (bench/apiserver-restart.ts, 2026-11-28 21:24 UTC, load 26). A
 * cluster may turn any of them off the same way; a group whose objects an admission plugin of the
 * API server watches (networking, node, scheduling) cannot be, its informers would never sync.
 * Not turned off: node.k8s.io with its RuntimeClass plugin, events.k8s.io and the admission plugins
 * nothing here uses (LimitRanger, webhooks, certificates) measured within a restart's spread
 * (0.72 against 0.73 s, lower in 5 of 8 rounds: docs/guarantees.md).
 */
export const UNSERVED_API_GROUPS = [
  'batch/v1',
  'certificates.k8s.io/v1',
  'flowcontrol.apiserver.k8s.io/v1',
  'flowcontrol.apiserver.k8s.io/v1beta3',
];

export async function startApiserver(
  tools: KubeTools,
  options: {
    workDir: string;
    files: ApiserverFiles;
    etcdUrl: string;
    pki: ControlPlanePki;
    readyTimeoutMs: number;
    /** Flags after the local platform's own (a later value of the same flag wins). */
    extraArgs?: readonly string[] | undefined;
  },
): Promise<Restartable> {
  const { workDir, files, etcdUrl, pki, readyTimeoutMs } = options;
  const start = (port: number): ManagedProcess =>
    startProcess({
      name: 'kube-apiserver',
      command: tools.kubeApiserver,
      args: [
        `--etcd-servers=${etcdUrl}`,
        `--secure-port=${port}`,
        '--bind-address=127.0.0.1',
        '--advertise-address=127.0.0.1',
        `--cert-dir=${path.join(workDir, 'apiserver-certs')}`,
        `--tls-cert-file=${files.apiserverCert}`,
        `--tls-private-key-file=${files.apiserverKey}`,
        `--client-ca-file=${files.caCert}`,
        '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
        `--service-account-key-file=${files.serviceAccountPublic}`,
        `--service-account-signing-key-file=${files.serviceAccountPrivate}`,
        '--service-cluster-ip-range=10.96.0.0/16',
        '--authorization-mode=RBAC',
        '--allow-privileged=true',
        // Off although the controller manager makes every namespace's default ServiceAccount: a
        // pod created the instant its namespace appears (the tests do) would be refused until it
        // exists. Settee's pods mount no token (automountServiceAccountToken: false).
        '--disable-admission-plugins=ServiceAccount',
        '--enable-priority-and-fairness=false',
        `--runtime-config=${UNSERVED_API_GROUPS.map((g) => `${g}=false`).join(',')}`,
        '--profiling=false',
        '--v=0',
        ...(options.extraArgs ?? []),
      ],
      env: apiserverEnvironment(process.env),
      logFile: path.join(workDir, 'kube-apiserver.log'),
    });
  const launched = await launchOnFreePort({
    what: 'kube-apiserver /readyz',
    start,
    isReady: (port) => readyz(`https://127.0.0.1:${port}`, pki),
    readyTimeoutMs,
    intervalMs: 200,
  });
  return { ...launched, restart: () => start(launched.port) };
}

function readyz(server: string, pki: ControlPlanePki): Promise<true | undefined> {
  return new Promise((resolve, reject) => {
    const request = https.get(
      `${server}/readyz`,
      { ca: pki.ca.certPem, cert: pki.admin.certPem, key: pki.admin.keyPem, timeout: 2_000 },
      (response) => {
        response.resume();
        resolve(response.statusCode === 200 ? true : undefined);
      },
    );
    request.once('timeout', () => request.destroy(new Error('readyz timed out')));
    request.once('error', reject);
  });
}
