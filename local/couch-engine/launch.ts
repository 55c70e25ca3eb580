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
  readyTimeoutMs?: number;
}

export const LOOPBACK = '127.0.0.1';
const DEFAULT_READY_TIMEOUT_MS = 30_000;
const UP_REQUEST_TIMEOUT_MS = 2_000;

/** Starts an engine and resolves once GET http://<host>:<port>/_up answers 200. */
export function launchUntilUp(options: EngineLaunchOptions): Promise<Launched> {
  return launchOnFreePort({
    what: `${options.what} GET /_up`,
    port: options.port,
    start: options.start,
    isReady: (port) => isUp(options.host ?? LOOPBACK, port),
    readyTimeoutMs: options.readyTimeoutMs ?? DEFAULT_READY_TIMEOUT_MS,
    // An engine start is on the wake path: every poll interval adds to a cold start.
    intervalMs: 10,
  });
}

async function isUp(host: string, port: number): Promise<true | undefined> {
  const response = await fetch(`http://${host}:${port}/_up`, {
    signal: AbortSignal.timeout(UP_REQUEST_TIMEOUT_MS),
  });
  await response.body?.cancel();
  return response.status === 200 ? true : undefined;
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
