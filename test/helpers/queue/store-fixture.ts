import type { Redis } from 'ioredis';
import type { RedisServer } from '../../../local/redis-server.js';
import { queueKeys, type QueueKeys } from '../../../gateway/queue/core/keys.js';
import {
  createMessage,
  type MessageRequest,
  type QueueMessage,
} from '../../../gateway/queue/core/message.js';
import { MessageStore } from '../../../gateway/queue/stores/message-store.js';
import type { ScheduleStore } from '../../../gateway/queue/stores/schedule-store.js';
import { useGatewayRedis } from './gateway-redis.js';

/** What the message-store suites share; see {@link useStoreFixture}. */
export interface StoreFixture {
  readonly server: RedisServer;
  /** Set up as the gateway's shared connection (auto-pipelined). */
  readonly redis: Redis;
  /** Set up as a delivery worker's blocking connection. */
  readonly blocking: Redis;
  /** This test's keys, under a prefix of its own. */
  readonly keys: QueueKeys;
  /** This test's store, its consumer group created. */
  readonly store: MessageStore;
}

/**
 * A real redis-server with the gateway's two kinds of connection, once per describe block (call
 * it there), and before each test a fresh key prefix with its store, so tests stay apart.
 */
export function useStoreFixture(name: string): StoreFixture {
  const db = useGatewayRedis();
  let blocking: Redis;
  let keys: QueueKeys;
  let store: MessageStore;
  let prefix = 0;

  beforeAll(() => {
    blocking = db.connect({ blocking: true });
  });
  beforeEach(async () => {
    prefix += 1;
    keys = queueKeys(`{${name}-${prefix}}:`);
    store = new MessageStore(db.redis, keys);
    await store.ensureGroup();
  });

  return {
    get server() {
      return db.server;
    },
    get redis() {
      return db.redis;
    },
    get blocking() {
      return blocking;
    },
    get keys() {
      return keys;
    },
    get store() {
      return store;
    },
  };
}

/**
 * A POST of `body` to an address no test reaches (the store suites never deliver), with no
 * retries; `request` adds a queue or flow-control key, `extra` overrides what createMessage set.
 */
export function testMessage(
  body: string,
  request: Partial<MessageRequest> = {},
  extra: Partial<QueueMessage> = {},
): QueueMessage {
  return {
    ...createMessage({
      destination: 'https://a.example/',
      method: 'POST',
      headers: {},
      body: Buffer.from(body),
      retries: 0,
      ...request,
    }),
    ...extra,
  };
}

/**
 * Saves an every-minute schedule `scheduleId` whose next tick is `nextTick` (undefined: paused),
 * posting `{}` to an address no test reaches: the schedule the ticker suites fire and claim.
 */
export function saveTestSchedule(
  store: ScheduleStore,
  scheduleId: string,
  nextTick: number | undefined,
  maxSchedules: number,
): ReturnType<ScheduleStore['save']> {
  return store.save(
    {
      scheduleId,
      cron: '* * * * *',
      destination: 'https://example.com/hook',
      createdAt: 1,
      isPaused: false,
    },
    createMessage({
      destination: 'https://example.com/hook',
      method: 'POST',
      headers: {},
      body: Buffer.from('{}'),
      retries: 0,
    }),
    { nextTick, maxSchedules },
  );
}
