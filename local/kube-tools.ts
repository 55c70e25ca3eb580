import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Where kube-apiserver, kube-controller-manager, kube-scheduler, etcd, kubectl (and helm, when
 * built) live: the KUBEBUILDER_ASSETS layout.
 */
export interface KubeTools {
  dir: string;
  kubeApiserver: string;
  kubeControllerManager: string;
  kubeScheduler: string;
  etcd: string;
  kubectl: string;
  helm: string;
}

export class KubeToolsUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'KubeToolsUnavailableError';
  }
}

const BUILD_SCRIPT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'tools', 'build-kube-tools.sh');

let cached: Promise<KubeTools> | undefined;

/**
 * Finds the Kubernetes binaries, building them from the Go module proxy into ~/.cache/settee the
 * first time (or taking KUBEBUILDER_ASSETS when set). The build script's progress goes to stderr.
 */
export function locateKubeTools(): Promise<KubeTools> {
  cached ??= new Promise<KubeTools>((resolve, reject) => {
    const child = spawn('bash', [BUILD_SCRIPT], { stdio: ['ignore', 'pipe', 'inherit'] });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.once('error', (err) =>
      reject(new KubeToolsUnavailableError(`cannot run ${BUILD_SCRIPT}: ${err.message}`)),
    );
    child.once('exit', (code) => {
      const dir = stdout.trim().split('\n').pop() ?? '';
      if (code !== 0 || !dir) {
        reject(
          new KubeToolsUnavailableError(
            `the Kubernetes binaries are unavailable (build script exited ${code}); see the message above, ` +
              'or set KUBEBUILDER_ASSETS to a folder holding kube-apiserver, kube-controller-manager, kube-scheduler, etcd and kubectl',
          ),
        );
        return;
      }
      resolve({
        dir,
        kubeApiserver: path.join(dir, 'kube-apiserver'),
        kubeControllerManager: path.join(dir, 'kube-controller-manager'),
        kubeScheduler: path.join(dir, 'kube-scheduler'),
        etcd: path.join(dir, 'etcd'),
        kubectl: path.join(dir, 'kubectl'),
        helm: path.join(dir, 'helm'),
      });
    });
  });
  return cached;
}
