import type { V1StatefulSet } from '@kubernetes/client-node';
import { buildPod, buildRunningPodStatus, podPort } from '../../../../local/kubelet-stand-in/pod.js';

const statefulSet: V1StatefulSet = {
  metadata: { name: 'app', namespace: 'ns', uid: 'sts-uid' },
  spec: {
    serviceName: 'app-headless',
    selector: { matchLabels: { 'settee.dev/instance': 'app' } },
    template: {
      metadata: {
        labels: { 'settee.dev/instance': 'app' },
        annotations: { 'settee.dev/config-digest': 'd' },
      },
      spec: {
        containers: [
          {
            name: 'couchdb',
            image: 'couchdb:3.5.1',
            ports: [{ name: 'http', containerPort: 5984, protocol: 'TCP' }],
          },
        ],
        volumes: [{ name: 'config', configMap: { name: 'app-config' } }],
      },
    },
    volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: {} }],
  },
};

describe('buildPod', () => {
  it('when pod 0 is built, then it is the template owned by the StatefulSet, with a claim volume and the engine port', () => {
    const pod = buildPod(statefulSet, { ordinal: 0, port: 41234 });
    expect(pod.metadata).toMatchObject({
      name: 'app-0',
      namespace: 'ns',
      labels: { 'settee.dev/instance': 'app', 'statefulset.kubernetes.io/pod-name': 'app-0' },
      annotations: { 'settee.dev/config-digest': 'd' },
      ownerReferences: [{ kind: 'StatefulSet', name: 'app', uid: 'sts-uid', controller: true }],
    });
    expect(pod.spec?.volumes).toEqual([
      { name: 'config', configMap: { name: 'app-config' } },
      { name: 'data', persistentVolumeClaim: { claimName: 'data-app-0' } },
    ]);
    expect(pod.spec).toMatchObject({
      hostname: 'app-0',
      subdomain: 'app-headless',
      nodeName: 'settee-local',
    });
    expect(podPort(pod)).toBe(41234);
  });
});

describe('buildRunningPodStatus', () => {
  it('when the engine is starting, then the pod runs with its IP and is not ready; once up, it is ready', () => {
    const at = new Date('2026-01-01T00:00:00Z');
    const containers = statefulSet.spec?.template.spec?.containers ?? [];
    const starting = buildRunningPodStatus({ containers, ready: false, startTime: at, now: at });
    expect(starting).toMatchObject({ phase: 'Running', podIP: '127.0.0.1' });
    expect(starting?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('False');
    expect(starting?.containerStatuses).toEqual([
      expect.objectContaining({ name: 'couchdb', ready: false, started: true }),
    ]);
    const up = buildRunningPodStatus({ containers, ready: true, startTime: at, now: at });
    expect(up?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
    expect(up?.containerStatuses?.[0]?.ready).toBe(true);
  });
});
