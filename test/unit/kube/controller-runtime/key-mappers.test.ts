import type { KubernetesObject } from '@kubernetes/client-node';
import { ownerKeys, ownKey } from '../../../../kube/controller-runtime/key-mappers.js';
import { objectKey, parseObjectKey } from '../../../../kube/controller-runtime/object-key.js';

const COUCH = { apiVersion: 'settee.dev/v1alpha1', kind: 'CouchInstance' };

function owned(metadata: KubernetesObject['metadata']): KubernetesObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { namespace: 'tenant', name: 'db1', ...metadata },
  };
}

describe('key mappers', () => {
  it('when an object maps to itself, then its key is namespace/name', () => {
    expect(ownKey(owned({}))).toEqual(['tenant/db1']);
  });

  it('when an owned object has a controller reference to the owner kind, then it maps to the owner', () => {
    const statefulSet = owned({
      ownerReferences: [
        { apiVersion: 'v1', kind: 'ConfigMap', name: 'other', uid: '1' },
        {
          apiVersion: 'settee.dev/v1alpha1',
          kind: 'CouchInstance',
          name: 'shop',
          uid: '2',
          controller: true,
        },
      ],
    });
    expect(ownerKeys(COUCH)(statefulSet)).toEqual(['tenant/shop']);
  });

  it('when the owner reference names another version of the same group, then it still maps', () => {
    const statefulSet = owned({
      ownerReferences: [
        { apiVersion: 'settee.dev/v1beta1', kind: 'CouchInstance', name: 'shop', uid: '2', controller: true },
      ],
    });
    expect(ownerKeys(COUCH)(statefulSet)).toEqual(['tenant/shop']);
  });

  it('when there is no controller reference, then the settee.dev/instance label names the owner', () => {
    const lease = owned({ labels: { 'settee.dev/instance': 'shop' } });
    expect(ownerKeys(COUCH)(lease)).toEqual(['tenant/shop']);
  });

  it('when the reference is to another kind, or not the controller, and there is no label, then it maps to nothing', () => {
    const foreign = owned({
      ownerReferences: [
        { apiVersion: 'apps/v1', kind: 'Deployment', name: 'x', uid: '1', controller: true },
        { apiVersion: 'settee.dev/v1alpha1', kind: 'CouchInstance', name: 'shop', uid: '2' },
      ],
    });
    expect(ownerKeys(COUCH)(foreign)).toEqual([]);
  });

  it('when a key is built and parsed, then namespace and name round-trip, and a cluster-scoped key has no namespace', () => {
    expect(parseObjectKey(objectKey({ namespace: 'ns', name: 'a' }))).toEqual({ namespace: 'ns', name: 'a' });
    expect(parseObjectKey(objectKey({ name: 'node-1' }))).toEqual({ name: 'node-1' });
  });
});
