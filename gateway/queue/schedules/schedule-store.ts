import type { Redis } from 'ioredis';
import { QuotaExceededError } from '../errors.js';
import { MESSAGE_FIELD, type QueueKeys } from '../keys.js';
import type { QueueMessage } from '../message.js';
import { decodeMessage, encodeMessage } from '../message-codec.js';
import { eventJson } from '../message-event.js';
import { deleteSchedule } from '../scripts/delete-schedule.js';
import { fireScheduleTick } from '../scripts/fire-schedule-tick.js';
import { saveSchedule } from '../scripts/save-schedule.js';
import { setSchedulePaused } from '../scripts/set-schedule-paused.js';
import type { QueueRecord } from '../queues/queue.js';
import type { ScheduleRecord } from './schedule.js';

/** A schedule as stored: its record, its message template and its ticks. */
export interface StoredSchedule {
  record: ScheduleRecord;
  template: QueueMessage;
  lastTick?: number;
  /** Absent while paused. */
  nextTick?: number;
}

/** A schedule whose next tick has come. */
export interface DueTick {
  scheduleId: string;
  tick: number;
}

/**
 * A binding's cron schedules in its database (keys.ts: schedules, scheduleMessages,
 * scheduleTicks, scheduleLastTicks). Every change that touches more than one of them is a script.
 */
export class ScheduleStore {
  /** `eventCap`: the binding's events cap when events are recorded, 0 when not (message-event.ts). */
  constructor(
    private readonly redis: Redis,
    private readonly keys: QueueKeys,
    private readonly eventCap = 0,
  ) {}

  /**
   * Stores the schedule (`nextTick` undefined stores it paused), unless `deduplication` names a
   * key an earlier create holds within its window: then nothing changes and `duplicateOf` is the
   * earlier schedule's id. A new schedule beyond `maxSchedules` is a QuotaExceededError.
   */
  async save(
    record: ScheduleRecord,
    template: QueueMessage,
    options: {
      nextTick: number | undefined;
      maxSchedules: number;
      deduplication?: { key: string; windowMs: number } | undefined;
    },
  ): Promise<{ created: boolean; duplicateOf?: string }> {
    const { nextTick, deduplication } = options;
    const k = this.keys;
    const [created, duplicateOf] = (await saveSchedule.run(
      this.redis,
      [k.schedules, k.scheduleMessages, k.scheduleTicks, k.deduplicationIds, k.deduplicationExpiries],
      [
        record.scheduleId,
        JSON.stringify(record),
        encodeMessage(template),
        nextTick ?? '',
        deduplication?.key ?? '',
        deduplication?.windowMs ?? 0,
        options.maxSchedules,
      ],
    )) as [number, string];
    if (Number(created) === -1)
      throw new QuotaExceededError(
        `schedule limit reached: the binding has its most schedules (${options.maxSchedules}, QueueBinding spec.limits.maxSchedules); delete one first`,
      );
    return duplicateOf ? { created: false, duplicateOf } : { created: Number(created) === 1 };
  }

  async get(scheduleId: string): Promise<StoredSchedule | undefined> {
    const [record, template, last, next] = await Promise.all([
      this.redis.hget(this.keys.schedules, scheduleId),
      this.redis.hgetBuffer(this.keys.scheduleMessages, scheduleId),
      this.redis.hget(this.keys.scheduleLastTicks, scheduleId),
      this.redis.zscore(this.keys.scheduleTicks, scheduleId),
    ]);
    if (record === null || template === null) return undefined;
    return stored(JSON.parse(record) as ScheduleRecord, template, last, next);
  }

  /** Every schedule, oldest first. */
  async list(): Promise<StoredSchedule[]> {
    const [records, templates, lasts, nexts] = await Promise.all([
      this.redis.hgetall(this.keys.schedules),
      this.redis.hgetallBuffer(this.keys.scheduleMessages),
      this.redis.hgetall(this.keys.scheduleLastTicks),
      this.redis.zrange(this.keys.scheduleTicks, '0', '-1', 'WITHSCORES'),
    ]);
    const next = new Map<string, string>();
    for (let i = 0; i + 1 < nexts.length; i += 2) next.set(nexts[i]!, nexts[i + 1]!);
    return Object.entries(records)
      .filter(([id]) => templates[id] !== undefined)
      .map(([id, record]) =>
        stored(JSON.parse(record) as ScheduleRecord, templates[id]!, lasts[id] ?? null, next.get(id) ?? null),
      )
      .sort((a, b) => a.record.createdAt - b.record.createdAt);
  }

  async delete(scheduleId: string): Promise<boolean> {
    const existed = await deleteSchedule.run(
      this.redis,
      [this.keys.schedules, this.keys.scheduleMessages, this.keys.scheduleTicks, this.keys.scheduleLastTicks],
      [scheduleId],
    );
    return Number(existed) === 1;
  }

  /** Returns false when there is no such schedule. `nextTick` is where a resumed schedule ticks next. */
  async setPaused(scheduleId: string, paused: boolean, nextTick: number): Promise<boolean> {
    const found = await setSchedulePaused.run(
      this.redis,
      [this.keys.schedules, this.keys.scheduleTicks],
      [scheduleId, paused ? '1' : '0', nextTick],
    );
    return Number(found) === 1;
  }

  /** The schedules whose next tick is at or before `now`, earliest first. */
  async dueTicks(now: number, limit: number): Promise<DueTick[]> {
    const reply = await this.redis.zrangebyscore(
      this.keys.scheduleTicks,
      '-inf',
      now,
      'WITHSCORES',
      'LIMIT',
      0,
      limit,
    );
    const due: DueTick[] = [];
    for (let i = 0; i + 1 < reply.length; i += 2)
      due.push({ scheduleId: reply[i]!, tick: Number(reply[i + 1]) });
    return due;
  }

  /** The records and templates of due schedules, in one round trip (undefined where one is gone). */
  async loadForTicks(
    scheduleIds: readonly string[],
  ): Promise<({ record: ScheduleRecord; template: QueueMessage } | undefined)[]> {
    if (scheduleIds.length === 0) return [];
    const [records, templates] = await Promise.all([
      this.redis.hmget(this.keys.schedules, ...scheduleIds),
      this.redis.hmgetBuffer(this.keys.scheduleMessages, ...scheduleIds),
    ]);
    return scheduleIds.map((_, i) => {
      const record = records[i];
      const template = templates[i];
      if (!record || !template) return undefined;
      return { record: JSON.parse(record) as ScheduleRecord, template: decodeMessage(template) };
    });
  }

  /**
   * Fires `tick` with its messages and moves the schedule to `followingTick`, only if no one
   * else did first. Returns whether this call fired it.
   */
  async fire(due: DueTick, followingTick: number, messages: readonly QueueMessage[]): Promise<boolean> {
    const k = this.keys;
    const queueName = messages[0]?.queueName ?? '';
    const created: QueueRecord = { createdAt: due.tick, updatedAt: due.tick, parallelism: 1, paused: false };
    const args: (string | number | Buffer)[] = [
      MESSAGE_FIELD,
      due.scheduleId,
      due.tick,
      followingTick,
      this.eventCap,
      queueName,
      JSON.stringify(created),
    ];
    for (const message of messages) {
      const delayed = message.notBefore !== undefined;
      const created =
        this.eventCap > 0
          ? eventJson(
              message,
              'CREATED',
              message.createdAt,
              delayed ? { nextDeliveryTime: message.notBefore } : {},
            )
          : '';
      args.push(message.id, message.notBefore ?? 0, encodeMessage(message), created);
    }
    const fired = await fireScheduleTick.run(
      this.redis,
      [
        k.stream,
        k.streamIndex,
        k.schedule,
        k.scheduledMessages,
        k.scheduleTicks,
        k.scheduleLastTicks,
        k.events,
        k.queues,
        k.queueWaiting(queueName),
        k.queueActive(queueName),
      ],
      args,
    );
    return Number(fired) === 1;
  }
}

function stored(
  record: ScheduleRecord,
  template: Buffer,
  last: string | null,
  next: string | null,
): StoredSchedule {
  const schedule: StoredSchedule = { record, template: decodeMessage(template) };
  if (last !== null) schedule.lastTick = Number(last);
  if (next !== null) schedule.nextTick = Number(next);
  return schedule;
}
