import type { Redis } from 'ioredis';
import type { Logger } from 'winston';
import { errorMessage } from '../../../observability/logger.js';
import { QUEUE_CONFIG_DEFAULTS } from '../core/config.js';
import type { QueueKeys } from '../core/keys.js';
import type { QueueWakeups } from '../stores/queue-wakeups.js';
import { newMessageId, type QueueMessage } from '../core/message.js';
import { isUrlGroupName } from '../core/url-group.js';
import { UrlGroupStore } from '../stores/url-group-store.js';
import { nextTick, parseCron, type CronSchedule } from '../core/cron.js';
import type { ScheduleRecord } from '../core/schedule.js';
import { HeldClaim } from './held-claim.js';
import { ScheduleStore, type DueTick, type TickToFire } from '../stores/schedule-store.js';

/**
 * Due ticks claimed at once. Small enough that replicas claiming in turn share a burst of ticks
 * between them, large enough that a claim costs little per tick; more are claimed at once after.
 */
const CLAIM_BATCH = 200;
/** Ticks fired per script run: a run holds Redis for about 30 µs per tick. */
const FIRE_BATCH = 50;
const PARSED_CRON_CACHE_SIZE = 10_000;

/** Claimed ticks of one queue ('' = none) fired by one script run. */
interface FireRun {
  claim: HeldClaim;
  queueName: string;
  ticks: TickToFire[];
}

export interface ScheduleTickerOptions {
  /** The shared command connection of the binding's database. */
  redis: Redis;
  keys: QueueKeys;
  /**
   * The longest wait between two reads of the ticks set (SETTEE_QUEUE_POLL_INTERVAL_MS): the
   * ticker wakes at the earliest tick it knows of, and at least this often for ticks set by others.
   */
  pollIntervalMs: number;
  /**
   * How long claimed ticks stay this replica's unless renewed (SETTEE_QUEUE_SCHEDULE_CLAIM_LEASE_MS,
   * default 2 s): a replica that dies with claimed ticks leaves them late by up to this, and a live
   * one renews it every third of it while it works through the claim (load, build, fire), as a
   * lock's holder renews it with a heartbeat, so a slow round keeps its ticks. Tests shorten it.
   */
  claimLeaseMs?: number;
  /** The binding's events cap, 0 when events are not recorded (message-event.ts eventCapOf). */
  eventCap?: number;
  /**
   * This replica's wake-ups of the database's queues (queue-store.ts queueWakeupsOf): a tick into a
   * queue with Upstash-Delay wakes its queue when its message is due.
   */
  wakeups?: QueueWakeups | undefined;
  /** The binding's spec.limits.maxQueues as it is now: a tick creates its queue only within it. */
  maxQueues: () => number;
  logger: Logger;
}

/**
 * Fires one binding's cron schedules from this gateway replica. Every replica claims batches of the
 * ticks that have come (claim-schedule-ticks.ts), so a burst of ticks is split between replicas,
 * and fires only what it claimed, through the fire script's compare-and-set on its claim, so a
 * tick fires once however many replicas run and die; a dead replica's claimed ticks are claimed
 * again once its claim runs out. The following tick is computed from now, not from the tick
 * fired: a schedule whose ticks were missed while no gateway ran fires once when one is back, not
 * once per missed tick.
 */
export class ScheduleTicker {
  private readonly schedules: ScheduleStore;
  private readonly groups: UrlGroupStore;
  private readonly parsed = new Map<string, CronSchedule>();
  private timer: NodeJS.Timeout | undefined;
  private round: Promise<void> | undefined;
  private running = false;
  private stopped = false;
  /** The earliest score in the ticks set at the last claim: when to look again. */
  private nextDue: number | undefined;
  /**
   * Claimed ticks whose fire failed (Redis gone or restarted mid-round), fired again at the next
   * round while the claim still holds rather than left late until it runs out. Firing again is
   * safe: ticks the failed run did fire no longer hold the claim, so they do not fire twice.
   */
  private unfired: FireRun[] = [];

  constructor(private readonly options: ScheduleTickerOptions) {
    this.schedules = new ScheduleStore(options.redis, options.keys, options.eventCap);
    this.groups = new UrlGroupStore(options.redis, options.keys);
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.wakeIn(0);
  }

  async stop(): Promise<void> {
    this.running = false;
    this.stopped = true;
    clearTimeout(this.timer);
    await this.round;
  }

  /** The next round starts in `delayMs`, or at the earliest known tick if sooner. */
  private wakeIn(delayMs: number): void {
    this.timer = setTimeout(() => {
      this.round = this.fireDue()
        .then(
          () => undefined,
          (err: unknown) => {
            this.nextDue = undefined;
            this.options.logger.warn('schedule ticks not fired', { error: errorMessage(err) });
          },
        )
        .finally(() => {
          this.round = undefined;
          if (!this.running) return;
          const { pollIntervalMs } = this.options;
          const untilNext = this.nextDue === undefined ? pollIntervalMs : this.nextDue - Date.now();
          this.wakeIn(Math.max(0, Math.min(pollIntervalMs, untilNext)));
        });
    }, delayMs);
  }

  /** Claims and fires every tick that has come by `now`; returns how many this replica fired. */
  async fireDue(now = Date.now()): Promise<number> {
    const leaseMs = this.options.claimLeaseMs ?? QUEUE_CONFIG_DEFAULTS.scheduleClaimLeaseMs;
    let fired = await this.fireRuns(this.unfired.splice(0).filter((run) => run.claim.until > Date.now()));
    for (;;) {
      // The claim runs from the real time: a long round's later claims must not run out at once.
      const claimed = await this.schedules.claimDue(now, CLAIM_BATCH, Date.now() + leaseMs);
      this.nextDue = claimed.next;
      if (claimed.ticks.length === 0) return fired;
      const claim = new HeldClaim(
        claimed.claim,
        claimed.ticks.map((t) => t.scheduleId),
      );
      const heartbeat = this.renewWhileHeld(claim, leaseMs);
      try {
        fired += await this.fireClaim(claimed.ticks, claim, now);
      } finally {
        heartbeat.stop();
      }
      if (claimed.ticks.length < CLAIM_BATCH || this.stopped) return fired;
    }
  }

  /**
   * Renews `claim` every third of the lease until stopped, one renewal at a time; a renewal that
   * fails (the database is gone) is left to the next, and if none gets through the claim runs out
   * and another replica fires the ticks, once (the fire's compare-and-set).
   */
  private renewWhileHeld(claim: HeldClaim, leaseMs: number): { stop(): void } {
    let renewing: Promise<unknown> | undefined;
    const timer = setInterval(() => {
      if (renewing) return;
      const held = [...claim.claims];
      const next = claim.renew(Date.now() + leaseMs);
      renewing = this.schedules
        .renewClaim(claim.scheduleIds, held, next)
        .catch((err: unknown) =>
          this.options.logger.warn('schedule claim not renewed', { error: errorMessage(err) }),
        )
        .finally(() => (renewing = undefined));
    }, leaseMs / 3);
    return { stop: () => clearInterval(timer) };
  }

  /** Loads, builds and fires one claimed batch of ticks; returns how many this replica fired. */
  private async fireClaim(claimed: readonly DueTick[], claim: HeldClaim, now: number): Promise<number> {
    const loaded = await this.schedules.loadForTicks(claimed.map((d) => d.scheduleId));
    // Every schedule with the same cron follows on with the same tick from `now`: computed once.
    const following = new Map<string, number>();
    const followingOf = (cron: string): number => {
      let tick = following.get(cron);
      if (tick === undefined) following.set(cron, (tick = nextTick(this.cronOf(cron), now)));
      return tick;
    };
    // A claimed tick whose schedule was deleted meanwhile has nothing to fire: the delete took it out.
    const ticks = await Promise.all(
      claimed.map(async (due, i) => {
        const schedule = loaded[i];
        if (!schedule) return undefined;
        const messages = await this.messagesOf(schedule.record, schedule.template, now);
        const tick: TickToFire = { due, following: followingOf(schedule.record.cron), messages };
        return { queueName: schedule.template.queueName ?? '', tick };
      }),
    );
    const byQueue = new Map<string, TickToFire[]>();
    for (const { queueName, tick } of ticks.filter((t) => t !== undefined)) {
      const ofQueue = byQueue.get(queueName) ?? [];
      if (ofQueue.length === 0) byQueue.set(queueName, ofQueue);
      ofQueue.push(tick);
    }
    const runs: FireRun[] = [];
    for (const [queueName, ticks] of byQueue)
      for (let i = 0; i < ticks.length; i += FIRE_BATCH)
        runs.push({ claim, queueName, ticks: ticks.slice(i, i + FIRE_BATCH) });
    return this.fireRuns(runs);
  }

  /**
   * Fires every run at once; returns how many ticks fired. Runs that fail are kept for the next
   * round, and the first failure is thrown once all have settled.
   */
  private async fireRuns(runs: readonly FireRun[]): Promise<number> {
    const results = await Promise.allSettled(runs.map((run) => this.fire(run)));
    let fired = 0;
    for (const [i, result] of results.entries()) {
      if (result.status === 'fulfilled') fired += result.value;
      else this.unfired.push(runs[i]!);
    }
    const failed = results.find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
    return fired;
  }

  /** Fires one run of claimed ticks; returns how many fired. */
  private async fire({ claim, queueName, ticks }: FireRun): Promise<number> {
    const fired = await this.schedules.fireClaimed(claim.claims, queueName, ticks, this.options.maxQueues());
    const { wakeups } = this.options;
    if (wakeups && queueName !== '') {
      let earliest = Infinity;
      for (const [i, tick] of ticks.entries())
        if (fired[i] === 'fired')
          for (const m of tick.messages) earliest = Math.min(earliest, m.notBefore ?? Infinity);
      if (earliest !== Infinity) wakeups.wakeIn(queueName, earliest - Date.now());
    }
    for (const [i, tick] of ticks.entries()) {
      if (fired[i] === 'queue-refused')
        this.options.logger.warn(
          'schedule tick not stored: its queue is missing and the binding has its most queues',
          {
            scheduleId: tick.due.scheduleId,
            queueName,
          },
        );
      else if (fired[i] && tick.messages.length === 0)
        this.options.logger.warn('schedule tick fired to a url group that does not exist', {
          scheduleId: tick.due.scheduleId,
        });
    }
    return fired.filter(Boolean).length;
  }

  /** The tick's messages: one, or one per endpoint of the URL group as it is now. */
  private async messagesOf(
    record: ScheduleRecord,
    template: QueueMessage,
    now: number,
  ): Promise<QueueMessage[]> {
    // Object.assign rather than a spread followed by properties: on Node 20 that costs about 3 us a
    // message against 0.2 (docs/queue.md, Performance), and 10,000 schedules may tick at once.
    const message = (destination: string, topicName?: string): QueueMessage =>
      Object.assign(
        {},
        template,
        { id: newMessageId(), destination, retried: 0, createdAt: now, scheduleId: record.scheduleId },
        topicName === undefined ? {} : { topicName },
        record.delayMs === undefined ? {} : { notBefore: now + record.delayMs },
      );
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
