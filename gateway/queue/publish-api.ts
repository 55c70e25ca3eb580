import type { ApiHandler } from './api-request.js';
import type { ApiRoute } from './api-router.js';
import type { QueueTarget } from './binding-registry.js';
import { parseBatchRequest } from './batch-request.js';
import type { QueueConfig } from './config.js';
import type { DatabaseConnections } from './database-connections.js';
import { validateDestination } from './destination.js';
import { StoreUnavailableError } from './errors.js';
import { sendJson } from './json-response.js';
import type { QueueKeys } from './keys.js';
import { createMessage, type MessageRequest } from './message.js';
import { eventCapOf } from './message-event.js';
import { MessageStore, type EnqueueAnswer } from './message-store.js';
import { parsePublishExtras } from './publish-extras.js';
import { parsePublishHeaders } from './publish-headers.js';
import { readBody } from './read-body.js';
import type { AddressPolicy } from './ssrf/address-policy.js';
import { answersOf, messagesOf, planBatchItem, planPublish } from './url-groups/fan-out.js';
import { isUrlGroupName } from './url-groups/url-group.js';
import type { UrlGroupStore } from './url-groups/url-group-store.js';

/**
 * QStash's publish routes, the hot path:
 *   POST /v2/publish/{destination or url group}   one message (or one per group endpoint)
 *   POST /v2/batch                                 many, stored together
 * Each is validated whole and answered 201 only once its messages are stored in the binding's
 * database; a publish whose every message was a duplicate is a 202, as QStash answers.
 */
export function publishRoutes(options: {
  connections: DatabaseConnections;
  keys: QueueKeys;
  config: QueueConfig;
  policy: AddressPolicy;
  groupsOf: (target: QueueTarget) => UrlGroupStore;
}): ApiRoute[] {
  const { connections, keys, config, policy, groupsOf } = options;

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

  const publish: ApiHandler = async ({ req, res, target, params }) => {
    const destination = params.destination ?? '';
    const body = await readBody(req, config.maxBodyBytes);
    const urlGroup = isUrlGroupName(destination) ? destination : undefined;
    if (!urlGroup) validateDestination(destination, policy);
    const limits = { ...config, maxDelayMs: target.limits.maxDelayMs };
    const headerOptions = parsePublishHeaders(req.headers, limits);
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
  };

  const batch: ApiHandler = async ({ req, res, target }) => {
    const limits = { ...config, maxDelayMs: target.limits.maxDelayMs };
    const items = parseBatchRequest(await readBody(req, config.maxBatchBytes), limits, policy);
    const plans = await Promise.all(items.map((item, i) => planBatchItem(item, groupsOf(target), i)));
    const messages = messagesOf(plans);
    // A batch is per item, as QStash's is: refused items answer their error in their place.
    sendJson(res, 201, answersOf(plans, messages.length > 0 ? await store(target, messages) : []));
  };

  return [
    // Without a destination the publish is answered with the destination's 400, not a 404.
    { path: 'publish', methods: { POST: publish } },
    { path: 'publish/*destination', methods: { POST: publish } },
    { path: 'batch', methods: { POST: batch } },
  ];
}
