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
import { MessageStore, type EnqueueAnswer } from './message-store.js';
import { parsePublishExtras } from './publish-extras.js';
import { eventCapOf } from './message-event.js';
import { parsePublishHeaders } from './publish-headers.js';
import type { ApiHandler } from './api-request.js';
import { cancelMessage, cancelMessages, getMessage } from './messages-api.js';
import { listEvents } from './events-api.js';
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
import { createApiRouter, type ApiMatch } from './api-router.js';
import type { RotationRequestWriter } from './signing-key-rotation.js';
import { signingKeyRoutes } from './signing-keys-routes.js';
import { unsupportedRoutes } from './unsupported-routes.js';
import { scheduleRoutes } from './schedules/schedule-routes.js';
import { ScheduleStore } from './schedules/schedule-store.js';
import { answersOf, messagesOf, planPublish } from './url-groups/fan-out.js';
import { isUrlGroupName } from './url-groups/url-group.js';
import { urlGroupRoutes } from './url-groups/url-group-routes.js';
import { UrlGroupStore } from './url-groups/url-group-store.js';

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
  'events.list': listEvents,
};

export interface QueueHandlerOptions {
  registry: BindingRegistry;
  connections: DatabaseConnections;
  config: QueueConfig;
  logger: Logger;
  /** Writes the signing key rotation annotation; without it POST /v2/keys/rotate is not served. */
  rotationWriter?: RotationRequestWriter | undefined;
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
  const groupsOf = (target: QueueTarget): UrlGroupStore => new UrlGroupStore(connections.get(target), keys);
  const matchApiRoute = createApiRouter([
    ...signingKeyRoutes({ registry, write: options.rotationWriter }),
    ...urlGroupRoutes({ storeOf: groupsOf, policy }),
    ...scheduleRoutes({
      schedulesOf: (target) => new ScheduleStore(connections.get(target), keys),
      groupsOf,
      config,
      policy,
    }),
    ...unsupportedRoutes(),
  ]);

  const store = async (
    target: QueueTarget,
    requests: readonly MessageRequest[],
  ): Promise<EnqueueAnswer[]> => {
    const messages = requests.map((request) => createMessage(request));
    try {
      const store = new MessageStore(connections.get(target), keys, eventCapOf(config, target));
      return await store.enqueue(messages, Date.now(), {
        deduplicationWindowMs: target.limits.deduplicationWindowMs,
      });
    } catch (err) {
      throw new StoreUnavailableError(
        `the queue's database did not store the message: ${(err as Error).message}`,
        { cause: err },
      );
    }
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
      const urlGroup = isUrlGroupName(route.destination) ? route.destination : undefined;
      if (!urlGroup) validateDestination(route.destination, policy);
      const limits = { ...config, maxDelayMs: target.limits.maxDelayMs };
      const headerOptions = parsePublishHeaders(req.headers, limits);
      const destination = route.destination;
      const extras = parsePublishExtras(
        req.headers,
        { destination, headers: headerOptions.headers, body },
        limits,
        policy,
      );
      const request = { ...headerOptions, ...extras, destination, body };
      const plan = await planPublish(urlGroup ? { request, urlGroup } : { request }, groupsOf(target));
      const answers = await store(target, messagesOf([plan]));
      // QStash answers a duplicate 202 Accepted (upstash/docs qstash/features/deduplication).
      sendJson(res, answers.every((a) => a.deduplicated) ? 202 : 201, answersOf([plan], answers)[0]);
    } else {
      const limits = { ...config, maxDelayMs: target.limits.maxDelayMs };
      const items = parseBatchRequest(await readBody(req, config.maxBatchBytes), limits, policy);
      const plans = await Promise.all(
        items.map((item, i) => planPublish(item, groupsOf(target), `batch item ${i}: url group`)),
      );
      sendJson(res, 201, answersOf(plans, await store(target, messagesOf(plans))));
    }
  };

  const serveApi = async (req: http.IncomingMessage, res: http.ServerResponse, match: ApiMatch) => {
    const target = registry.get(match.namespace, match.name);
    if (!target) throw new QueueNotFoundError(`queue ${match.namespace}/${match.name} not found`);
    authenticate(req.headers.authorization, target.token);
    await match.handler({ req, res, target, params: match.params, query: match.query });
  };

  return (req, res) => {
    let route: ReturnType<typeof matchQueueRoute>;
    let api: ApiMatch | undefined;
    try {
      const url = (req.url ?? '').slice(QUEUE_PATH_PREFIX.length);
      route = matchQueueRoute(req.method, url);
      if (!route) api = matchApiRoute(req.method ?? '', url);
    } catch (err) {
      if (err instanceof MethodNotAllowedError) res.setHeader('allow', err.allow.join(', '));
      sendQueueFailure(res, err, { logger, binding: '' });
      return;
    }
    if (route?.kind === 'wrong-method') {
      res.setHeader('allow', route.allow.join(', '));
      sendQueueFailure(res, new MethodNotAllowedError(route.allow), { logger, binding: '' });
    } else if (route) {
      const binding = `${route.namespace}/${route.name}`;
      serve(req, res, route).catch((err: unknown) => sendQueueFailure(res, err, { logger, binding }));
    } else if (api) {
      const binding = `${api.namespace}/${api.name}`;
      serveApi(req, res, api).catch((err: unknown) => sendQueueFailure(res, err, { logger, binding }));
    } else {
      sendQueueError(res, 404, 'not found');
    }
  };
}
