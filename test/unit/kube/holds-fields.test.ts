import { holdsFields } from '../../../kube/holds-fields.js';

const desired = {
  metadata: { name: 'x', labels: { app: 'couchdb' } },
  spec: {
    clusterIP: 'None',
    publishNotReadyAddresses: true,
    ports: [{ name: 'http', port: 5984, targetPort: 'http' }],
  },
};

describe('holdsFields', () => {
  it('when the current object has every desired field with the same value, and defaults beside, then it holds them', () => {
    const current = {
      metadata: { name: 'x', labels: { app: 'couchdb', added: 'by-hand' }, resourceVersion: '7' },
      spec: {
        clusterIP: 'None',
        clusterIPs: ['None'],
        publishNotReadyAddresses: true,
        ports: [{ name: 'http', port: 5984, targetPort: 'http', protocol: 'TCP' }],
      },
    };
    expect(holdsFields(current, desired)).toBe(true);
  });

  it('when a desired field was removed (as a write of false, its zero value, stores it), then it does not', () => {
    const { publishNotReadyAddresses: _removed, ...spec } = desired.spec;
    expect(holdsFields({ ...desired, spec }, desired)).toBe(false);
  });

  it('when a value, an array item or the array length differs, or the shape does, then it does not', () => {
    expect(holdsFields({ ...desired, metadata: { name: 'x', labels: { app: 'other' } } }, desired)).toBe(
      false,
    );
    const port = { name: 'http', port: 5985, targetPort: 'http' };
    expect(holdsFields({ ...desired, spec: { ...desired.spec, ports: [port] } }, desired)).toBe(false);
    const ports = [...desired.spec.ports, port];
    expect(holdsFields({ ...desired, spec: { ...desired.spec, ports } }, desired)).toBe(false);
    expect(holdsFields({ ...desired, spec: [] }, desired)).toBe(false);
    expect(holdsFields(undefined, desired)).toBe(false);
  });

  it('when a desired field is undefined, then it is not set, so it needs nothing', () => {
    expect(holdsFields({ a: 1 }, { a: 1, b: undefined })).toBe(true);
  });
});
