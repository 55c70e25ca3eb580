import fs from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { startProcess } from '../process.js';
import { loadEngineIdentity } from './engine-identity.js';
import { launchUntilUp } from './launch.js';
import { STAND_IN_CONFIG_ENV, type StandInConfig } from './stand-in-config.js';
import type { CouchEngine, CouchEngineOptions } from './types.js';

const STAND_IN_SCRIPT = fileURLToPath(new URL('./pouchdb-stand-in-server.ts', import.meta.url));

/**
 * Runs the pouchdb-server stand-in (see pouchdb-stand-in-server.ts) as its own Node.js process on
 * a loopback port, with its databases in `dataDir`, and resolves once GET /_up answers.
 * `node --import tsx` keeps it one process, so stopping it leaves nothing behind.
 */
export async function startPouchDbEngine(options: CouchEngineOptions): Promise<CouchEngine> {
  const dataDir = path.resolve(options.dataDir);
  await fs.mkdir(dataDir, { recursive: true });
  const identity = await loadEngineIdentity(dataDir, options.uuid);
  const tsxLoader = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

  const { process: proc, port } = await launchUntilUp({
    what: 'pouchdb-server stand-in',
    port: options.port,
    start: async (port) => {
      const config: StandInConfig = {
        port,
        dataDir,
        admin: options.admin,
        uuid: identity.uuid,
        secret: identity.secret,
      };
      return startProcess({
        name: `pouchdb-stand-in:${options.name ?? port}`,
        command: process.execPath,
        args: ['--import', tsxLoader, STAND_IN_SCRIPT],
        cwd: dataDir,
        env: { ...process.env, [STAND_IN_CONFIG_ENV]: JSON.stringify(config) },
      });
    },
  });

  let stopped: Promise<void> | undefined;
  return {
    kind: 'pouchdb-server',
    url: `http://127.0.0.1:${port}`,
    port,
    uuid: identity.uuid,
    pid: proc.pid,
    output: () => proc.output(),
    stop: () => (stopped ??= proc.stop()),
  };
}
