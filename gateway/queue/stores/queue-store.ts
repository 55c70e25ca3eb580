import type { Redis } from 'ioredis';
import type { QueueConfig } from '../core/config.js';
import { MESSAGE_FIELD, type QueueKeys } from '../core/keys.js';
import type { QueueMessage } from '../core/message.js';
import { encodeMessage } from '../core/message-codec.js';
import { eventJson } from '../core/message-event.js';
import { enqueueAnswers, type EnqueueAnswer } from '../core/enqueue-answer.js';
import { PendingMessages } from './pending-messages.js';
import { auditQueueSlots } from '../scripts/audit-queue-slots.js';
import { deleteQueue } from '../scripts/delete-queue.js';
import { enqueueQueueMessages } from '../scripts/enqueue-queue-messages.js';
import { upsertQueue } from '../scripts/upsert-queue.js';
import type { QueueQuota, QueueRecord } from '../core/queue.js';
import { queueWakeupsOn, type QueueWakeups } from './queue-wakeups.js';

/**
 * A binding's queues (`/v2/queues`, `/v2/enqueue`) in its database (keys.ts): a hash of queue
 * records, and per queue a waiting list and the set of its messages holding a slot. Every change
 * that can free or add work runs the dispatch in the same script (dispatch-queue.ts), so the
 * slot count is one number in Redis whatever the number of gateway replicas.
 */
export class QueueStore {
  /**
   * `wakeups`: this replica's wake-ups of the database's queues (queueWakeupsOf), armed for the
   * delayed messages this store enqueues; without them those start at a maintenance pass.
   */
  constructor(
    private readonly redis: Redis,
    private readonly keys: QueueKeys,
    private readonly eventCap = 0,
    private readonly wakeups?: QueueWakeups,
  ) {}

  private slotKeys(name: string): string[] {
    const k = this.keys;
    return [
      k.queues,
      k.queueWaiting(name),
      k.queueActive(name),
      k.scheduledMessages,
      k.stream,
      k.streamIndex,
    ];
  }

  /**
   * Creates the queue or sets its parallelism and paused flag (fields left undefined keep the
   * queue's). `create: false` changes an existing queue only; returns whether it exists. A resume
   * or a larger parallelism that finds the oldest waiting message delayed wakes the queue when it
   * is due: nothing else would start it before the next maintenance pass.
   */
  async upsert(
    name: string,
    change: { parallelism?: number; paused?: boolean; create: boolean },
    quota: QueueQuota,
    now = Date.now(),
  ): Promise<boolean> {
    const paused = change.paused === undefined ? '' : change.paused ? '1' : '0';
    const [exists, waitMs] = (await upsertQueue.run(this.redis, this.slotKeys(name), [
      MESSAGE_FIELD,
      name,
      change.parallelism ?? '',
      paused,
      now,
      quota.maxQueues,
      change.create ? '1' : '0',
    ])) as [number, number];
    if (waitMs >= 0) this.wakeups?.wakeIn(name, waitMs);
    return exists === 1;
  }

  async get(name: string): Promise<{ record: QueueRecord; lag: number } | undefined> {
    const [raw, lag] = await Promise.all([
      this.redis.hget(this.keys.queues, name),
      this.redis.llen(this.keys.queueWaiting(name)),
    ]);
    return raw === null ? undefined : { record: JSON.parse(raw) as QueueRecord, lag };
  }

  /** Every queue by name, with its lag. */
  async list(): Promise<{ name: string; record: QueueRecord; lag: number }[]> {
    const all = await this.redis.hgetall(this.keys.queues);
    const names = Object.keys(all).sort();
    const pipeline = this.redis.pipeline();
    for (const name of names) pipeline.llen(this.keys.queueWaiting(name));
    const lags = (await pipeline.exec()) ?? [];
    return names.map((name, i) => ({
      name,
      record: JSON.parse(all[name]!) as QueueRecord,
      lag: Number(lags[i]?.[1] ?? 0),
    }));
  }

  async names(): Promise<string[]> {
    return this.redis.hkeys(this.keys.queues);
  }

  /**
   * Deletes the queue; its waiting messages are cancelled (with their CANCELLED events), those
   * already started finish. False when there was no such queue.
   */
  async delete(name: string, now = Date.now()): Promise<boolean> {
    const k = this.keys;
    const waiting = (await deleteQueue.run(
      this.redis,
      [k.queues, k.queueWaiting(name), k.queueActive(name)],
      [name],
    )) as string[] | null;
    if (waiting === null) return false;
    if (waiting.length > 0) await new PendingMessages(this.redis, k, this.eventCap).cancel(waiting, now);
    return true;
  }

  /**
   * Appends messages to the queue, all or none, creating it when missing; a message whose
   * deduplication key is held within `deduplicationWindowMs` is not stored and answers the first.
   * A message with a notBefore waits in its place until due (dispatch-queue.ts).
   */
  async enqueue(
    name: string,
    messages: readonly QueueMessage[],
    options: { deduplicationWindowMs: number; quota: QueueQuota; now?: number },
  ): Promise<EnqueueAnswer[]> {
    const now = options.now ?? Date.now();
    const k = this.keys;
    const created: QueueRecord = { createdAt: now, updatedAt: now, parallelism: 1, paused: false };
    const args: (string | number | Buffer)[] = [
      MESSAGE_FIELD,
      options.deduplicationWindowMs,
      this.eventCap,
      name,
      JSON.stringify(created),
      options.quota.maxQueues,
    ];
    for (const message of messages) {
      const delayed = message.notBefore !== undefined && message.notBefore > now;
      const event =
        this.eventCap > 0
          ? eventJson(message, 'CREATED', now, delayed ? { nextDeliveryTime: message.notBefore } : {})
          : '';
      args.push(message.id, encodeMessage(message), message.deduplicationKey ?? '', event);
    }
    const answers = (await enqueueQueueMessages.run(
      this.redis,
      [...this.slotKeys(name), k.deduplicationIds, k.deduplicationExpiries, k.events],
      args,
    )) as string[];
    let earliest = Infinity;
    for (const [i, message] of messages.entries())
      if (answers[i] === '' && message.notBefore !== undefined && message.notBefore > now)
        earliest = Math.min(earliest, message.notBefore);
    if (earliest !== Infinity) this.wakeups?.wakeIn(name, earliest - Date.now());
    return enqueueAnswers(messages, answers);
  }

  /**
   * Frees the slots of messages that finished without releasing them, and starts what the queue
   * can; `waitMs` is how long until its oldest waiting message is due when that one is delayed and
   * held the queue back.
   */
  async audit(name: string): Promise<{ freed: number; started: number; waitMs?: number }> {
    const [freed, started, wait] = (await auditQueueSlots.run(this.redis, this.slotKeys(name), [
      MESSAGE_FIELD,
      name,
    ])) as [number, number, number];
    return wait >= 0 ? { freed, started, waitMs: wait } : { freed, started };
  }
}

/**
 * This replica's wake-ups of the queues of the database behind `redis` (the binding's shared
 * command connection; queue-wakeups.ts): each runs the queue's slot audit, which dispatches it.
 * Undefined when the config turns them off.
 */
export function queueWakeupsOf(
  redis: Redis,
  keys: QueueKeys,
  config: Pick<QueueConfig, 'delayWakeups'>,
): QueueWakeups | undefined {
  if (!config.delayWakeups) return undefined;
  return queueWakeupsOn(redis, async (queue) => (await new QueueStore(redis, keys).audit(queue)).waitMs);
}
