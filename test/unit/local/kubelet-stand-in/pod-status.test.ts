import type { V1Pod } from '@kubernetes/client-node';
import { buildPodStatus } from '../../../../local/kubelet-stand-in/pod-status.js';

const scheduledAt = new Date('2026-11-24T06:00:00Z');
const now = new Date('2026-11-24T06:00:05Z');
const pod = (restartPolicy?: string): V1Pod => ({
  metadata: { name: 'notes-0', namespace: 'ns' },
  spec: { restartPolicy, containers: [{ name: 'couchdb', image: 'couchdb:3.5.1' }] },
  status: { conditions: [{ type: 'PodScheduled', status: 'True', lastTransitionTime: scheduledAt }] },
});
const conditions = (status: ReturnType<typeof buildPodStatus>) =>
  Object.fromEntries((status.conditions ?? []).map((c) => [c.type, c.status]));

describe('buildPodStatus', () => {
  it('when the container runs and is ready, then the pod is Running and Ready on its own address', () => {
    const status = buildPodStatus({
      pod: pod(),
      podIP: '127.4.5.6',
      container: { kind: 'running', startedAt: now, started: true, ready: true },
      restartCount: 0,
      startTime: scheduledAt,
      now,
    });
    expect(status.phase).toBe('Running');
    expect(status.podIP).toBe('127.4.5.6');
    expect(status.hostIP).toBe('127.0.0.1');
    expect(conditions(status)).toEqual({
      PodScheduled: 'True',
      Initialized: 'True',
      ContainersReady: 'True',
      Ready: 'True',
    });
    expect(status.containerStatuses?.[0]).toMatchObject({ name: 'couchdb', ready: true, started: true });
  });

  it('when the scheduler wrote PodScheduled, then its transition time is kept', () => {
    const status = buildPodStatus({
      pod: pod(),
      podIP: undefined,
      container: { kind: 'waiting', reason: 'ContainerCreating' },
      restartCount: 0,
      startTime: scheduledAt,
      now,
    });
    expect(status.conditions?.find((c) => c.type === 'PodScheduled')?.lastTransitionTime).toBe(scheduledAt);
    expect(status.phase).toBe('Pending');
    expect(status.podIP).toBeUndefined();
    expect(status.conditions?.find((c) => c.type === 'Ready')).toMatchObject({
      status: 'False',
      reason: 'ContainersNotReady',
    });
  });

  it('when the image cannot run, then the container waits with the reason and message given', () => {
    const status = buildPodStatus({
      pod: pod(),
      podIP: undefined,
      container: { kind: 'waiting', reason: 'ImageNotRunnableLocally', message: 'cannot run nginx' },
      restartCount: 0,
      startTime: scheduledAt,
      now,
    });
    expect(status.containerStatuses?.[0]?.state?.waiting).toEqual({
      reason: 'ImageNotRunnableLocally',
      message: 'cannot run nginx',
    });
  });

  it.each([
    ['Never', 1, 'Failed'],
    ['Never', 0, 'Succeeded'],
    ['OnFailure', 0, 'Succeeded'],
  ])(
    'when restartPolicy is %s and the container exited %i, then the pod is %s',
    (policy, exitCode, phase) => {
      const status = buildPodStatus({
        pod: pod(policy),
        podIP: '127.4.5.6',
        container: { kind: 'terminated', exitCode, reason: 'Error', startedAt: scheduledAt, finishedAt: now },
        restartCount: 0,
        startTime: scheduledAt,
        now,
      });
      expect(status.phase).toBe(phase);
    },
  );

  it('when it restarted, then the count and the last termination show', () => {
    const lastTermination = { exitCode: 137, reason: 'Error', startedAt: scheduledAt, finishedAt: now };
    const status = buildPodStatus({
      pod: pod(),
      podIP: '127.4.5.6',
      container: { kind: 'waiting', reason: 'CrashLoopBackOff', message: 'back-off 10s' },
      restartCount: 2,
      lastTermination,
      startTime: scheduledAt,
      now,
    });
    expect(status.containerStatuses?.[0]).toMatchObject({
      restartCount: 2,
      lastState: { terminated: lastTermination },
    });
  });
});
