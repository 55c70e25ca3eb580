import type { Redis } from 'ioredis';
import { MESSAGE_FIELD, type QueueKeys } from '../core/keys.js';
import { queueLimitReached } from '../core/quotas.js';
import type { QueueMessage } from '../core/message.js';
import { decodeMessage, encodeMessage } from '../core/message-codec.js';
import { eventJson } from '../core/message-event.js';
import { deleteSchedule } from '../scripts/delete-schedule.js';
import { claimScheduleTicks } from '../scripts/claim-schedule-ticks.js';
import { fireScheduleTicks } from '../scripts/fire-schedule-ticks.js';
import { renewScheduleClaims } from '../scripts/renew-schedule-claims.js';
import { saveSchedule } from '../scripts/save-schedule.js';
import { setSchedulePaused } from '../scripts/set-schedule-paused.js';
import type { QueueRecord } from '../core/queue.js';
import type { ScheduleRecord } from '../core/schedule.js';

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
  /** The tick's time (ms), also when it is claimed again after a claim ran out. */
  tick: number;
}

/** Due ticks claimed by one caller (claimDue), to fire with fireClaimed. */
export interface ClaimedTicks {
  ticks: DueTick[];
  /** The score the claimed schedules hold until fired or until the claim runs out (ms). */
  claim: number;
  /** The earliest score left in the ticks set (a tick or a claim), undefined when it is empty. */
  next: number | undefined;
}

/** One claimed tick to fire: the schedule moves on to `following`, and `messages` are stored. */
export interface TickToFire {
  due: DueTick;
  following: number;
  messages: readonly QueueMessage[];
}

/**
 * What firing a claimed tick did: `fired` (its messages stored), `queue-refused` (fired, but its
 * queue was missing and the binding at spec.limits.maxQueues, so nothing was stored), or false
 * (its schedule no longer held the claim: nothing changed).
 */
export type TickFired = 'fired' | 'queue-refused' | false;

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
   * earlier schedule's id. A new schedule beyond `maxSchedules` active ones, or one whose queue
   * (the template's queueName) is missing while the binding has `maxQueues` queues, is a
   * QuotaExceededError; replacing a paused schedule keeps it paused (save-schedule.ts).
   * `maxQueues` is needed only when the template names a queue.
   */
  async save(
    record: ScheduleRecord,
    template: QueueMessage,
    options: {
      nextTick: number | undefined;
      maxSchedules: number;
      maxQueues?: number;
      deduplication?: { key: string; windowMs: number } | undefined;
    },
  ): Promise<{ created: boolean; duplicateOf?: string }> {
    const { nextTick, deduplication, maxQueues } = options;
    const queueName = template.queueName ?? '';
    if (queueName !== '' && maxQueues === undefined)
      throw new Error(`schedule ${record.scheduleId} names queue ${queueName}: its save needs maxQueues`);
    const k = this.keys;
    const [created, duplicateOf] = (await saveSchedule.run(
      this.redis,
      [
        k.schedules,
        k.scheduleMessages,
        k.scheduleTicks,
        k.deduplicationIds,
        k.deduplicationExpiries,
        k.queues,
      ],
      [
        record.scheduleId,
        JSON.stringify(record),
        encodeMessage(template),
        nextTick ?? '',
        deduplication?.key ?? '',
        deduplication?.windowMs ?? 0,
        options.maxSchedules,
        queueName,
        maxQueues ?? '',
      ],
    )) as [number, string];
    return duplicateOf ? { created: false, duplicateOf } : { created: Number(created) === 1 };
  }

  /** The ids of the messages of the schedule's last tick that fired (none before its first). */
  async lastTickMessageIds(scheduleId: string): Promise<string[]> {
    const ids = await this.redis.hget(this.keys.scheduleLastMessages, scheduleId);
    return ids ? ids.split(',') : [];
  }

  async get(scheduleId: string): Promise<StoredSchedule | undefined> {
    const [record, template, last, score, claim] = await Promise.all([
      this.redis.hget(this.keys.schedules, scheduleId),
      this.redis.hgetBuffer(this.keys.scheduleMessages, scheduleId),
      this.redis.hget(this.keys.scheduleLastTicks, scheduleId),
      this.redis.zscore(this.keys.scheduleTicks, scheduleId),
      this.redis.hget(this.keys.scheduleClaims, scheduleId),
    ]);
    if (record === null || template === null) return undefined;
    return stored(JSON.parse(record) as ScheduleRecord, template, last, nextTickOf(score, claim));
  }

  /** Every schedule, oldest first. */
  async list(): Promise<StoredSchedule[]> {
    const [records, templates, lasts, scores, claims] = await Promise.all([
      this.redis.hgetall(this.keys.schedules),
      this.redis.hgetallBuffer(this.keys.scheduleMessages),
      this.redis.hgetall(this.keys.scheduleLastTicks),
      this.redis.zrange(this.keys.scheduleTicks, '0', '-1', 'WITHSCORES'),
      this.redis.hgetall(this.keys.scheduleClaims),
    ]);
    const next = new Map<string, number | undefined>();
    for (let i = 0; i + 1 < scores.length; i += 2)
      next.set(scores[i]!, nextTickOf(scores[i + 1]!, claims[scores[i]!] ?? null));
    return Object.entries(records)
      .filter(([id]) => templates[id] !== undefined)
      .map(([id, record]) =>
        stored(JSON.parse(record) as ScheduleRecord, templates[id]!, lasts[id] ?? null, next.get(id)),
      )
      .sort((a, b) => a.record.createdAt - b.record.createdAt);
  }

  async delete(scheduleId: string): Promise<boolean> {
    const existed = await deleteSchedule.run(
      this.redis,
      [
        this.keys.schedules,
        this.keys.scheduleMessages,
        this.keys.scheduleTicks,
        this.keys.scheduleLastTicks,
        this.keys.scheduleLastMessages,
        this.keys.scheduleClaims,
      ],
      [scheduleId],
    );
    return Number(existed) === 1;
  }

  /**
   * Returns false when there is no such schedule. `nextTick` is where a resumed schedule ticks
   * next; resuming a paused one beyond `maxSchedules` active ones is a QuotaExceededError.
   */
  async setPaused(
    scheduleId: string,
    paused: boolean,
    options: { nextTick: number; maxSchedules: number },
  ): Promise<boolean> {
    const found = await setSchedulePaused.run(
      this.redis,
      [this.keys.schedules, this.keys.scheduleTicks],
      [scheduleId, paused ? '1' : '0', options.nextTick, options.maxSchedules],
    );
    return Number(found) === 1;
  }

  /**
   * Claims up to `limit` of the ticks that have come by `now`, earliest first, until `until` (ms,
   * or just after `now` if that is later): no other caller sees them as due until the claim runs
   * out (claim-schedule-ticks.ts).
   */
  async claimDue(now: number, limit: number, until: number): Promise<ClaimedTicks> {
    const [due, claim, next] = (await claimScheduleTicks.run(
      this.redis,
      [this.keys.scheduleTicks, this.keys.scheduleClaims],
      [now, limit, until],
    )) as [string[], string, string | null];
    const ticks: DueTick[] = [];
    for (let i = 0; i + 1 < due.length; i += 2) ticks.push({ scheduleId: due[i]!, tick: Number(due[i + 1]) });
    return { ticks, claim: Number(claim), next: next === null ? undefined : Number(next) };
  }

  /**
   * Renews the caller's claim on the listed schedules that still hold one of `held` (its claims on
   * them so far): they hold `claim` from now on (renew-schedule-claims.ts). Returns how many.
   */
  async renewClaim(scheduleIds: readonly string[], held: readonly number[], claim: number): Promise<number> {
    if (scheduleIds.length === 0) return 0;
    return Number(
      await renewScheduleClaims.run(
        this.redis,
        [this.keys.scheduleTicks, this.keys.scheduleClaims],
        [claim, held.join(' '), ...scheduleIds],
      ),
    );
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
   * Fires claimed ticks whose messages all go to `queueName` ('' = none) in one script, each only
   * if its schedule still holds one of `claims` (the first claim and its renewals); a missing
   * queue is created only within `maxQueues` (the binding's spec.limits.maxQueues). Returns, per
   * tick, what this call did with it.
   */
  async fireClaimed(
    claims: readonly number[],
    queueName: string,
    ticks: readonly TickToFire[],
    maxQueues: number,
  ): Promise<TickFired[]> {
    if (ticks.length === 0) return [];
    const k = this.keys;
    const now = ticks[0]!.due.tick;
    const created: QueueRecord = { createdAt: now, updatedAt: now, parallelism: 1, paused: false };
    const args: (string | number | Buffer)[] = [
      MESSAGE_FIELD,
      this.eventCap,
      queueName,
      JSON.stringify(created),
      claims.join(' '),
      maxQueues,
      `${queueLimitReached(maxQueues)}, so queue ${queueName} was not created and this tick was not stored`,
    ];
    for (const { due, following, messages } of ticks) {
      args.push(due.scheduleId, due.tick, following, messages.length);
      for (const message of messages) args.push(...this.storedArgs(message));
    }
    const fired = (await fireScheduleTicks.run(
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
        k.scheduleLastMessages,
        k.scheduleClaims,
      ],
      args,
    )) as number[];
    return fired.map((f) => (Number(f) === 1 ? 'fired' : Number(f) === 2 ? 'queue-refused' : false));
  }

  /** A tick message's values for the fire script: id, due time, the message, its CREATED event. */
  private storedArgs(message: QueueMessage): [string, number, Buffer, string] {
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
    return [message.id, message.notBefore ?? 0, encodeMessage(message), created];
  }
}

/**
 * A schedule's next tick from its score in the ticks set (undefined: none, paused) and its entry in
 * the claims hash ("<claim> <tick>", claim-schedule-ticks.ts): while a tick is claimed, and for a
 * whole claim after a replica died holding it, the score is the claim, not the cron minute, and the
 * entry keeps the tick. An entry counts only while its claim is the score, as the fire and renew
 * scripts read it: one left by a pause or a replace (the score became a tick) names an old tick.
 */
function nextTickOf(score: string | null, claim: string | null): number | undefined {
  if (score === null) return undefined;
  const [claimed, tick] = claim?.split(' ') ?? [];
  return claimed !== undefined && tick !== undefined && Number(claimed) === Number(score)
    ? Number(tick)
    : Number(score);
}

function stored(
  record: ScheduleRecord,
  template: Buffer,
  last: string | null,
  next: number | undefined,
): StoredSchedule {
  const schedule: StoredSchedule = { record, template: decodeMessage(template) };
  if (last !== null) schedule.lastTick = Number(last);
  if (next !== undefined) schedule.nextTick = next;
  return schedule;
}
