import type { V1StatefulSet } from '@kubernetes/client-node';
import {
  EARLY_WAKE_SCALE_GRACE_MS,
  EarlyWakeScale,
} from '../../../../../operator/controllers/couch-instance/early-wake-scale.js';
import type { HibernationDecision } from '../../../../../operator/controllers/couch-instance/hibernation.js';

const HIBERNATED: HibernationDecision = {
  replicas: 0,
  reason: 'Hibernated',
  hibernatedAt: '2026-01-01T11:00:00Z',
};
const WOKEN: HibernationDecision = { replicas: 1, reason: 'WakeRequested', transition: 'Wake' };
const at = (replicas: number): V1StatefulSet => ({ spec: { replicas } }) as V1StatefulSet;

describe('EarlyWakeScale', () => {
  it('when a hibernated instance is found scaled up, then the scale-down waits out the grace from the first sight, then goes ahead', () => {
    const early = new EarlyWakeScale();
    const ask = (now: number) =>
      early.deferMs({ key: 'ns/a', decision: HIBERNATED, statefulSet: at(1), now });
    expect(ask(1_000)).toBe(EARLY_WAKE_SCALE_GRACE_MS);
    expect(ask(4_000)).toBe(EARLY_WAKE_SCALE_GRACE_MS - 3_000);
    expect(ask(1_000 + EARLY_WAKE_SCALE_GRACE_MS)).toBeUndefined();
  });

  it('when the wake request arrives, or the StatefulSet is at zero, then nothing waits, and a later sight starts a new grace', () => {
    const early = new EarlyWakeScale();
    expect(early.deferMs({ key: 'ns/a', decision: HIBERNATED, statefulSet: at(0), now: 0 })).toBeUndefined();
    expect(early.deferMs({ key: 'ns/a', decision: HIBERNATED, statefulSet: at(1), now: 0 })).toBeDefined();
    expect(early.deferMs({ key: 'ns/a', decision: WOKEN, statefulSet: at(1), now: 5 })).toBeUndefined();
    expect(early.deferMs({ key: 'ns/a', decision: HIBERNATED, statefulSet: at(1), now: 9_000 })).toBe(
      EARLY_WAKE_SCALE_GRACE_MS,
    );
  });
});
