import type { ApiRoute } from './api-router.js';
import type { BindingRegistry, QueueTarget } from '../core/binding-registry.js';
import type { QueueConfig } from '../core/config.js';
import type { DatabaseConnections } from '../stores/database-connections.js';
import {
  deleteDeadLetter,
  deleteDeadLetters,
  getDeadLetter,
  listDeadLetters,
  retryDeadLetter,
  retryDeadLetters,
} from './dlq-routes.js';
import { listEvents } from './events-routes.js';
import { flowControlRoutes } from './flow-control-routes.js';
import type { QueueKeys } from '../core/keys.js';
import { cancelMessage, cancelMessages, getMessage } from './messages-routes.js';
import { createPublishReader, publishRoutes } from './publish-routes.js';
import { queueRoutes } from './queue-routes.js';
import type { QueueStore } from '../stores/queue-store.js';
import { BindingStores } from '../stores/binding-stores.js';
import { scheduleRoutes } from './schedule-routes.js';
import { ScheduleStore } from '../stores/schedule-store.js';
import type { RotationRequestWriter } from '../bindings/signing-key-rotation.js';
import { signingKeyRoutes } from './signing-keys-routes.js';
import type { AddressPolicy } from '../core/address-policy.js';
import { urlGroupRoutes } from './url-group-routes.js';
import { UrlGroupStore } from '../stores/url-group-store.js';
import { workflowRoutes } from './workflow-routes.js';
import { workflowEventRoutes } from './workflow-event-routes.js';
import { workflowDlqEntryRoutes } from './workflow-dlq-entry-routes.js';
import { workflowDlqRoutes } from './workflow-dlq-routes.js';

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
  const queuesOf = (target: QueueTarget): QueueStore =>
    new BindingStores({ redis: connections.get(target), keys, config, target }).queues();
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
    ...workflowRoutes(),
    ...workflowEventRoutes(),
    ...workflowDlqRoutes(),
    // After the bulk routes: `workflows/dlq/resume` is theirs, not an entry's id.
    ...workflowDlqEntryRoutes(),
  ];
}
