import {
  isSupportedCouchDbVersion,
  NEWEST_SUPPORTED_COUCHDB_VERSION,
} from '../../../api/couchdb-versions.js';
import {
  DEFAULT_FREE_ENVELOPE,
  DEFAULT_FREE_LIMITS,
  DEFAULT_INSTANCE_RESOURCES,
  type FreeEnvelope,
} from '../../../api/free-envelope.js';
import { compareQuantities, isQuantity } from '../../../api/quantity.js';
import type { EnvReader } from '../../../observability/env-reader.js';
import { DEFAULT_START_DEADLINE_MS } from './hibernation.js';

/** The couch-instance controller's section of the operator's configuration. */
export interface CouchInstanceConfig {
  /**
   * SETTEE_ENDPOINT_TEMPLATE (`http://127.0.0.1:8080/db/{namespace}/{name}`): an instance's URL at the
   * gateway, written to status.endpoint; `https://{name}.{namespace}.<domain>` in a cluster.
   */
  readonly endpointTemplate: string;
  /** SETTEE_COUCHDB_DEFAULT_VERSION (3.5.1): the version of instances whose spec names none; a 3.x release. */
  readonly defaultVersion: string;
  /** SETTEE_COUCHDB_VENDOR_NAME (Settee): `vendor.name` in every instance's root document. */
  readonly vendorName: string;
  /**
   * SETTEE_FREE_STORAGE (1Gi), SETTEE_FREE_CPU (1), SETTEE_FREE_MEMORY (1Gi): the free envelope. The
   * CRD's rules carry the defaults; a narrower envelope here is enforced by the operator (Degraded).
   */
  readonly freeEnvelope: FreeEnvelope;
  /**
   * SETTEE_FREE_INSTANCES_PER_NAMESPACE (5): free instances a namespace may hold; the operator
   * leaves the next one uncreated (Pending, Degraded InstanceLimitExceeded, a Warning Event) until
   * there is room. For namespaces without the chart's ResourceQuota, which refuses the create itself.
   */
  readonly freeInstancesPerNamespace: number;
  /**
   * SETTEE_DEFAULT_CPU_REQUEST (100m), SETTEE_DEFAULT_MEMORY_REQUEST (256Mi), SETTEE_DEFAULT_CPU_LIMIT
   * (500m), SETTEE_DEFAULT_MEMORY_LIMIT (512Mi): resources an instance gets where its spec says
   * nothing; inside the free envelope. Storage defaults to the envelope's.
   */
  readonly defaultResources: {
    readonly requests: { readonly cpu: string; readonly memory: string };
    readonly limits: { readonly cpu: string; readonly memory: string };
  };
  /**
   * SETTEE_REPLICATION_CHECK_TIMEOUT (2s): how long an idle instance may take to say whether
   * replication jobs run (GET /_scheduler/jobs) before it is hibernated as if none did.
   */
  readonly replicationCheckTimeoutMs: number;
  /**
   * SETTEE_USAGE_MEASURE_INTERVAL (1m): how often a running instance's stored data is measured
   * (status.usage, which the gateway's storage limit reads); 1s at least. Hibernated instances are
   * never woken for it.
   */
  readonly usageMeasureIntervalMs: number;
  /**
   * SETTEE_START_DEADLINE (10m): how long an instance may be starting or waking without CouchDB
   * answering (its pod unschedulable, its engine crash-looping) before its status and a Warning
   * Event say StartDeadlineExceeded with the cause (start-deadline.ts). It stays up.
   */
  readonly startDeadlineMs: number;
  /** SETTEE_START_DEADLINE as written, for messages. */
  readonly startDeadline: string;
  /** SETTEE_USAGE_MEASURE_TIMEOUT (5s): deadline of each request of a measurement. */
  readonly usageMeasureTimeoutMs: number;
  /**
   * SETTEE_USAGE_METER_INTERVAL (5m): between phase changes, how often the metered figures of
   * status.usage (awake and hibernated seconds, storage byte-hours, add-on seconds) move; 1s at
   * least. Transitions (a wake, a hibernation) are booked when they happen.
   */
  readonly usageMeterIntervalMs: number;
}

const ENDPOINT_PLACEHOLDERS = ['{name}', '{namespace}'];

export function readCouchInstanceConfig(read: EnvReader): CouchInstanceConfig {
  const quantity = (name: string, fallback: string): string => {
    const value = read.string(name, fallback);
    if (isQuantity(value)) return value;
    read.problem(`${name}=${value}: expected a Kubernetes quantity such as 500m, 256Mi or 1Gi`);
    return fallback;
  };

  const endpointTemplate = read.string(
    'SETTEE_ENDPOINT_TEMPLATE',
    'http://127.0.0.1:8080/db/{namespace}/{name}',
  );
  if (
    !ENDPOINT_PLACEHOLDERS.every((placeholder) => endpointTemplate.includes(placeholder)) ||
    !URL.canParse(endpointTemplate)
  )
    read.problem(
      `SETTEE_ENDPOINT_TEMPLATE=${endpointTemplate}: expected a URL containing {name} and {namespace}`,
    );

  const defaultVersion = read.string('SETTEE_COUCHDB_DEFAULT_VERSION', NEWEST_SUPPORTED_COUCHDB_VERSION);
  if (!isSupportedCouchDbVersion(defaultVersion))
    read.problem(
      `SETTEE_COUCHDB_DEFAULT_VERSION=${defaultVersion}: expected a CouchDB 3.x release such as 3.5.1`,
    );

  const freeEnvelope: FreeEnvelope = {
    storage: quantity('SETTEE_FREE_STORAGE', DEFAULT_FREE_ENVELOPE.storage),
    cpu: quantity('SETTEE_FREE_CPU', DEFAULT_FREE_ENVELOPE.cpu),
    memory: quantity('SETTEE_FREE_MEMORY', DEFAULT_FREE_ENVELOPE.memory),
  };
  const defaultResources = {
    requests: {
      cpu: quantity('SETTEE_DEFAULT_CPU_REQUEST', DEFAULT_INSTANCE_RESOURCES.requests.cpu),
      memory: quantity('SETTEE_DEFAULT_MEMORY_REQUEST', DEFAULT_INSTANCE_RESOURCES.requests.memory),
    },
    limits: {
      cpu: quantity('SETTEE_DEFAULT_CPU_LIMIT', DEFAULT_INSTANCE_RESOURCES.limits.cpu),
      memory: quantity('SETTEE_DEFAULT_MEMORY_LIMIT', DEFAULT_INSTANCE_RESOURCES.limits.memory),
    },
  };
  for (const resource of ['cpu', 'memory'] as const) {
    const { requests, limits } = defaultResources;
    if (compareQuantities(requests[resource], limits[resource]) > 0)
      read.problem(
        `the default ${resource} request (${requests[resource]}) exceeds the default limit (${limits[resource]})`,
      );
    if (compareQuantities(limits[resource], freeEnvelope[resource]) > 0)
      read.problem(
        `the default ${resource} limit (${limits[resource]}) is outside the free envelope (${freeEnvelope[resource]})`,
      );
  }

  return {
    endpointTemplate,
    defaultVersion,
    vendorName: read.string('SETTEE_COUCHDB_VENDOR_NAME', 'Settee'),
    freeEnvelope,
    freeInstancesPerNamespace: read.integer(
      'SETTEE_FREE_INSTANCES_PER_NAMESPACE',
      DEFAULT_FREE_LIMITS.instancesPerNamespace,
      { min: 1, max: 1_000_000 },
    ),
    defaultResources,
    replicationCheckTimeoutMs: read.durationMs('SETTEE_REPLICATION_CHECK_TIMEOUT', 2_000, { minMs: 1 }),
    usageMeasureIntervalMs: read.durationMs('SETTEE_USAGE_MEASURE_INTERVAL', 60_000, { minMs: 1_000 }),
    usageMeasureTimeoutMs: read.durationMs('SETTEE_USAGE_MEASURE_TIMEOUT', 5_000, { minMs: 1 }),
    startDeadlineMs: read.durationMs('SETTEE_START_DEADLINE', DEFAULT_START_DEADLINE_MS, { minMs: 1_000 }),
    startDeadline: read.string('SETTEE_START_DEADLINE', '10m'),
    usageMeterIntervalMs: read.durationMs('SETTEE_USAGE_METER_INTERVAL', 300_000, { minMs: 1_000 }),
  };
}
