import type { CouchInstancePlan, CouchInstanceSpec } from '../../../api/couch-instance.js';
import { DEFAULT_IDLE_AFTER } from '../../../api/couch-instance-schema.js';
import { officialCouchDbImage } from '../../../api/couchdb-versions.js';
import { parseDuration } from '../../../api/duration.js';
import { compareQuantities } from '../../../api/quantity.js';

/** What the operator fills in where a spec says nothing (from its configuration). */
export interface InstanceDefaults {
  version: string;
  storageSize: string;
  resources: {
    requests: { cpu: string; memory: string };
    limits: { cpu: string; memory: string };
  };
}

/** A spec with every default applied: what the builders and the hibernation decision work from. */
export interface ResolvedCouchInstanceSpec {
  version: string;
  image: string;
  plan: CouchInstancePlan;
  keepAlive: boolean;
  idleAfterMs: number;
  storage: { size: string; storageClassName?: string };
  /** topology.kubernetes.io/region the pod must run in, when pinned. */
  region?: string;
  resources: {
    requests: { cpu: string; memory: string };
    limits: { cpu: string; memory: string };
  };
}

const min = (a: string, b: string): string => (compareQuantities(a, b) <= 0 ? a : b);
const max = (a: string, b: string): string => (compareQuantities(a, b) >= 0 ? a : b);

/**
 * A default must never produce requests above limits: a tenant who sets only a limit below the
 * default request gets a request equal to that limit, and the reverse for a request alone.
 */
function resolveResource(
  spec: CouchInstanceSpec,
  defaults: InstanceDefaults,
  resource: 'cpu' | 'memory',
): { request: string; limit: string } {
  const request = spec.resources?.requests?.[resource];
  const limit = spec.resources?.limits?.[resource];
  const resolvedRequest =
    request ?? min(defaults.resources.requests[resource], limit ?? defaults.resources.limits[resource]);
  return {
    request: resolvedRequest,
    limit: limit ?? max(defaults.resources.limits[resource], resolvedRequest),
  };
}

/**
 * Applies defaults. The API server's schema defaults plan, keepAlive and idleAfter already; they
 * are applied here too so an object stored before those defaults existed behaves the same.
 */
export function resolveSpec(spec: CouchInstanceSpec, defaults: InstanceDefaults): ResolvedCouchInstanceSpec {
  const version = spec.version ?? defaults.version;
  const cpu = resolveResource(spec, defaults, 'cpu');
  const memory = resolveResource(spec, defaults, 'memory');
  const storageClassName = spec.storage?.storageClassName;
  const region = spec.addons?.regionPinning?.region;
  return {
    version,
    image: spec.image ?? officialCouchDbImage(version),
    plan: spec.plan ?? 'free',
    keepAlive: spec.keepAlive ?? false,
    idleAfterMs: parseDuration(spec.hibernation?.idleAfter ?? DEFAULT_IDLE_AFTER),
    storage: {
      size: spec.addons?.largerStorage?.size ?? spec.storage?.size ?? defaults.storageSize,
      ...(storageClassName ? { storageClassName } : {}),
    },
    ...(region ? { region } : {}),
    resources: {
      requests: { cpu: cpu.request, memory: memory.request },
      limits: { cpu: cpu.limit, memory: memory.limit },
    },
  };
}
