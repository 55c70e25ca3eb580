import type { ApiRoute } from './api-router.js';
import type { BindingRegistry, QueueTarget } from '../bindings/binding-registry.js';
import type { QueueConfig } from '../config.js';
import type { DatabaseConnections } from '../bindings/database-connections.js';
import {
  deleteDeadLetter,
  deleteDeadLetters,
  getDeadLetter,
  listDeadLetters,
  retryDeadLetter,
  retryDeadLetters,
} from '../dlq/dlq-api.js';
import { listEvents } from '../events/events-api.js';
import { flowControlRoutes } from '../flow-control/flow-control-routes.js';
import type { QueueKeys } from '../keys.js';
import { cancelMessage, cancelMessages, getMessage } from '../messages/messages-api.js';
import { createPublishReader, publishRoutes } from '../publish/publish-api.js';
import { eventCapOf } from '../events/message-event.js';
import { queueRoutes } from '../queues/queue-routes.js';
import { QueueStore, queueWakeupsOf } from '../queues/queue-store.js';
import { scheduleRoutes } from '../schedules/schedule-routes.js';
import { ScheduleStore } from '../schedules/schedule-store.js';
import type { RotationRequestWriter } from '../signing-keys/signing-key-rotation.js';
import { signingKeyRoutes } from '../signing-keys/signing-keys-routes.js';
import type { AddressPolicy } from '../ssrf/address-policy.js';
import { urlGroupRoutes } from '../url-groups/url-group-routes.js';
import { UrlGroupStore } from '../url-groups/url-group-store.js';

export interface ApiRoutesOptions {
  registry: BindingRegistry;
  connections: DatabaseConnections;
  keys: QueueKeys;
  config: QueueConfig;
  policy: AddressPolicy;
  /** Writes the signing key rotation annotation; without it POST /v2/keys/rotate is not served. */
  rotationWriter?: RotationRequestWriter | undefined;
}

/**
 * Every route of the QStash API a binding answers, under /v2/, in the order they are matched
 * (see createApiRouter). docs/queue.md's route table lists the same.
 */
export function apiRoutes(options: ApiRoutesOptions): ApiRoute[] {
  const { registry, connections, keys, config, policy } = options;
  const groupsOf = (target: QueueTarget): UrlGroupStore => new UrlGroupStore(connections.get(target), keys);
  const queuesOf = (target: QueueTarget): QueueStore => {
    const redis = connections.get(target);
    return new QueueStore(redis, keys, eventCapOf(config, target), queueWakeupsOf(redis, keys, config));
  };
  return [
    ...publishRoutes({ connections, keys, config, policy, groupsOf }),
    { path: 'messages', methods: { DELETE: cancelMessages } },
    { path: 'messages/:id', methods: { GET: getMessage, DELETE: cancelMessage } },
    { path: 'dlq', methods: { GET: listDeadLetters, DELETE: deleteDeadLetters } },
    { path: 'dlq/retry', methods: { POST: retryDeadLetters } },
    { path: 'dlq/retry/:id', methods: { POST: retryDeadLetter } },
    { path: 'dlq/:id', methods: { GET: getDeadLetter, DELETE: deleteDeadLetter } },
    // GET /v2/events is what the SDK's logs() and events() call, /v2/logs what the docs name.
    { path: 'events', methods: { GET: listEvents } },
    { path: 'logs', methods: { GET: listEvents } },
    ...signingKeyRoutes({ registry, write: options.rotationWriter }),
    ...urlGroupRoutes({ storeOf: groupsOf, policy }),
    ...scheduleRoutes({
      schedulesOf: (target) => new ScheduleStore(connections.get(target), keys),
      groupsOf,
      config,
      policy,
    }),
    ...queueRoutes({
      queuesOf,
      readPublish: createPublishReader({ config, policy, groupsOf }),
    }),
    ...flowControlRoutes(),
  ];
}
