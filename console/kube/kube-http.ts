import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import { KubeConfig } from '@kubernetes/client-node';
import { currentServer } from '../../kube/clients.js';
import { KubeApiError } from '../../kube/errors.js';
import { KubeUnreachableError } from '../http/errors.js';

/** How a request proves who it is: the console's own identity, or a user's bearer token. */
export type Credentials = { kind: 'console' } | { kind: 'user'; token: string };

export interface KubeRequest {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  path: string;
  query?: Record<string, string | undefined>;
  body?: unknown;
  /** Default application/json; a JSON merge patch says so. */
  contentType?: string;
}

/**
 * The console's road to the API server, as plain JSON over HTTPS. A user's request carries only
 * their token: the console's own credentials (its client certificate or ServiceAccount token) are
 * applied to its own calls (TokenReview) and never to a user's, so RBAC decides for the user alone.
 */
export class KubeHttp {
  private readonly server: URL;
  private readonly agent: http.Agent;

  private constructor(
    private readonly consoleConfig: KubeConfig,
    private readonly tls: https.RequestOptions,
    private readonly timeoutMs: number,
  ) {
    this.server = new URL(currentServer(consoleConfig));
    const Agent = this.server.protocol === 'http:' ? http.Agent : https.Agent;
    this.agent = new Agent({ keepAlive: true, maxSockets: 64 });
  }

  /** The cluster's address and CA come from the console's kubeconfig; no user credentials go with them. */
  static async create(consoleConfig: KubeConfig, options: { timeoutMs: number }): Promise<KubeHttp> {
    const cluster = consoleConfig.getCurrentCluster();
    if (!cluster) throw new Error('the kubeconfig has no current cluster');
    const anonymous = new KubeConfig();
    anonymous.loadFromOptions({
      clusters: [cluster],
      users: [{ name: 'anonymous' }],
      contexts: [{ name: 'anonymous', cluster: cluster.name, user: 'anonymous' }],
      currentContext: 'anonymous',
    });
    const tls: https.RequestOptions = {};
    await anonymous.applyToHTTPSOptions(tls);
    delete tls.headers;
    return new KubeHttp(consoleConfig, tls, options.timeoutMs);
  }

  private url(request: Pick<KubeRequest, 'path' | 'query'>): URL {
    const url = new URL(request.path, this.server);
    for (const [key, value] of Object.entries(request.query ?? {}))
      if (value !== undefined) url.searchParams.set(key, value);
    return url;
  }

  private async options(
    credentials: Credentials,
    request: { method: string; contentType?: string },
  ): Promise<https.RequestOptions> {
    const headers: Record<string, string> = { Accept: 'application/json' };
    if (request.contentType) headers['Content-Type'] = request.contentType;
    if (credentials.kind === 'user') {
      headers.Authorization = `Bearer ${credentials.token}`;
      return { ...this.tls, method: request.method, headers, agent: this.agent };
    }
    const own: https.RequestOptions = { method: request.method, headers };
    await this.consoleConfig.applyToHTTPSOptions(own);
    return { ...own, headers: { ...own.headers, ...headers } };
  }

  /** One call; a non-2xx answer becomes KubeApiError, no answer at all KubeUnreachableError. */
  async call<T>(credentials: Credentials, request: KubeRequest): Promise<T> {
    const body = request.body === undefined ? undefined : JSON.stringify(request.body);
    const response = await this.send(credentials, request, body, this.timeoutMs);
    const text = await readBody(response);
    const status = response.statusCode ?? 0;
    let parsed: unknown;
    try {
      parsed = text === '' ? {} : JSON.parse(text);
    } catch {
      parsed = { message: text.slice(0, 300) };
    }
    if (status >= 200 && status < 300) return parsed as T;
    throw statusError(status, parsed);
  }

  /** A watch or other long answer: the open response (2xx), to be read as it comes. */
  async stream(
    credentials: Credentials,
    request: Omit<KubeRequest, 'body'>,
    signal: AbortSignal,
  ): Promise<IncomingMessage> {
    const response = await this.send(credentials, { ...request }, undefined, undefined, signal);
    const status = response.statusCode ?? 0;
    if (status >= 200 && status < 300) return response;
    const text = await readBody(response);
    let parsed: unknown = {};
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = { message: text.slice(0, 300) };
    }
    throw statusError(status, parsed);
  }

  private async send(
    credentials: Credentials,
    request: KubeRequest,
    body: string | undefined,
    timeoutMs: number | undefined,
    signal?: AbortSignal,
  ): Promise<IncomingMessage> {
    const url = this.url(request);
    const options = await this.options(credentials, {
      method: request.method,
      contentType: body === undefined ? undefined : (request.contentType ?? 'application/json'),
    });
    const transport = url.protocol === 'http:' ? http : https;
    return new Promise<IncomingMessage>((resolve, reject) => {
      const req = transport.request(url, { ...options, signal }, resolve);
      if (timeoutMs !== undefined) {
        req.setTimeout(timeoutMs, () =>
          req.destroy(new Error(`${request.method} ${url.pathname} timed out`)),
        );
      }
      req.on('error', (err) => reject(signal?.aborted ? err : new KubeUnreachableError({ cause: err })));
      req.end(body);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

function readBody(response: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    response.on('data', (chunk: Buffer) => chunks.push(chunk));
    response.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    response.on('error', (err) => reject(new KubeUnreachableError({ cause: err })));
  });
}

function statusError(statusCode: number, body: unknown): KubeApiError {
  const status = (typeof body === 'object' && body !== null ? body : {}) as {
    message?: string;
    reason?: string;
    details?: { causes?: { field?: string; message?: string }[] };
  };
  return new KubeApiError({
    statusCode,
    reason: status.reason,
    message: status.message ?? `the Kubernetes API answered ${statusCode}`,
    causes: status.details?.causes,
  });
}
