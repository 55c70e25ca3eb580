import type { Condition } from '../../../../../api/conditions.js';
import type { HibernationDecision } from '../../../../../operator/controllers/couch-instance/hibernation.js';
import {
  newlyPastStartDeadline,
  startAttemptOf,
} from '../../../../../operator/controllers/couch-instance/start-deadline.js';
import {
  computeStatus,
  type StatusInput,
} from '../../../../../operator/controllers/couch-instance/status.js';

const NOW = '2026-01-01T12:00:00.000Z';
const EARLIER = '2026-01-01T11:50:00.000Z';
const CAUSE =
  "its pod cannot be scheduled: 0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector.";
const pastDeadline: HibernationDecision = {
  replicas: 1,
  reason: 'AwaitingReady',
  startDeadlineExceeded: true,
  recheckAfterMs: 60_000,
};
const withinDeadline: HibernationDecision = { replicas: 1, reason: 'AwaitingReady', recheckAfterMs: 60_000 };
const MESSAGE = `CouchDB has not answered within the start deadline (10m): ${CAUSE}. The instance stays up and this clears once it answers`;

const input = (overrides: Partial<StatusInput>): StatusInput => ({
  previous: { phase: 'Starting' },
  generation: 1,
  now: NOW,
  endpoint: 'http://127.0.0.1:8080/db/ns/stuck',
  specViolations: [],
  idleAfter: '1m',
  startDeadline: '10m',
  decision: pastDeadline,
  statefulSet: { replicas: 1, readyReplicas: 0 },
  notReadyCause: CAUSE,
  ...overrides,
});

const condition = (conditions: Condition[] | undefined, type: string) =>
  conditions?.find((c) => c.type === type);

describe('computeStatus of an instance past its start deadline', () => {
  it('when it has not answered within the deadline, then it stays Starting and up, Progressing is False and Degraded True with reason StartDeadlineExceeded and the cause', () => {
    const status = computeStatus(input({}));
    expect(status.phase).toBe('Starting');
    expect(condition(status.conditions, 'Active')).toMatchObject({ status: 'True', reason: 'Starting' });
    expect(condition(status.conditions, 'Progressing')).toMatchObject({
      status: 'False',
      reason: 'StartDeadlineExceeded',
      message: MESSAGE,
    });
    expect(condition(status.conditions, 'Degraded')).toMatchObject({
      status: 'True',
      reason: 'StartDeadlineExceeded',
      message: MESSAGE,
    });
  });

  it('when the pod cannot be scheduled, then Degraded keeps the more precise Unschedulable and Progressing says the deadline passed', () => {
    const status = computeStatus(input({ unschedulable: '0/2 nodes are available' }));
    expect(condition(status.conditions, 'Degraded')).toMatchObject({ reason: 'Unschedulable' });
    expect(condition(status.conditions, 'Progressing')).toMatchObject({ reason: 'StartDeadlineExceeded' });
  });

  it('when a woken instance does not answer within the deadline, then Waking says so too', () => {
    const status = computeStatus(input({ previous: { phase: 'Waking' } }));
    expect(status.phase).toBe('Waking');
    expect(condition(status.conditions, 'Progressing')).toMatchObject({ reason: 'StartDeadlineExceeded' });
  });

  it('when it finally answers, then Progressing settles and Degraded clears', () => {
    const stuck = computeStatus(input({}));
    const running = computeStatus(
      input({
        previous: stuck,
        decision: { replicas: 1, reason: 'RecentActivity', recheckAfterMs: 60_000 },
        statefulSet: { replicas: 1, readyReplicas: 1 },
      }),
    );
    expect(running.phase).toBe('Running');
    expect(condition(running.conditions, 'Progressing')).toMatchObject({
      status: 'False',
      reason: 'Running',
    });
    expect(condition(running.conditions, 'Degraded')).toMatchObject({
      status: 'False',
      reason: 'AsExpected',
    });
  });

  it('when it is within the deadline, then Progressing says Starting as before', () => {
    const status = computeStatus(input({ decision: withinDeadline }));
    expect(condition(status.conditions, 'Progressing')).toMatchObject({ status: 'True', reason: 'Starting' });
    expect(condition(status.conditions, 'Degraded')).toMatchObject({ status: 'False' });
  });
});

describe('startAttemptOf', () => {
  const progressing = (c: Partial<Condition>): Condition[] => [
    {
      type: 'Progressing',
      status: 'True',
      reason: 'Starting',
      message: '',
      lastTransitionTime: EARLIER,
      observedGeneration: 1,
      ...c,
    },
  ];

  it('when Progressing is True, then the attempt began at its last transition', () => {
    expect(startAttemptOf({ conditions: progressing({}), generation: 1 })).toEqual({
      since: EARLIER,
      exceeded: false,
    });
  });

  it('when the deadline was reported for this generation, then it stays exceeded; for a newer spec the clock starts again', () => {
    const reported = progressing({ status: 'False', reason: 'StartDeadlineExceeded' });
    expect(startAttemptOf({ conditions: reported, generation: 1 })).toMatchObject({ exceeded: true });
    expect(startAttemptOf({ conditions: reported, generation: 2 })).toEqual({ exceeded: false });
  });

  it('when it was settled (running or hibernated) or has no status, then no attempt is under way yet', () => {
    expect(
      startAttemptOf({ conditions: progressing({ status: 'False', reason: 'Running' }), generation: 1 }),
    ).toEqual({ exceeded: false });
    expect(startAttemptOf({ conditions: undefined, generation: 1 })).toEqual({ exceeded: false });
  });
});

describe('newlyPastStartDeadline', () => {
  it('when the status first says so, then it gives the message for the Event, and not again while it stays so', () => {
    const first = computeStatus(input({}));
    expect(newlyPastStartDeadline({ phase: 'Starting' }, first)).toBe(MESSAGE);
    const later = computeStatus(input({ previous: first }));
    expect(newlyPastStartDeadline(first, later)).toBeUndefined();
  });
});
