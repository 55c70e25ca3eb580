import type { V1Container } from '@kubernetes/client-node';
import { readyReportedAt } from '../../../../local/kubelet-stand-in/probe-schedule.js';

const startedAt = 1_000_000;

function container(probes: Partial<V1Container>): V1Container {
  return { name: 'couchdb', ...probes };
}

describe('readyReportedAt', () => {
  it('when the engine answers between two startup-probe ticks, then Ready comes at the next tick', () => {
    const c = container({ startupProbe: { periodSeconds: 1 }, readinessProbe: { periodSeconds: 5 } });
    expect(readyReportedAt(c, startedAt, startedAt + 350)).toBe(startedAt + 1_000);
    expect(readyReportedAt(c, startedAt, startedAt + 1_000)).toBe(startedAt + 1_000);
    expect(readyReportedAt(c, startedAt, startedAt + 1_001)).toBe(startedAt + 2_000);
  });

  it('when the probe has an initial delay, then no tick comes before it', () => {
    const c = container({ startupProbe: { periodSeconds: 2, initialDelaySeconds: 3 } });
    expect(readyReportedAt(c, startedAt, startedAt + 350)).toBe(startedAt + 3_000);
    expect(readyReportedAt(c, startedAt, startedAt + 3_500)).toBe(startedAt + 5_000);
  });

  it('when there is no startup probe, then the readiness probe, with the 10 s default period, gates it', () => {
    expect(
      readyReportedAt(container({ readinessProbe: { periodSeconds: 5 } }), startedAt, startedAt + 10),
    ).toBe(startedAt + 5_000);
    expect(readyReportedAt(container({ readinessProbe: {} }), startedAt, startedAt + 10)).toBe(
      startedAt + 10_000,
    );
  });

  it('when the container has no probe, then Ready comes as soon as the engine answers', () => {
    expect(readyReportedAt(container({}), startedAt, startedAt + 350)).toBe(startedAt + 350);
    expect(readyReportedAt(undefined, startedAt, startedAt + 350)).toBe(startedAt + 350);
  });
});
