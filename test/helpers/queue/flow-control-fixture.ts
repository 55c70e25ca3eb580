import type { Redis } from 'ioredis';
import type { RedisServer } from '../../../local/redis-server.js';
import type { FlowControl } from '../../../gateway/queue/core/flow-control.js';
import { FlowControlStore } from '../../../gateway/queue/stores/flow-control-store.js';
import { queueKeys } from '../../../gateway/queue/core/keys.js';
import type { QueueMessage } from '../../../gateway/queue/core/message.js';
import { MessageStore } from '../../../gateway/queue/stores/message-store.js';
import { useGatewayRedis } from './gateway-redis.js';
import { testMessage } from './store-fixture.js';

/** The flow-control store suites' keys: each describe block has a Redis of its own, emptied per test. */
export const flowControlKeys = queueKeys('{fc}:');

/** A store-suite message (see {@link testMessage}) under `flowControl`'s key and limits. */
export function flowControlMessage(
  flowControl: FlowControl,
  body: string,
  extra: Partial<QueueMessage> = {},
): QueueMessage {
  return testMessage(body, { flowControl }, extra);
}

/** What the flow-control store suites share; see {@link useFlowControlFixture}. */
export interface FlowControlFixture {
  readonly server: RedisServer;
  /** The test's own connection, which the stores below use too. */
  readonly client: Redis;
  /** With `blocking`: a connection set up as a delivery worker's blocking one. */
  readonly blocking: Redis;
  readonly flows: FlowControlStore;
  readonly messages: MessageStore;
  /** Enqueues through the flow-control store, with no deduplication. */
  enqueue(...batch: QueueMessage[]): ReturnType<FlowControlStore['enqueue']>;
  /** Bodies of the messages on the delivery stream, oldest first. */
  startedBodies(): Promise<string[]>;
}

/**
 * A real redis-server with the flow-control and message stores on {@link flowControlKeys}, once
 * per describe block (call it there), and an empty database before each test.
 */
export function useFlowControlFixture(options: { blocking?: boolean } = {}): FlowControlFixture {
  const db = useGatewayRedis();
  let blocking: Redis | undefined;
  let flows: FlowControlStore;
  let messages: MessageStore;

  beforeAll(() => {
    if (options.blocking) blocking = db.connect({ blocking: true });
    flows = new FlowControlStore(db.inspect, flowControlKeys);
    messages = new MessageStore(db.inspect, flowControlKeys);
  });
  beforeEach(() => db.inspect.flushdb());

  return {
    get server() {
      return db.server;
    },
    get client() {
      return db.inspect;
    },
    get blocking() {
      if (!blocking) throw new Error('useFlowControlFixture was called without { blocking: true }');
      return blocking;
    },
    get flows() {
      return flows;
    },
    get messages() {
      return messages;
    },
    enqueue: (...batch) => flows.enqueue(batch, { deduplicationWindowMs: 0 }),
    startedBodies: async () =>
      (await db.inspect.xrange(flowControlKeys.stream, '-', '+')).map(
        ([, fields]) => fields[1]!.split('\n')[1]!,
      ),
  };
}
