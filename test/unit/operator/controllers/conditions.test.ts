import type { Condition } from '../../../../api/conditions.js';
import { mergeConditions } from '../../../../operator/controllers/conditions.js';

const NOW = '2026-01-01T12:00:00.000Z';

describe('mergeConditions', () => {
  const ready = (status: 'True' | 'False', time: string): Condition => ({
    type: 'Ready',
    status,
    reason: 'X',
    message: 'm',
    lastTransitionTime: time,
  });

  it('when a status is unchanged, then lastTransitionTime is kept even if the reason changes', () => {
    const [merged] = mergeConditions({
      previous: [ready('False', '2025-01-01T00:00:00Z')],
      updates: [{ type: 'Ready', status: 'False', reason: 'Y', message: 'other' }],
      generation: 2,
      now: NOW,
    });
    expect(merged).toEqual({
      type: 'Ready',
      status: 'False',
      reason: 'Y',
      message: 'other',
      lastTransitionTime: '2025-01-01T00:00:00Z',
      observedGeneration: 2,
    });
  });

  it('when a status changes, then lastTransitionTime becomes now', () => {
    const [merged] = mergeConditions({
      previous: [ready('False', '2025-01-01T00:00:00Z')],
      updates: [{ type: 'Ready', status: 'True', reason: 'Running', message: 'm' }],
      generation: 2,
      now: NOW,
    });
    expect(merged?.lastTransitionTime).toBe(NOW);
  });

  it('when a previous condition of another type exists, then it is kept', () => {
    const merged = mergeConditions({
      previous: [{ ...ready('True', NOW), type: 'BackupsScheduled' }],
      updates: [{ type: 'Ready', status: 'True', reason: 'Running', message: 'm' }],
      generation: 1,
      now: NOW,
    });
    expect(merged.map((c) => c.type)).toEqual(['Ready', 'BackupsScheduled']);
  });
});
