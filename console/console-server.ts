import http from 'node:http';
import express, { type Express, type Request, type Response } from 'express';
import type winston from 'winston';
import { listen } from '../observability/listen.js';
import { bindingRoutes } from './api/binding-routes.js';
import { instanceRoutes } from './api/instance-routes.js';
import { sessionRoutes } from './api/session-routes.js';
import type { ConsoleConfig } from './config.js';
import { errorHandler } from './http/errors.js';
import { securityHeaders } from './http/security-headers.js';
import { DEFAULT_WEB_DIR, staticFiles } from './http/static-files.js';
import type { KubeHttp } from './kube/kube-http.js';
import { instanceStream } from './live/instance-stream.js';
import { StreamLimiter } from './live/stream-limiter.js';
import { clearSessionCookie } from './session/session-cookie.js';
import { requireSession } from './session/session-middleware.js';
import { SessionSealer } from './session/session-sealer.js';

export type ConsoleServerConfig = Pick<
  ConsoleConfig,
  | 'host'
  | 'port'
  | 'sessionKey'
  | 'sessionTtlMs'
  | 'maxStreamsPerSession'
  | 'trustedProxies'
  | 'shutdownTimeoutMs'
  | 'queueBaseUrl'
>;

export interface ConsoleServerOptions {
  config: ConsoleServerConfig;
  kube: KubeHttp;
  logger: winston.Logger;
  /** The built page (default console/web/dist). */
  webDir?: string;
  /** Stream timings, shortened by tests. */
  stream?: { watchTimeoutSeconds?: number; heartbeatMs?: number; retryMs?: number };
}

export interface ConsoleServer {
  url: string;
  port: number;
  limiter: StreamLimiter;
  stop(): Promise<void>;
}

/** The handler chain, outermost first: headers, body parsing, API, page, errors. */
export function buildConsoleApp(
  options: ConsoleServerOptions & { limiter: StreamLimiter; stopping: AbortSignal },
): Express {
  const { config, kube, logger, limiter, stopping } = options;
  const sealer = new SessionSealer(config.sessionKey);
  const app = express();
  app.disable('x-powered-by');
  // Believe X-Forwarded-Proto only from the listed proxies: it decides the cookie's Secure flag.
  app.set('trust proxy', config.trustedProxies.length > 0 ? config.trustedProxies : false);
  app.use(securityHeaders());
  // The pid tells `make run` that this process answers, not whatever else holds the port.
  app.get('/healthz', (_req, res) => void res.json({ ok: true, pid: process.pid }));
  // Ready once listening: the console holds no cache to fill, and each user's call reaches the API
  // server on its own (an unreachable one is a banner on the page, not a reason to leave the Service).
  app.get('/readyz', (_req, res) => void res.json({ ok: true }));

  const api = express.Router();
  api.use((_req, res, next) => {
    res.set('Cache-Control', 'no-store');
    next();
  });
  api.use(express.json({ limit: '64kb' }));
  api.use('/session', sessionRoutes({ kube, sealer, sessionTtlMs: config.sessionTtlMs, logger }));
  api.use(requireSession(sealer));
  api.get(
    '/namespaces/:namespace/instances/stream',
    instanceStream({ kube, limiter, logger, stopping, ...options.stream }),
  );
  api.use('/namespaces/:namespace/instances', instanceRoutes({ kube }));
  api.use('/namespaces/:namespace/bindings', bindingRoutes({ kube, queueBaseUrl: config.queueBaseUrl }));
  api.use(
    (_req: Request, res: Response) =>
      void res.status(404).json({ error: 'not-found', message: 'no such API route' }),
  );
  app.use('/api', api);
  app.use(staticFiles(options.webDir ?? DEFAULT_WEB_DIR));
  app.use(errorHandler({ logger, clearSession: (res) => clearSessionCookie(res.req, res) }));
  return app;
}

export async function startConsoleServer(options: ConsoleServerOptions): Promise<ConsoleServer> {
  const limiter = new StreamLimiter(options.config.maxStreamsPerSession);
  const stopping = new AbortController();
  const app = buildConsoleApp({ ...options, limiter, stopping: stopping.signal });
  const server = http.createServer(app);
  server.headersTimeout = 30_000;
  server.requestTimeout = 0; // live streams last as long as the page is open
  const port = await listen(server, { host: options.config.host, port: options.config.port });
  const shownHost = options.config.host === '0.0.0.0' ? '127.0.0.1' : options.config.host;
  return {
    url: `http://${shownHost}:${port}`,
    port,
    limiter,
    stop: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // Live streams end at once (EventSource reconnects to another replica); other requests get
      // the grace period.
      stopping.abort();
      server.closeIdleConnections();
      const cut = setTimeout(() => server.closeAllConnections(), options.config.shutdownTimeoutMs);
      cut.unref();
      await closed;
      clearTimeout(cut);
      options.kube.close();
    },
  };
}
