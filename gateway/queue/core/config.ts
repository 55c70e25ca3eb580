import os from 'node:os';
import { EnvReader } from '../../../observability/env-reader.js';

/**
 * The queue's settings, from the environment, validated once and frozen. Every duration is in
 * milliseconds so tests can shrink them; the defaults are QStash's behaviour.
 */
export interface QueueConfig {
  /** Prefix of every key the queue writes in a tenant's database (SETTEE_QUEUE_KEY_PREFIX). */
  keyPrefix: string;
  /** Largest message body accepted, in bytes (SETTEE_QUEUE_MAX_BODY_BYTES, default 1 MiB). */
  maxBodyBytes: number;
  /** Most messages in one /v2/batch request (SETTEE_QUEUE_MAX_BATCH_SIZE). */
  maxBatchSize: number;
  /** Largest /v2/batch request body, in bytes (SETTEE_QUEUE_MAX_BATCH_BYTES). */
  maxBatchBytes: number;
  /** Retries when a message names none (Upstash-Retries; SETTEE_QUEUE_DEFAULT_RETRIES). */
  defaultRetries: number;
  /** Most retries a message may ask for; more is a 400 (SETTEE_QUEUE_MAX_RETRIES). */
  maxRetries: number;
  /** Multiplies the default backoff min(86400, e^(2.5n)) s; tests use a small one (SETTEE_QUEUE_RETRY_DELAY_SCALE). */
  retryDelayScale: number;
  /** Cap on any retry delay, Retry-After included (SETTEE_QUEUE_MAX_RETRY_DELAY_MS, default one day). */
  maxRetryDelayMs: number;
  /** Default and largest per-delivery timeout; Upstash-Timeout may lower it (SETTEE_QUEUE_DELIVERY_TIMEOUT_MS). */
  deliveryTimeoutMs: number;
  /** A delivery pending this long on one consumer is taken over by another (SETTEE_QUEUE_RECLAIM_IDLE_MS). */
  reclaimIdleMs: number;
  /**
   * A replica whose consumer heartbeat is older than this is dead, and the others take over its
   * deliveries at once rather than after reclaimIdleMs; heartbeats go every fifth of it
   * (SETTEE_QUEUE_CONSUMER_LEASE_MS).
   */
  consumerLeaseMs: number;
  /** How often each replica promotes due retries and reclaims stale deliveries (SETTEE_QUEUE_POLL_INTERVAL_MS). */
  pollIntervalMs: number;
  /**
   * How long a replica's claim on due schedule ticks holds unless it renews it (every third of it,
   * while it fires them): the most a replica that dies holding ticks leaves them late
   * (SETTEE_QUEUE_SCHEDULE_CLAIM_LEASE_MS, default 2 s).
   */
  scheduleClaimLeaseMs: number;
  /** How long one XREADGROUP waits for new messages (SETTEE_QUEUE_BLOCK_MS). */
  blockMs: number;
  /** Deliveries in flight per binding per gateway replica (SETTEE_QUEUE_WORKER_CONCURRENCY). */
  workerConcurrency: number;
  /**
   * Record each message's states (CREATED, ACTIVE, DELIVERED, ...) for GET /v2/events
   * (SETTEE_QUEUE_RECORD_EVENTS, default true). Off, the events API answers empty pages.
   */
  recordEvents: boolean;
  /**
   * Start a queue's delayed oldest message at its due time, with one timer per queue on the
   * replica that enqueued it or found it blocking (stores/queue-wakeups.ts), rather than at the
   * next maintenance pass, up to pollIntervalMs later (SETTEE_QUEUE_DELAY_WAKEUPS, default true).
   */
  delayWakeups: boolean;
  /** Redirects followed per delivery, each one checked by the SSRF guard (SETTEE_QUEUE_MAX_REDIRECTS). */
  maxRedirects: number;
  /**
   * CIDR ranges a destination may resolve to although they are not public unicast, e.g.
   * `127.0.0.0/8,::1/128` on the local platform (SETTEE_QUEUE_SSRF_ALLOW; default none).
   */
  ssrfAllowlist: readonly string[];
  /** This replica's consumer name in each binding's consumer group (SETTEE_QUEUE_CONSUMER_NAME). */
  consumerName: string;
}

const DAY_MS = 86_400_000;

export const QUEUE_CONFIG_DEFAULTS: Readonly<Omit<QueueConfig, 'consumerName'>> = Object.freeze({
  keyPrefix: '{settee-queue}:',
  maxBodyBytes: 1_048_576,
  maxBatchSize: 100,
  maxBatchBytes: 10 * 1_048_576,
  defaultRetries: 3,
  maxRetries: 20,
  retryDelayScale: 1,
  maxRetryDelayMs: DAY_MS,
  deliveryTimeoutMs: 30_000,
  reclaimIdleMs: 60_000,
  consumerLeaseMs: 5_000,
  pollIntervalMs: 1_000,
  scheduleClaimLeaseMs: 2_000,
  blockMs: 2_000,
  workerConcurrency: 64,
  recordEvents: true,
  delayWakeups: true,
  maxRedirects: 5,
  ssrfAllowlist: [],
});

/** Reads the queue's environment variables; throws ConfigError listing every problem. */
export function loadQueueConfig(
  env: Readonly<Record<string, string | undefined>> = process.env,
): QueueConfig {
  const read = new EnvReader(env);
  const config = readQueueConfig(read);
  read.assertValid();
  return config;
}

/**
 * Reads the queue's variables through `read`, which collects their problems (cross-field ones
 * included), so gateway/main.ts reports them together with the gateway's own.
 */
export function readQueueConfig(read: EnvReader): QueueConfig {
  const d = QUEUE_CONFIG_DEFAULTS;
  const config: QueueConfig = {
    keyPrefix: read.string('SETTEE_QUEUE_KEY_PREFIX', d.keyPrefix),
    maxBodyBytes: read.integer('SETTEE_QUEUE_MAX_BODY_BYTES', d.maxBodyBytes, { min: 1 }),
    maxBatchSize: read.integer('SETTEE_QUEUE_MAX_BATCH_SIZE', d.maxBatchSize, { min: 1, max: 10_000 }),
    maxBatchBytes: read.integer('SETTEE_QUEUE_MAX_BATCH_BYTES', d.maxBatchBytes, { min: 1 }),
    defaultRetries: read.integer('SETTEE_QUEUE_DEFAULT_RETRIES', d.defaultRetries, { min: 0, max: 1_000 }),
    maxRetries: read.integer('SETTEE_QUEUE_MAX_RETRIES', d.maxRetries, { min: 0, max: 1_000 }),
    retryDelayScale: read.positiveNumber('SETTEE_QUEUE_RETRY_DELAY_SCALE', d.retryDelayScale),
    maxRetryDelayMs: read.integer('SETTEE_QUEUE_MAX_RETRY_DELAY_MS', d.maxRetryDelayMs, { min: 0 }),
    deliveryTimeoutMs: read.integer('SETTEE_QUEUE_DELIVERY_TIMEOUT_MS', d.deliveryTimeoutMs, { min: 1 }),
    reclaimIdleMs: read.integer('SETTEE_QUEUE_RECLAIM_IDLE_MS', d.reclaimIdleMs, { min: 1 }),
    consumerLeaseMs: read.integer('SETTEE_QUEUE_CONSUMER_LEASE_MS', d.consumerLeaseMs, { min: 100 }),
    pollIntervalMs: read.integer('SETTEE_QUEUE_POLL_INTERVAL_MS', d.pollIntervalMs, { min: 1 }),
    scheduleClaimLeaseMs: read.integer('SETTEE_QUEUE_SCHEDULE_CLAIM_LEASE_MS', d.scheduleClaimLeaseMs, {
      min: 300,
      max: 60_000,
    }),
    blockMs: read.integer('SETTEE_QUEUE_BLOCK_MS', d.blockMs, { min: 1 }),
    workerConcurrency: read.integer('SETTEE_QUEUE_WORKER_CONCURRENCY', d.workerConcurrency, {
      min: 1,
      max: 10_000,
    }),
    recordEvents: read.boolean('SETTEE_QUEUE_RECORD_EVENTS', d.recordEvents),
    delayWakeups: read.boolean('SETTEE_QUEUE_DELAY_WAKEUPS', d.delayWakeups),
    maxRedirects: read.integer('SETTEE_QUEUE_MAX_REDIRECTS', d.maxRedirects, { min: 0, max: 20 }),
    ssrfAllowlist: read.cidrList('SETTEE_QUEUE_SSRF_ALLOW'),
    consumerName: read.optionalString('SETTEE_QUEUE_CONSUMER_NAME') ?? defaultConsumerName(),
  };
  checkQueueConfig(config, read);
  return frozen(config);
}

/** Cross-field checks for a config built by tests; throws ConfigError listing every problem. */
export function validateQueueConfig(config: QueueConfig): QueueConfig {
  const read = new EnvReader({});
  checkQueueConfig(config, read);
  read.assertValid();
  return frozen(config);
}

function checkQueueConfig(config: QueueConfig, read: EnvReader): void {
  if (config.defaultRetries > config.maxRetries) {
    read.problem(
      `SETTEE_QUEUE_DEFAULT_RETRIES: must not exceed SETTEE_QUEUE_MAX_RETRIES (${config.maxRetries})`,
    );
  }
  // A delivery still running when its entry turns reclaimable would be sent twice on purpose.
  if (config.reclaimIdleMs <= config.deliveryTimeoutMs) {
    read.problem(
      `SETTEE_QUEUE_RECLAIM_IDLE_MS: must be longer than SETTEE_QUEUE_DELIVERY_TIMEOUT_MS (${config.deliveryTimeoutMs})`,
    );
  }
  if (config.keyPrefix.length === 0) read.problem('SETTEE_QUEUE_KEY_PREFIX: must not be empty');
}

function frozen(config: QueueConfig): QueueConfig {
  return Object.freeze({ ...config, ssrfAllowlist: Object.freeze([...config.ssrfAllowlist]) });
}

function defaultConsumerName(): string {
  // Unique per process, so the consumer group shows which process holds a delivery, and the
  // consumers of processes that are gone can be told apart and removed.
  return `${os.hostname()}-${process.pid}-${Date.now().toString(36)}`;
}
