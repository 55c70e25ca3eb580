import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startProcess, type ManagedProcess, type StartProcessOptions } from '../process.js';
import type { CouchDbRelease } from './couchdb-release.js';
import { ContainerExitedError, InvalidCouchEngineConfigError } from './errors.js';
import { applyImageEntrypoint, DOCKER_INI, iniFilesIn, type EtcFiles } from './image-entrypoint.js';
import { buildImageEtc, runtimeIni } from './image-layout.js';
import { requireFauxtonRelease } from './fauxton-release.js';
import { couchEngineHandle, launchUntilUp } from './launch.js';
import type { CouchEngine } from './types.js';

// A first start (system databases made) on a loaded 2-core machine took 9-17 s in bench/couchdb-boot.ts.
const READY_TIMEOUT_MS = 60_000;
const STOP_GRACE_MS = 10_000;

/** What a pod gives the `couchdb:3.x` container: its files under /opt/couchdb/etc and its environment. */
export interface CouchDbContainer {
  /** The pod's mounted files, by path under /opt/couchdb/etc (`local.d/10-settee.ini`, ...). */
  etc: EtcFiles;
  env: Readonly<Record<string, string>>;
}

/**
 * A pod's own loopback address, where CouchDB listens on the port its ini says (the container's);
 * or, for an engine outside a pod, an address shared with others and a port of its own, as a
 * published container port (`docker run -p`) would be.
 */
export type EngineNetwork =
  | { kind: 'pod'; podIP: string; containerPort: number }
  | { kind: 'published'; host: string; port?: number | undefined };

export interface ApacheCouchDbEngineOptions {
  release: CouchDbRelease;
  /** The pod's data volume (mounted at /opt/couchdb/data in the image). */
  dataDir: string;
  network: EngineNetwork;
  container: CouchDbContainer;
  /** A label for process names and logs. */
  name?: string;
  /** Each line of the engine's output as it arrives (bench/couchdb-boot.ts times the boot by it). */
  onOutputLine?: (line: string) => void;
  /** Called once the process is spawned, before it serves (CouchEngineOptions.onStarted). */
  onStarted?: (pid: number) => void;
  /** How its process is started (CouchEngineOptions.startProcess). */
  startProcess?: ((options: StartProcessOptions) => ManagedProcess) | undefined;
  /**
   * false: resolve at the spawn (CouchEngineOptions.waitUntilUp); the handle's uuid is then empty,
   * as CouchDB reports the one it uses only once it serves.
   */
  waitUntilUp?: boolean;
}

/**
 * Runs the release as the official image runs it in a pod: the image's etc/ (the release's files,
 * the image's own default.d file and vm.args) with the pod's mounted files over it, the image
 * entrypoint's handling of the container's environment (image-entrypoint.ts), and then only what a
 * container runtime gives differently here (runtimeIni: the pod's address, its volume). Everything
 * the container would write lives in a run folder of its own, removed on stop; the data stays.
 */
export async function startApacheCouchDbEngine(options: ApacheCouchDbEngineOptions): Promise<CouchEngine> {
  const { release, network } = options;
  const host = network.kind === 'pod' ? network.podIP : network.host;
  const dataDir = path.resolve(options.dataDir);
  assertNoSpace(dataDir);
  // A container's start is on the wake path, and its file work is a few small local files: done
  // synchronously (tens of microseconds each) rather than one thread-pool round trip per step,
  // each of which waits for a core on a loaded machine (milliseconds apiece at load 20; traced in
  // docs/cold-start.md).
  const releaseLocalIni = fs.readFileSync(path.join(release.root, 'etc', 'local.ini'), 'utf8');
  const releaseVmArgs = fs.readFileSync(path.join(release.root, 'etc', 'vm.args'), 'utf8');
  const fauxtonDocroot = requireFauxtonRelease();
  fs.mkdirSync(dataDir, { recursive: true });
  const runDir = fs.mkdtempSync(path.join(os.tmpdir(), 'settee-couchdb-'));
  try {
    const etc = buildImageEtc({ releaseLocalIni, releaseVmArgs, mounted: options.container.etc });
    const entry = applyImageEntrypoint({ etc, env: options.container.env });
    if (!entry.started) throw new ContainerExitedError(entry.exitCode, entry.message);
    etc.set(DOCKER_INI, entry.dockerIni);
    etc.set('vm.args', withRuntimeDistribution(entry.vmArgs));
    const inEtc = (file: string): string => path.join(runDir, 'etc', file);
    const write = (file: string, text: string): void => fs.writeFileSync(inEtc(file), text, { mode: 0o600 });
    // CouchDB reads them in this order and writes runtime changes to the last one, docker.ini.
    const written = [
      ...iniFilesIn(etc, 'default.d'),
      'local.ini',
      ...iniFilesIn(etc, 'local.d').filter((file) => file !== DOCKER_INI),
    ];
    const iniFiles = [
      path.join(release.root, 'etc', 'default.ini'),
      ...written.map(inEtc),
      inEtc('runtime.ini'),
      inEtc(DOCKER_INI),
    ];
    for (const folder of new Set([...written, DOCKER_INI].map((file) => path.dirname(inEtc(file)))))
      fs.mkdirSync(folder, { recursive: true });
    for (const file of [...written, DOCKER_INI, 'vm.args']) write(file, etc.get(file) ?? '');
    if (entry.erlangCookie)
      fs.writeFileSync(path.join(runDir, '.erlang.cookie'), entry.erlangCookie, { mode: 0o600 });
    const vmArgsFile = inEtc('vm.args');
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      // The image serves Fauxton from share/www; this release is built without it (its README), so
      // the same Fauxton release the stand-in serves is its /_utils.
      COUCHDB_FAUXTON_DOCROOT: fauxtonDocroot,
      ...options.container.env,
      // The image's HOME is /opt/couchdb: the Erlang cookie file lives there.
      HOME: runDir,
      COUCHDB_INI_FILES: iniFiles.map(assertNoSpace).join(' '),
      COUCHDB_ARGS_FILE: vmArgsFile,
      ERL_CRASH_DUMP: path.join(runDir, 'erl_crash.dump'),
    };
    const launched = await launchUntilUp({
      what: 'Apache CouchDB',
      port: network.kind === 'pod' ? network.containerPort : network.port,
      host,
      readyTimeoutMs: READY_TIMEOUT_MS,
      onStarted: options.onStarted,
      waitUntilUp: options.waitUntilUp,
      start: async (port) => {
        const published = network.kind === 'published' ? { port } : {};
        write('runtime.ini', runtimeIni({ podIP: host, dataDir, ...published }));
        return (options.startProcess ?? startProcess)({
          name: `couchdb:${options.name ?? port}`,
          command: release.bin,
          args: [],
          cwd: release.root,
          env,
          ...(options.onOutputLine ? { onLine: options.onOutputLine } : {}),
        });
      },
    });
    return couchEngineHandle({
      kind: 'apache-couchdb',
      host,
      uuid:
        options.waitUntilUp === false
          ? ''
          : await readServerUuid(`http://${host}:${launched.port}`).catch(() => ''),
      launched,
      defaultGraceMs: STOP_GRACE_MS,
      afterStop: () => fsp.rm(runDir, { recursive: true, force: true }),
    });
  } catch (err) {
    await fsp.rm(runDir, { recursive: true, force: true });
    throw err;
  }
}

/** The uuid CouchDB reports (its ini's, or the one it generated and wrote to docker.ini). */
async function readServerUuid(url: string): Promise<string> {
  const response = await fetch(`${url}/`, { signal: AbortSignal.timeout(5_000) });
  const welcome = (await response.json()) as { uuid?: unknown };
  return typeof welcome.uuid === 'string' ? welcome.uuid : '';
}

/**
 * A node the image would name (NODENAME) would listen for Erlang distribution and register with
 * epmd; pods here share the machine's one network, so it neither listens nor starts epmd (OTP 23.1+;
 * not `-erl_epmd_port`, which makes CouchDB's own node pings dial itself and stall for 7 s).
 */
function withRuntimeDistribution(vmArgs: string): string {
  if (!/^\s*-s?name\s/m.test(vmArgs)) return vmArgs;
  return `${vmArgs.trimEnd()}\n-start_epmd false\n-dist_listen false\n`;
}

/** bin/couchdb hands COUCHDB_INI_FILES unquoted to `-couch_ini`: no path may hold a space. */
function assertNoSpace(file: string): string {
  if (/\s/.test(file)) {
    throw new InvalidCouchEngineConfigError(
      `COUCHDB_INI_FILES separates files by spaces, so ${JSON.stringify(file)} cannot be used`,
    );
  }
  return file;
}
