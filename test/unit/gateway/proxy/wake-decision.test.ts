import { ANNOTATION_WAKE_REQUESTED, SETTEE_API_VERSION } from '../../../../api/contract.js';
import type { CouchInstance, CouchInstanceStatus } from '../../../../api/couch-instance.js';
import { decideWake } from '../../../../gateway/proxy/wake-decision.js';

function instance(status: CouchInstanceStatus | undefined, wakeRequested?: string): CouchInstance {
  return {
    apiVersion: SETTEE_API_VERSION,
    kind: 'CouchInstance',
    metadata: {
      name: 'app',
      namespace: 'ns',
      annotations: wakeRequested ? { [ANNOTATION_WAKE_REQUESTED]: wakeRequested } : {},
    },
    spec: {},
    ...(status ? { status } : {}),
  };
}

const now = new Date('2026-01-01T12:00:00.000Z');

describe('decideWake', () => {
  it('when the instance has no hibernatedAt, then it is not hibernated and no wake is asked for', () => {
    expect(decideWake(instance(undefined), now)).toEqual({ kind: 'not-hibernated' });
    expect(decideWake(instance({ phase: 'Starting' }), now)).toEqual({ kind: 'not-hibernated' });
  });

  it('when it hibernated and no wake was asked for since, then a wake is asked for at the current time', () => {
    expect(decideWake(instance({ phase: 'Hibernated', hibernatedAt: '2026-01-01T11:00:00Z' }), now)).toEqual({
      kind: 'request',
      episode: '2026-01-01T11:00:00Z',
      requestedAt: '2026-01-01T12:00:00.000Z',
    });
  });

  it('when an earlier wake request predates this hibernation, then a new one is asked for', () => {
    const decision = decideWake(
      instance({ hibernatedAt: '2026-01-01T11:00:00Z' }, '2026-01-01T10:00:00Z'),
      now,
    );
    expect(decision.kind).toBe('request');
  });

  it('when a wake was already asked for after it hibernated, then none is asked for again', () => {
    expect(
      decideWake(instance({ hibernatedAt: '2026-01-01T11:00:00Z' }, '2026-01-01T11:00:05Z'), now),
    ).toEqual({
      kind: 'already-requested',
      episode: '2026-01-01T11:00:00Z',
    });
  });

  it("when the gateway's clock is behind the operator's, then the time written is still after hibernatedAt", () => {
    const decision = decideWake(instance({ hibernatedAt: '2026-01-01T12:00:30Z' }), now);
    expect(decision).toMatchObject({ kind: 'request', requestedAt: '2026-01-01T12:00:31.000Z' });
  });
});
