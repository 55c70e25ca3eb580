import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { KubeConfig } from '@kubernetes/client-node';
import { applyObject, makeObjectClient } from '../operator/kube/apply.js';
import { INSTANCE_PATH_PREFIX } from '../operator/api/contract.js';
import { DEFAULT_CRD_DIR, installCrds, startControlPlane } from './control-plane.js';
import { loadManifests } from './manifests.js';
import { getFreePort } from './ports.js';
import { startProcess, type ManagedProcess } from './process.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const STATE_DIR = path.join(ROOT, '.settee', 'local');
const TSX = path.join(ROOT, 'node_modules', '.bin', 'tsx');
const PREFERRED_GATEWAY_PORT = 8080;

export interface LocalPlatformOptions {
  /** Print progress and the children's output (make run); tests keep it quiet. */
  echo?: boolean;
}

export interface LocalPlatform {
  kubeconfigPath: string;
  gatewayUrl: string;
  stop(): Promise<void>;
}

/** A part of the platform that is started only once its code exists in the tree. */
interface Component {
  name: string;
  entry: string;
  env: NodeJS.ProcessEnv;
}

export async function startLocalPlatform(options: LocalPlatformOptions = {}): Promise<LocalPlatform> {
  const say = (message: string): void => {
    if (options.echo) console.log(`==> ${message}`);
  };
  const stops: Array<() => Promise<void>> = [];
  const stop = async (): Promise<void> => {
    for (const fn of stops.reverse()) await fn().catch((err: unknown) => console.error(err));
    stops.length = 0;
  };

  try {
    await fs.mkdir(STATE_DIR, { recursive: true });
    const kubeconfigPath = path.join(STATE_DIR, 'kubeconfig');
    const kubeConfig = new KubeConfig();
    if (process.env.SETTEE_USE_EXISTING_CLUSTER === '1') {
      say('using the cluster of the current KUBECONFIG (SETTEE_USE_EXISTING_CLUSTER=1)');
      kubeConfig.loadFromDefault();
      await fs.writeFile(kubeconfigPath, kubeConfig.exportConfig(), { mode: 0o600 });
      say('installing CRDs');
      await installCrds(kubeConfig, DEFAULT_CRD_DIR);
    } else {
      say(
        'starting the control plane (etcd + kube-apiserver; the first run builds them, see progress above)',
      );
      const plane = await startControlPlane({ kubeconfigPath, log: (m) => say(m) });
      stops.push(() => plane.stop());
      kubeConfig.loadFromFile(kubeconfigPath);
      say(`control plane ready at ${plane.server}`);
    }

    const gatewayPort = await choosePort();
    const gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
    const common: NodeJS.ProcessEnv = {
      ...process.env,
      KUBECONFIG: kubeconfigPath,
      SETTEE_LOG_LEVEL: process.env.SETTEE_LOG_LEVEL ?? 'info',
    };
    const components: Component[] = [
      {
        name: 'operator',
        entry: 'operator/main.ts',
        env: {
          ...common,
          SETTEE_ENDPOINT_TEMPLATE: `${gatewayUrl}${INSTANCE_PATH_PREFIX}/{namespace}/{name}`,
        },
      },
      { name: 'kubelet-stand-in', entry: 'local/kubelet-stand-in/main.ts', env: common },
      {
        name: 'gateway',
        entry: 'gateway/main.ts',
        env: { ...common, SETTEE_GATEWAY_PORT: String(gatewayPort) },
      },
    ];
    for (const component of components) {
      const proc = await startComponent(component, options.echo ?? false);
      if (proc) {
        say(`started ${component.name} (pid ${proc.pid})`);
        stops.push(() => proc.stop(10_000));
      } else {
        say(`skipping ${component.name}: ${component.entry} does not exist yet`);
      }
    }

    const examples = await loadManifests(path.join(ROOT, 'examples'));
    const objects = makeObjectClient(kubeConfig);
    for (const object of examples) {
      object.metadata = { namespace: 'default', ...object.metadata };
      await applyObject(objects, object, { fieldManager: 'settee-local' });
      say(`applied ${object.kind} ${object.metadata.namespace}/${object.metadata.name}`);
    }

    await writeEnvFile({ kubeconfigPath, gatewayUrl });
    if (options.echo) printNextSteps({ kubeconfigPath, gatewayUrl });
    return { kubeconfigPath, gatewayUrl, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

async function choosePort(): Promise<number> {
  const requested = process.env.SETTEE_GATEWAY_PORT;
  if (requested) return Number(requested);
  // A stable URL is friendlier across restarts; fall back to any free port when 8080 is taken.
  const net = await import('node:net');
  const free = await new Promise<boolean>((resolve) => {
    const server = net.createServer().once('error', () => resolve(false));
    server.listen({ host: '127.0.0.1', port: PREFERRED_GATEWAY_PORT }, () =>
      server.close(() => resolve(true)),
    );
  });
  return free ? PREFERRED_GATEWAY_PORT : getFreePort();
}

async function startComponent(component: Component, echo: boolean): Promise<ManagedProcess | undefined> {
  const entry = path.join(ROOT, component.entry);
  if (!(await fs.stat(entry).catch(() => undefined))) return undefined;
  return startProcess({
    name: component.name,
    command: TSX,
    args: [entry],
    env: component.env,
    cwd: ROOT,
    echo,
    logFile: path.join(STATE_DIR, `${component.name}.log`),
  });
}

async function writeEnvFile(info: { kubeconfigPath: string; gatewayUrl: string }): Promise<void> {
  const lines = [`export KUBECONFIG=${info.kubeconfigPath}`, `export SETTEE_GATEWAY_URL=${info.gatewayUrl}`];
  await fs.writeFile(path.join(STATE_DIR, 'env'), `${lines.join('\n')}\n`);
}

function printNextSteps(info: { kubeconfigPath: string; gatewayUrl: string }): void {
  const envFile = path.relative(process.cwd(), path.join(STATE_DIR, 'env'));
  console.log(`
Settee is running. In another shell:

  source ${envFile}          # KUBECONFIG=${info.kubeconfigPath}, SETTEE_GATEWAY_URL=${info.gatewayUrl}
  kubectl apply -f examples/couchinstance-free.yaml
  kubectl get couch                          # Phase, Plan, Endpoint
  kubectl get secret <name>-admin -o jsonpath='{.data.url}' | base64 -d   # the URL with credentials

Gateway: ${info.gatewayUrl}   (instances at ${info.gatewayUrl}${INSTANCE_PATH_PREFIX}/<namespace>/<name>)
Press Ctrl-C to stop everything.
`);
}
