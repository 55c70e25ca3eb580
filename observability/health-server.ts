import http from 'node:http';
import type { Registry } from 'prom-client';
import type { Logger } from 'winston';
import { listen } from './listen.js';
import { errorMessage } from './logger.js';

/** A named readiness check; the server answers 503 while any returns false. */
export interface ReadinessCheck {
  name: string;
  isReady: () => boolean;
}

export interface HealthServerOptions {
  host: string;
  /** 0 picks a free port; read the chosen one from `port`. */
  port: number;
  registry: Registry;
  readiness: readonly ReadinessCheck[];
  logger: Logger;
}

export interface HealthServer {
  readonly port: number;
  close(): Promise<void>;
}

/**
 * /metrics (Prometheus text), /healthz (the process answers: liveness) and /readyz (every
 * readiness check passes). Plain node:http: three routes need no framework.
 */
export async function startHealthServer(options: HealthServerOptions): Promise<HealthServer> {
  const server = http.createServer((request, response) => {
    void handle(options, request, response).catch((err: unknown) => {
      options.logger.error('health server request failed', { path: request.url, error: errorMessage(err) });
      if (!response.headersSent) response.writeHead(500);
      response.end();
    });
  });
  const port = await listen(server, options);
  options.logger.info('health and metrics server listening', { host: options.host, port });
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function handle(
  options: HealthServerOptions,
  request: http.IncomingMessage,
  response: http.ServerResponse,
): Promise<void> {
  const path = new URL(request.url ?? '/', 'http://health').pathname;
  if (request.method !== 'GET' && request.method !== 'HEAD') {
    response.writeHead(405, { Allow: 'GET, HEAD' }).end();
    return;
  }
  switch (path) {
    case '/metrics': {
      const body = await options.registry.metrics();
      response.writeHead(200, { 'Content-Type': options.registry.contentType }).end(body);
      return;
    }
    case '/healthz':
      response.writeHead(200, { 'Content-Type': 'text/plain' }).end('ok');
      return;
    case '/readyz': {
      const failing = options.readiness.filter((check) => !check.isReady()).map((check) => check.name);
      const status = failing.length === 0 ? 200 : 503;
      response
        .writeHead(status, { 'Content-Type': 'application/json' })
        .end(JSON.stringify({ ready: status === 200, failing }));
      return;
    }
    default:
      response.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found');
  }
}
