import type { V1ObjectMeta } from '@kubernetes/client-node';
import type { SETTEE_API_VERSION } from './contract.js';
import type { Condition } from './conditions.js';
import type {
  COUCH_INSTANCE_ADDONS_SCHEMA,
  COUCH_INSTANCE_PLANS,
  COUCH_INSTANCE_RESTORE_SCHEMA,
  COUCH_INSTANCE_SPEC_SCHEMA,
  RESOURCE_REQUIREMENTS_SCHEMA,
} from './couch-instance-schema.js';
import type {
  COUCH_INSTANCE_PHASES,
  COUCH_INSTANCE_STATUS_SCHEMA,
  RESTORE_PHASES,
} from './couch-instance-status-schema.js';
import type { Infer, SameFields } from './crd-schema.js';

export const COUCH_INSTANCE_KIND = 'CouchInstance';
export const COUCH_INSTANCE_PLURAL = 'couchinstances';
export const COUCH_INSTANCE_SINGULAR = 'couchinstance';
export const COUCH_INSTANCE_SHORT_NAME = 'couch';

export { COUCH_INSTANCE_PHASES } from './couch-instance-status-schema.js';
export type CouchInstancePhase = (typeof COUCH_INSTANCE_PHASES)[number];
export type CouchInstancePlan = (typeof COUCH_INSTANCE_PLANS)[number];

// The spec's types are those of the CRD's schema (couch-instance-schema.ts), whose descriptions say
// what each field does (kubectl explain couch.spec): what the API server accepts is what they allow.
/** CPU and memory as Kubernetes quantities ("500m", "256Mi"). */
export type ResourceRequirements = Infer<typeof RESOURCE_REQUIREMENTS_SCHEMA>;
export type ResourceAmounts = NonNullable<ResourceRequirements['requests']>;
export type CouchInstanceAddons = Infer<typeof COUCH_INSTANCE_ADDONS_SCHEMA>;
/** Which backup to restore: one by name, or an instance's newest (completed at or before a time). */
export type CouchInstanceRestoreSource = Infer<typeof COUCH_INSTANCE_RESTORE_SCHEMA>;
/** What a tenant writes. Optional fields are defaulted by the API server or by the operator. */
export type CouchInstanceSpec = Infer<typeof COUCH_INSTANCE_SPEC_SCHEMA>;

// The status types say more than the schema (what this operator always writes together); the check
// at the end of the file holds them to the schema's fields and value types at every depth.
/**
 * With addons.backups: the schedule in force and since when. Scheduled runs are owed from that
 * moment on, so a schedule turned on (or changed) later first runs at its next cron time.
 */
export interface CouchInstanceBackupScheduleStatus {
  schedule: string;
  /** RFC 3339. */
  since: string;
}

/** How the restore of spec.restore went. */
export interface CouchInstanceRestoreStatus {
  /** The CouchBackup restored from; absent while an instance's newest cannot be chosen yet. */
  backup?: string;
  phase: (typeof RESTORE_PHASES)[number];
  completedAt?: string;
  databases?: number;
  documents?: number;
  /** Tries so far. */
  attempts?: number;
  /** RFC 3339: when a failed try is tried again. */
  nextAttemptAt?: string;
  message?: string;
}

/**
 * What the instance holds, as the operator last measured it (at a bounded rate, and never by waking
 * a hibernated instance). The gateway refuses writes to a free instance above the storage limit.
 */
export interface CouchInstanceUsage {
  /** Sum of the databases' file sizes (CouchDB's sizes.file), in bytes. */
  storageBytes?: number;
  /** Databases other than CouchDB's own (_users, _replicator, ...). */
  databases?: number;
  /** RFC 3339: when storageBytes and databases were measured. */
  measuredAt?: string;
  /** Metering (docs/metering.md): cumulative since the instance was created, up to meteredAt. */
  awakeSeconds?: number;
  hibernatedSeconds?: number;
  wakes?: number;
  /** storageBytes integrated over time, in byte-hours. */
  storageByteHours?: number;
  /** Seconds each paid add-on was on. */
  addonSeconds?: AddonSeconds;
  /** RFC 3339: the moment the metered figures run up to. */
  meteredAt?: string;
  /**
   * The gateway's counts (docs/metering.md), summed over its processes from the activity Lease:
   * requests by class since metering began, and body bytes in and out.
   */
  requests?: RequestsByClass;
  bytesIn?: number;
  bytesOut?: number;
  /** The UTC day of the last accrual: its requests and bytes so far. */
  today?: DayRequestUsage;
  /** The gateway's counts of the UTC days already closed, which requests/bytesIn/bytesOut build on. */
  closedDays?: ClosedDaysRequestUsage;
}

export interface RequestsByClass {
  read: number;
  write: number;
  query: number;
}

export interface DayRequestUsage extends RequestsByClass {
  /** YYYY-MM-DD (UTC). */
  date: string;
  /** read + write + query. */
  requests: number;
  bytesIn: number;
  bytesOut: number;
}

export interface ClosedDaysRequestUsage extends RequestsByClass {
  /** YYYY-MM-DD (UTC): every day up to and including it is closed; later counts of it are ignored. */
  through: string;
  bytesIn: number;
  bytesOut: number;
}

export interface AddonSeconds {
  keepAlive?: number;
  largerStorage?: number;
  backups?: number;
  regionPinning?: number;
}

export interface CouchInstanceStatus {
  phase?: CouchInstancePhase;
  endpoint?: string;
  credentialsSecret?: string;
  readyReplicas?: number;
  lastActivityTime?: string;
  hibernatedAt?: string;
  observedGeneration?: number;
  conditions?: Condition[];
  restore?: CouchInstanceRestoreStatus;
  backupSchedule?: CouchInstanceBackupScheduleStatus;
  usage?: CouchInstanceUsage;
}

export interface CouchInstance {
  apiVersion: typeof SETTEE_API_VERSION;
  kind: typeof COUCH_INSTANCE_KIND;
  metadata: V1ObjectMeta;
  spec: CouchInstanceSpec;
  status?: CouchInstanceStatus;
}

/** Fails the type-check when CouchInstanceStatus and the CRD's status schema name different fields. */
export const STATUS_MATCHES_SCHEMA: SameFields<
  CouchInstanceStatus,
  Infer<typeof COUCH_INSTANCE_STATUS_SCHEMA>
> = true;
