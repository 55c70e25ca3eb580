import fs from 'node:fs';
import path from 'node:path';
import { startProcess } from '../process.js';
import { loadEngineIdentity } from './engine-identity.js';
import { requireFauxtonRelease } from './fauxton-release.js';
import { couchEngineHandle, launchUntilUp, LOOPBACK } from './launch.js';
import { standInServerScript } from './stand-in-build.js';
import { STAND_IN_CONFIG_ENV, type StandInConfig } from './stand-in-config.js';
import type { CouchEngine, CouchEngineOptions } from './types.js';

/**
 * Runs the pouchdb-server stand-in (see pouchdb-stand-in-server.ts) as its own Node.js process on
 * a loopback port, with its databases in `dataDir`, and resolves once GET /_up answers.
 * It runs as plain `node` on the built script (stand-in-build.ts): one process, so stopping it
 * leaves nothing behind, and no TypeScript loader on the cold-start path.
 */
export async function startPouchDbEngine(
  options: CouchEngineOptions & {
    /** Where to read SETTEE_CACHE_DIR, the cache holding Fauxton (default: process.env). */
    env?: NodeJS.ProcessEnv;
  },
): Promise<CouchEngine> {
  // Before anything starts: without it /_utils would not be CouchDB's, so the engine does not run.
  const fauxtonDir = requireFauxtonRelease(options.env);
  const dataDir = path.resolve(options.dataDir);
  // Synchronous, as the real engine's start (apache-couchdb-engine.ts): on the wake path.
  fs.mkdirSync(dataDir, { recursive: true });
  const identity = loadEngineIdentity(dataDir, options.uuid);
  const script = await standInServerScript();
  const host = options.host ?? LOOPBACK;

  const launched = await launchUntilUp({
    what: 'pouchdb-server stand-in',
    port: options.port,
    host,
    onStarted: options.onStarted,
    waitUntilUp: options.waitUntilUp,
    start: async (port) => {
      const config: StandInConfig = {
        host,
        port,
        dataDir,
        admin: options.admin,
        uuid: identity.uuid,
        secret: identity.secret,
        fauxtonDir,
      };
      return (options.startProcess ?? startProcess)({
        name: `pouchdb-stand-in:${options.name ?? port}`,
        command: process.execPath,
        args: [script],
        cwd: dataDir,
        env: { ...process.env, [STAND_IN_CONFIG_ENV]: JSON.stringify(config) },
      });
    },
  });

  return couchEngineHandle({ kind: 'pouchdb-server', host, uuid: identity.uuid, launched });
}
