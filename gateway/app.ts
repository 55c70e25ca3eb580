import type http from 'node:http';
import express, { type ErrorRequestHandler } from 'express';
import type { Registry } from 'prom-client';
import type { Logger } from 'winston';
import type { ReadinessCheck } from '../observability/health-server.js';
import { errorMessage } from '../observability/logger.js';
import { truncateForEcho } from './http/errors.js';
import { sendErrorResponse } from './http/error-response.js';
import { createHealthRouter } from './http/health.js';
import { normaliseRequestHead } from './http/request-head.js';
import { logRequestWhenDebug } from './http/request-log.js';
import { retainTickObjectShape } from './http/tick-object-shape.js';
import type { InstanceRequestHandler } from './proxy/instance-handler.js';
import { resolveRequestTarget } from './proxy/instance-target.js';
import { isQueuePath } from './queue-url/queue-path.js';

export interface GatewayAppOptions {
  /** SETTEE_GATEWAY_DOMAIN: enables host-based instance routing. */
  domain: string | undefined;
  handleInstance: InstanceRequestHandler;
  registry: Registry;
  readiness: readonly ReadinessCheck[];
  /** The webhook queue's API (gateway/queue, issue 5): serves every URL under QUEUE_PATH_PREFIX. */
  handleQueue: http.RequestListener | undefined;
  retryAfterSeconds: number;
  logger: Logger;
}

export interface GatewayApp {
  /** The request listener of the gateway's HTTP(S) server. */
  listener: http.RequestListener;
  /** From now on every response closes its connection, so keep-alive clients move elsewhere. */
  startDraining(): void;
}

/**
 * The gateway's routing, decided before any middleware runs: instance traffic (a host under the
 * domain, or /db/<namespace>/<name>/...) goes straight to the instance handler, a plain node:http
 * path that streams to CouchDB, and the queue API (/queue/...) straight to the queue's handler,
 * another plain path; the rest (/healthz, /readyz, /metrics) goes to Express, which costs more
 * per request but those routes are not the hot path.
 */
export function createGatewayApp(options: GatewayAppOptions): GatewayApp {
  const { logger } = options;
  // Before the caches start and the process may first idle: see tick-object-shape.ts.
  retainTickObjectShape();
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use((req, res, next) => {
    logRequestWhenDebug(logger, req, res);
    next();
  });
  app.use(createHealthRouter({ registry: options.registry, readiness: options.readiness }));
  app.use((req, res) => {
    res
      .status(404)
      .json({ error: 'not_found', reason: `no route for ${req.method} ${truncateForEcho(req.path)}` });
  });
  const onError: ErrorRequestHandler = (err, req, res, _next) => {
    logger.error('gateway route failed', { method: req.method, path: req.path, error: errorMessage(err) });
    sendErrorResponse(req, res, err, { retryAfterSeconds: options.retryAfterSeconds });
  };
  app.use(onError);

  let draining = false;
  const routing = { domain: options.domain };
  // The level is fixed at start-up (SETTEE_LOG_LEVEL); asking winston on every request would cost
  // more than deciding the route.
  const logRequests = logger.isDebugEnabled();
  const listener: http.RequestListener = (req, res) => {
    if (draining) res.shouldKeepAlive = false;
    let target;
    try {
      normaliseRequestHead(req);
      target = resolveRequestTarget({ url: req.url ?? '/', host: req.headers.host }, routing);
    } catch (err) {
      logger.debug('request refused', { error: errorMessage(err) });
      sendErrorResponse(req, res, err, { retryAfterSeconds: options.retryAfterSeconds });
      return;
    }
    if (target.kind === 'instance') {
      if (logRequests) logRequestWhenDebug(logger, req, res);
      options.handleInstance(req, res, target);
    } else if (options.handleQueue && isQueuePath(req.url ?? '/')) {
      if (logRequests) logRequestWhenDebug(logger, req, res);
      options.handleQueue(req, res);
    } else {
      void app(req, res);
    }
  };
  return {
    listener,
    startDraining: () => {
      draining = true;
    },
  };
}
