import type http from 'node:http';
import type { ApiHandler } from './api-request.js';
import type { ApiRoute } from './api-router.js';
import type { QueueTarget } from '../core/binding-registry.js';
import { parseBatchRequest } from './publish/batch-request.js';
import type { QueueConfig } from '../core/config.js';
import type { DatabaseConnections } from '../stores/database-connections.js';
import { validateDestination } from './publish/destination.js';
import { QueueError, QuotaExceededError, StoreUnavailableError } from '../core/errors.js';
import { sendJson } from './json-response.js';
import type { QueueKeys } from '../core/keys.js';
import { createMessage, type MessageRequest, type QueueMessage } from '../core/message.js';
import { FlowControlStore } from '../stores/flow-control-store.js';
import { MessageStore } from '../stores/message-store.js';
import { parsePublishExtras } from './publish/publish-extras.js';
import { parsePublishHeaders, publishLimitsOf, sentHeaderNames } from './publish/publish-headers.js';
import { BindingStores } from '../stores/binding-stores.js';
import { quotasOf } from '../core/quotas.js';
import { readBody } from './read-body.js';
import type { AddressPolicy } from '../core/address-policy.js';
import {
  answersOf,
  messagesOf,
  planBatch,
  planPublish,
  type PublishPlan,
  storedOrThrow,
  isStoredNew,
  type StoreOutcome,
} from './publish/fan-out.js';
import { isUrlGroupName } from '../core/url-group.js';
import { callerIpField } from '../core/message-answer.js';
import type { UrlGroupStore } from '../stores/url-group-store.js';
import { isEnqueueAnswer, prepareWorkflowMessages } from '../stores/workflow-publish.js';
import type { EnqueueAnswer } from '../core/enqueue-answer.js';
import { storeCall } from './store-call.js';
import { RateLimits } from '../stores/rate-limits.js';

/** What a binding without a daily limit does with each script's outcomes: nothing to count. */
const IGNORED = (): void => undefined;

/** Which script stores a message: its queue's, its flow-control key's, or the plain publish one. */
function storeGroupOf(message: { queueName?: string; flowControl?: { key: string } }): string {
  if (message.queueName !== undefined) return `queue:${message.queueName}`;
  if (message.flowControl !== undefined) return `flow-control:${message.flowControl.key}`;
  return '';
}

export type PublishReader = (input: {
  req: http.IncomingMessage;
  callerIp: string | undefined;
  target: QueueTarget;
  destination: string;
}) => Promise<PublishPlan>;

/**
 * Reads one publish (`/v2/publish/{destination}`, `/v2/enqueue/{queue}/{destination}`): its body,
 * its headers checked whole, and the destination, a URL or a URL group's name (one message per
 * endpoint). Nothing is stored.
 */
export function createPublishReader(options: {
  config: QueueConfig;
  policy: AddressPolicy;
  groupsOf: (target: QueueTarget) => UrlGroupStore;
}): PublishReader {
  const { config, policy, groupsOf } = options;
  // A then on the body's promise, not an async function: one publish, one promise fewer and no
  // promise to adopt for a plain URL's plan (docs/queue.md, Performance).
  return ({ req, callerIp, target, destination }) =>
    readBody(req, config.maxBodyBytes).then((body) => {
      const urlGroup = isUrlGroupName(destination) ? destination : undefined;
      if (!urlGroup) validateDestination(destination, policy);
      const limits = publishLimitsOf(config, target);
      const headerOptions = parsePublishHeaders(req.headers, limits, Date.now(), sentHeaderNames(req));
      const extras = parsePublishExtras(
        req.headers,
        { destination, headers: headerOptions.headers, body },
        limits,
        policy,
      );
      // Object.assign, not spreads: on Node 20 this object as spreads cost 1.5 us a publish against
      // 0.1 (docs/queue.md, Performance).
      const request = Object.assign(
        {},
        headerOptions,
        extras,
        { destination, body },
        callerIpField({ callerIp }),
      );
      return planPublish(urlGroup ? { request, urlGroup } : { request }, groupsOf(target));
    });
}

/**
 * QStash's publish routes, the hot path:
 *   POST /v2/publish/{destination or url group}   one message (or one per group endpoint)
 *   POST /v2/batch                                 many, answered per item (each queue's items by its script)
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
  const readPublish = createPublishReader({ config, policy, groupsOf });

  /**
   * Stores the messages and answers for each in order: those of no queue and no flow-control key
   * in one script, those of each queue (batch items with `queue`) in that queue's script, which
   * creates it when missing, and those of each flow-control key in that key's script. Each script
   * is atomic on its own, not the whole call: a queue group over the binding's `maxQueues` is
   * refused (its messages answer the quota error) while the other groups are stored, so a client
   * told which items failed does not send the stored ones again.
   */
  const store = (target: QueueTarget, requests: readonly MessageRequest[]): Promise<StoreOutcome[]> =>
    // A binding without a daily limit (the default) has nothing to count or give back: its
    // publishes skip both steps and their promises.
    target.limits.maxMessagesPerDay <= 0
      ? storeTaken(target, requests, IGNORED)
      : storeCounted(target, requests);

  const storeCounted = async (
    target: QueueTarget,
    requests: readonly MessageRequest[],
  ): Promise<StoreOutcome[]> => {
    const redis = connections.get(target);
    // Counted first, all or none: a request over the daily limit stores nothing, workflow runs included.
    const taken = await storeCall('count the messages', () =>
      new RateLimits(redis, keys, target.limits).takeMessages(requests.length),
    );
    // What was not stored new (refused, a duplicate, or not stored at all) is given back. On a
    // store error, the groups whose scripts answered stay charged and the rest is given back: a
    // failing script whose reply was lost may have stored its messages, which then go uncharged,
    // a bounded under-count on the tenant's side (docs/limits.md).
    let storedNew = 0;
    try {
      const answers = await storeTaken(target, requests, (outcomes) => {
        storedNew += outcomes.filter(isStoredNew).length;
      });
      await taken.giveBack(requests.length - storedNew);
      return answers;
    } catch (err) {
      await taken.giveBack(requests.length - storedNew);
      throw err;
    }
  };

  /** store's part after the count: `onStored` hears each script's outcomes as they come. */
  const storeTaken = (
    target: QueueTarget,
    requests: readonly MessageRequest[],
    onStored: (outcomes: readonly StoreOutcome[]) => void,
  ): Promise<StoreOutcome[]> => {
    // Indexed loops, not map/some/entries(): this runs once per publish, and each of those made a
    // closure or an iterator with an array per item (docs/queue.md, Performance).
    const created: QueueMessage[] = new Array<QueueMessage>(requests.length);
    let workflows = false;
    for (let i = 0; i < requests.length; i++) {
      const message = createMessage(requests[i]!);
      created[i] = message;
      workflows ||= message.workflowPublish !== undefined;
    }
    const stores = new BindingStores({ redis: connections.get(target), keys, config, target });
    // Workflow messages become their run's deliveries first (a trigger of a run that exists is
    // answered there, a step of a run this replica knows is stored with its append); the rest of
    // the path stores them as any message.
    return workflows
      ? storeCall('store the workflow run', () =>
          prepareWorkflowMessages(stores.workflowRuns(), created, stores.messages()),
        ).then((prepared) => storePrepared(target, stores, prepared, onStored))
      : storePrepared(target, stores, created, onStored);
  };

  /** Stores each group of messages with its script, one group after another, and answers in order. */
  const storePrepared = (
    target: QueueTarget,
    stores: BindingStores,
    prepared: readonly (QueueMessage | EnqueueAnswer)[],
    onStored: (outcomes: readonly StoreOutcome[]) => void,
  ): Promise<StoreOutcome[]> => {
    // One message (a single publish to a URL): its group's script straight away, without the
    // grouping's map, arrays and answers (a publish's own garbage, docs/queue.md, Performance).
    if (prepared.length === 1 && !isEnqueueAnswer(prepared[0]!))
      return storeOneGroup(target, stores, prepared as readonly QueueMessage[], onStored);
    const messages: QueueMessage[] = [];
    const groups = new Map<string, number[]>();
    const answers: StoreOutcome[] = new Array<StoreOutcome>(prepared.length);
    const storedWithRun: EnqueueAnswer[] = [];
    let answered = 0;
    for (let i = 0; i < prepared.length; i++) {
      const message = prepared[i]!;
      if (isEnqueueAnswer(message)) {
        answers[i] = message;
        answered += 1;
        // Not a trigger's duplicate: a step stored with its append, which the daily count keeps.
        if (!message.deduplicated) storedWithRun.push(message);
        continue;
      }
      messages[i] = message;
      // Pushed, not copied: a batch of n items would otherwise copy n²/2 indexes.
      const group = storeGroupOf(message);
      const indexes = groups.get(group);
      if (indexes === undefined) groups.set(group, [i]);
      else indexes.push(i);
    }
    // Every message in one group (a batch of plain messages to one queue; a single publish took
    // the branch above): one script, no copy, and its outcomes are the answers.
    if (groups.size === 1 && answered === 0) return storeOneGroup(target, stores, messages, onStored);
    if (storedWithRun.length > 0) onStored(storedWithRun);
    return storeGroups(target, stores, messages, groups, answers, onStored);
  };

  /** Messages of one group with its one script, whose outcomes are the answers (no async step of its own: docs/queue.md, Performance). */
  const storeOneGroup = (
    target: QueueTarget,
    stores: BindingStores,
    messages: readonly QueueMessage[],
    onStored: (outcomes: readonly StoreOutcome[]) => void,
  ): Promise<StoreOutcome[]> =>
    storeGroup(target, stores, messages).then((stored) => {
      onStored(stored);
      return stored;
    });

  const storeGroups = async (
    target: QueueTarget,
    stores: BindingStores,
    messages: readonly QueueMessage[],
    groups: ReadonlyMap<string, number[]>,
    answers: StoreOutcome[],
    onStored: (outcomes: readonly StoreOutcome[]) => void,
  ): Promise<StoreOutcome[]> => {
    for (const indexes of groups.values()) {
      const stored = await storeGroup(
        target,
        stores,
        indexes.map((i) => messages[i]!),
      );
      onStored(stored);
      for (let j = 0; j < indexes.length; j++) answers[indexes[j]!] = stored[j]!;
    }
    return answers;
  };

  /** One group's script (its queue's, its flow-control key's, or the plain one); its store errors typed. */
  const storeGroup = (
    target: QueueTarget,
    stores: BindingStores,
    group: readonly QueueMessage[],
  ): Promise<StoreOutcome[]> => {
    const { queueName, flowControl } = group[0]!;
    const deduplicationWindowMs = target.limits.deduplicationWindowMs;
    let stored: Promise<StoreOutcome[]>;
    try {
      stored =
        queueName !== undefined
          ? stores.queues().enqueue(queueName, group, { deduplicationWindowMs, quota: quotasOf(target) })
          : flowControl !== undefined
            ? new FlowControlStore(stores.redis, keys, stores.eventCap).enqueue(group, {
                deduplicationWindowMs,
              })
            : new MessageStore(stores.redis, keys, stores.eventCap).enqueue(group, Date.now(), {
                deduplicationWindowMs,
              });
    } catch (err) {
      stored = Promise.reject(err);
    }
    return stored.then(undefined, (err: unknown) => {
      if (err instanceof QuotaExceededError) return group.map(() => ({ refused: err }));
      if (err instanceof QueueError) throw err;
      throw new StoreUnavailableError(
        `the queue's database did not store the message: ${(err as Error).message}`,
        { cause: err },
      );
    });
  };

  // Thens, not an async function: its awaits cost a publish a generator's state and a promise each.
  const publish: ApiHandler = ({ req, res, target, params, callerIp }) =>
    readPublish({ req, callerIp, target, destination: params.destination ?? '' }).then((plan) => {
      const plans = [plan];
      return store(target, messagesOf(plans)).then((outcomes) => {
        const answers = storedOrThrow(outcomes);
        // QStash answers a duplicate 202 Accepted (upstash/docs qstash/features/deduplication).
        sendJson(res, answers.every((a) => a.deduplicated) ? 202 : 201, answersOf(plans, answers)[0]);
      });
    });

  const batch: ApiHandler = async ({ req, res, target, callerIp }) => {
    const limits = { ...config, ...publishLimitsOf(config, target) };
    const items = parseBatchRequest(await readBody(req, config.maxBatchBytes), limits, policy);
    const plans = await planBatch(items, groupsOf(target));
    const messages = messagesOf(plans);
    // Set on each request rather than copied into a new one: every request is this batch's own
    // (parseBatchRequest and planBatch make them), and a copy of each item cost a batch of 100 a
    // hundred objects of garbage (docs/queue.md, Performance).
    if (callerIp !== undefined) for (let i = 0; i < messages.length; i++) messages[i]!.callerIp = callerIp;
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
