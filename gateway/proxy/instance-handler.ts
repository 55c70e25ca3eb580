import type http from 'node:http';
import type tls from 'node:tls';
import type { Agent } from 'undici';
import type { Logger } from 'winston';
import type { CouchInstance } from '../../operator/api/couch-instance.js';
import { errorMessage } from '../../operator/observability/logger.js';
import { GatewayError, UpstreamError } from '../http/errors.js';
import { sendErrorResponse } from '../http/error-response.js';
import type { GatewayMetrics } from '../metrics.js';
import type { ActivityReporter } from './activity-reporter.js';
import type { AwaitReady } from './await-ready.js';
import { forward, hasRequestBody } from './forward.js';
import type { RequestTarget } from './instance-target.js';
import type { RouteTable } from './route-table.js';
import type { Waker } from './waker.js';

export const COLD_START_HEADER = 'X-Settee-Cold-Start';

export type InstanceTarget = Extract<RequestTarget, { kind: 'instance' }>;
export type InstanceRequestHandler = (
  req: http.IncomingMessage,
  res: http.ServerResponse,
  target: InstanceTarget,
) => void;

export interface InstanceHandlerOptions {
  routes: Pick<RouteTable, 'resolve' | 'get'>;
  awaitReady: AwaitReady;
  waker: Pick<Waker, 'ensureAwake'>;
  activity: Pick<ActivityReporter, 'begin' | 'end'>;
  agent: Agent;
  metrics: GatewayMetrics;
  retryAfterSeconds: number;
  logger: Logger;
}

/**
 * An instance request, start to end: the route table says which instance (or 404), the request
 * counts as activity until its response ends, and it is forwarded at once when the instance is up,
 * or held while the instance is woken (the waker asks the operator, await-ready waits for /_up)
 * and then forwarded with X-Settee-Cold-Start. Plain node:http, no middleware stack: this is the
 * hot path.
 */
export function createInstanceHandler(options: InstanceHandlerOptions): InstanceRequestHandler {
  const { routes, awaitReady, waker, activity, agent, metrics, logger } = options;

  const fail = (
    req: http.IncomingMessage,
    res: http.ServerResponse,
    target: InstanceTarget,
    err: unknown,
  ): void => {
    const known = err instanceof GatewayError;
    metrics.countError(known ? err.code : 'INTERNAL');
    const fields = {
      instance: `${target.instance.namespace}/${target.instance.name}`,
      method: req.method,
      code: known ? err.code : 'INTERNAL',
      error: errorMessage(err),
      cause: err instanceof Error && err.cause !== undefined ? errorMessage(err.cause) : undefined,
    };
    if (!known) logger.error('instance request failed', fields);
    else if (
      err.code === 'UPSTREAM_FAILED' ||
      err.code === 'WAKE_TIMEOUT' ||
      err.code === 'HOLD_QUEUE_FULL'
    ) {
      logger.warn('instance request failed', fields);
    } else logger.debug('instance request refused', fields);
    sendErrorResponse(req, res, err, { retryAfterSeconds: options.retryAfterSeconds });
  };

  return (req, res, target) => {
    let instance: CouchInstance;
    try {
      instance = routes.resolve(target.instance);
    } catch (err) {
      fail(req, res, target, err);
      return;
    }
    const key = `${target.instance.namespace}/${target.instance.name}`;
    activity.begin(key, { ...target.instance, uid: instance.metadata.uid });
    res.once('close', () => activity.end(key));
    const proto = (req.socket as tls.TLSSocket).encrypted ? 'https' : 'http';

    const send = (origin: string, heldMs: number | undefined, retried: boolean): void => {
      metrics.countForwarded(heldMs !== undefined);
      forward(agent, {
        req,
        res,
        origin,
        upstreamPath: target.upstreamPath,
        basePath: target.basePath,
        proto,
        extraHeaders: heldMs === undefined ? undefined : [COLD_START_HEADER, String(heldMs)],
        onError: (err, responseStarted) => {
          // A refused connection sent nothing: the instance went away (hibernated) since the
          // address was cached. Without a body to replay, the request can go the wake path.
          const refused = (err as NodeJS.ErrnoException).code === 'ECONNREFUSED';
          if (refused && !responseStarted && !retried && !hasRequestBody(req)) {
            awaitReady.invalidate(key, origin);
            void holdThenSend(true);
            return;
          }
          fail(req, res, target, new UpstreamError(target.instance, err));
        },
      });
    };

    const holdThenSend = async (retried: boolean): Promise<void> => {
      waker.ensureAwake(retried ? (routes.get(target.instance) ?? instance) : instance);
      const gone = new AbortController();
      res.once('close', () => gone.abort(new Error('the client closed the connection')));
      try {
        const released = await awaitReady.hold(target.instance, gone.signal);
        send(released.origin, released.heldMs, retried);
      } catch (err) {
        if (!gone.signal.aborted) fail(req, res, target, err);
      }
    };

    const origin = awaitReady.readyOrigin(key);
    if (origin !== undefined) send(origin, undefined, false);
    else void holdThenSend(false);
  };
}
