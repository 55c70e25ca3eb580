import { probeUp } from '../../couchdb/probe-up.js';
import { launchOnFreePort, type Launched } from '../launch.js';
import type { ManagedProcess } from '../process.js';
import type { CouchEngine, CouchEngineKind } from './types.js';

export interface EngineLaunchOptions {
  /** For messages. */
  what: string;
  /** A fixed port: no retry on another one. */
  port?: number;
  /** The loopback address it listens on (default 127.0.0.1). */
  host?: string;
  /** Starts the engine on `port`; it must answer GET /_up there once ready. */
  start(port: number): Promise<ManagedProcess>;
  /** Told as soon as the process is spawned, before it serves (see CouchEngineOptions.onStarted). */
  onStarted?: ((pid: number) => void) | undefined;
  /** false: resolve at the spawn (CouchEngineOptions.waitUntilUp). */
  waitUntilUp?: boolean | undefined;
  readyTimeoutMs?: number;
}

export const LOOPBACK = '127.0.0.1';
const DEFAULT_READY_TIMEOUT_MS = 30_000;
const UP_REQUEST_TIMEOUT_MS = 2_000;

/** Starts an engine and resolves once GET http://<host>:<port>/_up answers 200 (or at the spawn: waitUntilUp). */
export function launchUntilUp(options: EngineLaunchOptions): Promise<Launched> {
  const untilUp = options.waitUntilUp ?? true;
  return launchOnFreePort({
    what: `${options.what} GET /_up`,
    port: options.port,
    start: async (port) => {
      const proc = await options.start(port);
      options.onStarted?.(proc.pid);
      return proc;
    },
    // The port must accept before /_up is asked: a refused connect costs a fraction of a refused
    // fetch's CPU, taken from the cores the engine boots on (docs/cold-start.md).
    isReady: async (port) =>
      !untilUp || (await probeUp(`http://${options.host ?? LOOPBACK}:${port}`, UP_REQUEST_TIMEOUT_MS))
        ? true
        : undefined,
    readyTimeoutMs: options.readyTimeoutMs ?? DEFAULT_READY_TIMEOUT_MS,
    // An engine start is on the wake path: every poll interval adds to a cold start.
    intervalMs: 10,
  });
}

export interface EngineHandleOptions {
  kind: CouchEngineKind;
  host: string;
  uuid: string;
  launched: Launched;
  /** The grace period when `stop()` is called without one (default: the process's own). */
  defaultGraceMs?: number;
  /** Runs once after the process has ended, e.g. to remove a run folder. */
  afterStop?: () => Promise<void>;
}

/** The {@link CouchEngine} handle of a launched engine process, whatever the engine kind. */
export function couchEngineHandle(options: EngineHandleOptions): CouchEngine {
  const { process: proc, port } = options.launched;
  let stopped: Promise<void> | undefined;
  return {
    kind: options.kind,
    url: `http://${options.host}:${port}`,
    host: options.host,
    port,
    uuid: options.uuid,
    pid: proc.pid,
    exited: proc.exited,
    output: () => proc.output(),
    // Memoised so that a second call waits for the same stop instead of signalling again.
    stop: (graceMs = options.defaultGraceMs) =>
      (stopped ??= proc.stop(graceMs).then(() => options.afterStop?.())),
  };
}
