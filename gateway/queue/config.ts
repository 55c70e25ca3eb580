import os from 'node:os';
import ipaddr from 'ipaddr.js';

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
  /** How often each replica promotes due retries and reclaims stale deliveries (SETTEE_QUEUE_POLL_INTERVAL_MS). */
  pollIntervalMs: number;
  /** How long one XREADGROUP waits for new messages (SETTEE_QUEUE_BLOCK_MS). */
  blockMs: number;
  /** Deliveries in flight per binding per gateway replica (SETTEE_QUEUE_WORKER_CONCURRENCY). */
  workerConcurrency: number;
  /** Dead letters kept per binding; the oldest go first (SETTEE_QUEUE_MAX_DEAD_LETTERS). */
  maxDeadLetters: number;
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

export class QueueConfigError extends Error {
  readonly code = 'QUEUE_CONFIG_INVALID';
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`${variable}: ${message}`);
    this.name = 'QueueConfigError';
  }
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
  pollIntervalMs: 1_000,
  blockMs: 2_000,
  workerConcurrency: 64,
  maxDeadLetters: 10_000,
  maxRedirects: 5,
  ssrfAllowlist: [],
});

type Env = Readonly<Record<string, string | undefined>>;

function integer(
  env: Env,
  name: string,
  fallback: number,
  min: number,
  max = Number.MAX_SAFE_INTEGER,
): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw new QueueConfigError(name, `${JSON.stringify(raw)} is not a whole number`);
  const value = Number(raw);
  if (value < min || value > max) throw new QueueConfigError(name, `${value} is outside ${min}..${max}`);
  return value;
}

function positiveNumber(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0)
    throw new QueueConfigError(name, `${JSON.stringify(raw)} is not a positive number`);
  return value;
}

function cidrList(env: Env, name: string): string[] {
  const raw = env[name] ?? '';
  const ranges = raw
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item.length > 0);
  for (const range of ranges) {
    try {
      ipaddr.parseCIDR(range);
    } catch {
      throw new QueueConfigError(name, `${JSON.stringify(range)} is not a CIDR range such as 127.0.0.0/8`);
    }
  }
  return ranges;
}

/** Reads and checks the queue's environment variables; throws QueueConfigError naming the variable. */
export function loadQueueConfig(env: Env = process.env): QueueConfig {
  const d = QUEUE_CONFIG_DEFAULTS;
  const keyPrefix = env.SETTEE_QUEUE_KEY_PREFIX || d.keyPrefix;
  const config: QueueConfig = {
    keyPrefix,
    maxBodyBytes: integer(env, 'SETTEE_QUEUE_MAX_BODY_BYTES', d.maxBodyBytes, 1),
    maxBatchSize: integer(env, 'SETTEE_QUEUE_MAX_BATCH_SIZE', d.maxBatchSize, 1, 10_000),
    maxBatchBytes: integer(env, 'SETTEE_QUEUE_MAX_BATCH_BYTES', d.maxBatchBytes, 1),
    defaultRetries: integer(env, 'SETTEE_QUEUE_DEFAULT_RETRIES', d.defaultRetries, 0, 1_000),
    maxRetries: integer(env, 'SETTEE_QUEUE_MAX_RETRIES', d.maxRetries, 0, 1_000),
    retryDelayScale: positiveNumber(env, 'SETTEE_QUEUE_RETRY_DELAY_SCALE', d.retryDelayScale),
    maxRetryDelayMs: integer(env, 'SETTEE_QUEUE_MAX_RETRY_DELAY_MS', d.maxRetryDelayMs, 0),
    deliveryTimeoutMs: integer(env, 'SETTEE_QUEUE_DELIVERY_TIMEOUT_MS', d.deliveryTimeoutMs, 1),
    reclaimIdleMs: integer(env, 'SETTEE_QUEUE_RECLAIM_IDLE_MS', d.reclaimIdleMs, 1),
    pollIntervalMs: integer(env, 'SETTEE_QUEUE_POLL_INTERVAL_MS', d.pollIntervalMs, 1),
    blockMs: integer(env, 'SETTEE_QUEUE_BLOCK_MS', d.blockMs, 1),
    workerConcurrency: integer(env, 'SETTEE_QUEUE_WORKER_CONCURRENCY', d.workerConcurrency, 1, 10_000),
    maxDeadLetters: integer(env, 'SETTEE_QUEUE_MAX_DEAD_LETTERS', d.maxDeadLetters, 1),
    maxRedirects: integer(env, 'SETTEE_QUEUE_MAX_REDIRECTS', d.maxRedirects, 0, 20),
    ssrfAllowlist: Object.freeze(cidrList(env, 'SETTEE_QUEUE_SSRF_ALLOW')),
    consumerName: env.SETTEE_QUEUE_CONSUMER_NAME || defaultConsumerName(),
  };
  return validateQueueConfig(config);
}

/** Cross-field checks, for configs built from the environment or by tests; returns it frozen. */
export function validateQueueConfig(config: QueueConfig): QueueConfig {
  if (config.defaultRetries > config.maxRetries) {
    throw new QueueConfigError(
      'SETTEE_QUEUE_DEFAULT_RETRIES',
      `must not exceed SETTEE_QUEUE_MAX_RETRIES (${config.maxRetries})`,
    );
  }
  // A delivery still running when its entry turns reclaimable would be sent twice on purpose.
  if (config.reclaimIdleMs <= config.deliveryTimeoutMs) {
    throw new QueueConfigError(
      'SETTEE_QUEUE_RECLAIM_IDLE_MS',
      `must be longer than SETTEE_QUEUE_DELIVERY_TIMEOUT_MS (${config.deliveryTimeoutMs})`,
    );
  }
  if (config.keyPrefix.length === 0)
    throw new QueueConfigError('SETTEE_QUEUE_KEY_PREFIX', 'must not be empty');
  return Object.freeze({ ...config, ssrfAllowlist: Object.freeze([...config.ssrfAllowlist]) });
}

function defaultConsumerName(): string {
  // Unique per process, so the consumer group shows which process holds a delivery, and the
  // consumers of processes that are gone can be told apart and removed.
  return `${os.hostname()}-${process.pid}-${Date.now().toString(36)}`;
}
