import { CATCH_UP_FAULTS, catchUpFaults } from '../../../../bench/chaos/catch-up.js';
import { FAULT_KINDS, type FaultKind, type FaultRecord } from '../../../../bench/chaos/nemesis.js';
import { faultsHit } from '../../../../bench/chaos/report.js';

const hit = (kind: FaultKind): FaultRecord => ({ kind, target: 'x', pid: 1, at: 0, recoveryMs: 1 });
const skip = (kind: FaultKind): FaultRecord => ({ kind, target: 'none', pid: -1, at: 0 });
const hitKinds = (faults: FaultRecord[]): Set<string> => new Set(faultsHit(faults).map((f) => f.kind));

describe('the chaos soak catch-up after the planned faults', () => {
  it('when the planned faults hit every kind, then nothing more is injected', async () => {
    const faults = FAULT_KINDS.map(hit);
    const injected: FaultKind[] = [];
    await catchUpFaults(faults, async (kind) => (injected.push(kind), hit(kind)), {
      maxFaults: CATCH_UP_FAULTS,
      untilMs: Date.now() + 60_000,
    });
    expect(injected).toEqual([]);
    expect(faults).toHaveLength(FAULT_KINDS.length);
  });

  it('when three kinds were only skipped and one is skipped again, then the others are injected first, the skipped one after them, and every kind ends hit', async () => {
    const [a, b, c] = FAULT_KINDS.slice(-3) as [FaultKind, FaultKind, FaultKind];
    const faults = [...FAULT_KINDS.slice(0, -3).map(hit), skip(a), skip(b), skip(c)];
    const injected: FaultKind[] = [];
    let aTries = 0;
    await catchUpFaults(
      faults,
      async (kind) => {
        injected.push(kind);
        // The first catch-up try of `a` still finds no target (engines hibernated); the next does.
        return kind === a && aTries++ === 0 ? skip(kind) : hit(kind);
      },
      { maxFaults: CATCH_UP_FAULTS, untilMs: Date.now() + 60_000 },
    );
    expect(injected).toEqual([a, b, c, a]);
    expect(hitKinds(faults)).toEqual(new Set(FAULT_KINDS));
  });

  it('when a kind never finds a target, then the catch-up stops at its count bound with that kind not hit', async () => {
    const [never] = FAULT_KINDS.slice(-1) as [FaultKind];
    const faults = [...FAULT_KINDS.slice(0, -1).map(hit), skip(never)];
    const injected: FaultKind[] = [];
    await catchUpFaults(faults, async (kind) => (injected.push(kind), skip(kind)), {
      maxFaults: 3,
      untilMs: Date.now() + 60_000,
    });
    expect(injected).toEqual([never, never, never]);
    expect(hitKinds(faults).has(never)).toBe(false);
  });

  it('when the time bound has passed, then no fault is started even with kinds not hit', async () => {
    const faults = [skip(FAULT_KINDS[0] as FaultKind)];
    const injected: FaultKind[] = [];
    await catchUpFaults(faults, async (kind) => (injected.push(kind), hit(kind)), {
      maxFaults: CATCH_UP_FAULTS,
      untilMs: Date.now() - 1,
    });
    expect(injected).toEqual([]);
  });
});
