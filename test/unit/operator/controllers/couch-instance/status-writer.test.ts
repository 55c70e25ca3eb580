import {
  buildStatusPatch,
  isSameStatus,
} from '../../../../../operator/controllers/couch-instance/status-writer.js';

describe('status patches', () => {
  it('when a field disappears from the status, then the merge patch nulls it', () => {
    expect(buildStatusPatch({ phase: 'Hibernated', hibernatedAt: 't' }, { phase: 'Waking' })).toEqual({
      phase: 'Waking',
      hibernatedAt: null,
    });
  });

  it('when two statuses differ only in key order, then they are the same', () => {
    expect(isSameStatus({ phase: 'Running', endpoint: 'e' }, { endpoint: 'e', phase: 'Running' })).toBe(true);
    expect(isSameStatus(undefined, { phase: 'Running' })).toBe(false);
  });
});
