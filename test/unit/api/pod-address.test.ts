import type { V1Pod } from '@kubernetes/client-node';
import { podAddress } from '../../../api/pod-address.js';

function pod(overrides: {
  ip?: string;
  ready?: boolean;
  deleting?: boolean;
  phase?: string;
  port?: number;
}): V1Pod {
  return {
    metadata: {
      name: 'app-0',
      namespace: 'ns',
      ...(overrides.deleting ? { deletionTimestamp: new Date() } : {}),
    },
    spec: {
      containers: [{ name: 'couchdb', ports: [{ name: 'http', containerPort: overrides.port ?? 5984 }] }],
    },
    status: {
      phase: overrides.phase ?? 'Running',
      ...(overrides.ip ? { podIP: overrides.ip } : {}),
      conditions: [{ type: 'Ready', status: overrides.ready ? 'True' : 'False' }],
    },
  };
}

describe('podAddress', () => {
  it('when a pod has an IP, then its address is the IP and its container port, ready as its Ready condition says', () => {
    expect(podAddress(pod({ ip: '10.1.2.3', ready: true }))).toEqual({
      origin: 'http://10.1.2.3:5984',
      ready: true,
    });
    expect(podAddress(pod({ ip: '10.1.2.3', ready: false }))).toEqual({
      origin: 'http://10.1.2.3:5984',
      ready: false,
    });
    expect(podAddress(pod({ ip: 'fd00::7', ready: true, port: 6000 }))).toEqual({
      origin: 'http://[fd00::7]:6000',
      ready: true,
    });
  });

  it('when a pod has no IP yet, is being deleted or has ended, then it has no usable address', () => {
    expect(podAddress(pod({}))).toBeUndefined();
    expect(podAddress(pod({ ip: '10.1.2.3', ready: true, deleting: true }))).toBeUndefined();
    expect(podAddress(pod({ ip: '10.1.2.3', phase: 'Failed' }))).toBeUndefined();
  });
});
