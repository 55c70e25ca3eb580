import type http from 'node:http';
import type https from 'node:https';
import {
  AppsV1Api,
  CoordinationV1Api,
  CoreV1Api,
  createConfiguration,
  CustomObjectsApi,
  IsomorphicFetchHttpLibrary,
  KubeConfig,
  ResponseContext,
  ServerConfiguration,
  wrapHttpLibrary,
  type Configuration,
  type HttpLibrary,
  type RequestContext,
} from '@kubernetes/client-node';
import { ObjectClient } from './apply.js';

export type { KubeConfig };

/**
 * The kubeconfig from `kubeconfigPath` when given, else client-node's default order: the
 * KUBECONFIG variable, ~/.kube/config, then the in-cluster service account.
 */
export function loadKubeConfig(options: { kubeconfigPath?: string | undefined } = {}): KubeConfig {
  const kubeConfig = new KubeConfig();
  if (options.kubeconfigPath) kubeConfig.loadFromFile(options.kubeconfigPath);
  else kubeConfig.loadFromDefault();
  if (!kubeConfig.getCurrentCluster())
    throw new Error('no Kubernetes cluster configured (KUBECONFIG or in-cluster)');
  return withPooledConnections(kubeConfig);
}

type AgentFactory = (cluster: unknown, options: https.AgentOptions) => http.Agent;

/**
 * client-node 1.4 builds a fresh https.Agent for every request, so every call pays a TCP and TLS
 * handshake and the sockets pile up: at 500 instances that doubled reconcile time and added about
 * 120 MB. This keeps one keep-alive agent per distinct set of TLS options (rotated client
 * certificates or CAs get a new one). It replaces a private method; re-check on upgrades.
 */
export function withPooledConnections(kubeConfig: KubeConfig): KubeConfig {
  const target = kubeConfig as unknown as { createAgent: AgentFactory };
  const create = target.createAgent.bind(kubeConfig);
  const agents = new Map<string, http.Agent>();
  target.createAgent = (cluster, options) => {
    const key = agentKey(cluster, options);
    let agent = agents.get(key);
    if (!agent) {
      agent = create(cluster, { ...options, keepAlive: true });
      agents.set(key, agent);
    }
    return agent;
  };
  return kubeConfig;
}

/**
 * What tells agents apart: the cluster and every TLS option, a Buffer (client-node reads the CA,
 * client certificate and key afresh for every request) by its bytes. JSON.stringify would write
 * each Buffer as an array of numbers, one per byte: at 500 instances that was a tenth of the
 * operator's CPU.
 */
function agentKey(cluster: unknown, options: https.AgentOptions): string {
  let key = JSON.stringify(cluster);
  for (const [name, value] of Object.entries(options)) {
    key += `\n${name}=${Buffer.isBuffer(value) ? value.toString('latin1') : JSON.stringify(value)}`;
  }
  return key;
}

/** SETTEE_KUBE_REQUEST_TIMEOUT's default: far above any healthy call, and no reconcile waits forever. */
export const DEFAULT_KUBE_REQUEST_TIMEOUT_MS = 30_000;

/** An API call got no complete answer within the request timeout: the API server or the path to it hangs. */
export class KubeRequestTimeoutError extends Error {
  readonly code = 'KUBE_REQUEST_TIMEOUT';
  constructor(
    readonly request: { method: string; path: string },
    readonly timeoutMs: number,
    options?: { cause?: unknown },
  ) {
    super(`${request.method} ${request.path} got no answer within ${timeoutMs} ms`, options);
    this.name = 'KubeRequestTimeoutError';
  }
}

/**
 * client-node 1.4 sends every typed call through node-fetch without a signal, so a call on a
 * connection that went silent (a pooled keep-alive socket whose peer vanished) waits forever and
 * holds its reconcile with it. This transport gives each call a deadline covering the answer's
 * body too, read here in full so that the timeout error is ours. Watches do not come through here
 * (watch.ts has its own deadline): they are long on purpose.
 */
function timedTransport(timeoutMs: number): HttpLibrary {
  const fetchLibrary = new IsomorphicFetchHttpLibrary();
  return wrapHttpLibrary({
    async send(request: RequestContext): Promise<ResponseContext> {
      const signal = AbortSignal.timeout(timeoutMs);
      request.setSignal(signal);
      try {
        const response = await fetchLibrary.send(request).toPromise();
        const bytes = await response.body.binary();
        return new ResponseContext(response.httpStatusCode, response.headers, {
          binary: () => Promise.resolve(bytes),
          text: () => Promise.resolve(bytes.toString('utf8')),
        });
      } catch (err) {
        if (!signal.aborted) throw err;
        const path = new URL(request.getUrl()).pathname;
        throw new KubeRequestTimeoutError({ method: request.getHttpMethod(), path }, timeoutMs, {
          cause: err,
        });
      }
    },
  });
}

/** The API server's URL from the kubeconfig's current cluster, for the requests made by hand. */
export function currentServer(kubeConfig: KubeConfig): string {
  const cluster = kubeConfig.getCurrentCluster();
  if (!cluster) throw new Error('the kubeconfig has no current cluster');
  return cluster.server;
}

/** What kubeConfig.makeApiClient builds, with the timed transport. */
function apiConfiguration(kubeConfig: KubeConfig, requestTimeoutMs: number): Configuration {
  return createConfiguration({
    baseServer: new ServerConfiguration(currentServer(kubeConfig), {}),
    authMethods: { default: kubeConfig },
    httpApi: timedTransport(requestTimeoutMs),
  });
}

/** Every API client the operator uses, made once from one kubeconfig. */
export interface KubeClients {
  kubeConfig: KubeConfig;
  /** Generic client: server-side apply through `applyObject` (apply.ts). */
  objects: ObjectClient;
  core: CoreV1Api;
  apps: AppsV1Api;
  /** Custom resources, including their status subresource. */
  customObjects: CustomObjectsApi;
  coordination: CoordinationV1Api;
}

export interface KubeClientOptions {
  /** Deadline of each API call, answer included (DEFAULT_KUBE_REQUEST_TIMEOUT_MS). */
  requestTimeoutMs?: number;
}

export function makeKubeClients(kubeConfig: KubeConfig, options: KubeClientOptions = {}): KubeClients {
  const configuration = apiConfiguration(
    kubeConfig,
    options.requestTimeoutMs ?? DEFAULT_KUBE_REQUEST_TIMEOUT_MS,
  );
  return {
    kubeConfig,
    objects: ObjectClient.create(kubeConfig, configuration),
    core: new CoreV1Api(configuration),
    apps: new AppsV1Api(configuration),
    customObjects: new CustomObjectsApi(configuration),
    coordination: new CoordinationV1Api(configuration),
  };
}
