import { ApiException, type KubernetesObject, type V1StatefulSet } from '@kubernetes/client-node';
import type { KubeClients } from '../../../../../kube/clients.js';
import { RecentWrites } from '../../../../../kube/controller-runtime/recent-writes.js';
import type { Informer } from '../../../../../kube/informer.js';
import { OwnedObjects } from '../../../../../operator/controllers/couch-instance/owned-objects.js';
import { withAppliedDigest } from '../../../../../operator/resources/applied-digest.js';
import { createMemoryLogger } from '../../../../helpers/memory-logger.js';

const RBAC_REFUSAL =
  'statefulsets.apps "db" is forbidden: User "system:serviceaccount:settee:operator" cannot patch resource "statefulsets/scale" in API group "apps" in the namespace "t1"';
const WEBHOOK_DENIAL = 'admission webhook "replicas.policy.example" denied the request: replicas are frozen';

/**
 * An API server that stores one StatefulSet, answers its whole applies and refuses every Scale
 * write with a 403 carrying `message`; the informer's cache holds what it stores.
 */
function refusingScales(message: string) {
  let stored: V1StatefulSet | undefined;
  let version = 0;
  const scaleWrites: number[] = [];
  const objects = {
    apply: (desired: KubernetesObject) => {
      version += 1;
      stored = { ...desired, metadata: { ...desired.metadata, resourceVersion: String(version) } };
      return Promise.resolve(structuredClone(stored));
    },
    applyScale: (_object: KubernetesObject, replicas: number) => {
      scaleWrites.push(replicas);
      const body = { kind: 'Status', code: 403, reason: 'Forbidden', message };
      return Promise.reject(new ApiException(403, 'Unsuccessful HTTP Request', body, {}));
    },
  };
  const informer = {
    resource: { kind: 'StatefulSet' },
    get: () => (stored ? structuredClone(stored) : undefined),
    trim: () => undefined,
  } as unknown as Informer<V1StatefulSet>;
  const owned = new OwnedObjects(
    { objects } as unknown as KubeClients,
    new RecentWrites(),
    createMemoryLogger().logger,
  );
  const apply = async (replicas: number) => {
    const desired = withAppliedDigest<V1StatefulSet>({
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: { namespace: 't1', name: 'db' },
      spec: { replicas, serviceName: 'db', selector: {}, template: {} },
    });
    const applied = await owned.apply('t1/db', informer, desired);
    expect(applied.spec?.replicas).toBe(replicas);
  };
  return { apply, scaleWrites };
}

describe('OwnedObjects, a wake or hibernation whose Scale write is refused', () => {
  it('when RBAC refuses patch on statefulsets/scale, then the write is applied whole and the next wake sends no Scale write', async () => {
    const api = refusingScales(RBAC_REFUSAL);
    await api.apply(1);
    await api.apply(0);
    expect(api.scaleWrites).toEqual([0]);
    await api.apply(1);
    expect(api.scaleWrites).toEqual([0]);
  });

  it('when an admission webhook denies the Scale write (403), then that write is applied whole and the next wake tries the Scale again', async () => {
    const api = refusingScales(WEBHOOK_DENIAL);
    await api.apply(1);
    await api.apply(0);
    await api.apply(1);
    expect(api.scaleWrites).toEqual([0, 1]);
  });
});
