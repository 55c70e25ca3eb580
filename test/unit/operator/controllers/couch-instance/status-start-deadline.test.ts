import type { Condition } from '../../../../../api/conditions.js';
import type { HibernationDecision } from '../../../../../operator/controllers/couch-instance/hibernation.js';
import {
  computeStatus,
  newlyPastStartDeadline,
  type StatusInput,
} from '../../../../../operator/controllers/couch-instance/status.js';

const NOW = '2026-01-01T12:00:00.000Z';
const CAUSE =
  "its pod cannot be scheduled: 0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector.";
const pastDeadline: HibernationDecision = {
  replicas: 0,
  reason: 'StartDeadlineExceeded',
  transition: 'Hibernate',
  hibernatedAt: NOW,
};
const stillHibernated: HibernationDecision = { replicas: 0, reason: 'Hibernated', hibernatedAt: NOW };

const input = (overrides: Partial<StatusInput>): StatusInput => ({
  previous: { phase: 'Starting' },
  generation: 1,
  now: NOW,
  endpoint: 'http://127.0.0.1:8080/db/ns/nowhere',
  specViolations: [],
  idleAfter: '1m',
  startDeadline: '10m',
  decision: pastDeadline,
  statefulSet: { replicas: 1, readyReplicas: 0 },
  notReadyCause: CAUSE,
  ...overrides,
});

const active = (conditions: Condition[] | undefined) => conditions?.find((c) => c.type === 'Active');

describe('computeStatus of an instance scaled to zero past its start deadline', () => {
  it('when it is scaled to zero for not starting, then Active is False with reason StartDeadlineExceeded and the cause', () => {
    const status = computeStatus(input({}));
    expect(status.phase).toBe('Hibernating');
    expect(active(status.conditions)).toMatchObject({
      status: 'False',
      reason: 'StartDeadlineExceeded',
      message: `CouchDB did not answer within 10m and nothing used it for 1m (${CAUSE}): scaled to zero with its data kept; the next request starts it again`,
    });
  });

  it('when it stays hibernated after its pod is gone, then Active keeps the reason and the cause', () => {
    const first = computeStatus(input({}));
    const later = computeStatus(
      input({
        previous: first,
        decision: stillHibernated,
        statefulSet: { replicas: 0, readyReplicas: 0 },
        notReadyCause: 'it has no pod',
      }),
    );
    expect(later.phase).toBe('Hibernated');
    expect(active(later.conditions)).toEqual(active(first.conditions));
  });

  it('when an instance that started fine hibernates for idleness, then Active says Hibernated as before', () => {
    const status = computeStatus(
      input({ decision: stillHibernated, statefulSet: { replicas: 0, readyReplicas: 0 }, previous: {} }),
    );
    expect(active(status.conditions)).toMatchObject({ status: 'False', reason: 'Hibernated' });
  });
});

describe('newlyPastStartDeadline', () => {
  it('when the status first says so, then it gives the message, and not again while it stays so', () => {
    const first = computeStatus(input({}));
    expect(newlyPastStartDeadline({ phase: 'Starting' }, first)).toBe(active(first.conditions)?.message);
    const later = computeStatus(input({ previous: first, decision: stillHibernated }));
    expect(newlyPastStartDeadline(first, later)).toBeUndefined();
  });
});
