import { buildActivityLease } from '../../../../gateway/proxy/activity-lease.js';

describe('buildActivityLease', () => {
  it('when an instance is renewed, then the Lease carries its label, the holder, a microsecond renewTime, open streams and the owner', () => {
    const lease = buildActivityLease({
      instance: { namespace: 'ns', name: 'app', uid: 'uid-1' },
      holderIdentity: 'gateway-0',
      renewTime: new Date('2026-01-01T12:00:00.123Z'),
      openStreams: 2,
    });
    expect(lease).toEqual({
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: {
        name: 'app-activity',
        namespace: 'ns',
        labels: { 'settee.dev/instance': 'app' },
        annotations: { 'settee.dev/open-streams': '2' },
        ownerReferences: [
          { apiVersion: 'settee.dev/v1alpha1', kind: 'CouchInstance', name: 'app', uid: 'uid-1' },
        ],
      },
      spec: { holderIdentity: 'gateway-0', renewTime: '2026-01-01T12:00:00.123000Z' },
    });
  });

  it('when the instance uid is unknown, then the Lease has no owner reference', () => {
    const lease = buildActivityLease({
      instance: { namespace: 'ns', name: 'app' },
      holderIdentity: 'g',
      renewTime: new Date(),
      openStreams: 0,
    });
    expect(lease.metadata.ownerReferences).toBeUndefined();
  });
});
