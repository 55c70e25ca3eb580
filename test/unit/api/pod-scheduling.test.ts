import type { V1Pod } from '@kubernetes/client-node';
import { unschedulableMessage } from '../../../api/pod-scheduling.js';

const AFFINITY =
  "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.";

function pod(options: {
  status?: string;
  reason?: string;
  message?: string;
  nodeName?: string;
  deleting?: boolean;
}): V1Pod {
  return {
    metadata: { name: 'app-0', ...(options.deleting ? { deletionTimestamp: new Date() } : {}) },
    spec: { containers: [], ...(options.nodeName ? { nodeName: options.nodeName } : {}) },
    status: {
      phase: 'Pending',
      conditions: [
        {
          type: 'PodScheduled',
          status: options.status ?? 'False',
          reason: options.reason ?? 'Unschedulable',
          ...(options.message !== undefined ? { message: options.message } : {}),
        },
      ],
    },
  };
}

describe('unschedulableMessage', () => {
  it('when the scheduler says the pod is Unschedulable, then its message is the reason', () => {
    expect(unschedulableMessage(pod({ message: AFFINITY }))).toBe(AFFINITY);
  });

  it('when the only obstacle is a claim not bound yet, then it does not count (it passes by itself)', () => {
    const message =
      '0/2 nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.';
    expect(unschedulableMessage(pod({ message }))).toBeUndefined();
  });

  it('when the scheduler has not yet seen the claim the StatefulSet controller made, then it does not count (it retries when the claim arrives)', () => {
    const message =
      '0/2 nodes are available: persistentvolumeclaim "data-orders-0" not found. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.';
    expect(unschedulableMessage(pod({ message }))).toBeUndefined();
  });

  it('when a passing volume reason comes with a lasting one, then the message counts', () => {
    const message =
      '0/2 nodes are available: 1 node(s) had untolerated taint {dedicated: db}, 1 persistentvolumeclaim "data-orders-0" not found. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.';
    expect(unschedulableMessage(pod({ message }))).toBe(message);
  });

  it('when an older scheduler counts the nodes for the volume reason, then it still does not count', () => {
    const message = '0/2 nodes are available: 2 pod has unbound immediate PersistentVolumeClaims.';
    expect(unschedulableMessage(pod({ message }))).toBeUndefined();
  });

  it('when the pod is scheduled, being deleted, not yet looked at, or absent, then there is none', () => {
    expect(unschedulableMessage(pod({ status: 'True', reason: '' }))).toBeUndefined();
    expect(unschedulableMessage(pod({ message: AFFINITY, nodeName: 'node-a' }))).toBeUndefined();
    expect(unschedulableMessage(pod({ message: AFFINITY, deleting: true }))).toBeUndefined();
    expect(
      unschedulableMessage({ metadata: { name: 'app-0' }, status: { phase: 'Pending' } }),
    ).toBeUndefined();
    expect(unschedulableMessage(undefined)).toBeUndefined();
  });

  it('when the scheduler gave no message, then a generic one says what happened', () => {
    expect(unschedulableMessage(pod({}))).toBe('the scheduler found no node for the pod');
  });
});
