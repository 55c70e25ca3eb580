import type { Redis } from 'ioredis';
import type { Logger } from 'winston';
import { errorMessage } from '../../../observability/logger.js';
import type { QueueKeys } from '../keys.js';
import { newMessageId, type QueueMessage } from '../message.js';
import { isUrlGroupName } from '../url-groups/url-group.js';
import { UrlGroupStore } from '../url-groups/url-group-store.js';
import { nextTick, parseCron, type CronSchedule } from './cron.js';
import type { ScheduleRecord } from './schedule.js';
import { ScheduleStore, type DueTick } from './schedule-store.js';

/** Due ticks read per round; more are read at once in the next round. */
const TICK_BATCH = 500;
const PARSED_CRON_CACHE_SIZE = 10_000;

export interface ScheduleTickerOptions {
  /** The shared command connection of the binding's database. */
  redis: Redis;
  keys: QueueKeys;
  /** How often the ticks set is read (SETTEE_QUEUE_POLL_INTERVAL_MS). */
  pollIntervalMs: number;
  /** The binding's events cap, 0 when events are not recorded (message-event.ts eventCapOf). */
  eventCap?: number;
  logger: Logger;
}

/**
 * Fires one binding's cron schedules from this gateway replica. Every replica reads the ticks
 * that have come, and each fires a tick only through the fire script's compare-and-set on the
 * tick it read, so a tick fires once however many replicas run. The following tick is computed
 * from now, not from the tick fired: a schedule whose ticks were missed while no gateway ran
 * fires once when one is back, not once per missed tick.
 */
export class ScheduleTicker {
  private readonly schedules: ScheduleStore;
  private readonly groups: UrlGroupStore;
  private readonly parsed = new Map<string, CronSchedule>();
  private timer: NodeJS.Timeout | undefined;
  private round: Promise<void> | undefined;
  private running = false;
  private stopped = false;

  constructor(private readonly options: ScheduleTickerOptions) {
    this.schedules = new ScheduleStore(options.redis, options.keys, options.eventCap);
    this.groups = new UrlGroupStore(options.redis, options.keys);
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.timer = setInterval(() => {
      if (this.round || !this.running) return;
      this.round = this.fireDue()
        .then(
          () => undefined,
          (err: unknown) => {
            this.options.logger.warn('schedule ticks not fired', { error: errorMessage(err) });
          },
        )
        .finally(() => (this.round = undefined));
    }, this.options.pollIntervalMs);
  }

  async stop(): Promise<void> {
    this.running = false;
    this.stopped = true;
    clearInterval(this.timer);
    await this.round;
  }

  /** Fires every tick that has come by `now`; returns how many this replica fired. */
  async fireDue(now = Date.now()): Promise<number> {
    let fired = 0;
    for (;;) {
      const due = await this.schedules.dueTicks(now, TICK_BATCH);
      if (due.length === 0) return fired;
      const loaded = await this.schedules.loadForTicks(due.map((d) => d.scheduleId));
      // Every schedule with the same cron follows on with the same tick from `now`: computed once.
      const following = new Map<string, number>();
      const followingOf = (cron: string): number => {
        let tick = following.get(cron);
        if (tick === undefined) following.set(cron, (tick = nextTick(this.cronOf(cron), now)));
        return tick;
      };
      const results = await Promise.all(
        due.map((tick, i) => {
          const schedule = loaded[i];
          if (!schedule) return false;
          const at = { now, following: followingOf(schedule.record.cron) };
          return this.fire(tick, schedule.record, schedule.template, at);
        }),
      );
      fired += results.filter(Boolean).length;
      if (due.length < TICK_BATCH || this.stopped) return fired;
    }
  }

  private async fire(
    due: DueTick,
    record: ScheduleRecord,
    template: QueueMessage,
    at: { now: number; following: number },
  ): Promise<boolean> {
    const { now, following } = at;
    const messages = await this.messagesOf(record, template, now);
    const fired = await this.schedules.fire(due, following, messages);
    if (fired && messages.length === 0)
      this.options.logger.warn('schedule tick fired to a url group that does not exist', {
        scheduleId: record.scheduleId,
      });
    return fired;
  }

  /** The tick's messages: one, or one per endpoint of the URL group as it is now. */
  private async messagesOf(
    record: ScheduleRecord,
    template: QueueMessage,
    now: number,
  ): Promise<QueueMessage[]> {
    const message = (destination: string, topicName?: string): QueueMessage => ({
      ...template,
      id: newMessageId(),
      destination,
      retried: 0,
      createdAt: now,
      scheduleId: record.scheduleId,
      ...(topicName === undefined ? {} : { topicName }),
      ...(record.delayMs === undefined ? {} : { notBefore: now + record.delayMs }),
    });
    if (!isUrlGroupName(record.destination)) return [message(record.destination)];
    const group = await this.groups.get(record.destination);
    return (group?.endpoints ?? []).map((endpoint) => message(endpoint.url, record.destination));
  }

  private cronOf(text: string): CronSchedule {
    let cron = this.parsed.get(text);
    if (!cron) {
      if (this.parsed.size >= PARSED_CRON_CACHE_SIZE) this.parsed.clear();
      cron = parseCron(text);
      this.parsed.set(text, cron);
    }
    return cron;
  }
}
