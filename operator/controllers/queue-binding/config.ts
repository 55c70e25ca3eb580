import fs from 'node:fs';
import {
  MAX_URL_GROUP_ENDPOINTS,
  QUEUE_LIMIT_DEFAULTS,
  type QueueLimitDefaults,
} from '../../../api/queue-limits.js';
import type { EnvReader } from '../../../observability/env-reader.js';
import { MIN_MASTER_SECRET_LENGTH } from '../../resources/queue-binding/signing-keys.js';

/** The queue-binding controller's section of the operator's configuration. */
export interface QueueBindingConfig {
  /**
   * SETTEE_SIGNING_MASTER_SECRET, or the file named by SETTEE_SIGNING_MASTER_SECRET_FILE (a mounted
   * Secret): the secret every binding's signing keys are derived from; at least 32 characters.
   * Unset: bindings get no env Secret and report Ready False (SigningSecretMissing).
   */
  readonly masterSecret: string | undefined;
  /**
   * SETTEE_QUEUE_BASE_URL (`http://127.0.0.1:8080`): the gateway's public base URL; a binding's
   * VQUEUE_URL is `<base>/queue/<namespace>/<name>`.
   */
  readonly queueBaseUrl: string;
  /** SETTEE_QUEUE_CHECK_INTERVAL (1m): how often each database's reachability and password are checked again. */
  readonly checkIntervalMs: number;
  /** SETTEE_QUEUE_DATABASE_TIMEOUT (3s): how long a reachability check may take. */
  readonly databaseTimeoutMs: number;
  /**
   * The limits of a binding whose spec.limits leaves them out, published with the others in its
   * status.limits, which the gateway enforces (defaults: QStash's free plan, api/queue-limits.ts):
   * SETTEE_QUEUE_MAX_DEAD_LETTERS, SETTEE_QUEUE_MAX_QUEUES, SETTEE_QUEUE_MAX_QUEUE_PARALLELISM,
   * SETTEE_QUEUE_MAX_SCHEDULES, SETTEE_QUEUE_MAX_URL_GROUPS, SETTEE_QUEUE_MAX_URL_GROUP_ENDPOINTS.
   * The bounds are the CRD's for the same spec.limits fields.
   */
  readonly limitDefaults: Readonly<QueueLimitDefaults>;
}

function readLimitDefaults(read: EnvReader): QueueLimitDefaults {
  const d = QUEUE_LIMIT_DEFAULTS;
  return Object.freeze({
    // Not settings: a binding without a plan waits and times out as QStash's free plan allows.
    maxDelay: d.maxDelay,
    maxTimeout: d.maxTimeout,
    maxDeadLetters: read.integer('SETTEE_QUEUE_MAX_DEAD_LETTERS', d.maxDeadLetters, {
      min: 1,
      max: 1_000_000,
    }),
    maxQueues: read.integer('SETTEE_QUEUE_MAX_QUEUES', d.maxQueues, { min: 1, max: 100_000 }),
    maxQueueParallelism: read.integer('SETTEE_QUEUE_MAX_QUEUE_PARALLELISM', d.maxQueueParallelism, {
      min: 1,
      max: 10_000,
    }),
    maxSchedules: read.integer('SETTEE_QUEUE_MAX_SCHEDULES', d.maxSchedules, { min: 1, max: 1_000_000 }),
    maxUrlGroups: read.integer('SETTEE_QUEUE_MAX_URL_GROUPS', d.maxUrlGroups, { min: 1, max: 100_000 }),
    maxUrlGroupEndpoints: read.integer('SETTEE_QUEUE_MAX_URL_GROUP_ENDPOINTS', d.maxUrlGroupEndpoints, {
      min: 1,
      max: MAX_URL_GROUP_ENDPOINTS,
    }),
  });
}

function readMasterSecret(read: EnvReader): string | undefined {
  const file = read.optionalString('SETTEE_SIGNING_MASTER_SECRET_FILE');
  let secret = read.optionalString('SETTEE_SIGNING_MASTER_SECRET');
  if (file !== undefined) {
    try {
      secret = fs.readFileSync(file, 'utf8').trim();
    } catch (err) {
      read.problem(`SETTEE_SIGNING_MASTER_SECRET_FILE=${file}: cannot be read (${(err as Error).message})`);
      return undefined;
    }
  }
  if (secret !== undefined && secret.length < MIN_MASTER_SECRET_LENGTH) {
    // The value itself is never echoed: it is a secret.
    read.problem(`SETTEE_SIGNING_MASTER_SECRET: expected at least ${MIN_MASTER_SECRET_LENGTH} characters`);
    return undefined;
  }
  return secret;
}

export function readQueueBindingConfig(read: EnvReader): QueueBindingConfig {
  const queueBaseUrl = read.string('SETTEE_QUEUE_BASE_URL', 'http://127.0.0.1:8080');
  if (!URL.canParse(queueBaseUrl) || !/^https?:/.test(queueBaseUrl)) {
    read.problem(
      `SETTEE_QUEUE_BASE_URL=${queueBaseUrl}: expected an http(s) URL such as https://queue.example.com`,
    );
  }
  return {
    masterSecret: readMasterSecret(read),
    queueBaseUrl,
    checkIntervalMs: read.durationMs('SETTEE_QUEUE_CHECK_INTERVAL', 60_000, { minMs: 100 }),
    databaseTimeoutMs: read.durationMs('SETTEE_QUEUE_DATABASE_TIMEOUT', 3_000, { minMs: 100 }),
    limitDefaults: readLimitDefaults(read),
  };
}
