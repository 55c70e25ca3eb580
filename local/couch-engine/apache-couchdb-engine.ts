import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { getFreePort } from '../ports.js';
import { startProcess } from '../process.js';
import { buildCouchDbIni, buildCouchDbIniFilesEnv } from './couchdb-ini.js';
import { buildCouchDbVmArgs, epmdModeFor } from './couchdb-vm-args.js';
import { loadEngineIdentity } from './engine-identity.js';
import { CouchEngineUnavailableError } from './errors.js';
import { couchEngineHandle, launchUntilUp, LOOPBACK } from './launch.js';
import type { CouchEngine, CouchEngineOptions } from './types.js';

/** Names a real Apache CouchDB 3.x `bin/couchdb`; when set, it runs instead of the stand-in. */
export const COUCHDB_BIN_ENV = 'SETTEE_COUCHDB_BIN';

const READY_TIMEOUT_MS = 30_000;
const STOP_GRACE_MS = 10_000;

/**
 * Runs a real Apache CouchDB 3.x from an existing install (a release layout: bin/couchdb,
 * etc/default.ini, releases/start_erl.data) as one single-node instance. Each instance gets its
 * own ini file, layered over the install's default.ini and default.d/ through COUCHDB_INI_FILES
 * (the install's local.ini and local.d/ are left out: they configure the system's own CouchDB),
 * and its own vm.args through COUCHDB_ARGS_FILE (see couchdb-vm-args.ts), both in a private
 * temporary folder removed on stop. Several instances run side by side.
 */
export async function startApacheCouchDbEngine(
  options: CouchEngineOptions & { couchdbBin: string },
): Promise<CouchEngine> {
  const install = await locateInstall(options.couchdbBin);
  const dataDir = path.resolve(options.dataDir);
  await fs.mkdir(dataDir, { recursive: true });
  const identity = await loadEngineIdentity(dataDir, options.uuid);
  const host = options.host ?? LOOPBACK;
  const runDir = await fs.mkdtemp(path.join(os.tmpdir(), 'settee-couchdb-'));
  const iniFile = path.join(runDir, 'settee.ini');
  const vmArgsFile = path.join(runDir, 'vm.args');
  const env = {
    ...process.env,
    COUCHDB_INI_FILES: buildCouchDbIniFilesEnv([...install.defaultIniFiles, iniFile]),
    COUCHDB_ARGS_FILE: vmArgsFile,
    // bin/couchdb runs from the install's root; a crash dump belongs with this run, not there.
    ERL_CRASH_DUMP: path.join(runDir, 'erl_crash.dump'),
  };

  try {
    const launched = await launchUntilUp({
      what: 'Apache CouchDB',
      port: options.port,
      host,
      readyTimeoutMs: READY_TIMEOUT_MS,
      start: async (port) => {
        const ini = buildCouchDbIni({
          host,
          port,
          dataDir,
          runDir,
          admin: options.admin,
          uuid: identity.uuid,
          secret: identity.secret,
        });
        const vmArgs = buildCouchDbVmArgs({
          nodeName: identity.nodeName,
          cookie: randomBytes(20).toString('hex'),
          distributionPort: await getFreePortOtherThan(port),
          epmd: install.epmd,
          baseVmArgs: install.baseVmArgs,
        });
        await fs.writeFile(iniFile, ini, { mode: 0o600 });
        await fs.writeFile(vmArgsFile, vmArgs, { mode: 0o600 });
        return startProcess({
          name: `couchdb:${options.name ?? port}`,
          command: install.bin,
          args: [],
          cwd: install.root,
          env,
        });
      },
    });
    return couchEngineHandle({
      kind: 'apache-couchdb',
      host,
      uuid: identity.uuid,
      launched,
      defaultGraceMs: STOP_GRACE_MS,
      afterStop: () => removeDir(runDir),
    });
  } catch (err) {
    await removeDir(runDir);
    throw err;
  }
}

interface CouchDbInstall {
  bin: string;
  root: string;
  /** default.ini, then default.d/ when present. */
  defaultIniFiles: string[];
  baseVmArgs: string | undefined;
  epmd: 'none' | 'shared';
}

async function locateInstall(couchdbBin: string): Promise<CouchDbInstall> {
  const bin = path.resolve(couchdbBin);
  await fs.access(bin, fs.constants.X_OK).catch((err: unknown) => {
    throw new CouchEngineUnavailableError(`${COUCHDB_BIN_ENV}=${couchdbBin} is not an executable file`, {
      cause: err,
    });
  });
  const root = path.resolve(path.dirname(bin), '..');
  const defaultIni = path.join(root, 'etc', 'default.ini');
  await fs.access(defaultIni).catch((err: unknown) => {
    throw new CouchEngineUnavailableError(
      `${defaultIni} is missing: ${COUCHDB_BIN_ENV} must name bin/couchdb inside a CouchDB 3.x install`,
      { cause: err },
    );
  });
  const defaultD = path.join(root, 'etc', 'default.d');
  const hasDefaultD = await fs.stat(defaultD).then(
    (stat) => stat.isDirectory(),
    () => false,
  );
  return {
    bin,
    root,
    defaultIniFiles: hasDefaultD ? [defaultIni, defaultD] : [defaultIni],
    baseVmArgs: await readOptional(path.join(root, 'etc', 'vm.args')),
    epmd: epmdModeFor(await readOptional(path.join(root, 'releases', 'start_erl.data'))),
  };
}

async function readOptional(file: string): Promise<string | undefined> {
  return fs.readFile(file, 'utf8').catch(() => undefined);
}

async function getFreePortOtherThan(taken: number): Promise<number> {
  for (;;) {
    const port = await getFreePort();
    if (port !== taken) return port;
  }
}

function removeDir(dir: string): Promise<void> {
  return fs.rm(dir, { recursive: true, force: true });
}
