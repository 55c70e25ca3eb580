import express, { type Request, type RequestHandler, type Response, type Router } from 'express';
import type { Logger } from 'winston';
import { authenticate } from './auth.js';
import { parseBatchRequest } from './batch-request.js';
import type { BindingRegistry, QueueTarget } from './binding-registry.js';
import type { QueueConfig } from './config.js';
import type { DatabaseConnections } from './database-connections.js';
import { validateDestination } from './destination.js';
import { QueueNotFoundError, queueErrorHandler, sendQueueError, StoreUnavailableError } from './errors.js';
import { queueKeys, type QueueKeys } from './keys.js';
import { createMessage, type MessageRequest } from './message.js';
import { MessageStore } from './message-store.js';
import { parsePublishHeaders } from './publish-headers.js';
import { compileAddressPolicy } from './ssrf/address-policy.js';

export interface QueueRouterOptions {
  registry: BindingRegistry;
  connections: DatabaseConnections;
  config: QueueConfig;
  logger: Logger;
}

/** The binding a request is for, set by `resolveTarget`. */
interface QueueLocals {
  target: QueueTarget;
}

/** `/<namespace>/<name>/v2/publish/<destination>`: the destination is everything after, query string included. */
const PUBLISH_PATH = /^\/[^/?]+\/[^/?]+\/v2\/publish(?:\/(.*))?$/s;

/** The destination exactly as the SDK put it in the path: its own `//` and its query string intact. */
export function destinationFromUrl(url: string): string {
  return PUBLISH_PATH.exec(url)?.[1] ?? '';
}

function bodyOf(req: Request): Buffer {
  return Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
}

/**
 * The QStash-compatible publish API of every binding, to be mounted at QUEUE_PATH_PREFIX:
 *   POST /<namespace>/<name>/v2/publish/<destination>
 *   POST /<namespace>/<name>/v2/batch
 * Each request is matched to its binding, authenticated with the binding's token before its body
 * is read, validated whole, and answered 201 only once its messages are stored in the binding's
 * database. Errors are `{"error": "..."}` (errors.ts).
 */
export function createQueueRouter(options: QueueRouterOptions): Router {
  const { registry, connections, config, logger } = options;
  const policy = compileAddressPolicy(config.ssrfAllowlist);
  const keys: QueueKeys = queueKeys(config.keyPrefix);
  const router = express.Router();

  const resolveTarget: RequestHandler = (req, res, next) => {
    const { namespace = '', name = '' } = req.params as Record<string, string>;
    const target = registry.get(namespace, name);
    if (!target) return next(new QueueNotFoundError(`queue ${namespace}/${name} not found`));
    (res.locals as QueueLocals).target = target;
    next();
  };

  const checkToken: RequestHandler = (req, res, next) => {
    authenticate(req.headers.authorization, (res.locals as QueueLocals).target.token);
    next();
  };

  const store = async (res: Response, requests: readonly MessageRequest[]): Promise<string[]> => {
    const messages = requests.map((request) => createMessage(request));
    const target = (res.locals as QueueLocals).target;
    try {
      await new MessageStore(connections.get(target), keys).enqueue(messages);
    } catch (err) {
      throw new StoreUnavailableError(
        `the queue's database did not store the message: ${(err as Error).message}`,
        { cause: err },
      );
    }
    return messages.map((message) => message.id);
  };

  const publish = async (req: Request, res: Response): Promise<void> => {
    const destination = destinationFromUrl(req.url);
    validateDestination(destination, policy);
    const headerOptions = parsePublishHeaders(req.headers, config);
    const [messageId] = await store(res, [{ ...headerOptions, destination, body: bodyOf(req) }]);
    res.status(201).json({ messageId });
  };

  const batch = async (req: Request, res: Response): Promise<void> => {
    const requests = parseBatchRequest(bodyOf(req), config, policy);
    const ids = await store(res, requests);
    res.status(201).json(ids.map((messageId) => ({ messageId })));
  };

  // Express 5 passes a rejected handler promise to the error handler.
  const rawBody = (limit: number): RequestHandler => express.raw({ type: () => true, limit });

  router.post(
    '/:namespace/:name/v2/publish{/*destination}',
    resolveTarget,
    checkToken,
    rawBody(config.maxBodyBytes),
    publish,
  );
  router.post('/:namespace/:name/v2/batch', resolveTarget, checkToken, rawBody(config.maxBatchBytes), batch);
  router.use((_req: Request, res: Response) => sendQueueError(res, 404, 'not found'));
  router.use(queueErrorHandler(logger));
  return router;
}
