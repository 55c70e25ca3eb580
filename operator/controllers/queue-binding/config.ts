import fs from 'node:fs';
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
  };
}
