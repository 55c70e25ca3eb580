import type { V1ContainerStatus, V1Pod } from '@kubernetes/client-node';
import { notReadyCauseOf } from '../../../../../operator/controllers/couch-instance/not-ready-cause.js';

const scheduledPod = (status: V1Pod['status']): V1Pod => ({
  metadata: { name: 'db-0' },
  spec: { nodeName: 'settee-local', containers: [{ name: 'couchdb' }] },
  status,
});

/** The CouchDB container's status, not ready unless told otherwise. */
const couchdbContainer = (status: Partial<V1ContainerStatus>): V1ContainerStatus => ({
  name: 'couchdb',
  image: 'couchdb:3.5.1',
  imageID: '',
  ready: false,
  restartCount: 0,
  ...status,
});

describe('notReadyCauseOf', () => {
  it('when the scheduler cannot place the pod, then it quotes the scheduler', () => {
    const pod: V1Pod = {
      metadata: { name: 'db-0' },
      spec: { containers: [{ name: 'couchdb' }] },
      status: {
        phase: 'Pending',
        conditions: [
          {
            type: 'PodScheduled',
            status: 'False',
            reason: 'Unschedulable',
            message: '0/1 nodes are available',
          },
        ],
      },
    };
    expect(notReadyCauseOf(pod)).toBe('its pod cannot be scheduled: 0/1 nodes are available');
  });

  it('when the container crash-loops, then it names the waiting reason, the restarts and the last exit code', () => {
    const pod = scheduledPod({
      phase: 'Running',
      containerStatuses: [
        couchdbContainer({
          restartCount: 4,
          state: {
            waiting: { reason: 'CrashLoopBackOff', message: 'back-off 40s restarting failed container' },
          },
          lastState: { terminated: { exitCode: 1, reason: 'Error' } },
        }),
      ],
    });
    expect(notReadyCauseOf(pod)).toBe(
      'its container is waiting: CrashLoopBackOff: back-off 40s restarting failed container; restarted 4 times, last exit code 1 (Error)',
    );
  });

  it('when the container runs but fails its probe, then it says so', () => {
    const pod = scheduledPod({
      phase: 'Running',
      containerStatuses: [
        couchdbContainer({
          state: { running: {} },
        }),
      ],
    });
    expect(notReadyCauseOf(pod)).toBe('its container runs but does not pass its readiness probe');
  });

  it('when there is no pod, then it says so', () => {
    expect(notReadyCauseOf(undefined)).toBe('it has no pod');
  });
});
