import type { KubernetesObject } from '@kubernetes/client-node';
import { isSpecOrMetadataChange } from '../../../../kube/controller-runtime/predicates.js';

function object(
  metadata: KubernetesObject['metadata'],
  status?: unknown,
): KubernetesObject & { status?: unknown } {
  return {
    apiVersion: 'settee.dev/v1alpha1',
    kind: 'CouchInstance',
    metadata: { name: 'a', namespace: 'ns', ...metadata },
    status,
  };
}

describe('isSpecOrMetadataChange', () => {
  const before = object(
    { generation: 3, annotations: { x: '1' }, labels: { app: 'couch' }, resourceVersion: '10' },
    { phase: 'Running' },
  );

  it('when only status and resourceVersion changed, then the update is ignored', () => {
    const after = object(
      { generation: 3, annotations: { x: '1' }, labels: { app: 'couch' }, resourceVersion: '11' },
      { phase: 'Hibernated' },
    );
    expect(isSpecOrMetadataChange(before, after)).toBe(false);
  });

  it('when the generation moved (a spec change), then the update passes', () => {
    expect(isSpecOrMetadataChange(before, object({ ...before.metadata, generation: 4 }))).toBe(true);
  });

  it('when an annotation was added or changed, then the update passes', () => {
    expect(isSpecOrMetadataChange(before, object({ ...before.metadata, annotations: { x: '2' } }))).toBe(
      true,
    );
    expect(
      isSpecOrMetadataChange(
        before,
        object({ ...before.metadata, annotations: { x: '1', 'settee.dev/wake-requested': 'now' } }),
      ),
    ).toBe(true);
  });

  it('when a label changed, then the update passes', () => {
    expect(isSpecOrMetadataChange(before, object({ ...before.metadata, labels: {} }))).toBe(true);
  });

  it('when deletion started or finalizers changed, then the update passes', () => {
    expect(
      isSpecOrMetadataChange(before, object({ ...before.metadata, deletionTimestamp: new Date() })),
    ).toBe(true);
    expect(
      isSpecOrMetadataChange(before, object({ ...before.metadata, finalizers: ['settee.dev/cleanup'] })),
    ).toBe(true);
  });

  it('when the previous object is unknown, then the update passes', () => {
    expect(isSpecOrMetadataChange(undefined, before)).toBe(true);
  });
});
