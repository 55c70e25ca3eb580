import { ApiException } from '@kubernetes/client-node';
import {
  ScaleFallback,
  SCALE_RBAC_RULE,
} from '../../../../../operator/controllers/couch-instance/scale-fallback.js';
import { createMemoryLogger } from '../../../../helpers/memory-logger.js';

function answered(code: number, reason: string, message = '') {
  const body = { kind: 'Status', code, reason, message };
  return new ApiException(code, 'Unsuccessful HTTP Request', body, {});
}

/** RBAC's refusal, as the API server words it. */
const RBAC_REFUSAL =
  'statefulsets.apps "db" is forbidden: User "system:serviceaccount:settee:operator" cannot patch resource "statefulsets/scale" in API group "apps" in the namespace "t1"';

describe('ScaleFallback', () => {
  it('when the Scale write conflicts, then the whole StatefulSet is applied instead, with no warning, and the next wake tries the Scale again', () => {
    const { logger, entries } = createMemoryLogger();
    const fallback = new ScaleFallback(logger);
    expect(fallback.appliesWholeAfterScaleFailure(answered(409, 'Conflict'))).toBe(true);
    expect(entries).toEqual([]);
    expect(fallback.triesScale()).toBe(true);
  });

  it('when the role may not patch statefulsets/scale (403), then the whole StatefulSet is applied instead, the first time a warning names the rule, and later wakes try no Scale write', () => {
    const { logger, entries } = createMemoryLogger();
    const fallback = new ScaleFallback(logger);
    expect(fallback.triesScale()).toBe(true);
    expect(fallback.appliesWholeAfterScaleFailure(answered(403, 'Forbidden', RBAC_REFUSAL))).toBe(true);
    expect(fallback.triesScale()).toBe(false);
    expect(fallback.appliesWholeAfterScaleFailure(answered(403, 'Forbidden', RBAC_REFUSAL))).toBe(true);
    expect(entries).toEqual([expect.objectContaining({ level: 'warn', rule: SCALE_RBAC_RULE })]);
    expect(SCALE_RBAC_RULE).toContain('statefulsets/scale');
  });

  it('when an admission webhook or policy denies the Scale write (403), then that write is applied whole, with no warning, and the next wake tries the Scale again', () => {
    const { logger, entries } = createMemoryLogger();
    const fallback = new ScaleFallback(logger);
    const denial = 'admission webhook "replicas.policy.example" denied the request: replicas are frozen';
    expect(fallback.appliesWholeAfterScaleFailure(answered(403, 'Forbidden', denial))).toBe(true);
    expect(entries).toEqual([]);
    expect(fallback.triesScale()).toBe(true);
  });

  it('when the write fails otherwise (invalid, the API server down), then the reconcile fails and the next wake tries the Scale again', () => {
    const { logger } = createMemoryLogger();
    const fallback = new ScaleFallback(logger);
    expect(fallback.appliesWholeAfterScaleFailure(answered(422, 'Invalid'))).toBe(false);
    expect(fallback.appliesWholeAfterScaleFailure(answered(500, 'InternalError'))).toBe(false);
    expect(fallback.appliesWholeAfterScaleFailure(new Error('connect ECONNREFUSED'))).toBe(false);
    expect(fallback.triesScale()).toBe(true);
  });
});
