import type http from 'node:http';
import type { Logger } from 'winston';
import { QUEUE_PATH_PREFIX } from '../../api/contract.js';
import { authenticate } from './auth.js';
import { parseBatchRequest } from './batch-request.js';
import type { BindingRegistry, QueueTarget } from './binding-registry.js';
import type { QueueConfig } from './config.js';
import type { DatabaseConnections } from './database-connections.js';
import { validateDestination } from './destination.js';
import {
  MethodNotAllowedError,
  QueueNotFoundError,
  sendQueueError,
  sendQueueFailure,
  StoreUnavailableError,
} from './errors.js';
import { sendJson } from './json-response.js';
import { queueKeys, type QueueKeys } from './keys.js';
import { createMessage, type MessageRequest } from './message.js';
import { MessageStore } from './message-store.js';
import { parsePublishHeaders } from './publish-headers.js';
import type { ApiHandler } from './api-request.js';
import { cancelMessage, cancelMessages, getMessage } from './messages-api.js';
import {
  deleteDeadLetter,
  deleteDeadLetters,
  getDeadLetter,
  listDeadLetters,
  retryDeadLetter,
  retryDeadLetters,
} from './dlq-api.js';
import { matchQueueRoute, type QueueOperation, type QueueRoute } from './queue-route.js';
import { readBody } from './read-body.js';
import { compileAddressPolicy } from './ssrf/address-policy.js';

/** The management routes, by operation; publish and batch are served inline (the hot path). */
const API_HANDLERS: Readonly<Partial<Record<QueueOperation, ApiHandler>>> = {
  'message.get': getMessage,
  'message.cancel': cancelMessage,
  'messages.cancel': cancelMessages,
  'dlq.list': listDeadLetters,
  'dlq.get': getDeadLetter,
  'dlq.delete': deleteDeadLetter,
  'dlq.deleteMany': deleteDeadLetters,
  'dlq.retry': retryDeadLetter,
  'dlq.retryMany': retryDeadLetters,
};

export interface QueueHandlerOptions {
  registry: BindingRegistry;
  connections: DatabaseConnections;
  config: QueueConfig;
  logger: Logger;
}

/**
 * The QStash-compatible API of every binding, for URLs under QUEUE_PATH_PREFIX:
 *   POST /queue/<namespace>/<name>/v2/publish/<destination>
 *   POST /queue/<namespace>/<name>/v2/batch
 *   and the management routes of queue-route.ts (messages, dead letters, events)
 * Each request is matched to its binding, authenticated with the binding's token before its body
 * is read, validated whole, and answered 201 only once its messages are stored in the binding's
 * database. Errors are `{"error": "..."}` (errors.ts); anything else is a 404.
 * A plain node:http listener rather than an Express router: publishing is a hot path, and
 * Express's per-request routing and body parsing cost more than storing the message.
 */
export function createQueueHandler(options: QueueHandlerOptions): http.RequestListener {
  const { registry, connections, config, logger } = options;
  const policy = compileAddressPolicy(config.ssrfAllowlist);
  const keys: QueueKeys = queueKeys(config.keyPrefix);

  const store = async (target: QueueTarget, requests: readonly MessageRequest[]): Promise<string[]> => {
    const messages = requests.map((request) => createMessage(request));
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

  const serve = async (req: http.IncomingMessage, res: http.ServerResponse, route: QueueRoute) => {
    const target = registry.get(route.namespace, route.name);
    if (!target) throw new QueueNotFoundError(`queue ${route.namespace}/${route.name} not found`);
    authenticate(req.headers.authorization, target.token);
    if ('query' in route) {
      const handler = API_HANDLERS[route.kind];
      if (!handler) throw new QueueNotFoundError('not found');
      await handler({ req, res, route, target, redis: connections.get(target), keys, config });
    } else if (route.kind === 'publish') {
      const body = await readBody(req, config.maxBodyBytes);
      validateDestination(route.destination, policy);
      const limits = { ...config, maxDelayMs: target.limits.maxDelayMs };
      const headerOptions = parsePublishHeaders(req.headers, limits);
      const [messageId] = await store(target, [{ ...headerOptions, destination: route.destination, body }]);
      sendJson(res, 201, { messageId });
    } else {
      const limits = { ...config, maxDelayMs: target.limits.maxDelayMs };
      const requests = parseBatchRequest(await readBody(req, config.maxBatchBytes), limits, policy);
      const ids = await store(target, requests);
      sendJson(
        res,
        201,
        ids.map((messageId) => ({ messageId })),
      );
    }
  };

  return (req, res) => {
    let route: ReturnType<typeof matchQueueRoute>;
    try {
      route = matchQueueRoute(req.method, (req.url ?? '').slice(QUEUE_PATH_PREFIX.length));
    } catch (err) {
      sendQueueFailure(res, err, { logger, binding: '' });
      return;
    }
    if (!route) {
      sendQueueError(res, 404, 'not found');
      return;
    }
    if (route.kind === 'wrong-method') {
      res.setHeader('allow', route.allow.join(', '));
      sendQueueFailure(res, new MethodNotAllowedError(route.allow), { logger, binding: '' });
      return;
    }
    const binding = `${route.namespace}/${route.name}`;
    serve(req, res, route).catch((err: unknown) => sendQueueFailure(res, err, { logger, binding }));
  };
}
