import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import type winston from 'winston';
import {
  startConsoleServer,
  type ConsoleServer,
  type ConsoleServerConfig,
} from '../../../console/console-server.js';
import { DEFAULT_WEB_DIR } from '../../../console/http/static-files.js';
import { KubeHttp } from '../../../console/kube/kube-http.js';
import { createSilentLogger } from '../../../observability/logger.js';

/**
 * `npm run build` builds the page before `make test`; a suite run on its own builds it once here
 * (vite, a few seconds) rather than failing on a missing file.
 */
export async function ensureWebBuild(): Promise<void> {
  if (fs.existsSync(path.join(DEFAULT_WEB_DIR, 'index.html'))) return;
  await promisify(execFile)(
    process.execPath,
    [path.resolve('node_modules/vite/bin/vite.js'), 'build', '--config', 'console/web/vite.config.ts'],
    {
      cwd: path.resolve('.'),
    },
  );
}

/** A kubeconfig for the same cluster as `admin`, authenticating with `token` only. */
export function kubeConfigWithToken(
  admin: KubeConfig,
  token: string,
  user = 'token-user',
  server?: string,
): KubeConfig {
  const current = admin.getCurrentCluster();
  if (!current) throw new Error('the admin kubeconfig names no cluster');
  const cluster = server ? { ...current, server } : current;
  const config = new KubeConfig();
  config.loadFromOptions({
    clusters: [cluster],
    users: [{ name: user, token }],
    contexts: [{ name: user, cluster: cluster.name, user }],
    currentContext: user,
  });
  return config;
}

/** The key every test console seals its sessions with, so a test can seal one the console opens. */
export const TEST_SESSION_KEY = new Uint8Array(Buffer.alloc(32, 7));

/** The console server in this process, as its own ServiceAccount (TokenReview rights only). */
export async function startTestConsole(options: {
  admin: KubeConfig;
  consoleToken: string;
  config?: Partial<ConsoleServerConfig>;
  logger?: winston.Logger;
  stream?: { watchTimeoutSeconds?: number; heartbeatMs?: number; retryMs?: number };
  /** Another API server address (one that does not answer, say). */
  server?: string;
}): Promise<ConsoleServer> {
  await ensureWebBuild();
  const kube = await KubeHttp.create(
    kubeConfigWithToken(options.admin, options.consoleToken, 'console', options.server),
    { timeoutMs: 10_000 },
  );
  return startConsoleServer({
    config: {
      host: '127.0.0.1',
      port: 0,
      sessionKey: TEST_SESSION_KEY,
      sessionTtlMs: 3_600_000,
      maxStreamsPerSession: 4,
      trustedProxies: [],
      shutdownTimeoutMs: 1_000,
      queueBaseUrl: undefined,
      ...options.config,
    },
    kube,
    logger: options.logger ?? createSilentLogger(),
    stream: options.stream,
  });
}

/** A browser-like client of the console API: keeps the session cookie, sends Origin and the CSRF token. */
export class ConsoleClient {
  cookie: string | undefined;
  csrfToken = '';
  lastSetCookie: string[] = [];

  constructor(readonly baseUrl: string) {}

  async signIn(token: string, namespace?: string): Promise<Response> {
    const response = await this.request('POST', '/api/session', { token, namespace });
    if (response.ok) this.csrfToken = ((await response.clone().json()) as { csrfToken: string }).csrfToken;
    return response;
  }

  async request(
    method: string,
    pathname: string,
    body?: unknown,
    options: { origin?: string | null; csrf?: string | null } = {},
  ): Promise<Response> {
    const headers: Record<string, string> = {};
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (this.cookie) headers.cookie = this.cookie;
    const origin = options.origin === undefined ? this.baseUrl : options.origin;
    if (origin !== null && method !== 'GET') headers.origin = origin;
    const csrf = options.csrf === undefined ? this.csrfToken : options.csrf;
    if (csrf !== null && method !== 'GET') headers['x-csrf-token'] = csrf;
    const response = await fetch(this.baseUrl + pathname, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      redirect: 'manual',
    });
    this.lastSetCookie = response.headers.getSetCookie();
    for (const line of this.lastSetCookie) {
      const [pair] = line.split(';');
      const value = pair?.slice(pair.indexOf('=') + 1) ?? '';
      this.cookie = value === '' || /Expires=Thu, 01 Jan 1970/.test(line) ? undefined : pair;
    }
    return response;
  }

  async json<T>(method: string, pathname: string, body?: unknown): Promise<{ status: number; body: T }> {
    const response = await this.request(method, pathname, body);
    const text = await response.text();
    return { status: response.status, body: (text ? JSON.parse(text) : undefined) as T };
  }
}
