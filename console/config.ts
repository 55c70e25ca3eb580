import crypto from 'node:crypto';
import { deepFreeze, type EnvReader } from '../observability/env-reader.js';
import { LOG_LEVELS, type LogLevel } from '../observability/logger.js';

/** The console's settings, read from the environment (the chart sets each; docs/console.md lists them). */
export interface ConsoleConfig {
  /** [SETTEE_CONSOLE_HOST] default 0.0.0.0 */
  host: string;
  /** [SETTEE_CONSOLE_PORT] default 8080 */
  port: number;
  logLevel: LogLevel;
  /**
   * The key that encrypts the session cookies: SHA-256 of SETTEE_CONSOLE_SESSION_SECRET (at least 32
   * characters; the chart generates one). Unset: a random key per process, so sessions end on a
   * restart and replicas cannot read each other's cookies.
   */
  sessionKey: Uint8Array;
  /** How long a session lives at most; a token that expires sooner ends it sooner. [SETTEE_CONSOLE_SESSION_TTL] */
  sessionTtlMs: number;
  /** Live-update streams one session may hold open at once (tabs). [SETTEE_CONSOLE_MAX_STREAMS_PER_SESSION] */
  maxStreamsPerSession: number;
  /** Deadline of each Kubernetes API call made for a user. [SETTEE_KUBE_REQUEST_TIMEOUT] */
  kubeRequestTimeoutMs: number;
  /**
   * CIDRs of the proxies whose X-Forwarded-Proto is believed, so the cookie is Secure behind a
   * TLS-terminating Ingress. [SETTEE_CONSOLE_TRUSTED_PROXIES]
   */
  trustedProxies: string[];
  /** On SIGTERM, how long open requests may take. [SETTEE_SHUTDOWN_TIMEOUT] */
  shutdownTimeoutMs: number;
  /**
   * The gateway's base URL as the console reaches it (the in-cluster Service), for the queue's own
   * API (dead letters, cancel); unset, the messages view says it is not configured.
   * [SETTEE_CONSOLE_QUEUE_BASE_URL]
   */
  queueBaseUrl: string | undefined;
}

export const MIN_SESSION_SECRET_LENGTH = 32;

export function readConsoleConfig(read: EnvReader): ConsoleConfig {
  const secret = read.optionalString('SETTEE_CONSOLE_SESSION_SECRET');
  let sessionKey: Uint8Array = new Uint8Array(crypto.randomBytes(32));
  if (secret !== undefined && secret.length < MIN_SESSION_SECRET_LENGTH)
    read.problem(`SETTEE_CONSOLE_SESSION_SECRET: expected at least ${MIN_SESSION_SECRET_LENGTH} characters`);
  else if (secret !== undefined)
    sessionKey = new Uint8Array(crypto.createHash('sha256').update(secret).digest());
  // A typed array cannot be frozen, so the key joins after deepFreeze.
  const settings = deepFreeze({
    host: read.string('SETTEE_CONSOLE_HOST', '0.0.0.0'),
    port: read.integer('SETTEE_CONSOLE_PORT', 8080, { min: 0, max: 65_535 }),
    logLevel: read.oneOf('SETTEE_LOG_LEVEL', LOG_LEVELS, 'info'),
    sessionTtlMs: read.durationMs('SETTEE_CONSOLE_SESSION_TTL', 8 * 3_600_000, { minMs: 1_000 }),
    maxStreamsPerSession: read.integer('SETTEE_CONSOLE_MAX_STREAMS_PER_SESSION', 4, { min: 1, max: 100 }),
    kubeRequestTimeoutMs: read.durationMs('SETTEE_KUBE_REQUEST_TIMEOUT', 30_000, { minMs: 100 }),
    trustedProxies: read.cidrList('SETTEE_CONSOLE_TRUSTED_PROXIES'),
    shutdownTimeoutMs: read.durationMs('SETTEE_SHUTDOWN_TIMEOUT', 10_000),
    queueBaseUrl: readHttpUrl(read, 'SETTEE_CONSOLE_QUEUE_BASE_URL'),
  });
  return Object.freeze({ ...settings, sessionKey });
}

function readHttpUrl(read: EnvReader, name: string): string | undefined {
  const value = read.optionalString(name);
  if (value === undefined) return undefined;
  try {
    const url = new URL(value);
    if (url.protocol === 'http:' || url.protocol === 'https:') return value.replace(/\/+$/, '');
  } catch {
    // reported below
  }
  read.problem(`${name}=${value}: expected an http(s) URL such as http://settee-gateway.settee-system.svc`);
  return undefined;
}
