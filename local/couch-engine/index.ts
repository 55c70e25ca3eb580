import { COUCHDB_BIN_ENV, startApacheCouchDbEngine } from './apache-couchdb-engine.js';
import { CouchEngineUnavailableError } from './errors.js';
import { startPouchDbEngine } from './pouchdb-engine.js';
import type { CouchEngine, CouchEngineKind, CouchEngineOptions } from './types.js';

export { COUCHDB_BIN_ENV } from './apache-couchdb-engine.js';
export {
  CouchEngineUnavailableError,
  FauxtonReleaseMissingError,
  InvalidCouchEngineConfigError,
} from './errors.js';
export type { CouchEngine, CouchEngineAdmin, CouchEngineKind, CouchEngineOptions } from './types.js';

export interface StartCouchEngineOptions extends CouchEngineOptions {
  /** Default: {@link defaultCouchEngineKind}. */
  kind?: CouchEngineKind;
  /** Where to read SETTEE_COUCHDB_BIN and SETTEE_CACHE_DIR (default: process.env). */
  env?: NodeJS.ProcessEnv;
}

/** The engines this machine can run: the stand-in always, Apache CouchDB when SETTEE_COUCHDB_BIN is set. */
export function availableCouchEngineKinds(env: NodeJS.ProcessEnv = process.env): CouchEngineKind[] {
  return env[COUCHDB_BIN_ENV] ? ['pouchdb-server', 'apache-couchdb'] : ['pouchdb-server'];
}

/** Apache CouchDB when SETTEE_COUCHDB_BIN names one, else the pouchdb-server stand-in. */
export function defaultCouchEngineKind(env: NodeJS.ProcessEnv = process.env): CouchEngineKind {
  return env[COUCHDB_BIN_ENV] ? 'apache-couchdb' : 'pouchdb-server';
}

/**
 * Starts a CouchDB 3.x-compatible server on 127.0.0.1 with its data in `dataDir` and resolves once
 * GET /_up answers 200 (it fails with the process output if the engine exits first).
 */
export async function startCouchEngine(options: StartCouchEngineOptions): Promise<CouchEngine> {
  const { kind: requested, env = process.env, ...engineOptions } = options;
  const kind = requested ?? defaultCouchEngineKind(env);
  if (kind === 'pouchdb-server') return startPouchDbEngine({ ...engineOptions, env });
  const couchdbBin = env[COUCHDB_BIN_ENV];
  if (!couchdbBin) {
    throw new CouchEngineUnavailableError(
      `the apache-couchdb engine needs ${COUCHDB_BIN_ENV} (path to bin/couchdb)`,
    );
  }
  return startApacheCouchDbEngine({ ...engineOptions, couchdbBin });
}
