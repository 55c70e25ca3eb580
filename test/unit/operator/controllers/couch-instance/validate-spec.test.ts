import { findSpecViolations } from '../../../../../operator/controllers/couch-instance/validate-spec.js';
import { DEFAULT_FREE_ENVELOPE } from '../../../../../api/free-envelope.js';

describe('findSpecViolations', () => {
  it('when the spec breaks the schema, then ajv reports each field by path', () => {
    expect(findSpecViolations({ plan: 'gold', keepAlive: 'yes' }, DEFAULT_FREE_ENVELOPE)).toEqual([
      'spec.plan must be equal to one of the allowed values',
      'spec.keepAlive must be boolean',
    ]);
  });

  it('when the schema holds but a rule does not, then the rule messages are returned', () => {
    expect(
      findSpecViolations(
        { plan: 'free', addons: { regionPinning: { region: 'eu' } } },
        DEFAULT_FREE_ENVELOPE,
      ),
    ).toEqual(['addons.regionPinning requires plan: paid']);
  });
});
