import http from 'node:http';
import https from 'node:https';
import { createInterface } from 'node:readline';
import { Watch, type KubeConfig } from '@kubernetes/client-node';
import { currentServer } from './clients.js';
import { KubeApiError } from './errors.js';

/** How long one watch request may live; see TimedWatch. */
export interface WatchTimeoutPolicy {
  /** Each watch asks the API server to end it after a random time between this and twice this. */
  minMs: number;
  /** Once the server should have ended it, this long more before the connection is given up as dead. */
  graceMs: number;
}

/** client-go's reflector: minWatchTimeout 5 min, each watch 5-10 min. */
export const DEFAULT_WATCH_TIMEOUT: WatchTimeoutPolicy = Object.freeze({ minMs: 300_000, graceMs: 30_000 });

/** A watch that neither ended nor sent anything past its deadline: its connection is taken as dead. */
export class WatchStalledError extends Error {
  readonly code = 'WATCH_STALLED';
  constructor(path: string, deadlineMs: number) {
    super(
      `watch of ${path} did not end within ${deadlineMs} ms of its start; its connection is taken as dead`,
    );
    this.name = 'WatchStalledError';
  }
}

type WatchQuery = Record<string, string | number | boolean | undefined>;
type WatchCallback = (phase: string, apiObj: unknown, watchObj?: unknown) => void;
type DoneCallback = (err: unknown) => void;

/**
 * client-node's Watch for ListWatch, with the deadline client-node 1.4 builds and then discards.
 * As client-go's reflector does, each watch asks the server to end it after a jittered
 * `timeoutSeconds` (ListWatch then watches again from the last resourceVersion, so no relist unless
 * that version is too old: a 410 makes ListWatch list anew). A half-open connection never hears
 * that end, so the watch also has a deadline of its own, `graceMs` later: past it the request is
 * destroyed and reported as WatchStalledError, and the informer restarts it like any failed watch.
 */
export class TimedWatch extends Watch {
  constructor(
    config: KubeConfig,
    private readonly policy: WatchTimeoutPolicy,
    private readonly random: () => number = Math.random,
    /** Told each time the API server answers a watch 200: it is up, whatever comes next. */
    private readonly onAnswered: () => void = () => undefined,
  ) {
    super(config);
  }

  override watch(
    path: string,
    queryParams: WatchQuery,
    callback: WatchCallback,
    done: DoneCallback,
  ): Promise<AbortController> {
    const controller = new AbortController();
    const timeoutSeconds = Math.max(1, Math.ceil((this.policy.minMs * (1 + this.random())) / 1000));
    const deadlineMs = timeoutSeconds * 1000 + this.policy.graceMs;
    return new Promise((resolve) => {
      let request: http.ClientRequest | undefined;
      let finished = false;
      // ListWatch stores the controller once this promise settles, and a done() that came first
      // would start the next watch only for the stale controller to be stored over it: settle first.
      const finish = (err: unknown, options: { destroy: boolean }): void => {
        if (finished) return;
        finished = true;
        clearTimeout(deadline);
        if (options.destroy) request?.destroy();
        resolve(controller);
        setImmediate(() => done(err));
      };
      const deadline = setTimeout(
        () => finish(new WatchStalledError(path, deadlineMs), { destroy: true }),
        deadlineMs,
      );
      // Aborted by ListWatch itself (stop, or the next watch): it knows, so done() is not called.
      controller.signal.addEventListener('abort', () => {
        finished = true;
        clearTimeout(deadline);
        request?.destroy();
        resolve(controller);
      });
      this.open(path, { ...queryParams, timeoutSeconds }, controller.signal).then(
        (opened) => {
          request = opened;
          if (finished) return void opened.destroy();
          opened.on('response', (response) => {
            if (response.statusCode !== 200) {
              return void readError(response).then(
                (err) => finish(err, { destroy: false }),
                (err: unknown) => finish(err, { destroy: true }),
              );
            }
            resolve(controller);
            this.onAnswered();
            const lines = createInterface({ input: response, crlfDelay: Infinity });
            lines.on('line', (line) => {
              if (finished) return;
              let event: { type: string; object: unknown };
              try {
                event = JSON.parse(line) as { type: string; object: unknown };
              } catch {
                return; // a line cut short by a broken connection; the watch ends next
              }
              callback(event.type, event.object, event);
            });
            response.on('end', () => finish(null, { destroy: false }));
            response.on('close', () => finish(null, { destroy: false }));
            response.on('error', (err) => finish(err, { destroy: true }));
            // readline re-emits its input's errors; unheard, they would be thrown.
            lines.on('error', (err) => finish(err, { destroy: true }));
          });
          opened.on('error', (err) => finish(err, { destroy: true }));
          opened.end();
        },
        (err: unknown) => finish(err, { destroy: false }),
      );
    });
  }

  private async open(path: string, query: WatchQuery, signal: AbortSignal): Promise<http.ClientRequest> {
    const url = new URL(currentServer(this.config) + path);
    url.searchParams.set('watch', 'true');
    for (const [key, value] of Object.entries(query)) {
      if (value !== undefined) url.searchParams.set(key, String(value));
    }
    const options: https.RequestOptions = { method: 'GET', headers: { Accept: 'application/json' } };
    await this.config.applyToHTTPSOptions(options);
    if (signal.aborted) throw signal.reason;
    const request = (url.protocol === 'http:' ? http : https).request(url, options);
    // As client-node's Watch: TCP keep-alive probes notice a peer that is gone for good.
    request.on('socket', (socket) => socket.setKeepAlive(true, 30_000));
    return request;
  }
}

/** A refused watch (410 Gone among others) as a KubeApiError; ListWatch reads its statusCode. */
async function readError(response: http.IncomingMessage): Promise<KubeApiError> {
  const chunks: Buffer[] = [];
  for await (const chunk of response) chunks.push(chunk as Buffer);
  const statusCode = response.statusCode ?? 0;
  let status: { reason?: string; message?: string } = {};
  try {
    status = JSON.parse(Buffer.concat(chunks).toString('utf8')) as typeof status;
  } catch {
    // not a Status: the code alone says enough
  }
  return new KubeApiError({
    statusCode,
    reason: status.reason,
    message: status.message ?? `watch answered ${statusCode}`,
  });
}
