import crypto from 'node:crypto';
import os from 'node:os';
import { readBackupConfig, type BackupConfig } from './controllers/couch-backup/config.js';
import { readCouchInstanceConfig, type CouchInstanceConfig } from './controllers/couch-instance/config.js';
import { readQueueBindingConfig, type QueueBindingConfig } from './controllers/queue-binding/config.js';
import { deepFreeze, EnvReader } from '../observability/env-reader.js';
import { DEFAULT_KUBE_REQUEST_TIMEOUT_MS } from '../kube/clients.js';
import { DEFAULT_WATCH_TIMEOUT, type WatchTimeoutPolicy } from '../kube/watch.js';
import { LOG_LEVELS, type LogLevel } from '../observability/logger.js';
import type { BackoffPolicy } from '../kube/controller-runtime/backoff.js';

/**
 * The operator's configuration, read once from the environment at start-up, validated (every
 * problem reported at once, see ConfigError) and frozen. Each field names its variable and default.
 */
export interface OperatorConfig {
  /** SETTEE_WATCH_NAMESPACE: the one namespace to watch; unset = every namespace. */
  readonly watchNamespace: string | undefined;

  readonly controllers: {
    /** SETTEE_WORKERS (4): concurrent reconciles per controller (never two of one object). */
    readonly workers: number;
    /**
     * SETTEE_INSTANCE_WORKERS (16): concurrent reconciles of the couch-instance controller, which
     * spend most of their time waiting on API calls (a Secret, four applies, a status patch): with
     * 4, 2,000 instances applied at once queued behind the API server's latency and the operator
     * sat idle half the time. Backups keep SETTEE_WORKERS: theirs are CPU and I/O.
     */
    readonly instanceWorkers: number;
    /** SETTEE_RESYNC_PERIOD (10m): how often every object is reconciled even without a change; 0 = never. */
    readonly resyncPeriodMs: number;
    /** SETTEE_BACKOFF_BASE (100ms) and SETTEE_BACKOFF_MAX (2m): per-object retry delay after a failed reconcile, doubling up to the max. */
    readonly backoff: BackoffPolicy;
  };

  readonly kube: {
    /** SETTEE_KUBE_REQUEST_TIMEOUT (30s): deadline of each Kubernetes API call, answer included; watches are not calls. */
    readonly requestTimeoutMs: number;
    /**
     * SETTEE_KUBE_WATCH_TIMEOUT (5m): each watch ends after a random time between this and twice
     * this and resumes where it was; one whose connection died silently is given up half this
     * (at most 30 s) later, so no cache stays frozen for longer.
     */
    readonly watchTimeout: WatchTimeoutPolicy;
  };

  readonly leaderElection: {
    /** SETTEE_LEADER_ELECTION (true): only the holder of the Lease reconciles; off for a single replica. */
    readonly enabled: boolean;
    /** SETTEE_LEADER_ELECTION_NAMESPACE, else POD_NAMESPACE, else the watched namespace, else `default`. */
    readonly namespace: string;
    /** SETTEE_LEADER_ELECTION_LEASE (settee-operator): the coordination.k8s.io/v1 Lease's name. */
    readonly leaseName: string;
    /** SETTEE_LEADER_ELECTION_IDENTITY, else POD_NAME, else `<hostname>_<random>`: unique per replica. */
    readonly identity: string;
    /** SETTEE_LEASE_DURATION (15s, whole seconds): how long a standby waits after the last renewal before taking over. */
    readonly leaseDurationMs: number;
    /**
     * SETTEE_LEASE_RENEW_DEADLINE (10s): how long a renewal round, begun a retry period after the
     * last renewal, may try before the leader gives up leading (client-go's RenewDeadline).
     */
    readonly renewDeadlineMs: number;
    /** SETTEE_LEASE_RETRY_PERIOD (2s): interval between renewals, and between acquisition attempts. */
    readonly retryPeriodMs: number;
  };

  readonly observability: {
    /** SETTEE_LOG_LEVEL (info): error, warn, info or debug. */
    readonly logLevel: LogLevel;
    /** SETTEE_METRICS_HOST (127.0.0.1): address of /metrics, /healthz, /readyz; a pod sets 0.0.0.0 so probes and scrapes reach it. */
    readonly metricsHost: string;
    /** SETTEE_METRICS_PORT (8080); 0 = any free port (tests). */
    readonly metricsPort: number;
  };

  /** SETTEE_SHUTDOWN_TIMEOUT (30s): on SIGTERM/SIGINT, how long reconciles in flight may take before the process exits anyway. */
  readonly shutdownTimeoutMs: number;

  // ---------------------------------------------------------------------------------------------
  // Controller sections. Each controller owns one section: a `readonly <name>: <Name>Config` field
  // here, its reader (`read<Name>Config(env: EnvReader)`, in the controller's own module) called
  // from loadOperatorConfig below, and its variables documented on its fields as above.
  //   couchInstance  -- the couch-instance engineer (free envelope, image, endpoint template, ...)
  //   queueBinding   -- the queue-binding engineer
  // ---------------------------------------------------------------------------------------------

  /** CouchInstances: endpoint template, CouchDB version and vendor, free envelope (controllers/couch-instance/config.ts). */
  readonly couchInstance: CouchInstanceConfig;

  /** QueueBindings: signing master secret, queue base URL, check interval, rotation grace (controllers/queue-binding/config.ts). */
  readonly queueBinding: QueueBindingConfig;

  /** Backups: the cluster's object storage, timeouts, attempts (controllers/couch-backup/config.ts). */
  readonly backups: BackupConfig;
}

/** Least time between a leader that cannot renew stopping and a standby taking over; see below. */
const LEASE_MARGIN_MS = 1_000;

export function loadOperatorConfig(
  env: Readonly<Record<string, string | undefined>> = process.env,
): OperatorConfig {
  const read = new EnvReader(env);
  const watchNamespace = read.optionalString('SETTEE_WATCH_NAMESPACE');
  const backoff = {
    baseMs: read.durationMs('SETTEE_BACKOFF_BASE', 100, { minMs: 1 }),
    maxMs: read.durationMs('SETTEE_BACKOFF_MAX', 120_000, { minMs: 1 }),
  };
  if (backoff.maxMs < backoff.baseMs)
    read.problem('SETTEE_BACKOFF_MAX must not be shorter than SETTEE_BACKOFF_BASE');

  const leaseDurationMs = read.durationMs('SETTEE_LEASE_DURATION', 15_000, { minMs: 1_000 });
  const renewDeadlineMs = read.durationMs('SETTEE_LEASE_RENEW_DEADLINE', 10_000, { minMs: 1 });
  const retryPeriodMs = read.durationMs('SETTEE_LEASE_RETRY_PERIOD', 2_000, { minMs: 1 });
  // The Lease stores whole seconds; a fraction would make the holder and the standby disagree.
  if (leaseDurationMs % 1_000 !== 0) read.problem('SETTEE_LEASE_DURATION must be a whole number of seconds');
  // A leader that cannot renew leads until a retry period plus the renew deadline after its last
  // renewal, then stops within the grace (half what is left, at most 1 s); a standby may take over
  // a lease duration after that renewal. 1 s between them holds the grace and late timers (GC
  // pauses of 648 ms were recorded), so the two never lead at once by design.
  if (leaseDurationMs < renewDeadlineMs + retryPeriodMs + LEASE_MARGIN_MS)
    read.problem(
      'SETTEE_LEASE_DURATION must be at least SETTEE_LEASE_RENEW_DEADLINE + SETTEE_LEASE_RETRY_PERIOD + 1s ' +
        `(${leaseDurationMs} ms < ${renewDeadlineMs} + ${retryPeriodMs} + ${LEASE_MARGIN_MS} ms)`,
    );
  if (retryPeriodMs >= renewDeadlineMs)
    read.problem('SETTEE_LEASE_RETRY_PERIOD must be shorter than SETTEE_LEASE_RENEW_DEADLINE');

  const watchTimeoutMinMs = read.durationMs('SETTEE_KUBE_WATCH_TIMEOUT', DEFAULT_WATCH_TIMEOUT.minMs, {
    minMs: 1_000,
  });

  const config: OperatorConfig = {
    watchNamespace,
    kube: {
      requestTimeoutMs: read.durationMs('SETTEE_KUBE_REQUEST_TIMEOUT', DEFAULT_KUBE_REQUEST_TIMEOUT_MS, {
        minMs: 1,
      }),
      watchTimeout: {
        minMs: watchTimeoutMinMs,
        graceMs: Math.min(DEFAULT_WATCH_TIMEOUT.graceMs, Math.round(watchTimeoutMinMs / 2)),
      },
    },
    controllers: {
      workers: read.integer('SETTEE_WORKERS', 4, { min: 1, max: 256 }),
      instanceWorkers: read.integer('SETTEE_INSTANCE_WORKERS', 16, { min: 1, max: 256 }),
      resyncPeriodMs: read.durationMs('SETTEE_RESYNC_PERIOD', 600_000),
      backoff,
    },
    leaderElection: {
      enabled: read.boolean('SETTEE_LEADER_ELECTION', true),
      namespace:
        read.optionalString('SETTEE_LEADER_ELECTION_NAMESPACE') ??
        read.optionalString('POD_NAMESPACE') ??
        watchNamespace ??
        'default',
      leaseName: read.string('SETTEE_LEADER_ELECTION_LEASE', 'settee-operator'),
      identity:
        read.optionalString('SETTEE_LEADER_ELECTION_IDENTITY') ??
        read.optionalString('POD_NAME') ??
        `${os.hostname()}_${crypto.randomBytes(4).toString('hex')}`,
      leaseDurationMs,
      renewDeadlineMs,
      retryPeriodMs,
    },
    observability: {
      logLevel: read.oneOf('SETTEE_LOG_LEVEL', LOG_LEVELS, 'info'),
      metricsHost: read.string('SETTEE_METRICS_HOST', '127.0.0.1'),
      metricsPort: read.integer('SETTEE_METRICS_PORT', 8080, { min: 0, max: 65_535 }),
    },
    shutdownTimeoutMs: read.durationMs('SETTEE_SHUTDOWN_TIMEOUT', 30_000, { minMs: 1 }),
    // Controller sections go here, e.g. `couchInstance: readCouchInstanceConfig(read),`.
    couchInstance: readCouchInstanceConfig(read),
    queueBinding: readQueueBindingConfig(read),
    backups: readBackupConfig(read),
  };
  read.assertValid();
  return deepFreeze(config);
}
