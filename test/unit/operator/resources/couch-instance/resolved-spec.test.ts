import { resolveSpec } from '../../../../../operator/resources/couch-instance/resolved-spec.js';
import { TEST_DEFAULTS } from './fixtures.js';

describe('resolveSpec', () => {
  it('when the spec is empty, then every default applies', () => {
    expect(resolveSpec({}, TEST_DEFAULTS)).toEqual({
      version: '3.5.1',
      image: 'couchdb:3.5.1',
      plan: 'free',
      keepAlive: false,
      idleAfterMs: 900_000,
      storage: { size: '1Gi' },
      resources: TEST_DEFAULTS.resources,
    });
  });

  it('when largerStorage is on, then its size replaces storage.size', () => {
    const spec = resolveSpec(
      { plan: 'paid', storage: { size: '1Gi' }, addons: { largerStorage: { size: '50Gi' } } },
      TEST_DEFAULTS,
    );
    expect(spec.storage.size).toBe('50Gi');
  });

  it('when only a limit below the default request is given, then the request follows it down', () => {
    const spec = resolveSpec({ resources: { limits: { memory: '128Mi' } } }, TEST_DEFAULTS);
    expect(spec.resources.requests.memory).toBe('128Mi');
    expect(spec.resources.limits.memory).toBe('128Mi');
  });

  it('when only a request above the default limit is given, then the limit follows it up', () => {
    const spec = resolveSpec({ plan: 'paid', resources: { requests: { cpu: '2' } } }, TEST_DEFAULTS);
    expect(spec.resources.requests.cpu).toBe('2');
    expect(spec.resources.limits.cpu).toBe('2');
  });

  it('when regionPinning and an image are set, then both are kept', () => {
    const spec = resolveSpec(
      {
        plan: 'paid',
        image: 'mirror/couchdb:3.4.3',
        version: '3.4.3',
        addons: { regionPinning: { region: 'us-east-1' } },
      },
      TEST_DEFAULTS,
    );
    expect(spec).toMatchObject({ image: 'mirror/couchdb:3.4.3', region: 'us-east-1', version: '3.4.3' });
  });
});
