import type http from 'node:http';
import type { Logger } from 'winston';
import { QUEUE_PATH_PREFIX } from '../../../api/contract.js';
import { createApiRouter, type ApiMatch } from './api-router.js';
import { authenticate } from './auth.js';
import type { BindingRegistry } from '../core/binding-registry.js';
import type { QueueConfig } from '../core/config.js';
import type { DatabaseConnections } from '../stores/database-connections.js';
import { MethodNotAllowedError, QueueNotFoundError } from '../core/errors.js';
import { sendQueueError, sendQueueFailure } from './queue-failure.js';
import { queueKeys } from '../core/keys.js';
import { apiRoutes } from './api-routes.js';
import type { RotationRequestWriter } from '../bindings/signing-key-rotation.js';
import { compileAddressPolicy } from '../core/address-policy.js';
import { TrustedProxies } from '../../http/trusted-proxies.js';
import { RateLimits } from '../stores/rate-limits.js';
import { storeCall } from './store-call.js';

export interface QueueHandlerOptions {
  registry: BindingRegistry;
  connections: DatabaseConnections;
  config: QueueConfig;
  logger: Logger;
  /** Writes the signing key rotation annotation; without it POST /v2/keys/rotate is not served. */
  rotationWriter?: RotationRequestWriter | undefined;
  /**
   * The proxies whose X-Forwarded-For names the publisher (the gateway's
   * SETTEE_GATEWAY_TRUSTED_PROXIES, CIDR ranges); none by default, so the peer is the publisher.
   */
  trustedProxies?: readonly string[] | undefined;
}

/**
 * The QStash-compatible API of every binding, for URLs under QUEUE_PATH_PREFIX:
 * `/queue/<namespace>/<name>/v2/...`, routed by the one table of api-routes.ts. Each request is
 * matched to its binding and authenticated with the binding's token before its body is read.
 * Errors are `{"error": "..."}` (errors.ts); an unknown path is a 404.
 * A plain node:http listener rather than an Express router: publishing is a hot path, and
 * Express's per-request routing and body parsing cost more than storing the message.
 */
export function createQueueHandler(options: QueueHandlerOptions): http.RequestListener {
  const { registry, connections, config, logger } = options;
  const keys = queueKeys(config.keyPrefix);
  const trustedProxies = TrustedProxies.parse(options.trustedProxies ?? []);
  const matchRoute = createApiRouter(
    apiRoutes({
      registry,
      connections,
      keys,
      config,
      policy: compileAddressPolicy(config.ssrfAllowlist),
      rotationWriter: options.rotationWriter,
    }),
  );

  // No async function: a publish's request goes to its handler in the same turn, with no promise
  // of its own around the handler's (docs/queue.md, Performance). Throws before the handler.
  const serve = (req: http.IncomingMessage, res: http.ServerResponse, match: ApiMatch): Promise<void> => {
    const target = registry.get(match.namespace, match.name);
    if (!target) throw new QueueNotFoundError(`queue ${match.namespace}/${match.name} not found`);
    if (!match.public) authenticate(req.headers.authorization, target);
    const redis = connections.get(target);
    const request = {
      req,
      res,
      target,
      params: match.params,
      query: match.query,
      callerIp: trustedProxies.clientAddress(req),
      redis,
      keys,
      config,
    };
    // Before the body is read: a request over the burst limit costs one script and no more.
    if (target.limits.maxRequestsPerSecond > 0)
      return storeCall('count the request', () =>
        new RateLimits(redis, keys, target.limits).takeRequest(),
      ).then(() => match.handler(request));
    return match.handler(request);
  };

  return (req, res) => {
    let match: ApiMatch | undefined;
    try {
      match = matchRoute(req.method ?? '', (req.url ?? '').slice(QUEUE_PATH_PREFIX.length));
    } catch (err) {
      if (err instanceof MethodNotAllowedError) res.setHeader('allow', err.allow.join(', '));
      sendQueueFailure(res, err, { logger, binding: '' });
      return;
    }
    if (!match) {
      sendQueueError(res, 404, 'not found');
      return;
    }
    let served: Promise<void>;
    try {
      served = serve(req, res, match);
    } catch (err) {
      served = Promise.reject(err as Error);
    }
    served.catch((err: unknown) =>
      sendQueueFailure(res, err, { logger, binding: `${match.namespace}/${match.name}` }),
    );
  };
}
