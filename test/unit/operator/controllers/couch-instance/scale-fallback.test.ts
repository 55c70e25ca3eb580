import { ApiException } from '@kubernetes/client-node';
import {
  appliesWholeAfterScaleFailure,
  SCALE_RBAC_RULE,
} from '../../../../../operator/controllers/couch-instance/scale-fallback.js';
import { createMemoryLogger } from '../../../../helpers/memory-logger.js';

function answered(code: number, reason: string) {
  return new ApiException(code, 'Unsuccessful HTTP Request', { kind: 'Status', code, reason }, {});
}

describe('appliesWholeAfterScaleFailure', () => {
  it('when the Scale write conflicts, then the whole StatefulSet is applied instead, with no warning', () => {
    const { logger, entries } = createMemoryLogger();
    expect(appliesWholeAfterScaleFailure(answered(409, 'Conflict'), logger)).toBe(true);
    expect(entries).toEqual([]);
  });

  it('when the role may not patch statefulsets/scale (403), then the whole StatefulSet is applied instead, and the first time a warning names the rule', () => {
    const { logger, entries } = createMemoryLogger();
    expect(appliesWholeAfterScaleFailure(answered(403, 'Forbidden'), logger)).toBe(true);
    expect(appliesWholeAfterScaleFailure(answered(403, 'Forbidden'), logger)).toBe(true);
    expect(entries).toEqual([expect.objectContaining({ level: 'warn', rule: SCALE_RBAC_RULE })]);
    expect(SCALE_RBAC_RULE).toContain('statefulsets/scale');
  });

  it('when the write fails otherwise (invalid, the API server down), then the reconcile fails', () => {
    const { logger } = createMemoryLogger();
    expect(appliesWholeAfterScaleFailure(answered(422, 'Invalid'), logger)).toBe(false);
    expect(appliesWholeAfterScaleFailure(answered(500, 'InternalError'), logger)).toBe(false);
    expect(appliesWholeAfterScaleFailure(new Error('connect ECONNREFUSED'), logger)).toBe(false);
  });
});
