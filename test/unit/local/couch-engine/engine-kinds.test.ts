import { availableCouchEngineKinds, defaultCouchEngineKind } from '../../../../local/couch-engine/index.js';

describe('availableCouchEngineKinds', () => {
  it('when SETTEE_COUCHDB_BIN is unset, then only the pouchdb-server stand-in is available and the default', () => {
    expect(availableCouchEngineKinds({})).toEqual(['pouchdb-server']);
    expect(defaultCouchEngineKind({})).toBe('pouchdb-server');
  });

  it('when SETTEE_COUCHDB_BIN is set, then Apache CouchDB is available too and the default', () => {
    const env = { SETTEE_COUCHDB_BIN: '/opt/couchdb/bin/couchdb' };
    expect(availableCouchEngineKinds(env)).toEqual(['pouchdb-server', 'apache-couchdb']);
    expect(defaultCouchEngineKind(env)).toBe('apache-couchdb');
  });
});
