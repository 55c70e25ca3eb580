import { launchOnFreePort, type Launched } from '../launch.js';
import type { ManagedProcess } from '../process.js';

export interface EngineLaunchOptions {
  /** For messages. */
  what: string;
  /** A fixed port: no retry on another one. */
  port?: number;
  /** Starts the engine on `port`; it must answer GET /_up there once ready. */
  start(port: number): Promise<ManagedProcess>;
  readyTimeoutMs?: number;
}

const DEFAULT_READY_TIMEOUT_MS = 30_000;
const UP_REQUEST_TIMEOUT_MS = 2_000;

/** Starts an engine and resolves once GET http://127.0.0.1:<port>/_up answers 200. */
export function launchUntilUp(options: EngineLaunchOptions): Promise<Launched> {
  return launchOnFreePort({
    what: `${options.what} GET /_up`,
    port: options.port,
    start: options.start,
    isReady: isUp,
    readyTimeoutMs: options.readyTimeoutMs ?? DEFAULT_READY_TIMEOUT_MS,
    // An engine start is on the wake path: every poll interval adds to a cold start.
    intervalMs: 10,
  });
}

async function isUp(port: number): Promise<true | undefined> {
  const response = await fetch(`http://127.0.0.1:${port}/_up`, {
    signal: AbortSignal.timeout(UP_REQUEST_TIMEOUT_MS),
  });
  await response.body?.cancel();
  return response.status === 200 ? true : undefined;
}
