import { isolatesResponse } from '../../../../gateway/proxy/path-form-isolation.js';

const basePath = '/db/ns/app';

describe('isolatesResponse', () => {
  it("when a path-form response is anything but Fauxton's, then it is sandboxed", () => {
    for (const path of [
      '/',
      '/db/doc/page.html',
      '/db/_design/d/_show/s/doc',
      '/_session',
      '/_utilsx',
      '/db/_utils/x',
    ]) {
      expect(isolatesResponse(basePath, path)).toBe(true);
    }
  });

  it('when the path form asks for Fauxton under /_utils, then it is not sandboxed', () => {
    for (const path of [
      '/_utils',
      '/_utils/',
      '/_utils/index.html',
      '/_utils/dashboard.assets/js/bundle.js',
      '/_utils/?x=/../a',
    ]) {
      expect(isolatesResponse(basePath, path)).toBe(false);
    }
  });

  it('when a /_utils path could lead elsewhere once decoded or normalised, then it is sandboxed', () => {
    for (const path of [
      '/_utils/../db/doc/page.html',
      '/_utils/..',
      '/_utils/./x',
      '/_utils/%2e%2e/db/doc/page.html',
      '/_utils/%2E%2e/db/doc',
      '/_utils/..%2fdb%2fdoc',
      '/_utils/..%5cdb',
      '/_utils/..\\db',
    ]) {
      expect(isolatesResponse(basePath, path)).toBe(true);
    }
  });

  it('when the host form is used, then nothing is sandboxed: every instance is an origin of its own', () => {
    expect(isolatesResponse('', '/db/doc/page.html')).toBe(false);
    expect(isolatesResponse('', '/_utils/')).toBe(false);
  });
});
