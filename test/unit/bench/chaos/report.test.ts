import type { CouchInstance } from '../../../../api/couch-instance.js';
import {
  BACKOFF_MISS_WHY,
  beyondBackoffMs,
  formatSoakReport,
  instanceStateOf,
  recoveryVerdict,
  soakFailures,
  type InstanceEnd,
  type SoakReport,
} from '../../../../bench/chaos/report.js';

const NODE_AFFINITY =
  "the pod cannot be scheduled: 0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector.";

/** A report with nothing wrong but the instances given. */
function reportWith(instances: InstanceEnd[]): SoakReport {
  return {
    seed: 1,
    minutes: 1,
    faults: [],
    publishes: { acked: 1, delivered: 1, lost: [], duplicates: 0, early: [], maxLateMs: 0 },
    parallelism: [],
    writes: { acked: 1, readable: 1, lost: [] },
    failedAttempts: {},
    instances,
    leakedProcesses: [],
  };
}

function instance(phase: string, degraded?: { reason: string; message: string }): CouchInstance {
  return {
    apiVersion: 'settee.dev/v1alpha1',
    kind: 'CouchInstance',
    metadata: { name: 'orders', namespace: 'default' },
    spec: { plan: 'paid' },
    status: {
      phase,
      conditions: degraded
        ? [{ type: 'Degraded', status: 'True', lastTransitionTime: '2026-01-01T00:00:00Z', ...degraded }]
        : [],
    },
  } as CouchInstance;
}

describe('the chaos soak checker', () => {
  it('when an instance ends Running or Hibernated, then it is no failure', () => {
    const ends = ['Running', 'Hibernated'].map((phase) => ({
      ...instanceStateOf(instance(phase)),
      unschedulableBeforeFaults: false,
    }));
    expect(soakFailures(reportWith(ends))).toEqual([]);
  });

  it('when an instance no node could take before any fault still cannot (a region no node is in), then it is reported but no failure', () => {
    const state = instanceStateOf(instance('Starting', { reason: 'Unschedulable', message: NODE_AFFINITY }));
    expect(state.unschedulable).toBe(NODE_AFFINITY);
    expect(soakFailures(reportWith([{ ...state, unschedulableBeforeFaults: true }]))).toEqual([]);
  });

  it('when an instance became unschedulable only during the faults, then it is stuck', () => {
    const state = instanceStateOf(instance('Waking', { reason: 'Unschedulable', message: NODE_AFFINITY }));
    expect(soakFailures(reportWith([{ ...state, unschedulableBeforeFaults: false }]))).toEqual([
      'instances neither Running nor Hibernated: orders Waking',
    ]);
  });

  it('when an instance that was unschedulable before the faults ends Starting for another cause, then it is stuck', () => {
    const state = instanceStateOf(
      instance('Starting', { reason: 'StartDeadlineExceeded', message: 'its engine keeps crashing' }),
    );
    expect(state.unschedulable).toBeUndefined();
    expect(soakFailures(reportWith([{ ...state, unschedulableBeforeFaults: true }]))).toEqual([
      'instances neither Running nor Hibernated: orders Starting',
    ]);
  });

  it("when an engine crash waited out the kubelet's back-off, then the report gives its recovery beyond the back-off beside the whole", () => {
    const first = {
      kind: 'kill-engine' as const,
      target: 'engine a',
      pid: 1,
      at: 0,
      recoveryMs: 2_500,
      restartBackoffMs: 0,
    };
    const repeated = { ...first, pid: 2, recoveryMs: 82_000, restartBackoffMs: 80_000 };
    expect(beyondBackoffMs(repeated)).toBe(2_000);
    const text = formatSoakReport({ ...reportWith([]), faults: [first, repeated] });
    expect(text).toContain('| kill-engine | 2 | 82.0 s | 2.5 s | 0 |');
    expect(text).toContain(
      'engine crashes: 1 first of their pod (restarted at once), slowest 2.5 s; 1 repeated within 10 min (CrashLoopBackOff 80.0 s)',
    );
  });
  it("when recoveries pass 10 s, then the verdict names each, and says whether the target holds less the kubelet's back-off", () => {
    const fault = { target: 'x', pid: 1, at: 0 };
    const apiserver = { ...fault, kind: 'kill-kube-apiserver' as const, recoveryMs: 13_300 };
    const repeatedCrash = {
      ...fault,
      kind: 'kill-engine' as const,
      recoveryMs: 13_500,
      restartBackoffMs: 10_000,
    };
    const firstCrash = { ...fault, kind: 'kill-engine' as const, recoveryMs: 2_500, restartBackoffMs: 0 };
    const gateway = { ...fault, kind: 'kill-gateway' as const, recoveryMs: 10_000 };
    expect(recoveryVerdict([gateway, firstCrash, repeatedCrash, apiserver]).split('\n')).toEqual([
      'recovery within 10.0 s of 4 faults: missed by 2: kill-engine 13.5 s (10.0 s of it CrashLoopBackOff), kill-kube-apiserver 13.3 s',
      "less the kubelet's restart back-off (Kubernetes' CrashLoopBackOff): missed by 1: kill-kube-apiserver 13.3 s",
      BACKOFF_MISS_WHY,
    ]);
    expect(BACKOFF_MISS_WHY).toContain('a fixed 10 s first delay in Kubernetes 1.31 ');
    // A miss without a back-off in it has no such line.
    expect(recoveryVerdict([gateway, apiserver]).split('\n')).toHaveLength(2);
    expect(recoveryVerdict([gateway, firstCrash, repeatedCrash]).split('\n')[1]).toBe(
      "less the kubelet's restart back-off (Kubernetes' CrashLoopBackOff): met",
    );
    const slowBoot = { ...repeatedCrash, recoveryMs: 20_100 };
    const lost = { ...fault, kind: 'kill-etcd' as const };
    expect(recoveryVerdict([slowBoot, lost]).split('\n')[1]).toBe(
      "less the kubelet's restart back-off (Kubernetes' CrashLoopBackOff): missed by 2: kill-etcd not recovered, kill-engine 20.1 s (10.0 s of it CrashLoopBackOff)",
    );
    expect(formatSoakReport({ ...reportWith([]), faults: [apiserver] })).toContain(
      'recovery within 10.0 s of 1 faults: missed by 1: kill-kube-apiserver 13.3 s',
    );
  });
});
