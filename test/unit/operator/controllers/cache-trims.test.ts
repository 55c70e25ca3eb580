import type { V1Pod } from '@kubernetes/client-node';
import { podAddress } from '../../../../api/pod-address.js';
import { unschedulableMessage } from '../../../../api/pod-scheduling.js';
import { appliedDigestOf } from '../../../../operator/resources/applied-digest.js';
import { resolveSpec } from '../../../../operator/resources/couch-instance/resolved-spec.js';
import { buildStatefulSet, claimShapeOf } from '../../../../operator/resources/couch-instance/statefulset.js';
import { notReadyCauseOf } from '../../../../operator/controllers/couch-instance/not-ready-cause.js';
import {
  OPERATOR_CACHE_TRIMS,
  trimPod,
  trimStatefulSet,
} from '../../../../operator/controllers/cache-trims.js';
import { LAST_APPLIED_ANNOTATION, trimKey, trimObject } from '../../../../kube/object-trim.js';
import { buildTestInstance, TEST_DEFAULTS } from '../resources/couch-instance/fixtures.js';

const statefulSet = () => {
  const instance = buildTestInstance({ plan: 'free' });
  const built = buildStatefulSet({
    instance,
    spec: resolveSpec(instance.spec, TEST_DEFAULTS),
    replicas: 1,
    configDigest: 'c0ffee',
    existingClaim: { size: '2Gi', storageClassName: 'fast' },
  });
  return { ...built, status: { replicas: 1, readyReplicas: 1, availableReplicas: 1 } };
};

/** The instance's pod as the StatefulSet controller, the scheduler and the kubelet leave it. */
const pod = (status: V1Pod['status'], nodeName?: string): V1Pod => {
  const template = statefulSet().spec?.template;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { ...template?.metadata, name: 'db-0', namespace: 'ns' },
    spec: {
      ...template?.spec,
      containers: template?.spec?.containers ?? [],
      ...(nodeName ? { nodeName } : {}),
    },
    status,
  };
};

const RUNNING: V1Pod['status'] = {
  phase: 'Running',
  podIP: '10.0.0.7',
  conditions: [{ type: 'Ready', status: 'True' }],
  containerStatuses: [{ name: 'couchdb', image: 'couchdb:3.5.2', imageID: '', ready: true, restartCount: 2 }],
};
const UNSCHEDULABLE: V1Pod['status'] = {
  phase: 'Pending',
  conditions: [
    {
      type: 'PodScheduled',
      status: 'False',
      reason: 'Unschedulable',
      message: '0/1 nodes are available: 1 Insufficient cpu.',
    },
  ],
};

/** Everything the operator derives from a cached pod. */
const readsOfPod = (p: V1Pod) => ({
  address: podAddress(p),
  unschedulable: unschedulableMessage(p),
  notReady: notReadyCauseOf(p),
});

const size = (value: unknown) => JSON.stringify(value).length;

describe('the operator cache trims', () => {
  it.each([
    ['running on a node', RUNNING, 'node-1'],
    ['unschedulable', UNSCHEDULABLE, undefined],
  ])(
    'when a pod %s is trimmed, then everything the operator reads of it is unchanged and it is smaller',
    (_, status, node) => {
      const whole = pod(status, node);
      const trimmed = pod(status, node);
      trimPod(trimmed);
      expect(readsOfPod(trimmed)).toEqual(readsOfPod(whole));
      expect(readsOfPod(trimmed).address ?? readsOfPod(trimmed).unschedulable).toBeDefined();
      expect(size(trimmed)).toBeLessThan(size(whole) / 2);
    },
  );

  it('when a StatefulSet is trimmed, then its claim, applied digest, status and metadata are kept and its pod template is gone', () => {
    const whole = statefulSet();
    const trimmed = statefulSet();
    trimStatefulSet(trimmed);
    expect(claimShapeOf(trimmed)).toEqual({ size: '2Gi', storageClassName: 'fast' });
    expect(claimShapeOf(trimmed)).toEqual(claimShapeOf(whole));
    expect(appliedDigestOf(trimmed)).toBe(appliedDigestOf(whole));
    expect(trimmed.status).toEqual(whole.status);
    expect(trimmed.metadata).toEqual(whole.metadata);
    expect(trimmed.spec?.replicas).toBe(1);
    expect(trimmed.spec?.template).toBeUndefined();
    expect(size(trimmed)).toBeLessThan(size(whole) / 2);
  });

  it('when any object is trimmed, then its managedFields keep only their writers, kubectl’s last-applied copy goes and other annotations stay', () => {
    const object = {
      metadata: {
        name: 'x',
        annotations: { [LAST_APPLIED_ANNOTATION]: '{"big":"copy"}', 'settee.dev/wake': 'now' },
        managedFields: [
          { manager: 'kubectl', operation: 'Apply', time: new Date(0), fieldsV1: { 'f:data': {} } },
          { manager: 'kcm', operation: 'Update', subresource: 'status', fieldsType: 'FieldsV1' },
        ],
      },
    };
    trimObject(object);
    expect(object.metadata).toEqual({
      name: 'x',
      annotations: { 'settee.dev/wake': 'now' },
      managedFields: [
        { manager: 'kubectl', operation: 'Apply' },
        { manager: 'kcm', operation: 'Update', subresource: 'status' },
      ],
    });
  });

  it('when the trims are looked up by an informer’s resource, then pods and StatefulSets have theirs and other kinds none', () => {
    expect(OPERATOR_CACHE_TRIMS.get(trimKey({ apiVersion: 'v1', kind: 'Pod' }))).toBe(trimPod);
    expect(OPERATOR_CACHE_TRIMS.get(trimKey({ apiVersion: 'apps/v1', kind: 'StatefulSet' }))).toBe(
      trimStatefulSet,
    );
    expect(OPERATOR_CACHE_TRIMS.get(trimKey({ apiVersion: 'v1', kind: 'Secret' }))).toBeUndefined();
  });
});
