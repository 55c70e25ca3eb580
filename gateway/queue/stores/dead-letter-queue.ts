import type { Redis } from 'ioredis';
import { deadLetterIdFloor, type DeadLetter } from '../core/dead-letter.js';
import { MESSAGE_FIELD, type QueueKeys } from '../core/keys.js';
import { labelsOf, matchesFilters, type ListFilters } from '../core/list-query.js';
import type { QueueMessage } from '../core/message.js';
import { encodeMessage } from '../core/message-codec.js';
import { eventJson } from '../core/message-event.js';
import { deleteDeadLetters } from '../scripts/delete-dead-letters.js';
import type { QueueQuota, QueueRecord } from '../core/queue.js';
import type { QueueWakeups } from './queue-wakeups.js';
import { retryDeadLetters } from '../scripts/retry-dead-letters.js';
import { retryDeadLettersIntoQueue } from '../scripts/retry-dead-letters-into-queue.js';
import { trimDeadLetters } from '../scripts/trim-dead-letters.js';

/** How long dead letters are kept, and how many at most (QueueBinding spec.limits). */
export interface DeadLetterLimits {
  retentionMs: number;
  maxCount: number;
}

export interface DeadLetterPage {
  letters: DeadLetter[];
  /** Where the next page starts; absent on the last page. */
  cursor?: string;
}

/** Dead letters read per step of a page, and the most one page request examines when filtering. */
const READ_STEP = 200;
const MAX_EXAMINED_PER_PAGE = 20_000;
/** The most expired or surplus letters one trim drops of each; the next pass takes the rest. */
const TRIM_STEP = 1_000;

function parsed(json: string | null): DeadLetter | undefined {
  return json === null ? undefined : (JSON.parse(json) as DeadLetter);
}

export function filterableLetter(letter: DeadLetter) {
  return {
    url: letter.destination,
    labels: labelsOf(letter.label),
    topicName: letter.topicName,
    endpointName: letter.endpointName,
    scheduleId: letter.scheduleId,
    queueName: letter.queueName,
    flowControlKey: letter.flowControl?.key,
    callerIp: letter.callerIp,
    time: letter.failedAt,
    messageId: letter.messageId,
    dlqId: letter.dlqId,
    ...(letter.lastStatus !== undefined && { responseStatus: letter.lastStatus }),
  };
}

/**
 * A binding's dead-letter queue (keys.ts: a hash of letters and an order of their time-sorted
 * dlqIds). Pages are read newest first from a cursor (the last dlqId of the previous page).
 */
export class DeadLetterQueue {
  /**
   * `eventCap`: as for MessageStore; a retry records its new message's CREATED event. `wakeups`:
   * this replica's wake-ups of the database's queues (queue-store.ts queueWakeupsOf), armed when a
   * retry into a queue finds its oldest waiting message delayed (a retry with Upstash-Delay or
   * Upstash-Not-Before): nothing else would start it before the next maintenance pass. Both are
   * required, so no caller can lose the wake-up by leaving them out; a test that means none passes
   * `undefined`.
   */
  constructor(
    private readonly redis: Redis,
    private readonly keys: QueueKeys,
    private readonly eventCap: number,
    private readonly wakeups: QueueWakeups | undefined,
  ) {}

  async get(dlqIds: readonly string[]): Promise<(DeadLetter | undefined)[]> {
    if (dlqIds.length === 0) return [];
    const values = await this.redis.hmget(this.keys.deadLetters, ...dlqIds);
    return values.map(parsed);
  }

  /**
   * Up to `count` letters matching `filters`, newest first, after `cursor`. A selective filter
   * over a long queue may give a short page with a cursor: a page examines at most
   * MAX_EXAMINED_PER_PAGE letters, so one request stays bounded.
   */
  async page(input: {
    count: number;
    cursor?: string;
    filters: ListFilters;
    /** Further checks on each read step's letters (the workflow DLQ's, which may read their runs). */
    accept?: (letters: readonly (DeadLetter | undefined)[]) => Promise<boolean[]>;
  }): Promise<DeadLetterPage> {
    const letters: DeadLetter[] = [];
    let from = input.cursor === undefined ? '+' : `(${input.cursor}`;
    let examined = 0;
    for (;;) {
      const ids = await this.redis.zrevrangebylex(
        this.keys.deadLetterOrder,
        from,
        '-',
        'LIMIT',
        0,
        READ_STEP,
      );
      if (ids.length === 0) return { letters };
      const found = await this.get(ids);
      const accepted = input.accept === undefined ? undefined : await input.accept(found);
      for (let i = 0; i < ids.length; i += 1) {
        examined += 1;
        const letter = found[i];
        if (letter && (accepted?.[i] ?? true) && matchesFilters(filterableLetter(letter), input.filters)) {
          letters.push(letter);
          if (letters.length === input.count) return { letters, cursor: ids[i]! };
        }
        if (examined >= MAX_EXAMINED_PER_PAGE) return { letters, cursor: ids[i]! };
      }
      if (ids.length < READ_STEP) return { letters };
      from = `(${ids[ids.length - 1]!}`;
    }
  }

  async delete(dlqIds: readonly string[]): Promise<number> {
    if (dlqIds.length === 0) return 0;
    return Number(
      await deleteDeadLetters.run(this.redis, [this.keys.deadLetters, this.keys.deadLetterOrder], dlqIds),
    );
  }

  /**
   * Takes each letter out of the DLQ and stores its new message, atomically per queue (the
   * letters of no queue together); a queue's message goes back to the end of its queue (created
   * again when deleted meanwhile, within `quota.maxQueues`) and waits for a slot there. Returns,
   * per item, whether its letter was still there (false: deleted, trimmed or retried meanwhile).
   */
  async retry(
    items: readonly { dlqId: string; message: QueueMessage }[],
    quota: Pick<QueueQuota, 'maxQueues'>,
    now = Date.now(),
  ): Promise<boolean[]> {
    const retried: boolean[] = new Array<boolean>(items.length).fill(false);
    const byQueue = new Map<string | undefined, number[]>();
    for (const [i, { message }] of items.entries())
      byQueue.set(message.queueName, [...(byQueue.get(message.queueName) ?? []), i]);
    for (const [queueName, indexes] of byQueue) {
      const group = indexes.map((i) => items[i]!);
      const results =
        queueName === undefined
          ? await this.retryUnqueued(group, now)
          : await this.retryIntoQueue(queueName, group, quota, now);
      for (const [j, i] of indexes.entries()) retried[i] = results[j] === 1;
    }
    return retried;
  }

  private created(message: QueueMessage, now: number): string {
    if (this.eventCap === 0) return '';
    const delayed = message.notBefore !== undefined && message.notBefore > now;
    return eventJson(message, 'CREATED', now, delayed ? { nextDeliveryTime: message.notBefore } : {});
  }

  private async retryUnqueued(
    items: readonly { dlqId: string; message: QueueMessage }[],
    now: number,
  ): Promise<number[]> {
    const args: (string | number | Buffer)[] = [MESSAGE_FIELD, this.eventCap];
    for (const { dlqId, message } of items) {
      const due = message.notBefore !== undefined && message.notBefore > now ? message.notBefore : 0;
      args.push(dlqId, message.id, due, encodeMessage(message), this.created(message, now));
    }
    const k = this.keys;
    return (await retryDeadLetters.run(
      this.redis,
      [k.deadLetters, k.deadLetterOrder, k.stream, k.streamIndex, k.schedule, k.scheduledMessages, k.events],
      args,
    )) as number[];
  }

  private async retryIntoQueue(
    queueName: string,
    items: readonly { dlqId: string; message: QueueMessage }[],
    quota: Pick<QueueQuota, 'maxQueues'>,
    now: number,
  ): Promise<number[]> {
    const record: QueueRecord = { createdAt: now, updatedAt: now, parallelism: 1, paused: false };
    const args: (string | number | Buffer)[] = [
      MESSAGE_FIELD,
      this.eventCap,
      queueName,
      JSON.stringify(record),
      quota.maxQueues,
    ];
    for (const { dlqId, message } of items)
      args.push(dlqId, message.id, encodeMessage(message), this.created(message, now));
    const k = this.keys;
    const [results, waitMs] = (await retryDeadLettersIntoQueue.run(
      this.redis,
      [
        k.deadLetters,
        k.deadLetterOrder,
        k.queues,
        k.queueWaiting(queueName),
        k.queueActive(queueName),
        k.scheduledMessages,
        k.stream,
        k.streamIndex,
        k.events,
      ],
      args,
    )) as [number[], number];
    if (waitMs >= 0) this.wakeups?.wakeIn(queueName, waitMs);
    return results;
  }

  /** Drops letters past the retention or beyond the count; bounded work per call. */
  async trim(limits: DeadLetterLimits, now = Date.now()): Promise<number> {
    return Number(
      await trimDeadLetters.run(
        this.redis,
        [this.keys.deadLetters, this.keys.deadLetterOrder],
        [deadLetterIdFloor(now - limits.retentionMs), limits.maxCount, TRIM_STEP],
      ),
    );
  }
}
