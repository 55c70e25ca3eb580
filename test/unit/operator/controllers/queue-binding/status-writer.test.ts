import { mergePatchBetween } from '../../../../../operator/controllers/queue-binding/status-writer.js';

describe('the status merge patch', () => {
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
});
