import { NEWEST_SUPPORTED_COUCHDB_VERSION } from './couchdb-versions.js';
import { boolean, integer, object, OBJECT_NAME_PATTERN, string, stringEnum } from './crd-schema.js';
import { DEFAULT_FREE_ENVELOPE, DEFAULT_INSTANCE_RESOURCES } from './free-envelope.js';
import { QUANTITY_PATTERN } from './quantity.js';

/**
 * The OpenAPI v3 schema of CouchInstance's spec: the CRD's structural schema (crds/couchinstance.yaml
 * is rendered from it), the source of the spec's TypeScript types (couch-instance.ts), of
 * docs/crds.md and, compiled by ajv, of the operator's re-validation of every spec it reads. Every
 * field carries a description, which is what `kubectl explain` prints.
 */

export const DEFAULT_IDLE_AFTER = '15m';
export const DEFAULT_PLAN = 'free';
export const DEFAULT_BACKUP_RETAIN = 7;
export const COUCH_INSTANCE_PLANS = ['free', 'paid'] as const;

/** An RFC 3339 time, as Kubernetes writes them (a pattern: the operator's ajv checks it too). */
const RFC3339_PATTERN =
  '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})$';

const quantity = (description: string) =>
  // A string, not int-or-string: YAML must quote a bare number ("1"). The test control planes install
  // CRDs through a typed client that drops x-kubernetes-* keys, which would leave such a field untyped.
  string({ description, maxLength: 32, pattern: QUANTITY_PATTERN });

const resourceAmounts = (what: string, defaults: { cpu: string; memory: string }) =>
  object({
    description: `${what}. Values left out get the operator's defaults, inside the free envelope.`,
    properties: {
      cpu: quantity(`CPU ${what.toLowerCase()} in cores, such as 500m or "1" (default ${defaults.cpu}).`),
      memory: quantity(`Memory ${what.toLowerCase()}, such as 256Mi or 1Gi (default ${defaults.memory}).`),
    },
  });

export const RESOURCE_REQUIREMENTS_SCHEMA = object({
  description: "CPU and memory for CouchDB's container. On plan: free they stay inside the free envelope.",
  properties: {
    requests: resourceAmounts('Requests', DEFAULT_INSTANCE_RESOURCES.requests),
    limits: resourceAmounts('Limits', DEFAULT_INSTANCE_RESOURCES.limits),
  },
});

export const COUCH_INSTANCE_ADDONS_SCHEMA = object({
  description: 'Paid add-ons, charged only when turned on. Each requires plan: paid.',
  properties: {
    largerStorage: object({
      description: 'A volume larger than the free envelope allows.',
      required: ['size'],
      properties: {
        size: quantity('Size of the volume, such as 10Gi; it replaces storage.size.'),
      },
    }),
    backups: object({
      description:
        'Scheduled backups of every database to S3-compatible object storage, as CouchBackup objects. ' +
        'A hibernated instance is not woken for one: it is backed up before it hibernates when its data ' +
        'changed, and a scheduled run that finds it hibernated and unchanged is recorded as skipped.',
      required: ['schedule'],
      properties: {
        schedule: string({
          maxLength: 128,
          description: 'When to back up, as a five-field cron expression in UTC, such as "0 3 * * *".',
        }),
        retain: integer({
          minimum: 1,
          maximum: 365,
          default: DEFAULT_BACKUP_RETAIN,
          description:
            `How many completed backups to keep (default ${DEFAULT_BACKUP_RETAIN}); older ones are deleted ` +
            'from the bucket once a newer one has completed, never because one failed.',
        }),
        storageSecret: string({
          maxLength: 253,
          pattern: OBJECT_NAME_PATTERN,
          description:
            "Name of a Secret in the instance's own namespace with the instance's own object storage, " +
            "replacing the cluster's: keys bucket, accessKeyId and secretAccessKey, and optionally " +
            'endpoint, region, prefix and forcePathStyle ("true"). Secrets of other namespaces cannot be named.',
        }),
      },
    }),
    regionPinning: object({
      description: 'Runs the instance only on nodes of one region.',
      required: ['region'],
      properties: {
        region: string({
          minLength: 1,
          maxLength: 63,
          pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$',
          description:
            "The region, as nodes' topology.kubernetes.io/region label names it, such as eu-west-1.",
        }),
      },
    }),
  },
});

export const COUCH_INSTANCE_RESTORE_SCHEMA = object({
  description:
    'Fill this new instance from a backup before it reports Ready (phase Restoring): every database, ' +
    'document (with its revision history), attachment and _security object, checked against the ' +
    "backup's manifest. Name the backup, or an instance (and optionally a time) to take that instance's " +
    'newest Completed backup. The backup is read from the object storage it was written to. The instance ' +
    'gets its own new credentials. Only when the instance is created. A failed try is retried with a ' +
    'doubling delay; a backup that does not exist or is not Completed fails the restore at once.',
  properties: {
    backup: string({
      minLength: 1,
      maxLength: 253,
      pattern: OBJECT_NAME_PATTERN,
      description:
        "Name of a CouchBackup in this instance's namespace (backups of other namespaces cannot be named). " +
        'Pending or Running: the restore waits for it. Set either backup or instance.',
    }),
    instance: string({
      minLength: 1,
      maxLength: 253,
      pattern: OBJECT_NAME_PATTERN,
      description:
        "Name of a CouchInstance in this instance's namespace whose newest Completed CouchBackup (completed " +
        'before `before`, when set) to restore. When the namespace holds no CouchBackup of it any more (the ' +
        'instance was deleted, and its CouchBackups with it), its newest backup left in object storage, as ' +
        "the backups' manifests there record it, read with this instance's storage settings " +
        "(addons.backups.storageSecret, else the cluster's). Set either backup or instance.",
    }),
    before: string({
      maxLength: 64,
      pattern: RFC3339_PATTERN,
      description:
        'With instance: take the newest backup that completed at or before this time (RFC 3339, such as ' +
        '2026-11-24T03:00:00Z), so all its data is from before it. Left out: the newest backup.',
    }),
  },
});

export const COUCH_INSTANCE_SPEC_SCHEMA = object({
  description: 'The CouchDB instance the tenant asks for.',
  properties: {
    version: string({
      maxLength: 32,
      description:
        `The CouchDB 3.x release to run, such as ${NEWEST_SUPPORTED_COUCHDB_VERSION}. When left out, the ` +
        `operator's default version (the newest 3.x release it supports, ${NEWEST_SUPPORTED_COUCHDB_VERSION} ` +
        'unless configured otherwise). Other major versions are rejected.',
    }),
    image: string({
      maxLength: 512,
      description:
        'A container image to run instead of the official couchdb:<version>, for private registries. ' +
        'It must hold the CouchDB release named by version.',
    }),
    plan: stringEnum(COUCH_INSTANCE_PLANS, {
      default: DEFAULT_PLAN,
      description:
        'free (the default) stays inside the free envelope and hibernates when idle; paid allows the ' +
        'add-ons and keepAlive.',
    }),
    keepAlive: boolean({
      default: false,
      description:
        'The "Keep alive" toggle (the keep-warm add-on): true never hibernates the instance. Requires plan: paid.',
    }),
    hibernation: object({
      description: 'When an idle instance is scaled to zero. Its data is kept; the next request wakes it.',
      default: {},
      properties: {
        idleAfter: string({
          maxLength: 32,
          default: DEFAULT_IDLE_AFTER,
          description:
            'How long an instance may see no activity before it hibernates, as a duration such as 10s, 15m ' +
            `or 1h (default ${DEFAULT_IDLE_AFTER}, at least 1s). Activity is what the gateway reports (requests, ` +
            'and open long-lived streams such as continuous _changes feeds and replications reading from the ' +
            'instance), and replications the instance runs itself (jobs in its /_scheduler/jobs).',
        }),
      },
    }),
    storage: object({
      description:
        'The persistent volume that holds the databases. It is kept while the instance hibernates.',
      properties: {
        size: quantity(
          `Size of the volume, such as 512Mi or 1Gi (default and largest: the free envelope, ` +
            `${DEFAULT_FREE_ENVELOPE.storage}). Larger volumes need plan: paid with addons.largerStorage.`,
        ),
        storageClassName: string({
          maxLength: 253,
          description:
            "The StorageClass of the volume (default: the cluster's default class). Fixed once the instance exists.",
        }),
      },
    }),
    addons: COUCH_INSTANCE_ADDONS_SCHEMA,
    restore: COUCH_INSTANCE_RESTORE_SCHEMA,
    resources: RESOURCE_REQUIREMENTS_SCHEMA,
  },
});
