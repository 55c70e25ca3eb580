import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  availableCouchEngineKinds,
  defaultCouchEngineKind,
  describeCouchEngine,
} from '../../../../local/couch-engine/index.js';

describe('the engines this machine runs', () => {
  let release: string;

  beforeAll(async () => {
    release = await fs.mkdtemp(path.join(os.tmpdir(), 'settee-release-'));
    await fs.mkdir(path.join(release, 'bin'));
    await fs.mkdir(path.join(release, 'etc'));
    await fs.writeFile(path.join(release, 'bin', 'couchdb'), '#!/bin/sh\n', { mode: 0o755 });
    await fs.writeFile(path.join(release, 'etc', 'default.ini'), '');
  });

  afterAll(() => fs.rm(release, { recursive: true, force: true }));

  it('when SETTEE_COUCHDB_RELEASE is none, then only the pouchdb-server stand-in is available, and the one line says why', () => {
    const env = { SETTEE_COUCHDB_RELEASE: 'none' };
    expect(availableCouchEngineKinds(env)).toEqual(['pouchdb-server']);
    expect(defaultCouchEngineKind(env)).toBe('pouchdb-server');
    expect(describeCouchEngine(env)).toBe(
      'CouchDB engine: pouchdb-server stand-in, because SETTEE_COUCHDB_RELEASE=none',
    );
  });

  it('when SETTEE_COUCHDB_RELEASE names a release folder, then Apache CouchDB is available too and the default', () => {
    const env = { SETTEE_COUCHDB_RELEASE: release };
    expect(availableCouchEngineKinds(env)).toEqual(['pouchdb-server', 'apache-couchdb']);
    expect(defaultCouchEngineKind(env)).toBe('apache-couchdb');
    expect(describeCouchEngine(env)).toBe(`CouchDB engine: Apache CouchDB (${release})`);
  });

  it('when no release is beside the project and none is named, then the stand-in serves and the line says how to get one', () => {
    const emptyCache = path.join(release, 'no-cache');
    // A project root without ../shared/engines/: the unpack script finds nothing there.
    const env = { SETTEE_CACHE_DIR: emptyCache, SETTEE_SHARED_ENGINES_DIR: path.join(release, 'nowhere') };
    expect(defaultCouchEngineKind(env)).toBe('pouchdb-server');
    expect(describeCouchEngine(env)).toMatch(
      /^CouchDB engine: pouchdb-server stand-in, because no Apache CouchDB release is available \(put it in \.\.\/shared\/engines\/ or set SETTEE_COUCHDB_RELEASE\)$/,
    );
  });
});
