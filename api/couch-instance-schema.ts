import { COUCH_INSTANCE_PHASES } from './couch-instance.js';
import { NEWEST_SUPPORTED_COUCHDB_VERSION } from './couchdb-versions.js';
import { DEFAULT_FREE_ENVELOPE, DEFAULT_INSTANCE_RESOURCES } from './free-envelope.js';
import { QUANTITY_PATTERN } from './quantity.js';

/**
 * The OpenAPI v3 schema of CouchInstance: the CRD's structural schema (crds/couchinstance.yaml is
 * rendered from it) and, compiled by ajv, the operator's re-validation of every spec it reads.
 * Every field carries a description, which is what `kubectl explain` prints.
 */

export type JsonSchema = { [keyword: string]: unknown };

export const DEFAULT_IDLE_AFTER = '15m';
export const DEFAULT_PLAN = 'free';
export const DEFAULT_BACKUP_RETAIN = 7;

/** A DNS subdomain name, as metadata.name: no slash, so no other namespace can be named. */
/** An RFC 3339 time, as Kubernetes writes them (a pattern: the operator's ajv checks it too). */
const RFC3339_PATTERN =
  '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})$';
const NAME_PATTERN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$';

const quantity = (description: string): JsonSchema => ({
  description,
  // A string, not int-or-string: YAML must quote a bare number ("1"). The test control planes install
  // CRDs through a typed client that drops x-kubernetes-* keys, which would leave such a field untyped.
  type: 'string',
  maxLength: 32,
  pattern: QUANTITY_PATTERN,
});

const resourceAmounts = (what: string, defaults: { cpu: string; memory: string }): JsonSchema => ({
  type: 'object',
  description: `${what}. Values left out get the operator's defaults, inside the free envelope.`,
  properties: {
    cpu: quantity(`CPU ${what.toLowerCase()} in cores, such as 500m or "1" (default ${defaults.cpu}).`),
    memory: quantity(`Memory ${what.toLowerCase()}, such as 256Mi or 1Gi (default ${defaults.memory}).`),
  },
});

const timestamp = (description: string): JsonSchema => ({ type: 'string', format: 'date-time', description });
const counted = (description: string): JsonSchema => ({
  type: 'integer',
  format: 'int64',
  minimum: 0,
  description,
});
const DAY_PATTERN = '^[0-9]{4}-[0-9]{2}-[0-9]{2}$';
const meteredSeconds = (description: string): JsonSchema => ({
  type: 'number',
  minimum: 0,
  description: `${description} Cumulative, with millisecond precision.`,
});

export const COUCH_INSTANCE_SPEC_SCHEMA: JsonSchema = {
  type: 'object',
  description: 'The CouchDB instance the tenant asks for.',
  properties: {
    version: {
      type: 'string',
      maxLength: 32,
      description:
        `The CouchDB 3.x release to run, such as ${NEWEST_SUPPORTED_COUCHDB_VERSION}. When left out, the ` +
        `operator's default version (the newest 3.x release it supports, ${NEWEST_SUPPORTED_COUCHDB_VERSION} ` +
        'unless configured otherwise). Other major versions are rejected.',
    },
    image: {
      type: 'string',
      maxLength: 512,
      description:
        'A container image to run instead of the official couchdb:<version>, for private registries. ' +
        'It must hold the CouchDB release named by version.',
    },
    plan: {
      type: 'string',
      enum: ['free', 'paid'],
      default: DEFAULT_PLAN,
      description:
        'free (the default) stays inside the free envelope and hibernates when idle; paid allows the ' +
        'add-ons and keepAlive.',
    },
    keepAlive: {
      type: 'boolean',
      default: false,
      description:
        'The "Keep alive" toggle (the keep-warm add-on): true never hibernates the instance. Requires plan: paid.',
    },
    hibernation: {
      type: 'object',
      description: 'When an idle instance is scaled to zero. Its data is kept; the next request wakes it.',
      default: {},
      properties: {
        idleAfter: {
          type: 'string',
          maxLength: 32,
          default: DEFAULT_IDLE_AFTER,
          description:
            'How long an instance may see no activity before it hibernates, as a duration such as 10s, 15m ' +
            `or 1h (default ${DEFAULT_IDLE_AFTER}, at least 1s). Activity is what the gateway reports (requests, ` +
            'and open long-lived streams such as continuous _changes feeds and replications reading from the ' +
            'instance), and replications the instance runs itself (jobs in its /_scheduler/jobs).',
        },
      },
    },
    storage: {
      type: 'object',
      description:
        'The persistent volume that holds the databases. It is kept while the instance hibernates.',
      properties: {
        size: quantity(
          `Size of the volume, such as 512Mi or 1Gi (default and largest: the free envelope, ` +
            `${DEFAULT_FREE_ENVELOPE.storage}). Larger volumes need plan: paid with addons.largerStorage.`,
        ),
        storageClassName: {
          type: 'string',
          maxLength: 253,
          description:
            "The StorageClass of the volume (default: the cluster's default class). Fixed once the instance exists.",
        },
      },
    },
    addons: {
      type: 'object',
      description: 'Paid add-ons, charged only when turned on. Each requires plan: paid.',
      properties: {
        largerStorage: {
          type: 'object',
          description: 'A volume larger than the free envelope allows.',
          required: ['size'],
          properties: {
            size: quantity('Size of the volume, such as 10Gi; it replaces storage.size.'),
          },
        },
        backups: {
          type: 'object',
          description:
            'Scheduled backups of every database to S3-compatible object storage, as CouchBackup objects. ' +
            'A hibernated instance is not woken for one: it is backed up before it hibernates when its data ' +
            'changed, and a scheduled run that finds it hibernated and unchanged is recorded as skipped.',
          required: ['schedule'],
          properties: {
            schedule: {
              type: 'string',
              maxLength: 128,
              description: 'When to back up, as a five-field cron expression in UTC, such as "0 3 * * *".',
            },
            retain: {
              type: 'integer',
              minimum: 1,
              maximum: 365,
              default: DEFAULT_BACKUP_RETAIN,
              description:
                `How many completed backups to keep (default ${DEFAULT_BACKUP_RETAIN}); older ones are deleted ` +
                'from the bucket once a newer one has completed, never because one failed.',
            },
            storageSecret: {
              type: 'string',
              maxLength: 253,
              pattern: NAME_PATTERN,
              description:
                "Name of a Secret in the instance's own namespace with the instance's own object storage, " +
                "replacing the cluster's: keys bucket, accessKeyId and secretAccessKey, and optionally " +
                'endpoint, region, prefix and forcePathStyle ("true"). Secrets of other namespaces cannot be named.',
            },
          },
        },
        regionPinning: {
          type: 'object',
          description: 'Runs the instance only on nodes of one region.',
          required: ['region'],
          properties: {
            region: {
              type: 'string',
              minLength: 1,
              maxLength: 63,
              pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$',
              description:
                "The region, as nodes' topology.kubernetes.io/region label names it, such as eu-west-1.",
            },
          },
        },
      },
    },
    restore: {
      type: 'object',
      description:
        'Fill this new instance from a backup before it reports Ready (phase Restoring): every database, ' +
        'document (with its revision history), attachment and _security object, checked against the ' +
        "backup's manifest. Name the backup, or an instance (and optionally a time) to take that instance's " +
        'newest Completed backup. The backup is read from the object storage it was written to. The instance ' +
        'gets its own new credentials. Only when the instance is created. A failed try is retried with a ' +
        'doubling delay; a backup that does not exist or is not Completed fails the restore at once.',
      properties: {
        backup: {
          type: 'string',
          minLength: 1,
          maxLength: 253,
          pattern: NAME_PATTERN,
          description:
            "Name of a CouchBackup in this instance's namespace (backups of other namespaces cannot be named). " +
            'Pending or Running: the restore waits for it. Set either backup or instance.',
        },
        instance: {
          type: 'string',
          minLength: 1,
          maxLength: 253,
          pattern: NAME_PATTERN,
          description:
            "Name of a CouchInstance in this instance's namespace whose newest Completed CouchBackup (completed " +
            'before `before`, when set) to restore. When the namespace holds no CouchBackup of it any more (the ' +
            'instance was deleted, and its CouchBackups with it), its newest backup left in object storage, as ' +
            "the backups' manifests there record it, read with this instance's storage settings " +
            "(addons.backups.storageSecret, else the cluster's). Set either backup or instance.",
        },
        before: {
          type: 'string',
          maxLength: 64,
          pattern: RFC3339_PATTERN,
          description:
            'With instance: take the newest backup that completed at or before this time (RFC 3339, such as ' +
            '2026-11-24T03:00:00Z), so all its data is from before it. Left out: the newest backup.',
        },
      },
    },
    resources: {
      type: 'object',
      description:
        "CPU and memory for CouchDB's container. On plan: free they stay inside the free envelope.",
      properties: {
        requests: resourceAmounts('Requests', DEFAULT_INSTANCE_RESOURCES.requests),
        limits: resourceAmounts('Limits', DEFAULT_INSTANCE_RESOURCES.limits),
      },
    },
  },
};

const CONDITION_SCHEMA: JsonSchema = {
  type: 'object',
  description: 'One aspect of the instance, following the Kubernetes API conventions.',
  required: ['type', 'status', 'reason', 'message', 'lastTransitionTime'],
  properties: {
    type: {
      type: 'string',
      maxLength: 316,
      description: 'Ready, Active, Progressing, Degraded or BackedUp.',
    },
    status: { type: 'string', enum: ['True', 'False', 'Unknown'], description: 'True, False or Unknown.' },
    reason: { type: 'string', maxLength: 1024, description: 'Why, as one PascalCase word.' },
    message: { type: 'string', maxLength: 32768, description: 'Why, for a person.' },
    lastTransitionTime: timestamp('When status last changed.'),
    observedGeneration: {
      type: 'integer',
      format: 'int64',
      minimum: 0,
      description: 'The metadata.generation the condition was computed from.',
    },
  },
};

export const COUCH_INSTANCE_STATUS_SCHEMA: JsonSchema = {
  type: 'object',
  description: 'What the operator observed. Written only by the operator.',
  properties: {
    phase: {
      type: 'string',
      enum: [...COUCH_INSTANCE_PHASES],
      description:
        'Pending (objects being created), Starting, Running, Hibernating (scaling to zero), Hibernated ' +
        '(scaled to zero, data kept), Waking (scaling up after a wake request), Restoring (filled from ' +
        'spec.restore before it reports Ready) or Failed (the spec is invalid).',
    },
    endpoint: { type: 'string', description: "The instance's URL at the gateway." },
    credentialsSecret: {
      type: 'string',
      description:
        'Name of the Secret with the admin credentials: keys username, password, and url (the endpoint ' +
        'with the credentials in its userinfo).',
    },
    readyReplicas: { type: 'integer', minimum: 0, description: 'CouchDB replicas that answer (0 or 1).' },
    lastActivityTime: timestamp(
      'The latest activity the gateway reported (or the wake request, or creation).',
    ),
    hibernatedAt: timestamp('When the instance was last hibernated; absent while it is awake.'),
    observedGeneration: {
      type: 'integer',
      format: 'int64',
      minimum: 0,
      description: 'The metadata.generation this status was computed from.',
    },
    restore: {
      type: 'object',
      description: 'How the restore of spec.restore went.',
      properties: {
        backup: {
          type: 'string',
          description:
            'The CouchBackup restored from (for spec.restore.instance, the one it was resolved to).',
        },
        phase: {
          type: 'string',
          enum: ['Restoring', 'Completed', 'Failed'],
          description:
            'Restoring (also while a failed try waits to be retried), Completed (verified against the ' +
            'manifest) or Failed (see message).',
        },
        completedAt: timestamp('When the restore completed or failed.'),
        databases: { type: 'integer', minimum: 0, description: 'Databases restored.' },
        documents: { type: 'integer', format: 'int64', minimum: 0, description: 'Documents restored.' },
        attempts: { type: 'integer', minimum: 0, description: 'Tries so far.' },
        nextAttemptAt: timestamp('When a failed try is tried again.'),
        message: {
          type: 'string',
          description: 'Why it failed, why the last try failed, or what it waits for, for a person.',
        },
      },
    },
    backupSchedule: {
      type: 'object',
      description:
        'With addons.backups: the schedule in force and since when. Scheduled backups are owed from that ' +
        'moment: a schedule turned on or changed later first runs at its next cron time, not at once.',
      properties: {
        schedule: { type: 'string', description: 'addons.backups.schedule as the operator last saw it.' },
        since: timestamp('When the operator first saw this schedule.'),
      },
    },
    usage: {
      type: 'object',
      description:
        'What the instance holds, as the operator last measured it from CouchDB (at a bounded rate, and ' +
        'never by waking a hibernated instance). On plan: free, above the free storage limit the gateway ' +
        'answers writes that add data with 402 while reads, deletes and compaction keep working.',
      properties: {
        storageBytes: {
          type: 'integer',
          format: 'int64',
          minimum: 0,
          description: "Sum of the databases' file sizes as CouchDB reports them (sizes.file), in bytes.",
        },
        databases: {
          type: 'integer',
          minimum: 0,
          description: "Databases in the instance, CouchDB's own (_users, _replicator) not counted.",
        },
        measuredAt: timestamp('When storageBytes and databases were measured.'),
        awakeSeconds: meteredSeconds(
          'Seconds CouchDB ran (or was starting), since the instance was created.',
        ),
        hibernatedSeconds: meteredSeconds('Seconds the instance was hibernated, since it was created.'),
        wakes: {
          type: 'integer',
          format: 'int64',
          minimum: 0,
          description: 'Times the instance was woken from hibernation, since it was created.',
        },
        storageByteHours: {
          type: 'number',
          minimum: 0,
          description:
            'storageBytes integrated over time, in byte-hours (1 GiB kept for a day is 25769803776).',
        },
        addonSeconds: {
          type: 'object',
          description: 'Seconds each paid add-on was on, since the instance was created.',
          properties: {
            keepAlive: meteredSeconds('Seconds keepAlive was true.'),
            largerStorage: meteredSeconds('Seconds addons.largerStorage was set.'),
            backups: meteredSeconds('Seconds addons.backups was set.'),
            regionPinning: meteredSeconds('Seconds addons.regionPinning was set.'),
          },
        },
        meteredAt: timestamp(
          'The moment the metered figures run up to; they move at least every SETTEE_USAGE_METER_INTERVAL and at every wake and hibernation.',
        ),
        requests: {
          type: 'object',
          description:
            "Requests the gateway passed on to the instance since metering began, by class (read, write, query as docs/free-envelope.md defines them), summed over the gateway's replicas; requests the envelope refused are not counted.",
          properties: {
            read: counted('Reads: GET, HEAD and reading POSTs such as _all_docs, _bulk_get, _changes.'),
            write: counted('Writes: document, attachment and database changes, _bulk_docs.'),
            query: counted('Queries: Mango _find and _explain, views.'),
          },
        },
        bytesIn: counted(
          'Request body bytes the gateway passed on (Content-Length, or as a chunked upload streamed), since metering began.',
        ),
        bytesOut: counted('Response body bytes the gateway streamed to clients, since metering began.'),
        today: {
          type: 'object',
          description:
            "The UTC day of the last accrual (date) and the gateway's counts of it so far; kubectl get couch -o wide shows requests as Requests-Today.",
          properties: {
            date: { type: 'string', pattern: DAY_PATTERN, description: 'The UTC day, YYYY-MM-DD.' },
            requests: counted('read + write + query of that day.'),
            read: counted('Reads that day.'),
            write: counted('Writes that day.'),
            query: counted('Queries that day.'),
            bytesIn: counted('Request body bytes that day.'),
            bytesOut: counted('Response body bytes that day.'),
          },
        },
        closedDays: {
          type: 'object',
          description:
            "The gateway's counts of the UTC days already closed (a day closes 15 minutes after it ends); requests, bytesIn and bytesOut are these plus the later days' counts the activity Lease holds.",
          properties: {
            through: {
              type: 'string',
              pattern: DAY_PATTERN,
              description: 'The last closed UTC day, YYYY-MM-DD; counts of it arriving later are not added.',
            },
            read: counted('Reads of the closed days.'),
            write: counted('Writes of the closed days.'),
            query: counted('Queries of the closed days.'),
            bytesIn: counted('Request body bytes of the closed days.'),
            bytesOut: counted('Response body bytes of the closed days.'),
          },
        },
      },
    },
    conditions: {
      type: 'array',
      description:
        'Ready, Active (false while hibernated, which is not a failure), Progressing and Degraded; ' +
        'UsageMeasured (false while the last size measurement failed; the last known usage is kept); with ' +
        'the backups add-on also BackedUp (false when the newest backup failed or the newest good one is ' +
        "older than twice the schedule's period).",
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['type'],
      maxItems: 8,
      items: CONDITION_SCHEMA,
    },
  },
};
