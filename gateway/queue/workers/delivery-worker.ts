import type { Redis } from 'ioredis';
import type { Logger } from 'winston';
import type { QueueTarget } from '../core/binding-registry.js';
import type { QueueConfig } from '../core/config.js';
import { ConsumerLiveness } from '../stores/consumer-liveness.js';
import { createDatabaseClient } from '../stores/database-connections.js';
import type { DeadLetterQueue, DeadLetterLimits } from '../stores/dead-letter-queue.js';
import { EventLog } from '../stores/event-log.js';
import { eventCapOf } from '../core/message-event.js';
import type { Deliverer } from './http-delivery.js';
import { queueKeys } from '../core/keys.js';
import type { MessageStore } from '../stores/message-store.js';
import { isNoGroup, type StreamEntry } from '../stores/stream-entry.js';
import type { DeliveryMetrics } from './delivery-metrics.js';
import { DueMessageMover, MAX_PROMOTE_INTERVAL_MS } from './due-message-mover.js';
import { processEntry, type ProcessEntryContext } from './process-entry.js';
import { QueueStore } from '../stores/queue-store.js';
import { BindingStores } from '../stores/binding-stores.js';
import type { QueueWakeups } from '../stores/queue-wakeups.js';
import { createDeliverySigner, type DeliverySigner } from './signer.js';
import type { WorkflowRunStore } from '../stores/workflow-run-store.js';
import type { WorkflowEventStore } from '../stores/workflow-event-store.js';

/** Consumers of gone processes are removed once they have held nothing for this long. */
const STALE_CONSUMER_IDLE_MS = 3_600_000;
const STALE_CONSUMER_CHECK_EVERY_MS = 60_000;
const ERROR_BACKOFF_MS = 1_000;

export interface DeliveryWorkerOptions {
  target: QueueTarget;
  /** The shared command connection of the binding's database. */
  redis: Redis;
  config: QueueConfig;
  deliverer: Deliverer;
  logger: Logger;
  /** Counts each entry's outcome (the gateway's /metrics). */
  metrics?: DeliveryMetrics | undefined;
}

/**
 * Delivers one binding's messages from this gateway replica. Reads new entries as the consumer
 * `config.consumerName` of the group every replica shares, so each message goes to one of them;
 * keeps at most `workerConcurrency` deliveries in flight; renews its consumer's lease every fifth
 * of `consumerLeaseMs`; moves due delayed messages and retries onto the stream, and lets the
 * flow-control keys start what their rate windows allow, at least every 250 ms; and every `pollIntervalMs` takes over the entries of consumers whose lease ran out
 * (their replica died), and reclaims entries that any consumer (one without a lease, or stuck)
 * has held for longer than `reclaimIdleMs` (XAUTOCLAIM). At-least-once: an entry is acknowledged
 * only after its outcome is stored.
 */
export class DeliveryWorker {
  private target: QueueTarget;
  private signer: DeliverySigner;
  private store: MessageStore;
  private readonly eventLog: EventLog;
  private readonly liveness: ConsumerLiveness;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private readonly deadLetterQueue: DeadLetterQueue;
  private readonly queues: QueueStore;
  private readonly wakeups: QueueWakeups | undefined;
  private readonly mover: DueMessageMover;
  private readonly workflowRuns: WorkflowRunStore;
  private readonly workflowEvents: WorkflowEventStore;
  private readonly blocking: Redis;
  private readonly logger: Logger;
  private running = false;
  private inFlight = 0;
  /** The entries being processed here, by entry id: when each was dispatched (ms). */
  private readonly held = new Map<string, number>();
  private slotFreed: (() => void) | undefined;
  private drained: (() => void) | undefined;
  private readLoop: Promise<void> | undefined;
  private maintenanceTimer: NodeJS.Timeout | undefined;
  private promoteTimer: NodeJS.Timeout | undefined;
  /** The mover pass in progress, if any: passes never overlap, and stop() waits for one. */
  private promotion: Promise<void> | undefined;
  /** The maintenance pass in progress, if any: passes never overlap, and stop() waits for one. */
  private maintenance: Promise<void> | undefined;
  private reclaimCursor = '0-0';
  private lastConsumerCheck = 0;
  private context: ProcessEntryContext | undefined;

  constructor(private readonly options: DeliveryWorkerOptions) {
    this.target = options.target;
    this.signer = createDeliverySigner(options.target.signingKey);
    const stores = new BindingStores({ ...options, keys: queueKeys(options.config.keyPrefix) });
    this.wakeups = stores.wakeups;
    this.store = stores.messages();
    this.eventLog = new EventLog(options.redis, queueKeys(options.config.keyPrefix));
    this.liveness = new ConsumerLiveness(options.redis, queueKeys(options.config.keyPrefix));
    this.deadLetterQueue = stores.deadLetters();
    this.queues = new QueueStore(options.redis, queueKeys(options.config.keyPrefix), 0, this.wakeups);
    this.workflowRuns = stores.workflowRuns();
    this.workflowEvents = stores.workflowEvents();
    this.blocking = createDatabaseClient(options.target, {
      blocking: true,
      blockMs: options.config.blockMs,
    });
    // The shared connection reports connection errors; this one would repeat them.
    this.blocking.on('error', () => undefined);
    this.logger = options.logger.child({
      binding: options.target.key,
      consumer: options.config.consumerName,
    });
    this.mover = new DueMessageMover({
      redis: options.redis,
      keys: queueKeys(options.config.keyPrefix),
      consumerName: options.config.consumerName,
      logger: this.logger,
      running: () => this.running,
    });
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.readLoop = this.runReadLoop();
    this.heartbeatTimer = setInterval(() => void this.heartbeat(), this.options.config.consumerLeaseMs / 5);
    this.maintenanceTimer = setInterval(() => {
      if (this.maintenance || !this.running) return;
      this.maintenance = this.maintain().finally(() => (this.maintenance = undefined));
    }, this.options.config.pollIntervalMs);
    this.promoteTimer = setInterval(
      () => {
        if (this.promotion || !this.running) return;
        this.promotion = this.mover.promoteDue(this.store).finally(() => (this.promotion = undefined));
      },
      Math.min(this.options.config.pollIntervalMs, MAX_PROMOTE_INTERVAL_MS),
    );
  }

  /** Takes a new signing key (or token) of the same database without interrupting deliveries. */
  update(target: QueueTarget): void {
    this.context = undefined;
    if (target.signingKey !== this.target.signingKey) this.signer = createDeliverySigner(target.signingKey);
    if (eventCapOf(this.options.config, target) !== eventCapOf(this.options.config, this.target)) {
      this.store = new BindingStores({
        ...this.options,
        target,
        keys: queueKeys(this.options.config.keyPrefix),
      }).messages();
    }
    this.target = target;
  }

  /**
   * Stops reading and waits up to `graceMs` for deliveries in flight. What is still in flight
   * after that stays pending in Redis and is reclaimed by a live replica: nothing is lost.
   */
  async stop(graceMs = this.options.config.deliveryTimeoutMs): Promise<void> {
    if (!this.running) return;
    this.running = false;
    clearInterval(this.maintenanceTimer);
    clearInterval(this.promoteTimer);
    clearInterval(this.heartbeatTimer);
    this.slotFreed?.();
    this.blocking.disconnect();
    await Promise.all([this.readLoop, this.maintenance, this.promotion]);
    if (this.inFlight > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, graceMs);
        this.drained = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    await this.liveness.release(this.options.config.consumerName).catch(() => undefined);
  }

  /** A failed heartbeat is retried by the next tick; a lease runs over several of them. */
  private async heartbeat(): Promise<boolean> {
    try {
      await this.liveness.heartbeat(this.options.config.consumerName);
      return true;
    } catch (err) {
      this.logger.warn('queue consumer heartbeat failed', { error: (err as Error).message });
      return false;
    }
  }

  private get freeSlots(): number {
    return this.options.config.workerConcurrency - this.inFlight;
  }

  /**
   * Under load, reading as soon as one slot frees would cost one XREADGROUP round trip per
   * message and cap deliveries at the round-trip rate; waiting for a quarter of the slots makes
   * each read fetch a batch. An idle worker has all its slots free, so a lone message waits for nothing.
   */
  private get readThreshold(): number {
    return Math.max(1, Math.floor(this.options.config.workerConcurrency / 4));
  }

  private async runReadLoop(): Promise<void> {
    const { config } = this.options;
    let groupReady = false;
    while (this.running) {
      try {
        if (!groupReady) {
          await this.store.ensureGroup();
          // Holding nothing without a lease: whatever this consumer reads is covered by one.
          if (!(await this.heartbeat())) throw new Error('no consumer lease');
          groupReady = true;
        }
        if (this.freeSlots < this.readThreshold) {
          await new Promise<void>((resolve) => (this.slotFreed = resolve));
          continue;
        }
        const entries = await this.store.readNew(
          this.blocking,
          config.consumerName,
          this.freeSlots,
          config.blockMs,
        );
        for (const entry of entries) this.dispatch(entry);
      } catch (err) {
        if (!this.running) break;
        if (isNoGroup(err)) {
          groupReady = false;
          continue;
        }
        this.logger.warn('reading queue messages failed', { error: (err as Error).message });
        await sleep(ERROR_BACKOFF_MS);
      }
    }
  }

  /** One then() with both handlers, not then().catch().finally(): two promises fewer a delivery. */
  private dispatch(entry: StreamEntry): void {
    this.inFlight += 1;
    this.held.set(entry.entryId, Date.now());
    void processEntry(this.entryContext(), entry).then(
      (outcome) => {
        this.finished(entry);
        this.options.metrics?.count(outcome);
      },
      (err: unknown) => {
        this.finished(entry);
        this.options.metrics?.count('unrecorded');
        // A failed delivery is an attempt's result (processEntry); what fails here is storing the
        // outcome, as when Redis is unreachable. Nothing could be written, so the entry stays
        // pending and is reclaimed after reclaimIdleMs.
        this.logger.error('delivery could not be recorded', {
          entryId: entry.entryId,
          error: (err as Error).message,
        });
      },
    );
  }

  private finished(entry: StreamEntry): void {
    this.inFlight -= 1;
    this.held.delete(entry.entryId);
    const freed = this.slotFreed;
    this.slotFreed = undefined;
    freed?.();
    if (this.inFlight === 0) this.drained?.();
  }

  private get deadLetterLimits(): DeadLetterLimits {
    const { limits } = this.target;
    return {
      retentionMs: limits.deadLetterRetentionMs,
      maxCount: limits.maxDeadLetters,
    };
  }

  /**
   * The same object for every delivery until update() changes what it holds: built per delivery,
   * it and its dead-letter limits were two objects more alive in each of the deliveries in flight.
   */
  private entryContext(): ProcessEntryContext {
    return (this.context ??= this.buildEntryContext());
  }

  private buildEntryContext(): ProcessEntryContext {
    const { config, deliverer } = this.options;
    return {
      store: this.store,
      consumer: config.consumerName,
      deliverer,
      signer: this.signer,
      logger: this.logger,
      debug: this.logger.isDebugEnabled(),
      policy: config,
      // An attempt without Upstash-Timeout waits the gateway's setting, or the binding's limit when shorter.
      deliveryTimeoutMs: Math.min(config.deliveryTimeoutMs, this.target.limits.maxTimeoutMs),
      deadLetterLimits: this.deadLetterLimits,
      maxCallbackBodyBytes: config.maxBodyBytes,
      workflowEvents: this.workflowEvents,
    };
  }

  private async claimFromDeadConsumers(): Promise<void> {
    const { consumerName, consumerLeaseMs } = this.options.config;
    while (this.freeSlots > 0 && this.running) {
      const claimed = await this.liveness.claimFromDead(consumerName, consumerLeaseMs, this.freeSlots);
      if (!claimed) return;
      this.logger.info('took over the deliveries of a dead consumer', {
        deadConsumer: claimed.deadConsumer,
        count: claimed.entries.length,
      });
      // Stopped meanwhile: the entries stay pending on this consumer and are taken over in turn.
      if (this.running) for (const entry of claimed.entries) this.dispatch(entry);
    }
  }

  /**
   * Frees the slots of queue messages that finished without releasing them (the process that
   * finished one died before its release), so no queue stays short of a slot for longer than one
   * maintenance pass, and starts what a freed slot allows. A queue held back by a delayed oldest
   * message is woken when it is due (whichever replica enqueued it, even one that died since).
   */
  private async auditQueueSlots(): Promise<void> {
    for (const name of await this.queues.names()) {
      const { freed, waitMs } = await this.queues.audit(name);
      if (freed > 0) this.logger.info('freed the slots of finished queue messages', { queue: name, freed });
      if (waitMs !== undefined) this.wakeups?.wakeIn(name, waitMs);
    }
  }

  /**
   * Keeps the entries of attempts that run long (a binding's limits.maxTimeout may allow 2 h, the
   * gateway's reclaimIdleMs is 60 s) from looking idle to the others' XAUTOCLAIM, which would send
   * them a second time while they run: an entry idle for half of reclaimIdleMs is claimed again by
   * this consumer, which resets its idle time (XCLAIM JUSTID, no delivery counted). One taken over
   * meanwhile by another consumer is idle for less than that there, so it is not taken back.
   */
  private async keepHeldEntries(): Promise<void> {
    const halfIdleMs = Math.floor(this.options.config.reclaimIdleMs / 2);
    const since = Date.now() - halfIdleMs;
    const ids = [...this.held].filter(([, at]) => at <= since).map(([id]) => id);
    if (ids.length > 0) await this.store.keepHeld(this.options.config.consumerName, ids, halfIdleMs);
  }

  private async maintain(): Promise<void> {
    try {
      await this.keepHeldEntries();
      await this.claimFromDeadConsumers();
      if (this.freeSlots > 0 && this.running) {
        const { config } = this.options;
        const { entries, cursor } = await this.store.reclaim(
          config.consumerName,
          config.reclaimIdleMs,
          this.reclaimCursor,
          this.freeSlots,
        );
        this.reclaimCursor = cursor;
        if (entries.length > 0) this.logger.info('reclaimed stale deliveries', { count: entries.length });
        // Stopped meanwhile: the entries stay pending on this consumer and are reclaimed by another.
        if (this.running) for (const entry of entries) this.dispatch(entry);
      }
      await this.auditQueueSlots();
      // Dead letters expire even when no new one arrives to trim them.
      await this.deadLetterQueue.trim(this.deadLetterLimits);
      await this.eventLog.trim(this.target.limits.eventRetentionMs);
      const { workflowRunRetentionMs, maxWorkflowRuns } = this.target.limits;
      await this.workflowRuns.trim({ retentionMs: workflowRunRetentionMs, maxCount: maxWorkflowRuns });
      if (Date.now() - this.lastConsumerCheck > STALE_CONSUMER_CHECK_EVERY_MS) {
        this.lastConsumerCheck = Date.now();
        await this.store.pruneIdleConsumers(STALE_CONSUMER_IDLE_MS, this.options.config.consumerName);
      }
    } catch (err) {
      if (!isNoGroup(err)) this.logger.warn('queue maintenance failed', { error: (err as Error).message });
    }
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
