import {
  buildNode,
  buildNodeLease,
  buildNodeStatus,
  LOCAL_NODE_CAPACITY,
  LOCAL_NODE_LABEL,
  NODE_LEASE_DURATION_SECONDS,
  NODE_LEASE_NAMESPACE,
  REGION_LABEL,
} from '../../../../local/kubelet-stand-in/node-object.js';

const spec = { name: 'node-a', region: 'eu-west' };
const now = new Date('2026-11-24T06:00:00Z');

describe('the stand-in node objects', () => {
  it('when a node is built, then it carries its region, hostname and the stand-in mark as labels', () => {
    expect(buildNode(spec).metadata?.labels).toEqual(
      expect.objectContaining({
        [REGION_LABEL]: 'eu-west',
        'kubernetes.io/hostname': 'node-a',
        'kubernetes.io/os': 'linux',
        [LOCAL_NODE_LABEL]: 'true',
      }),
    );
  });

  it('when its status is built, then it is Ready without pressure and offers its capacity', () => {
    const status = buildNodeStatus(spec, now, 'v1.31.14');
    const byType = Object.fromEntries((status.conditions ?? []).map((c) => [c.type, c.status]));
    expect(byType).toEqual({
      Ready: 'True',
      MemoryPressure: 'False',
      DiskPressure: 'False',
      PIDPressure: 'False',
    });
    expect(status.allocatable).toEqual(LOCAL_NODE_CAPACITY);
    expect(status.nodeInfo?.kubeletVersion).toBe('v1.31.14');
    expect(status.conditions?.every((c) => c.lastHeartbeatTime === now)).toBe(true);
  });

  it('when a node asks for its own capacity, then the status offers exactly that', () => {
    const capacity = { cpu: '1', memory: '1Gi', pods: '2' };
    expect(buildNodeStatus({ ...spec, capacity }, now, 'v1.31.14').allocatable).toEqual(capacity);
  });

  it('when the lease is built, then it is held by the node for the lifecycle controller grace period', () => {
    const lease = buildNodeLease('node-a', now, { uid: 'u-1' });
    expect(lease.metadata).toEqual(
      expect.objectContaining({ name: 'node-a', namespace: NODE_LEASE_NAMESPACE }),
    );
    expect(lease.metadata?.ownerReferences?.[0]).toEqual(
      expect.objectContaining({ kind: 'Node', uid: 'u-1' }),
    );
    expect(lease.spec).toEqual({
      holderIdentity: 'node-a',
      leaseDurationSeconds: NODE_LEASE_DURATION_SECONDS,
      renewTime: now,
    });
  });
});
