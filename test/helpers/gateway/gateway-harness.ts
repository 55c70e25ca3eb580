import {
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
} from '@kubernetes/client-node';
import nano from 'nano';
import { TEST_NODES } from '../control-plane-env.js';
import { LABEL_INSTANCE, SETTEE_API_VERSION, SETTEE_GROUP, SETTEE_VERSION } from '../../../api/contract.js';
import {
  COUCH_INSTANCE_KIND,
  COUCH_INSTANCE_PLURAL,
  type CouchInstance,
  type CouchInstanceSpec,
  type CouchInstanceStatus,
} from '../../../api/couch-instance.js';
import { testLogger } from '../test-logger.js';
import { loadGatewayConfig } from '../../../gateway/config.js';
import { startGateway, type Gateway, type GatewayOptions } from '../../../gateway/gateway.js';

export const UNLIMITED_FREE_RATES = {
  SETTEE_GATEWAY_FREE_READS_PER_SECOND: '1000000',
  SETTEE_GATEWAY_FREE_WRITES_PER_SECOND: '1000000',
  SETTEE_GATEWAY_FREE_QUERIES_PER_SECOND: '1000000',
} as const;

/**
 * The operator's free-instance limit per namespace (5 by default) raised, for suites about other
 * things that create many free instances in their namespace; the limit's own suite sets its own.
 */
export const UNLIMITED_FREE_INSTANCES = { SETTEE_FREE_INSTANCES_PER_NAMESPACE: '1000000' } as const;

/** The gateway in this process, on a free loopback port, serving one namespace. */
export async function startTestGateway(options: {
  kubeConfig: KubeConfig;
  namespace: string;
  env?: Record<string, string>;
  writers?: GatewayOptions['writers'];
  queue?: GatewayOptions['queue'];
}): Promise<Gateway> {
  const config = loadGatewayConfig({
    SETTEE_GATEWAY_PORT: '0',
    SETTEE_WATCH_NAMESPACE: options.namespace,
    SETTEE_GATEWAY_REPLICA: 'test-gateway',
    SETTEE_SHUTDOWN_TIMEOUT: '2s',
    // Suites about other things send free instances more than the free rates allow; the envelope's
    // own suites set the rates they test.
    ...UNLIMITED_FREE_RATES,
    // On by default; exported as false to run the gateway's suites on node:http alone
    // (docs/data-path.md, Option A); a suite that sets it itself wins.
    ...(process.env.SETTEE_GATEWAY_FAST_PATH === undefined
      ? {}
      : { SETTEE_GATEWAY_FAST_PATH: process.env.SETTEE_GATEWAY_FAST_PATH }),
    ...options.env,
  });
  return startGateway({
    config,
    kubeConfig: options.kubeConfig,
    logger: testLogger('gateway'),
    ...(options.writers ? { writers: options.writers } : {}),
    ...(options.queue ? { queue: options.queue } : {}),
  });
}

/** A gateway in front of one instance, and where that instance is at the gateway (path form). */
export interface GatewayInFront {
  gateway: Gateway;
  /** `/db/<namespace>/<name>` */
  basePath: string;
  /** The gateway's URL with basePath. */
  base: string;
}

/**
 * One instance whose CouchDB is a test server on `port` (its pod reported ready), and a gateway
 * started after both exist: the gateway syncs its caches before it listens, so its first request
 * already goes straight to the server, never the wake path.
 */
export async function startGatewayInFrontOf(options: {
  kubeConfig: KubeConfig;
  namespace: string;
  name: string;
  port: number;
  env?: Record<string, string>;
}): Promise<GatewayInFront> {
  const { kubeConfig, namespace, name } = options;
  await createCouchInstance(kubeConfig, { namespace, name });
  await setInstancePod(kubeConfig, { namespace, name }, { port: options.port, ready: true });
  const gateway = await startTestGateway({ kubeConfig, namespace, env: options.env ?? {} });
  const basePath = `/db/${namespace}/${name}`;
  return { gateway, basePath, base: `${gateway.url}${basePath}` };
}

const instanceApi = (namespace: string) =>
  ({ group: SETTEE_GROUP, version: SETTEE_VERSION, plural: COUCH_INSTANCE_PLURAL, namespace }) as const;

/** A CouchInstance object as a tenant would apply it (no operator needed for the gateway to route to it). */
export async function createCouchInstance(
  kubeConfig: KubeConfig,
  ref: { namespace: string; name: string },
  spec: CouchInstanceSpec = {},
  metadata: { finalizers?: string[] } = {},
): Promise<CouchInstance> {
  const body: CouchInstance = {
    apiVersion: SETTEE_API_VERSION,
    kind: COUCH_INSTANCE_KIND,
    metadata: { name: ref.name, namespace: ref.namespace, ...metadata },
    spec,
  };
  const api = kubeConfig.makeApiClient(CustomObjectsApi);
  return (await api.createNamespacedCustomObject({ ...instanceApi(ref.namespace), body })) as CouchInstance;
}

export async function readCouchInstance(
  kubeConfig: KubeConfig,
  ref: { namespace: string; name: string },
): Promise<CouchInstance> {
  const api = kubeConfig.makeApiClient(CustomObjectsApi);
  return (await api.getNamespacedCustomObject({
    ...instanceApi(ref.namespace),
    name: ref.name,
  })) as CouchInstance;
}

/** Writes status as the operator would (the tests that run without one play its part). */
export async function replaceCouchInstanceStatus(
  kubeConfig: KubeConfig,
  ref: { namespace: string; name: string },
  status: CouchInstanceStatus,
): Promise<void> {
  const api = kubeConfig.makeApiClient(CustomObjectsApi);
  const current = await readCouchInstance(kubeConfig, ref);
  await api.replaceNamespacedCustomObjectStatus({
    ...instanceApi(ref.namespace),
    name: ref.name,
    body: { ...current, status },
  });
}

/**
 * Plays the kubelet for an instance without an operator: its pod `<name>-0` with the engine's port,
 * running on 127.0.0.1 (ready or not), or no pod at all.
 */
export async function setInstancePod(
  kubeConfig: KubeConfig,
  ref: { namespace: string; name: string },
  endpoint: { port: number; ready: boolean } | undefined,
): Promise<void> {
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const name = `${ref.name}-0`;
  const existing = await core.readNamespacedPod({ name, namespace: ref.namespace }).catch(() => undefined);
  const samePort = existing?.spec?.containers[0]?.ports?.[0]?.containerPort === endpoint?.port;
  if (existing && (!endpoint || !samePort)) {
    await core.deleteNamespacedPod({ name, namespace: ref.namespace, gracePeriodSeconds: 0 });
  }
  if (!endpoint) return;
  if (!existing || !samePort) {
    await core.createNamespacedPod({
      namespace: ref.namespace,
      body: {
        metadata: { name, labels: { [LABEL_INSTANCE]: ref.name } },
        spec: {
          // A node of the test control plane (a pod bound to no existing node is collected by the
          // pod garbage collector); no kubelet stand-in runs in these suites, so the test is it.
          nodeName: TEST_NODES[0]?.name ?? '',
          containers: [
            { name: 'couchdb', image: 'couchdb', ports: [{ name: 'http', containerPort: endpoint.port }] },
          ],
        },
      },
    });
  }
  const now = new Date();
  await core.patchNamespacedPodStatus(
    {
      name,
      namespace: ref.namespace,
      body: {
        status: {
          phase: 'Running',
          podIP: '127.0.0.1',
          podIPs: [{ ip: '127.0.0.1' }],
          conditions: [{ type: 'Ready', status: endpoint.ready ? 'True' : 'False', lastTransitionTime: now }],
        },
      },
    },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
}

/** `http(s)://127.0.0.1:<port>/db/<namespace>/<name>`: an instance's base URL in the path form. */
export function instanceUrl(
  gateway: Gateway,
  ref: { namespace: string; name: string },
  credentials?: { username: string; password: string },
): string {
  const url = new URL(`${gateway.url}/db/${ref.namespace}/${ref.name}`);
  if (credentials) {
    url.username = encodeURIComponent(credentials.username);
    url.password = encodeURIComponent(credentials.password);
  }
  return url.toString();
}

/**
 * A nano client whose base URL is an instance's endpoint. nano reads the last path segment of a URL
 * as a database name unless `parseUrl` is false (a documented option its typings lack), which the
 * path form's `/db/<namespace>/<name>` needs.
 */
export function nanoAt(url: string): nano.ServerScope {
  return nano({ url, parseUrl: false } as nano.Configuration);
}
