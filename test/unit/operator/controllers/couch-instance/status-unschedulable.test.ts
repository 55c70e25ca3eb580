import type { Condition } from '../../../../../api/conditions.js';
import type { HibernationDecision } from '../../../../../operator/controllers/couch-instance/hibernation.js';
import {
  computeStatus,
  newlyUnschedulable,
  type StatusInput,
} from '../../../../../operator/controllers/couch-instance/status.js';

const NOW = '2026-01-01T12:00:00.000Z';
const AFFINITY = "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector.";
const starting: HibernationDecision = { replicas: 1, reason: 'AwaitingReady', recheckAfterMs: 10_000 };

const input = (overrides: Partial<StatusInput>): StatusInput => ({
  previous: undefined,
  generation: 1,
  now: NOW,
  endpoint: 'http://127.0.0.1:8080/db/ns/pinned',
  specViolations: [],
  idleAfter: '10s',
  decision: starting,
  statefulSet: { replicas: 1, readyReplicas: 0 },
  ...overrides,
});

const condition = (conditions: Condition[] | undefined, type: string) =>
  conditions?.find((c) => c.type === type);

describe('computeStatus for a pod the scheduler cannot place', () => {
  it('when the scheduler cannot place the pod, then Ready is False and Degraded True with its reason, and the phase stays Starting', () => {
    const status = computeStatus(input({ unschedulable: AFFINITY }));
    expect(status.phase).toBe('Starting');
    const expected = { reason: 'Unschedulable', message: `the pod cannot be scheduled: ${AFFINITY}` };
    expect(condition(status.conditions, 'Ready')).toMatchObject({ status: 'False', ...expected });
    expect(condition(status.conditions, 'Degraded')).toMatchObject({ status: 'True', ...expected });
    expect(condition(status.conditions, 'Active')).toMatchObject({ status: 'True', reason: 'Starting' });
  });

  it('when a woken instance cannot be placed, then the phase stays Waking and Ready says why', () => {
    const status = computeStatus(
      input({ unschedulable: AFFINITY, previous: { phase: 'Hibernated' }, decision: { ...starting } }),
    );
    expect(status.phase).toBe('Waking');
    expect(condition(status.conditions, 'Ready')).toMatchObject({ reason: 'Unschedulable' });
  });

  it('when the pod is placed after all, then Degraded goes back to AsExpected', () => {
    const before = computeStatus(input({ unschedulable: AFFINITY }));
    const after = computeStatus(input({ previous: before }));
    expect(condition(after.conditions, 'Degraded')).toMatchObject({ status: 'False', reason: 'AsExpected' });
    expect(condition(after.conditions, 'Ready')).toMatchObject({ status: 'False', reason: 'Starting' });
  });
});

describe('newlyUnschedulable', () => {
  it('when the status first says the pod cannot be scheduled, or says it for another reason, then it gives the message once', () => {
    const first = computeStatus(input({ unschedulable: AFFINITY }));
    expect(newlyUnschedulable(undefined, first)).toBe(`the pod cannot be scheduled: ${AFFINITY}`);
    const same = computeStatus(input({ unschedulable: AFFINITY, previous: first }));
    expect(newlyUnschedulable(first, same)).toBeUndefined();
    const other = computeStatus(
      input({ unschedulable: '0/2 nodes are available: 2 Insufficient cpu.', previous: same }),
    );
    expect(newlyUnschedulable(same, other)).toContain('Insufficient cpu');
    expect(newlyUnschedulable(other, computeStatus(input({ previous: other })))).toBeUndefined();
  });
});
