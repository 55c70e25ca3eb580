import { startApacheCouchDbEngine } from './apache-couchdb-engine.js';
import { locateCouchDbRelease } from './couchdb-release.js';
import { loadEngineIdentity } from './engine-identity.js';
import { CouchEngineUnavailableError } from './errors.js';
import { LOOPBACK } from './launch.js';
import { startPouchDbEngine } from './pouchdb-engine.js';
import { waitUntilServing } from './wait-until-serving.js';
import type { CouchEngine, CouchEngineKind, CouchEngineOptions } from './types.js';

export { startApacheCouchDbEngine, type CouchDbContainer } from './apache-couchdb-engine.js';
export {
  COUCHDB_RELEASE_ENV,
  describeCouchEngine,
  locateCouchDbRelease,
  type CouchDbRelease,
} from './couchdb-release.js';
export {
  ContainerExitedError,
  CouchEngineUnavailableError,
  FauxtonReleaseMissingError,
  InvalidCouchEngineConfigError,
} from './errors.js';
export type { CouchEngine, CouchEngineAdmin, CouchEngineKind, CouchEngineOptions } from './types.js';

export interface StartCouchEngineOptions extends CouchEngineOptions {
  /** Default: {@link defaultCouchEngineKind}. */
  kind?: CouchEngineKind;
  /** Where to read SETTEE_COUCHDB_RELEASE and SETTEE_CACHE_DIR (default: process.env). */
  env?: NodeJS.ProcessEnv;
}

/** The engines this machine can run: the stand-in always, Apache CouchDB when a release is available. */
export function availableCouchEngineKinds(env: NodeJS.ProcessEnv = process.env): CouchEngineKind[] {
  return locateCouchDbRelease(env) ? ['pouchdb-server', 'apache-couchdb'] : ['pouchdb-server'];
}

/** Apache CouchDB when a release is available (couchdb-release.ts), else the pouchdb-server stand-in. */
export function defaultCouchEngineKind(env: NodeJS.ProcessEnv = process.env): CouchEngineKind {
  return locateCouchDbRelease(env) ? 'apache-couchdb' : 'pouchdb-server';
}

/**
 * Starts a CouchDB 3.x-compatible server outside any pod, on 127.0.0.1 with its data in `dataDir`,
 * and resolves once it serves its admin and its system databases (it fails with the process output
 * if the engine exits first). Apache CouchDB is started as `docker run -e COUCHDB_USER -e COUCHDB_PASSWORD -e
 * COUCHDB_SECRET couchdb:3` would start it, with a mounted local.d file making it a single node
 * with the server uuid kept in dataDir.
 */
export async function startCouchEngine(options: StartCouchEngineOptions): Promise<CouchEngine> {
  const { kind: requested, env = process.env, ...engineOptions } = options;
  const kind = requested ?? defaultCouchEngineKind(env);
  if (kind === 'pouchdb-server') return startPouchDbEngine({ ...engineOptions, env });
  const release = locateCouchDbRelease(env);
  if (!release) {
    throw new CouchEngineUnavailableError(
      'the apache-couchdb engine needs a CouchDB release: ../shared/engines/ beside the project, or SETTEE_COUCHDB_RELEASE',
    );
  }
  const identity = loadEngineIdentity(engineOptions.dataDir, engineOptions.uuid);
  const engine = await startApacheCouchDbEngine({
    release,
    dataDir: engineOptions.dataDir,
    network: { kind: 'published', host: engineOptions.host ?? LOOPBACK, port: engineOptions.port },
    container: {
      // A single node (system databases made at start, as the operator's configuration has it).
      etc: new Map([['local.d/single-node.ini', `[couchdb]\nuuid = ${identity.uuid}\nsingle_node = true\n`]]),
      env: {
        COUCHDB_USER: engineOptions.admin.username,
        COUCHDB_PASSWORD: engineOptions.admin.password,
        COUCHDB_SECRET: identity.secret,
      },
    },
    ...(engineOptions.name ? { name: engineOptions.name } : {}),
    ...(engineOptions.onStarted ? { onStarted: engineOptions.onStarted } : {}),
    startProcess: engineOptions.startProcess,
  });
  try {
    await waitUntilServing(engine, engineOptions.admin);
  } catch (err) {
    await engine.stop();
    throw err;
  }
  return engine;
}
