import { COUCHDB_RELEASE_ENV, describeCouchEngine, locateCouchDbRelease } from './couch-engine/index.js';
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import crypto from 'node:crypto';
import { KubeConfig } from '@kubernetes/client-node';
import { applyObject, makeObjectClient } from '../kube/apply.js';
import { INSTANCE_PATH_PREFIX } from '../api/contract.js';
import { DEFAULT_CRD_DIR, installCrds, startControlPlane } from './control-plane.js';
import { installFreePlanChangePolicy } from './free-plan-change-policy.js';
import { provideLocalQueueDatabases } from './local-queue-databases.js';
import { startS3Server } from './s3-server.js';
import { locateKubeTools } from './kube-tools.js';
import { loadManifests } from './manifests.js';
import {
  BUNDLED_ENTRIES,
  consoleComponent,
  gatewayComponent,
  startComponent,
  startConsole,
  startGateway,
  type Component,
  type RunOptions,
} from './platform-components.js';
import {
  printConsoleSignIn,
  printNextSteps,
  printQueueEnvironments,
  writeEnvFile,
} from './platform-guide.js';
import { supervise } from './supervise.js';
import { waitForNodesSchedulable } from './nodes-schedulable.js';
import { DEFAULT_LOCAL_NODES } from './kubelet-stand-in/node-object.js';
import { bundleWithCodeCache } from './bundle.js';
import { assertPortFree, lockStateDir } from './run-lock.js';
import { chooseConsolePort } from './console-port.js';
import { createDemoTenant, writeConsoleKubeconfig, type DemoTenant } from './demo-tenant.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DEFAULT_STATE_DIR = path.join(ROOT, '.settee', 'local');
/** The bucket of the local object storage, which the operator stores every backup in. */
const LOCAL_BACKUP_BUCKET = 'settee-backups';

export interface LocalPlatformOptions {
  /** Print progress and the children's output (make run); tests keep it quiet. */
  echo?: boolean;
  /** Where the kubeconfig, env file, logs and engine data go (default .settee/local). */
  stateDir?: string;
  /** Also run the console (its page built by `npm run build:web`) and create the demo tenant. */
  console?: boolean;
  /**
   * The gateway's port, which must be free (make run: 8080 or SETTEE_GATEWAY_PORT, so the URL is
   * stable); the start is refused with a message when it is taken. Default: any free port (tests).
   */
  gatewayPort?: number;
  /**
   * More replicas of the gateway (each on a free port of its own, sharing the queue's Redis) and of
   * the operator (standbys for its Lease), as a cluster's Deployments run them (the chaos soak).
   * Default 1 each.
   */
  replicas?: { gateways?: number; operators?: number };
  /**
   * The queue databases' appendfsync (default everysec, Redis's own): the chaos soak runs `always`,
   * so a SIGKILLed Redis loses nothing it answered and any lost publish is Settee's.
   */
  queueDatabaseAppendfsync?: 'always' | 'everysec';
}

/** One running process of the platform, by the name its restarts are logged under. */
export interface PlatformProcess {
  name: string;
  pid: number;
}

export interface LocalPlatform {
  kubeconfigPath: string;
  gatewayUrl: string;
  /** Set when started with `console: true`. */
  console?: { url: string; demo: DemoTenant };
  /** Every gateway replica's URL, the first being gatewayUrl. */
  gatewayUrls: string[];
  /** The platform's long-running processes as they run now (each restart has a new pid). */
  running(): PlatformProcess[];
  stop(): Promise<void>;
}

export async function startLocalPlatform(options: LocalPlatformOptions = {}): Promise<LocalPlatform> {
  const say = (message: string): void => {
    if (options.echo) console.log(`==> ${message}`);
  };
  const stops: Array<() => Promise<void>> = [];
  const runningNow: Array<() => PlatformProcess[]> = [];
  const stop = async (): Promise<void> => {
    for (const fn of stops.reverse()) await fn().catch((err: unknown) => console.error(err));
    stops.length = 0;
  };

  const stateDir = path.resolve(options.stateDir ?? DEFAULT_STATE_DIR);
  await fs.mkdir(stateDir, { recursive: true });
  // Before anything starts: a second make run on the same folder or port stops here, saying why.
  const unlock = await lockStateDir(stateDir);
  stops.push(unlock);
  try {
    if (options.gatewayPort !== undefined)
      await assertPortFree({
        port: options.gatewayPort,
        what: 'gateway',
        hint: 'stop what holds it, or choose another port with SETTEE_GATEWAY_PORT=<port>',
      });
    const consolePort = options.console ? await chooseConsolePort(options.gatewayPort, say) : undefined;
    const kubeconfigPath = path.join(stateDir, 'kubeconfig');
    const kubeConfig = new KubeConfig();
    if (process.env.SETTEE_USE_EXISTING_CLUSTER === '1') {
      say('using the cluster of the current KUBECONFIG (SETTEE_USE_EXISTING_CLUSTER=1)');
      kubeConfig.loadFromDefault();
      await fs.writeFile(kubeconfigPath, kubeConfig.exportConfig(), { mode: 0o600 });
      say('installing CRDs');
      await installCrds(kubeConfig, DEFAULT_CRD_DIR);
      await installFreePlanChangePolicy(kubeConfig);
    } else {
      say(
        'starting the control plane (etcd + kube-apiserver; the first run builds them, see progress above)',
      );
      // etcd's data lives beside the volumes and the PKI: a restart brings back the same instances
      // with their data, and the tokens and kubeconfigs made for them.
      const plane = await startControlPlane({
        kubeconfigPath,
        etcdDataDir: path.join(stateDir, 'etcd'),
        pkiDir: path.join(stateDir, 'pki'),
        log: (m) => say(m),
        restartOnExit: { log: say },
      });
      stops.push(() => plane.stop());
      runningNow.push(() => plane.running());
      kubeConfig.loadFromFile(kubeconfigPath);
      say(`control plane ready at ${plane.server}`);
    }

    const exampleManifests = await loadManifests(path.join(ROOT, 'examples'));
    const examples = await provideLocalQueueDatabases(exampleManifests, {
      dataRoot: path.join(stateDir, 'redis', 'examples'),
      log: say,
      ...(options.queueDatabaseAppendfsync ? { appendfsync: options.queueDatabaseAppendfsync } : {}),
    });
    for (const server of examples.servers) {
      stops.push(() => server.stop());
      runningNow.push(() => [{ name: `redis-server:${server.port}`, pid: server.pid }]);
      say(
        `started redis-server for the example QueueBinding at ${server.host}:${server.port} (restarted on its append-only file if it exits)`,
      );
    }

    // Backups of paid instances (docs/backups.md) go to a versitygw on loopback, kept across runs.
    const s3 = await startS3Server({
      buckets: [LOCAL_BACKUP_BUCKET],
      dataDir: path.join(stateDir, 's3'),
      restartOnExit: { log: say },
    });
    stops.push(() => s3.stop());
    say(`started versitygw (object storage for backups) at ${s3.endpoint}, bucket ${LOCAL_BACKUP_BUCKET}`);

    const common: NodeJS.ProcessEnv = {
      ...process.env,
      KUBECONFIG: kubeconfigPath,
      SETTEE_LOG_LEVEL: process.env.SETTEE_LOG_LEVEL ?? 'info',
      SETTEE_KUBELET_DATA_DIR: path.join(stateDir, 'volumes'),
      // Receivers on this machine (examples/receiver) must be reachable; in a cluster the default
      // refuses loopback and private destinations.
      SETTEE_QUEUE_SSRF_ALLOW: '127.0.0.0/8',
    };
    // Located (unpacked if make deps did not) once here; the kubelet stand-in inherits the folder.
    const release = locateCouchDbRelease();
    if (release) common[COUCHDB_RELEASE_ENV] = release.root;
    say(describeCouchEngine());
    const bundles = new Map(
      await Promise.all(
        BUNDLED_ENTRIES.map(async (entry) => [entry, await bundleWithCodeCache(entry)] as const),
      ),
    );
    const run: RunOptions = { echo: options.echo ?? false, stateDir, bundles };
    // The gateway goes first: its port is part of every instance's endpoint, which the operator writes.
    const gateway = await startGateway(common, run, options.gatewayPort);
    const gatewayUrl = `http://127.0.0.1:${gateway.port}`;
    const gatewayUrls: string[] = [];
    for (let replica = 1; replica <= (options.replicas?.gateways ?? 1); replica++) {
      const name = replica === 1 ? 'gateway' : `gateway-${replica}`;
      const launched = replica === 1 ? gateway : await startGateway(common, run, undefined);
      // Supervised on the same port, so the URL in every endpoint and in the env file stays right.
      const supervised = supervise({
        name,
        first: launched.process,
        start: () => startComponent(gatewayComponent(common, launched.port, name), run),
        log: say,
      });
      stops.push(() => supervised.stop(10_000));
      runningNow.push(() => [{ name, pid: supervised.current().pid }]);
      gatewayUrls.push(`http://127.0.0.1:${launched.port}`);
      say(
        `started ${name} at ${gatewayUrls.at(-1)} (pid ${launched.process.pid}; restarted with back-off if it exits)`,
      );
    }
    // One identity per replica across restarts (SETTEE_LEADER_ELECTION_IDENTITY): a run started
    // after one that exited holds the Lease at once instead of waiting for it to expire. Every
    // replica derives the same signing keys from one master secret.
    const operatorEnv: NodeJS.ProcessEnv = {
      ...common,
      SETTEE_ENDPOINT_TEMPLATE: `${gatewayUrl}${INSTANCE_PATH_PREFIX}/{namespace}/{name}`,
      SETTEE_QUEUE_BASE_URL: gatewayUrl,
      SETTEE_SIGNING_MASTER_SECRET: crypto.randomBytes(32).toString('hex'),
      // The gateway owns the well-known port; the operator's /metrics takes any free one.
      SETTEE_METRICS_PORT: '0',
      SETTEE_BACKUP_S3_ENDPOINT: s3.endpoint,
      SETTEE_BACKUP_S3_BUCKET: LOCAL_BACKUP_BUCKET,
      SETTEE_BACKUP_S3_REGION: s3.region,
      SETTEE_BACKUP_S3_FORCE_PATH_STYLE: 'true',
      SETTEE_BACKUP_S3_ACCESS_KEY_ID: s3.accessKeyId,
      SETTEE_BACKUP_S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
    };
    const components: Component[] = [
      { name: 'kubelet-stand-in', entry: 'local/kubelet-stand-in/main.ts', env: common },
      ...Array.from({ length: options.replicas?.operators ?? 1 }, (_, i) => ({
        name: i === 0 ? 'operator' : `operator-${i + 1}`,
        entry: 'operator/main.ts',
        env: {
          ...operatorEnv,
          SETTEE_LEADER_ELECTION_IDENTITY: i === 0 ? 'local-operator' : `local-operator-${i + 1}`,
        },
      })),
    ];
    // Restarted when they exit, as their Deployments would be: the operator exits on losing its Lease.
    for (const component of components) {
      const supervised = supervise({
        name: component.name,
        start: () => startComponent(component, run),
        log: say,
      });
      say(`started ${component.name} (pid ${supervised.current().pid}; restarted with back-off if it exits)`);
      stops.push(() => supervised.stop(10_000));
      runningNow.push(() => [{ name: component.name, pid: supervised.current().pid }]);
    }

    const nodeNames = DEFAULT_LOCAL_NODES.map((node) => node.name);
    await waitForNodesSchedulable(kubeConfig, nodeNames);
    say(`node ${nodeNames.join(', ')} Ready and schedulable`);
    const objects = makeObjectClient(kubeConfig);
    for (const object of examples.manifests) {
      object.metadata = { namespace: 'default', ...object.metadata };
      await applyObject(objects, object, { fieldManager: 'settee-local' });
      say(`applied ${object.kind} ${object.metadata.namespace}/${object.metadata.name}`);
    }

    let consoleInfo: LocalPlatform['console'];
    if (options.console) {
      const onError = (message: string): void => console.error(`settee: ${message}`);
      const demo = await createDemoTenant(kubeConfig, {
        stateDir,
        examples: exampleManifests,
        onError,
        log: say,
      });
      // Stopped last, not in reverse order: the gateway, started before it, uses the demo's Redis
      // until it has stopped itself.
      stops.unshift(() => demo.stop());
      const consoleKubeconfig = await writeConsoleKubeconfig(kubeConfig, { stateDir, onError });
      stops.push(async () => consoleKubeconfig.stop());
      say(`created the demo tenant: namespace ${demo.namespace}, ServiceAccount ${demo.username}`);
      const consoleEnv: NodeJS.ProcessEnv = {
        ...common,
        KUBECONFIG: consoleKubeconfig.file,
        SETTEE_CONSOLE_HOST: '127.0.0.1',
        SETTEE_CONSOLE_QUEUE_BASE_URL: gatewayUrl,
        // One key for every restart of the process, so sessions outlive a crash.
        SETTEE_CONSOLE_SESSION_SECRET: crypto.randomBytes(32).toString('hex'),
      };
      const started = await startConsole(consoleEnv, run, consolePort);
      const supervisedConsole = supervise({
        name: 'console',
        first: started.process,
        start: () => startComponent(consoleComponent(consoleEnv, started.port), run),
        log: say,
      });
      stops.push(() => supervisedConsole.stop(5_000));
      consoleInfo = { url: `http://127.0.0.1:${started.port}`, demo };
      say(
        `started console at ${consoleInfo.url} (pid ${started.process.pid}; restarted with back-off if it exits)`,
      );
    }

    await writeEnvFile(stateDir, { kubeconfigPath, gatewayUrl, toolsDir: (await locateKubeTools()).dir });
    if (options.echo) {
      printNextSteps(stateDir, { kubeconfigPath, gatewayUrl });
      await printQueueEnvironments(kubeConfig, examples.manifests);
      if (consoleInfo) printConsoleSignIn(consoleInfo);
    }
    return {
      kubeconfigPath,
      gatewayUrl,
      gatewayUrls,
      console: consoleInfo,
      running: () => runningNow.flatMap((list) => list()),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
