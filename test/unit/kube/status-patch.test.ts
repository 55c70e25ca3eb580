import { isSameStatus, mergePatchBetween } from '../../../kube/status-patch.js';

describe('the status merge patch', () => {
  it('when a field disappears from the status, then the merge patch nulls it', () => {
    expect(mergePatchBetween({ phase: 'Hibernated', hibernatedAt: 't' }, { phase: 'Waking' })).toEqual({
      phase: 'Waking',
      hibernatedAt: null,
    });
  });

  it('when a nested field is dropped, then the patch nulls it at its depth, so the API server removes it', () => {
    const previous = {
      queueUrl: 'u',
      signingKeys: { currentGeneration: 0, nextGeneration: 1, promoteAfter: 't' },
    };
    const next = { queueUrl: 'u', signingKeys: { currentGeneration: 1 } };
    expect(mergePatchBetween(previous, next)).toEqual({
      queueUrl: 'u',
      signingKeys: { currentGeneration: 1, nextGeneration: null, promoteAfter: null },
    });
  });

  it('when top-level fields are dropped or arrays change, then they are nulled or replaced whole', () => {
    expect(
      mergePatchBetween(
        { envSecret: 's', conditions: [{ type: 'A' }, { type: 'B' }] },
        { conditions: [{ type: 'A' }] },
      ),
    ).toEqual({
      envSecret: null,
      conditions: [{ type: 'A' }],
    });
  });

  it('when two statuses differ only in key order, then they are the same', () => {
    expect(isSameStatus({ phase: 'Running', endpoint: 'e' }, { endpoint: 'e', phase: 'Running' })).toBe(true);
    expect(isSameStatus(undefined, { phase: 'Running' })).toBe(false);
  });
});
