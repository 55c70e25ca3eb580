import {
  decideHibernation,
  readySinceOf,
  type HibernationInput,
} from '../../../../../operator/controllers/couch-instance/hibernation.js';

const T0 = Date.parse('2026-01-01T12:00:00.000Z');
const at = (offsetMs: number) => new Date(T0 + offsetMs).toISOString();

const input = (overrides: Partial<HibernationInput> = {}): HibernationInput => ({
  now: T0,
  keepAlive: false,
  idleAfterMs: 10_000,
  createdAt: at(-60_000),
  readySince: at(-60_000),
  previous: {},
  ...overrides,
});

describe('decideHibernation', () => {
  it('when the last activity is within idleAfter, then it stays up and rechecks when idleAfter will have passed', () => {
    const decision = decideHibernation(input({ activityRenewedAt: at(-4_000) }));
    expect(decision).toMatchObject({ replicas: 1, reason: 'RecentActivity', recheckAfterMs: 6_000 });
    expect(decision.transition).toBeUndefined();
    expect(decision.hibernatedAt).toBeUndefined();
  });

  it('when nothing happened for idleAfter since creation, then it hibernates now', () => {
    const decision = decideHibernation(input({ createdAt: at(-10_000) }));
    expect(decision).toEqual({
      replicas: 0,
      reason: 'IdleTimeout',
      transition: 'Hibernate',
      hibernatedAt: at(0),
      lastActivityTime: at(-10_000),
    });
  });

  it('when a new instance has just been created, then it is not hibernated', () => {
    expect(decideHibernation(input({ createdAt: at(-1_000), readySince: at(-1_000) }))).toMatchObject({
      replicas: 1,
      recheckAfterMs: 9_000,
    });
  });

  it('when the gateway keeps renewing the Lease for an open stream, then it never hibernates', () => {
    for (let seconds = 0; seconds < 60; seconds += 5) {
      const decision = decideHibernation(
        input({ now: T0 + seconds * 1000, activityRenewedAt: at(seconds * 1000 - 5_000) }),
      );
      expect(decision.replicas).toBe(1);
    }
  });

  it('when keepAlive is on, then it never hibernates, however long idle, and schedules no check', () => {
    const decision = decideHibernation(input({ keepAlive: true, createdAt: at(-86_400_000) }));
    expect(decision).toMatchObject({ replicas: 1, reason: 'KeepAlive' });
    expect(decision.recheckAfterMs).toBeUndefined();
  });

  it('when hibernated and no wake was requested since, then it stays at zero and keeps hibernatedAt', () => {
    const decision = decideHibernation(
      input({
        wakeRequestedAt: at(-30_000),
        previous: { hibernatedAt: at(-20_000), lastActivityTime: at(-30_000) },
      }),
    );
    expect(decision).toMatchObject({ replicas: 0, reason: 'Hibernated', hibernatedAt: at(-20_000) });
    expect(decision.transition).toBeUndefined();
  });

  it('when a wake is requested after hibernation, then it wakes, counts the request as activity and clears hibernatedAt', () => {
    const decision = decideHibernation(
      input({ wakeRequestedAt: at(-100), previous: { hibernatedAt: at(-20_000) } }),
    );
    expect(decision).toMatchObject({
      replicas: 1,
      reason: 'WakeRequested',
      transition: 'Wake',
      lastActivityTime: at(-100),
    });
    expect(decision.hibernatedAt).toBeUndefined();
    expect(decision.recheckAfterMs).toBe(10_000);
  });

  it('when the woken instance is next reconciled, then it stays up until idleAfter after the wake request', () => {
    const decision = decideHibernation(
      input({ now: T0 + 3_000, wakeRequestedAt: at(0), previous: { lastActivityTime: at(0) } }),
    );
    expect(decision).toMatchObject({ replicas: 1, reason: 'RecentActivity', recheckAfterMs: 7_000 });
  });

  it('when keepAlive is turned on while hibernated, then it wakes', () => {
    expect(
      decideHibernation(input({ keepAlive: true, previous: { hibernatedAt: at(-5_000) } })),
    ).toMatchObject({
      replicas: 1,
      reason: 'KeepAlive',
      transition: 'Wake',
    });
  });

  it('when the Lease is renewed every few seconds, then the recorded activity only moves every idleAfter/2', () => {
    const previous = { lastActivityTime: at(-3_000) };
    expect(decideHibernation(input({ activityRenewedAt: at(0), previous })).lastActivityTime).toBe(
      at(-3_000),
    );
    expect(
      decideHibernation(input({ activityRenewedAt: at(2_000), now: T0 + 2_000, previous })).lastActivityTime,
    ).toBe(at(2_000));
  });

  it('when idle for idleAfter but the instance just said replication jobs are running, then it stays up for another idleAfter and records the activity', () => {
    const decision = decideHibernation(
      input({
        activityRenewedAt: at(-30_000),
        replicationsRunningAt: T0,
        previous: { lastActivityTime: at(-30_000) },
      }),
    );
    expect(decision).toEqual({
      replicas: 1,
      reason: 'ReplicationRunning',
      recheckAfterMs: 10_000,
      lastActivityTime: at(0),
    });
  });

  it('when replication jobs were last seen running idleAfter ago and nothing happened since, then it hibernates', () => {
    const decision = decideHibernation(
      input({ replicationsRunningAt: T0 - 10_000, previous: { lastActivityTime: at(-10_000) } }),
    );
    expect(decision).toMatchObject({ replicas: 0, reason: 'IdleTimeout', transition: 'Hibernate' });
  });

  it('when a request came after replication jobs were seen running, then the reason is the request', () => {
    const decision = decideHibernation(
      input({ replicationsRunningAt: T0 - 5_000, activityRenewedAt: at(-2_000) }),
    );
    expect(decision).toMatchObject({ replicas: 1, reason: 'RecentActivity', recheckAfterMs: 8_000 });
  });

  it('when hibernated, then replication jobs seen running before it hibernated do not wake it', () => {
    const decision = decideHibernation(
      input({ replicationsRunningAt: T0 - 15_000, previous: { hibernatedAt: at(-5_000) } }),
    );
    expect(decision).toMatchObject({ replicas: 0, reason: 'Hibernated', hibernatedAt: at(-5_000) });
  });

  it('when the wake annotation or the Lease says a time far ahead, then it does not count, and an idle instance hibernates', () => {
    const farAhead = at(100 * 365 * 24 * 3_600_000);
    expect(
      decideHibernation(input({ wakeRequestedAt: farAhead, activityRenewedAt: farAhead })),
    ).toMatchObject({ replicas: 0, transition: 'Hibernate', lastActivityTime: at(-60_000) });
  });

  it('when a far-ahead time was recorded as the last activity, then it does not count and is replaced', () => {
    const decision = decideHibernation(
      input({ activityRenewedAt: at(-4_000), previous: { lastActivityTime: at(365 * 24 * 3_600_000) } }),
    );
    expect(decision).toMatchObject({ replicas: 1, recheckAfterMs: 6_000, lastActivityTime: at(-4_000) });
  });

  it('when hibernated, then a wake request dated far ahead does not wake it again', () => {
    const decision = decideHibernation(
      input({ wakeRequestedAt: at(24 * 3_600_000), previous: { hibernatedAt: at(-5_000) } }),
    );
    expect(decision).toMatchObject({ replicas: 0, reason: 'Hibernated' });
  });

  it('when a signal is a few seconds ahead (clock skew between machines), then it counts as now', () => {
    const decision = decideHibernation(
      input({ wakeRequestedAt: at(5_000), previous: { hibernatedAt: at(-5_000) } }),
    );
    expect(decision).toMatchObject({ replicas: 1, transition: 'Wake', lastActivityTime: at(0) });
    expect(decision.recheckAfterMs).toBe(10_000);
  });

  it('when timestamps are unparsable, then they are ignored', () => {
    expect(
      decideHibernation(input({ activityRenewedAt: 'yesterday', wakeRequestedAt: 'soon' })),
    ).toMatchObject({
      replicas: 0,
      transition: 'Hibernate',
    });
  });

  it('when an instance created longer than idleAfter ago is not Ready yet, then it stays up and rechecks at the start deadline (10 min by default)', () => {
    const decision = decideHibernation(
      input({
        createdAt: at(-30_000),
        readySince: undefined,
        startAttempt: { since: at(-30_000), exceeded: false },
      }),
    );
    expect(decision).toEqual({
      replicas: 1,
      reason: 'AwaitingReady',
      recheckAfterMs: 570_000,
      lastActivityTime: at(-30_000),
    });
  });

  it('when it has been trying to start for the start deadline, then it stays up and the decision says the deadline passed', () => {
    const decision = decideHibernation(
      input({
        createdAt: at(-30_000),
        readySince: undefined,
        startDeadlineMs: 20_000,
        startAttempt: { since: at(-30_000), exceeded: false },
      }),
    );
    expect(decision).toEqual({
      replicas: 1,
      reason: 'AwaitingReady',
      startDeadlineExceeded: true,
      recheckAfterMs: 10_000,
      lastActivityTime: at(-30_000),
    });
  });

  it('when keepAlive is on and it has not answered for the start deadline, then it stays up as KeepAlive and the decision says the deadline passed', () => {
    const decision = decideHibernation(
      input({
        keepAlive: true,
        readySince: undefined,
        startDeadlineMs: 20_000,
        startAttempt: { since: at(-30_000), exceeded: false },
      }),
    );
    expect(decision).toMatchObject({ replicas: 1, reason: 'KeepAlive', startDeadlineExceeded: true });
    const answering = decideHibernation(
      input({
        keepAlive: true,
        startDeadlineMs: 20_000,
        startAttempt: { since: at(-30_000), exceeded: false },
      }),
    );
    expect(answering).toEqual({ replicas: 1, reason: 'KeepAlive', lastActivityTime: at(-60_000) });
  });

  it('when the status already reports the deadline, then it stays reported until the instance answers', () => {
    const stillStuck = decideHibernation(
      input({
        readySince: undefined,
        startDeadlineMs: 20_000,
        startAttempt: { since: at(-1_000), exceeded: true },
      }),
    );
    expect(stillStuck).toMatchObject({ replicas: 1, reason: 'AwaitingReady', startDeadlineExceeded: true });
    const answering = decideHibernation(
      input({
        readySince: at(-500),
        startDeadlineMs: 20_000,
        startAttempt: { since: at(-1_000), exceeded: true },
      }),
    );
    expect(answering.startDeadlineExceeded).toBeUndefined();
  });

  it('when no start attempt is recorded yet (it just stopped answering), then the deadline counts from now', () => {
    const decision = decideHibernation(
      input({ createdAt: at(-600_000), readySince: undefined, startDeadlineMs: 20_000 }),
    );
    expect(decision).toMatchObject({ replicas: 1, reason: 'AwaitingReady', recheckAfterMs: 20_000 });
    expect(decision.startDeadlineExceeded).toBeUndefined();
  });

  it('when the start attempt is dated far ahead of the clock, then it is ignored and the deadline counts from now', () => {
    const decision = decideHibernation(
      input({
        readySince: undefined,
        startDeadlineMs: 20_000,
        startAttempt: { since: at(3_600_000), exceeded: false },
      }),
    );
    expect(decision).toMatchObject({ reason: 'AwaitingReady', recheckAfterMs: 20_000 });
  });

  it('when a hibernated instance is woken, then the start deadline does not change the wake', () => {
    const woken = decideHibernation(
      input({
        readySince: undefined,
        startDeadlineMs: 1_000,
        startAttempt: { since: at(-60_000), exceeded: true },
        wakeRequestedAt: at(-1_000),
        previous: { hibernatedAt: at(-5_000) },
      }),
    );
    expect(woken).toMatchObject({ replicas: 1, reason: 'WakeRequested', transition: 'Wake' });
  });

  it('when a slow first start has just become Ready, then it gets a full idleAfter from that moment', () => {
    const decision = decideHibernation(input({ createdAt: at(-30_000), readySince: at(-2_000) }));
    expect(decision).toMatchObject({ replicas: 1, reason: 'RecentActivity', recheckAfterMs: 8_000 });
  });

  it('when a request came after the instance became Ready, then idleness counts from the request', () => {
    const decision = decideHibernation(input({ readySince: at(-9_000), activityRenewedAt: at(-3_000) }));
    expect(decision).toMatchObject({ replicas: 1, reason: 'RecentActivity', recheckAfterMs: 7_000 });
  });

  it('when Ready for idleAfter with no activity since, then it hibernates', () => {
    const decision = decideHibernation(input({ createdAt: at(-30_000), readySince: at(-10_000) }));
    expect(decision).toMatchObject({ replicas: 0, reason: 'IdleTimeout', transition: 'Hibernate' });
  });

  it('when a woken instance takes longer than idleAfter to answer, then it is not hibernated again before it does', () => {
    const decision = decideHibernation(
      input({
        wakeRequestedAt: at(-15_000),
        readySince: undefined,
        previous: { lastActivityTime: at(-15_000) },
      }),
    );
    expect(decision).toMatchObject({ replicas: 1, reason: 'AwaitingReady' });
  });

  it('when hibernated, then not being Ready does not wake it', () => {
    const decision = decideHibernation(
      input({ readySince: undefined, previous: { hibernatedAt: at(-5_000) } }),
    );
    expect(decision).toMatchObject({ replicas: 0, reason: 'Hibernated' });
  });
});

describe('readySinceOf', () => {
  const ready = (status: string, lastTransitionTime: string) => [
    { type: 'Ready', status, lastTransitionTime },
  ];

  it('when no replica is ready, then there is no ready time, whatever the previous status said', () => {
    expect(
      readySinceOf({ readyReplicas: 0, previousConditions: ready('True', at(-5_000)), now: T0 }),
    ).toBeUndefined();
  });

  it('when the status already says Ready, then it is ready since that transition', () => {
    expect(readySinceOf({ readyReplicas: 1, previousConditions: ready('True', at(-5_000)), now: T0 })).toBe(
      at(-5_000),
    );
  });

  it('when a replica has just become ready and the status still says not Ready, then it is ready since now', () => {
    expect(readySinceOf({ readyReplicas: 1, previousConditions: ready('False', at(-5_000)), now: T0 })).toBe(
      at(0),
    );
    expect(readySinceOf({ readyReplicas: 1, now: T0 })).toBe(at(0));
  });

  it('when the recorded transition is ahead of now, then it counts as now', () => {
    expect(readySinceOf({ readyReplicas: 1, previousConditions: ready('True', at(5_000)), now: T0 })).toBe(
      at(0),
    );
  });
});
