import crypto from 'node:crypto';
import os from 'node:os';
import { ACTIVITY_REPORT_INTERVAL_MS } from '../api/contract.js';
import { deepFreeze, EnvReader } from '../observability/env-reader.js';
import { LOG_LEVELS, type LogLevel } from '../observability/logger.js';
import { readEnvelopeConfig, type EnvelopeConfig } from './envelope/config.js';

/** SETTEE_GATEWAY_CLIENT_IDLE_TIMEOUT's default (GatewayConfig clients.idleTimeoutMs). */
export const CLIENT_IDLE_TIMEOUT_MS = 65_000;

/**
 * The gateway's configuration, read once from the environment at start-up, validated (every
 * problem reported at once) and frozen. Each field names its variable and its default.
 */
export interface GatewayConfig {
  readonly listen: {
    /** SETTEE_GATEWAY_HOST (127.0.0.1); a pod sets 0.0.0.0. */
    readonly host: string;
    /** SETTEE_GATEWAY_PORT (8080); 0 = any free port (tests read the chosen one). */
    readonly port: number;
  };
  /** SETTEE_GATEWAY_TLS_CERT and SETTEE_GATEWAY_TLS_KEY (PEM files, both or neither): HTTPS when set. */
  readonly tls: { readonly certFile: string; readonly keyFile: string } | undefined;
  /**
   * SETTEE_GATEWAY_DOMAIN (unset): with a domain, `<name>.<namespace>.<domain>` routes to that
   * instance (one wildcard certificate). The path form `/db/<namespace>/<name>/` always works.
   */
  readonly domain: string | undefined;
  /**
   * SETTEE_GATEWAY_TRUSTED_PROXIES (none): comma-separated CIDR ranges, such as the Ingress
   * controller's pod CIDR. Only from a TCP peer inside them are X-Forwarded-Proto and
   * X-Forwarded-Host believed (the scheme and host of rewritten Location headers, and what the
   * instance is told) and the X-Forwarded-For chain kept; from anyone else they are replaced.
   * The queue records the first X-Forwarded-For address of a trusted peer as a publisher's
   * `callerIp`, and the peer itself otherwise.
   * Behind a TLS-terminating Ingress, without this every Location header says http://.
   */
  readonly trustedProxies: readonly string[];
  /** SETTEE_WATCH_NAMESPACE: the one namespace whose instances are served; unset = every namespace. */
  readonly watchNamespace: string | undefined;
  /**
   * SETTEE_GATEWAY_FAST_PATH (true): a raw-socket splice in front of node:http forwards the plain
   * requests of awake instances, and hands every other connection to the full path
   * (docs/data-path.md, Option A); false serves every request on node:http alone.
   */
  readonly fastPath: boolean;

  readonly wake: {
    /** SETTEE_GATEWAY_HOLD_QUEUE_LIMIT (1000): requests held per instance while it wakes; more get 503. */
    readonly holdQueueLimit: number;
    /** SETTEE_GATEWAY_WAKE_TIMEOUT (15s): how long a held request waits for its instance before a 503. */
    readonly timeoutMs: number;
    /** SETTEE_GATEWAY_PROBE_INTERVAL (5ms): how often /_up is probed once a waking instance may be up (proxy/probe-schedule.ts). */
    readonly probeIntervalMs: number;
    /** SETTEE_GATEWAY_WAKE_RETRY_INTERVAL (1s): how soon a failed wake request (an API error) is tried again. */
    readonly retryIntervalMs: number;
    /** SETTEE_GATEWAY_RETRY_AFTER (5, seconds): the Retry-After of a 503 for an instance that is not up. */
    readonly retryAfterSeconds: number;
  };

  readonly activity: {
    /** SETTEE_GATEWAY_ACTIVITY_INTERVAL (5s, the contract's): at most one Lease renewal per instance per interval. */
    readonly reportIntervalMs: number;
    /** SETTEE_GATEWAY_REPLICA, else POD_NAME, else `<hostname>_<random>`: the Lease's holderIdentity. */
    readonly replicaName: string;
    /**
     * SETTEE_GATEWAY_USAGE_INTERVAL (30s): how often each process writes an instance's requests and
     * bytes of the UTC day to its activity Lease (docs/metering.md), when they changed; also at each
     * UTC midnight and on shutdown.
     */
    readonly usageReportIntervalMs: number;
  };

  readonly upstream: {
    /** SETTEE_GATEWAY_UPSTREAM_CONNECTIONS (256): keep-alive connections per instance address. */
    readonly maxConnectionsPerAddress: number;
    /** SETTEE_GATEWAY_UPSTREAM_IDLE_TIMEOUT (30s): how long an idle upstream connection is kept. */
    readonly idleTimeoutMs: number;
    /**
     * SETTEE_GATEWAY_UPSTREAM_HEADERS_TIMEOUT (5m): how long an instance may take to start its
     * response once the request is sent; then the client gets a 504. Generous, because CouchDB
     * starts the response of a longpoll _changes only when a change comes or its timeout ends, and
     * of a view query only once the index is built. Streaming bodies (continuous _changes) have no
     * timeout.
     */
    readonly headersTimeoutMs: number;
  };

  /** How long clients may keep the gateway waiting on them, and how many may connect. */
  readonly clients: {
    /**
     * SETTEE_GATEWAY_CLIENT_HEADERS_TIMEOUT (60s): a request's head (request line and headers) must
     * be complete this long after its first byte; else 408 and the connection closes (a client
     * dribbling header lines, slowloris).
     */
    readonly headersTimeoutMs: number;
    /**
     * SETTEE_GATEWAY_CLIENT_IDLE_TIMEOUT (65s): how long a client connection may stay silent while
     * the gateway waits on it: before its first request, between keep-alive requests, and in the
     * middle of a request body (then 408, or a cut connection once the response has started). A
     * response being streamed, a quiet continuous _changes included, is never cut. Above the 60 s
     * idle timeout of common load balancers, so they, not the gateway, close a pooled connection.
     */
    readonly idleTimeoutMs: number;
    /** SETTEE_GATEWAY_MAX_CONNECTIONS (0 = no limit): client connections beyond it are dropped on accept. */
    readonly maxConnections: number | undefined;
    /**
     * SETTEE_GATEWAY_MAX_HEADER_BYTES (16384, Node's own default): the largest request head (request
     * line and headers) taken; a larger one is answered 431 and its connection closed, before any
     * instance or queue sees it.
     */
    readonly maxHeaderBytes: number;
    /**
     * SETTEE_GATEWAY_MAX_INSTANCE_REQUESTS (0 = no limit): requests in flight per instance on each
     * replica (continuous _changes feeds count); more are answered 429 with Retry-After.
     */
    readonly maxInstanceRequests: number;
  };

  /** The free plan's limits on free instances: rates, storage, databases (gateway/envelope/config.ts). */
  readonly envelope: EnvelopeConfig;

  /** SETTEE_LOG_LEVEL (info): error, warn, info or debug. */
  readonly logLevel: LogLevel;
  /** SETTEE_SHUTDOWN_TIMEOUT (30s): on SIGTERM, how long requests in flight may take before they are cut. */
  readonly shutdownTimeoutMs: number;
}

/** Reads the gateway's environment; throws ConfigError listing every problem. */
export function loadGatewayConfig(
  env: Readonly<Record<string, string | undefined>> = process.env,
): GatewayConfig {
  const read = new EnvReader(env);
  const config = readGatewayConfig(read);
  read.assertValid();
  return config;
}

/**
 * Reads the gateway's variables through `read`, which collects their problems, so gateway/main.ts
 * can read the queue's section with the same reader and report both sections' problems at once.
 */
export function readGatewayConfig(read: EnvReader): GatewayConfig {
  const certFile = read.optionalString('SETTEE_GATEWAY_TLS_CERT');
  const keyFile = read.optionalString('SETTEE_GATEWAY_TLS_KEY');
  if ((certFile === undefined) !== (keyFile === undefined)) {
    read.problem('SETTEE_GATEWAY_TLS_CERT and SETTEE_GATEWAY_TLS_KEY must be set together');
  }
  const domain = read
    .optionalString('SETTEE_GATEWAY_DOMAIN')
    ?.toLowerCase()
    .replace(/^\.+|\.+$/g, '');
  if (
    domain !== undefined &&
    !/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/.test(domain)
  ) {
    read.problem(`SETTEE_GATEWAY_DOMAIN=${domain}: expected a DNS name such as couch.example.com`);
  }

  const config: GatewayConfig = {
    listen: {
      host: read.string('SETTEE_GATEWAY_HOST', '127.0.0.1'),
      port: read.integer('SETTEE_GATEWAY_PORT', 8080, { min: 0, max: 65_535 }),
    },
    tls: certFile && keyFile ? { certFile, keyFile } : undefined,
    domain,
    trustedProxies: read.cidrList('SETTEE_GATEWAY_TRUSTED_PROXIES'),
    watchNamespace: read.optionalString('SETTEE_WATCH_NAMESPACE'),
    fastPath: read.boolean('SETTEE_GATEWAY_FAST_PATH', true),
    wake: {
      holdQueueLimit: read.integer('SETTEE_GATEWAY_HOLD_QUEUE_LIMIT', 1_000, { min: 1, max: 1_000_000 }),
      timeoutMs: read.durationMs('SETTEE_GATEWAY_WAKE_TIMEOUT', 15_000, { minMs: 1 }),
      probeIntervalMs: read.durationMs('SETTEE_GATEWAY_PROBE_INTERVAL', 5, { minMs: 1 }),
      retryIntervalMs: read.durationMs('SETTEE_GATEWAY_WAKE_RETRY_INTERVAL', 1_000, { minMs: 1 }),
      retryAfterSeconds: read.integer('SETTEE_GATEWAY_RETRY_AFTER', 5, { min: 0, max: 86_400 }),
    },
    activity: {
      reportIntervalMs: read.durationMs('SETTEE_GATEWAY_ACTIVITY_INTERVAL', ACTIVITY_REPORT_INTERVAL_MS, {
        minMs: 1,
      }),
      replicaName:
        read.optionalString('SETTEE_GATEWAY_REPLICA') ??
        read.optionalString('POD_NAME') ??
        `${os.hostname()}_${crypto.randomBytes(4).toString('hex')}`,
      usageReportIntervalMs: read.durationMs('SETTEE_GATEWAY_USAGE_INTERVAL', 30_000, { minMs: 100 }),
    },
    upstream: {
      maxConnectionsPerAddress: read.integer('SETTEE_GATEWAY_UPSTREAM_CONNECTIONS', 256, {
        min: 1,
        max: 65_536,
      }),
      idleTimeoutMs: read.durationMs('SETTEE_GATEWAY_UPSTREAM_IDLE_TIMEOUT', 30_000, { minMs: 1 }),
      headersTimeoutMs: read.durationMs('SETTEE_GATEWAY_UPSTREAM_HEADERS_TIMEOUT', 300_000, { minMs: 1 }),
    },
    clients: {
      headersTimeoutMs: read.durationMs('SETTEE_GATEWAY_CLIENT_HEADERS_TIMEOUT', 60_000, { minMs: 1 }),
      idleTimeoutMs: read.durationMs('SETTEE_GATEWAY_CLIENT_IDLE_TIMEOUT', CLIENT_IDLE_TIMEOUT_MS, {
        minMs: 1,
      }),
      maxConnections:
        read.integer('SETTEE_GATEWAY_MAX_CONNECTIONS', 0, { min: 0, max: 10_000_000 }) || undefined,
      maxHeaderBytes: read.integer('SETTEE_GATEWAY_MAX_HEADER_BYTES', 16_384, { min: 1_024, max: 1_048_576 }),
      maxInstanceRequests: read.integer('SETTEE_GATEWAY_MAX_INSTANCE_REQUESTS', 0, {
        min: 0,
        max: 1_000_000,
      }),
    },
    envelope: readEnvelopeConfig(read),
    logLevel: read.oneOf('SETTEE_LOG_LEVEL', LOG_LEVELS, 'info'),
    shutdownTimeoutMs: read.durationMs('SETTEE_SHUTDOWN_TIMEOUT', 30_000, { minMs: 1 }),
  };
  return deepFreeze(config);
}
