import { renewalRoundDeadline } from '../../../kube/leader-election.js';

describe('renewalRoundDeadline', () => {
  const timing = { retryPeriodMs: 2_000, renewDeadlineMs: 10_000 };

  it('when the round starts on time, a retry period after the last renewal, then it may try for the whole renew deadline, as client-go', () => {
    expect(renewalRoundDeadline({ ...timing, lastRenewalAt: 1_000, startedAt: 3_000 })).toBe(13_000);
  });

  it('when a blocked timer starts the round late, then the deadline stays anchored a retry period after the last renewal', () => {
    // 648 ms: the longest GC pause recorded; it must not lengthen how long a leader that cannot renew leads.
    expect(renewalRoundDeadline({ ...timing, lastRenewalAt: 1_000, startedAt: 3_648 })).toBe(13_000);
  });
});
