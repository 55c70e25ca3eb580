import { FAULT_KINDS, type FaultKind, type FaultRecord } from './nemesis.js';
import { faultsHit } from './report.js';

/**
 * The bound of the catch-up after a soak's planned fault times: at most this many more faults,
 * each started within CATCH_UP_MS of the planned faults' end, for the kinds none of them hit (their
 * targets away for a whole target wait, e.g. every engine hibernated). A soak where every kind was
 * hit has none; the short soak's check that every kind is hit fails only when this bound runs out.
 */
export const CATCH_UP_FAULTS = FAULT_KINDS.length;
export const CATCH_UP_MS = 90_000;

/**
 * Injects, after the planned faults (`faults`, appended to), the kinds none of them hit, in turn:
 * a kind skipped again (target 'none') goes after the others, as its target may come back while
 * they are tried. Stops once every kind is hit or the bound (`maxFaults`, `untilMs`) runs out.
 */
export async function catchUpFaults(
  faults: FaultRecord[],
  inject: (kind: FaultKind) => Promise<FaultRecord>,
  bound: { maxFaults: number; untilMs: number },
): Promise<void> {
  const hit = new Set(faultsHit(faults).map((f) => f.kind));
  const missing = FAULT_KINDS.filter((kind) => !hit.has(kind));
  for (let n = 0; n < bound.maxFaults && Date.now() < bound.untilMs; n++) {
    const kind = missing.shift();
    if (kind === undefined) return;
    const fault = await inject(kind);
    faults.push(fault);
    if (fault.target === 'none') missing.push(kind);
  }
}
