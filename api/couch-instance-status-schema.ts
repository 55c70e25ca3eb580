import { array, integer, number, object, string, stringEnum } from './crd-schema.js';

/**
 * The OpenAPI v3 schema of CouchInstance's status, which only the operator writes: the CRD's
 * structural schema (crds/couchinstance.yaml), what `kubectl explain couch.status` prints and
 * docs/crds.md lists, and what couch-instance.ts's status types are checked against.
 */

export const COUCH_INSTANCE_PHASES = [
  'Pending',
  'Starting',
  'Running',
  'Hibernating',
  'Hibernated',
  'Waking',
  'Restoring',
  'Failed',
] as const;

export const RESTORE_PHASES = ['Restoring', 'Completed', 'Failed'] as const;

const timestamp = (description: string) => string({ format: 'date-time', description });
const counted = (description: string) => integer({ format: 'int64', minimum: 0, description });
const DAY_PATTERN = '^[0-9]{4}-[0-9]{2}-[0-9]{2}$';
const meteredSeconds = (description: string) =>
  number({ minimum: 0, description: `${description} Cumulative, with millisecond precision.` });

const CONDITION_SCHEMA = object({
  description: 'One aspect of the instance, following the Kubernetes API conventions.',
  required: ['type', 'status', 'reason', 'message', 'lastTransitionTime'],
  properties: {
    type: string({ maxLength: 316, description: 'Ready, Active, Progressing, Degraded or BackedUp.' }),
    status: stringEnum(['True', 'False', 'Unknown'], { description: 'True, False or Unknown.' }),
    reason: string({ maxLength: 1024, description: 'Why, as one PascalCase word.' }),
    message: string({ maxLength: 32768, description: 'Why, for a person.' }),
    lastTransitionTime: timestamp('When status last changed.'),
    observedGeneration: integer({
      format: 'int64',
      minimum: 0,
      description: 'The metadata.generation the condition was computed from.',
    }),
  },
});

export const COUCH_INSTANCE_STATUS_SCHEMA = object({
  description: 'What the operator observed. Written only by the operator.',
  properties: {
    phase: stringEnum(COUCH_INSTANCE_PHASES, {
      description:
        'Pending (objects being created), Starting, Running, Hibernating (scaling to zero), Hibernated ' +
        '(scaled to zero, data kept), Waking (scaling up after a wake request), Restoring (filled from ' +
        'spec.restore before it reports Ready) or Failed (the spec is invalid).',
    }),
    endpoint: string({ description: "The instance's URL at the gateway." }),
    credentialsSecret: string({
      description:
        'Name of the Secret with the admin credentials: keys username, password, and url (the endpoint ' +
        'with the credentials in its userinfo).',
    }),
    readyReplicas: integer({ minimum: 0, description: 'CouchDB replicas that answer (0 or 1).' }),
    lastActivityTime: timestamp(
      'The latest activity the gateway reported (or the wake request, or creation).',
    ),
    hibernatedAt: timestamp('When the instance was last hibernated; absent while it is awake.'),
    observedGeneration: integer({
      format: 'int64',
      minimum: 0,
      description: 'The metadata.generation this status was computed from.',
    }),
    restore: object({
      description: 'How the restore of spec.restore went.',
      properties: {
        backup: string({
          description:
            'The CouchBackup restored from (for spec.restore.instance, the one it was resolved to).',
        }),
        phase: stringEnum(RESTORE_PHASES, {
          description:
            'Restoring (also while a failed try waits to be retried), Completed (verified against the ' +
            'manifest) or Failed (see message).',
        }),
        completedAt: timestamp('When the restore completed or failed.'),
        databases: integer({ minimum: 0, description: 'Databases restored.' }),
        documents: integer({ format: 'int64', minimum: 0, description: 'Documents restored.' }),
        attempts: integer({ minimum: 0, description: 'Tries so far.' }),
        nextAttemptAt: timestamp('When a failed try is tried again.'),
        message: string({
          description: 'Why it failed, why the last try failed, or what it waits for, for a person.',
        }),
      },
    }),
    backupSchedule: object({
      description:
        'With addons.backups: the schedule in force and since when. Scheduled backups are owed from that ' +
        'moment: a schedule turned on or changed later first runs at its next cron time, not at once.',
      properties: {
        schedule: string({ description: 'addons.backups.schedule as the operator last saw it.' }),
        since: timestamp('When the operator first saw this schedule.'),
      },
    }),
    usage: object({
      description:
        'What the instance holds, as the operator last measured it from CouchDB (at a bounded rate, and ' +
        'never by waking a hibernated instance). On plan: free, above the free storage limit the gateway ' +
        'answers writes that add data with 402 while reads, deletes and compaction keep working.',
      properties: {
        storageBytes: integer({
          format: 'int64',
          minimum: 0,
          description: "Sum of the databases' file sizes as CouchDB reports them (sizes.file), in bytes.",
        }),
        databases: integer({
          minimum: 0,
          description: "Databases in the instance, CouchDB's own (_users, _replicator) not counted.",
        }),
        measuredAt: timestamp('When storageBytes and databases were measured.'),
        awakeSeconds: meteredSeconds(
          'Seconds CouchDB ran (or was starting), since the instance was created.',
        ),
        hibernatedSeconds: meteredSeconds('Seconds the instance was hibernated, since it was created.'),
        wakes: integer({
          format: 'int64',
          minimum: 0,
          description: 'Times the instance was woken from hibernation, since it was created.',
        }),
        storageByteHours: number({
          minimum: 0,
          description:
            'storageBytes integrated over time, in byte-hours (1 GiB kept for a day is 25769803776).',
        }),
        addonSeconds: object({
          description: 'Seconds each paid add-on was on, since the instance was created.',
          properties: {
            keepAlive: meteredSeconds('Seconds keepAlive was true.'),
            largerStorage: meteredSeconds('Seconds addons.largerStorage was set.'),
            backups: meteredSeconds('Seconds addons.backups was set.'),
            regionPinning: meteredSeconds('Seconds addons.regionPinning was set.'),
          },
        }),
        meteredAt: timestamp(
          'The moment the metered figures run up to; they move at least every SETTEE_USAGE_METER_INTERVAL and at every wake and hibernation.',
        ),
        requests: object({
          description:
            "Requests the gateway passed on to the instance since metering began, by class (read, write, query as docs/free-envelope.md defines them), summed over the gateway's replicas; requests the envelope refused are not counted.",
          properties: {
            read: counted('Reads: GET, HEAD and reading POSTs such as _all_docs, _bulk_get, _changes.'),
            write: counted('Writes: document, attachment and database changes, _bulk_docs.'),
            query: counted('Queries: Mango _find and _explain, views.'),
          },
        }),
        bytesIn: counted(
          'Request body bytes the gateway passed on (Content-Length, or as a chunked upload streamed), since metering began.',
        ),
        bytesOut: counted('Response body bytes the gateway streamed to clients, since metering began.'),
        today: object({
          description:
            "The UTC day of the last accrual (date) and the gateway's counts of it so far; kubectl get couch -o wide shows requests as Requests-Today.",
          properties: {
            date: string({ pattern: DAY_PATTERN, description: 'The UTC day, YYYY-MM-DD.' }),
            requests: counted('read + write + query of that day.'),
            read: counted('Reads that day.'),
            write: counted('Writes that day.'),
            query: counted('Queries that day.'),
            bytesIn: counted('Request body bytes that day.'),
            bytesOut: counted('Response body bytes that day.'),
          },
        }),
        closedDays: object({
          description:
            "The gateway's counts of the UTC days already closed (a day closes 15 minutes after it ends); requests, bytesIn and bytesOut are these plus the later days' counts the activity Lease holds.",
          properties: {
            through: string({
              pattern: DAY_PATTERN,
              description: 'The last closed UTC day, YYYY-MM-DD; counts of it arriving later are not added.',
            }),
            read: counted('Reads of the closed days.'),
            write: counted('Writes of the closed days.'),
            query: counted('Queries of the closed days.'),
            bytesIn: counted('Request body bytes of the closed days.'),
            bytesOut: counted('Response body bytes of the closed days.'),
          },
        }),
      },
    }),
    conditions: array(CONDITION_SCHEMA, {
      description:
        'Ready, Active (false while hibernated, which is not a failure), Progressing and Degraded; ' +
        'UsageMeasured (false while the last size measurement failed; the last known usage is kept); with ' +
        'the backups add-on also BackedUp (false when the newest backup failed or the newest good one is ' +
        "older than twice the schedule's period).",
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['type'],
      maxItems: 8,
    }),
  },
});
