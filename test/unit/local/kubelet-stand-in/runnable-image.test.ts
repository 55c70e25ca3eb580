import { LABEL_INSTANCE } from '../../../../api/contract.js';
import { canRunLocally, isCouchDbImage } from '../../../../local/kubelet-stand-in/runnable-image.js';
import { isCouchDb3Image } from '../../../../local/kubelet-stand-in/engine-kind-for.js';
import { isPodLoopbackAddress } from '../../../../local/kubelet-stand-in/loopback-address.js';

describe('the images the stand-in runs', () => {
  it.each([
    'couchdb',
    'couchdb:3.5.1',
    'docker.io/library/couchdb:3',
    'mirror.example/ns/couchdb@sha256:abc',
  ])('when the image is %s, then it is CouchDB', (image) => expect(isCouchDbImage(image)).toBe(true));

  it.each(['nginx:1.27', 'couchdb-exporter:1', 'example.com/couchdbx:3'])(
    'when the image is %s, then it is not',
    (image) => expect(isCouchDbImage(image)).toBe(false),
  );

  it.each([
    'couchdb:3',
    'couchdb:3.5.1',
    'docker.io/library/couchdb:3.5',
    'mirror.example/couchdb:3.4.2@sha256:abc',
  ])('when the image is %s, then the Apache CouchDB release runs it', (image) =>
    expect(isCouchDb3Image(image)).toBe(true),
  );

  it.each([
    'couchdb',
    'couchdb:latest',
    'couchdb:2.3.1',
    'couchdb:30',
    'registry.example/custom-build:3.5.1',
  ])(
    'when the image is %s, then it is not CouchDB 3.x by its name, and the pouchdb-server stand-in runs it',
    (image) => expect(isCouchDb3Image(image)).toBe(false),
  );

  it("when a CouchInstance's pod names its own spec.image, then the stand-in runs it", () => {
    const pod = {
      metadata: { labels: { [LABEL_INSTANCE]: 'notes' } },
      spec: { containers: [{ name: 'couchdb', image: 'registry.example/custom-build:7' }] },
    };
    expect(canRunLocally(pod)).toBe(true);
  });

  it('when a pod has two containers, then it cannot run locally', () => {
    const pod = {
      spec: {
        containers: [
          { name: 'a', image: 'couchdb:3' },
          { name: 'b', image: 'couchdb:3' },
        ],
      },
    };
    expect(canRunLocally(pod)).toBe(false);
  });
});

describe('isPodLoopbackAddress', () => {
  it.each([
    ['127.4.5.6', true],
    ['127.0.0.1', false],
    ['10.0.0.1', false],
    [undefined, false],
  ])('when the address is %s, then it is a pod address: %s', (address, expected) => {
    expect(isPodLoopbackAddress(address)).toBe(expected);
  });
});
