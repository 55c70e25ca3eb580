import { ConditionType, type Condition } from '../../api/conditions.js';
import type {
  CouchInstance,
  CouchInstancePhase,
  CouchInstancePlan,
  CouchInstanceSpec,
} from '../../api/couch-instance.js';
import { DEFAULT_FREE_ENVELOPE } from '../../api/free-envelope.js';
import type { Permission } from '../kube/access-review.js';
import type { EventView } from './events.js';

/** One row of the instance list, as the page shows it and the live stream sends it. */
export interface InstanceRow {
  name: string;
  phase: CouchInstancePhase | 'Unknown';
  plan: CouchInstancePlan;
  endpoint: string | null;
  /** The volume size in effect: addons.largerStorage, else storage.size, else the free envelope. */
  size: string;
  keepAlive: boolean;
  idleAfter: string | null;
  /**
   * When the instance last started from zero replicas: the Active condition's last turn to True
   * (first start and every wake). Null while it has never run.
   */
  lastColdStart: string | null;
  createdAt: string | null;
}

/** GET /api/namespaces/:namespace/instances: the rows, and what the user may do with them. */
export interface InstanceList {
  resourceVersion: string;
  items: InstanceRow[];
  permissions: { create: Permission; delete: Permission; watch: Permission };
}

/** GET .../instances/:name: the row and what the detail page shows besides. */
export interface InstanceDetail {
  row: InstanceRow;
  spec: CouchInstanceSpec;
  conditions: Condition[];
  hibernatedAt: string | null;
  lastActivityTime: string | null;
  credentialsSecret: string;
  /** Null when the user may not read the namespace's Events. */
  events: EventView[] | null;
  permissions: { patch: Permission; delete: Permission; readCredentials: Permission };
}

/** GET .../instances/:name/credentials: the admin Secret's values, for the connection snippets. */
export interface InstanceCredentials {
  username: string;
  password: string;
  url: string;
}

export function buildInstanceRow(instance: CouchInstance): InstanceRow {
  const spec = instance.spec ?? {};
  const active = instance.status?.conditions?.find((c) => c.type === ConditionType.Active);
  return {
    name: instance.metadata?.name ?? '',
    phase: instance.status?.phase ?? 'Unknown',
    plan: spec.plan ?? 'free',
    endpoint: instance.status?.endpoint ?? null,
    size: spec.addons?.largerStorage?.size ?? spec.storage?.size ?? DEFAULT_FREE_ENVELOPE.storage,
    keepAlive: spec.keepAlive === true,
    idleAfter: spec.hibernation?.idleAfter ?? null,
    lastColdStart: active?.status === 'True' ? active.lastTransitionTime : null,
    createdAt: instance.metadata?.creationTimestamp ? String(instance.metadata.creationTimestamp) : null,
  };
}

/** What the create form sends; anything else in the body is refused by the schema check. */
export interface CreateInstanceInput {
  name: string;
  plan: CouchInstancePlan;
  idleAfter?: string;
  keepAlive?: boolean;
  addons?: {
    largerStorage?: { size: string };
    backups?: { schedule: string; retain?: number };
    regionPinning?: { region: string };
  };
}

/** The CouchInstance the create form asks for; the API server's schema and CEL rules judge it. */
export function buildCouchInstance(namespace: string, input: CreateInstanceInput): CouchInstance {
  return {
    apiVersion: 'settee.dev/v1alpha1',
    kind: 'CouchInstance',
    metadata: { name: input.name, namespace },
    spec: {
      plan: input.plan,
      ...(input.keepAlive !== undefined ? { keepAlive: input.keepAlive } : {}),
      ...(input.idleAfter !== undefined ? { hibernation: { idleAfter: input.idleAfter } } : {}),
      ...(input.addons !== undefined && Object.keys(input.addons).length > 0 ? { addons: input.addons } : {}),
    },
  };
}
