import { isWrittenBy, isWrittenOnlyBy } from '../../../kube/field-writers.js';

const OPERATOR = 'settee-operator';
const withWriters = (...managedFields: { manager: string; operation: string; subresource?: string }[]) => ({
  metadata: { name: 'x', managedFields },
});

describe('isWrittenBy', () => {
  it('when the manager applied or created the object, beside other writers or alone, then it is written by it', () => {
    expect(isWrittenBy(withWriters({ manager: OPERATOR, operation: 'Apply' }), OPERATOR)).toBe(true);
    expect(isWrittenBy(withWriters({ manager: OPERATOR, operation: 'Update' }), OPERATOR)).toBe(true);
    const shared = withWriters(
      { manager: 'kube-controller-manager', operation: 'Update', subresource: 'status' },
      { manager: OPERATOR, operation: 'Apply' },
    );
    expect(isWrittenBy(shared, OPERATOR)).toBe(true);
  });

  it('when the manager is not among the writers, or there are none, then it is not', () => {
    expect(isWrittenBy(withWriters({ manager: 'helm', operation: 'Apply' }), OPERATOR)).toBe(false);
    expect(isWrittenBy(withWriters(), OPERATOR)).toBe(false);
    expect(isWrittenBy({ metadata: { name: 'x' } }, OPERATOR)).toBe(false);
    expect(isWrittenBy(undefined, OPERATOR)).toBe(false);
  });
});

describe('isWrittenOnlyBy', () => {
  it('when the manager is the only writer of the object itself, beside writers of its subresources, then it is', () => {
    expect(isWrittenOnlyBy(withWriters({ manager: OPERATOR, operation: 'Apply' }), OPERATOR)).toBe(true);
    const shared = withWriters(
      { manager: OPERATOR, operation: 'Apply' },
      { manager: 'kube-controller-manager', operation: 'Update', subresource: 'status' },
      { manager: 'kubectl', operation: 'Update', subresource: 'scale' },
    );
    expect(isWrittenOnlyBy(shared, OPERATOR)).toBe(true);
  });

  it('when another client wrote the object itself, or no one did, then it is not', () => {
    const edited = withWriters(
      { manager: OPERATOR, operation: 'Apply' },
      { manager: 'kubectl-edit', operation: 'Update' },
    );
    expect(isWrittenOnlyBy(edited, OPERATOR)).toBe(false);
    expect(isWrittenOnlyBy(withWriters({ manager: 'helm', operation: 'Apply' }), OPERATOR)).toBe(false);
    const statusOnly = withWriters({ manager: OPERATOR, operation: 'Update', subresource: 'status' });
    expect(isWrittenOnlyBy(statusOnly, OPERATOR)).toBe(false);
    expect(isWrittenOnlyBy(withWriters(), OPERATOR)).toBe(false);
    expect(isWrittenOnlyBy(undefined, OPERATOR)).toBe(false);
  });
});
