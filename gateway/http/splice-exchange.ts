import type net from 'node:net';
import type { RawRequestHead } from './raw-request-head.js';
import type { HeaderNameSet } from './header-name-set.js';
import type { ResponseHead, ResponseLine } from './response-head.js';
import type { UpstreamSockets } from './upstream-sockets.js';

/** How an exchange failed before the instance's response head reached the client. */
export type SpliceFailure =
  /** The instance broke off, or sent what cannot be framed. */
  | 'broken'
  /** The instance was silent past the upstream headers timeout. */
  | 'timeout'
  /** The client's body stopped arriving for the client idle timeout. */
  | 'client-silent';

/**
 * The client's response head is the instance's, its lines copied as they came but for `lines`: each
 * gets the value at the same index in `values` (the line's own value string: copied as it came), or
 * is left out (undefined); `extraLines` (`name: value` lines, each with its CRLF) and the framing
 * follow them.
 */
export interface ClientHeadEdits {
  /** The head's `lines`, or every line (responseLines) when more than those are left out. */
  readonly lines: readonly ResponseLine[];
  readonly values: ReadonlyArray<string | undefined>;
  readonly extraLines: string;
}

/**
 * One request the fast path decided to take: what the splice needs of the gateway's decision.
 * Deciding may reserve what must be checked and counted at once (a concurrency slot); start()
 * commits the rest once an instance connection is ready, abandon() gives the reservation back.
 */
export interface SpliceExchange {
  /** The instance's address, `http://<ip>:<port>`. */
  readonly origin: string;
  /** The request head for the instance, ending in its blank line. */
  readonly upstreamHead: string;
  /** Commits the request (meter, activity, counters): it is being sent. */
  start(): void;
  /** Metering, once started: a chunked request body's bytes and the response body's are added. */
  readonly counts: { bytesIn: number; bytesOut: number } | undefined;
  /** The instance's response header lines the client's head may differ in (their values reach responseEdits). */
  readonly responseLineNames: HeaderNameSet;
  /** How the client's response head differs from the instance's `head`, read at the start of `buf`. */
  responseEdits(buf: Buffer, head: ResponseHead): ClientHeadEdits;
  /**
   * Instead of start: the exchange is not taken after all, because no instance connection was
   * free, the client left while one was being made, or the address `refused` it (the full path then
   * wakes the instance).
   */
  abandon(refused: boolean): void;
  /** After start: the error to answer the client with. */
  failed(failure: SpliceFailure, cause: Error | undefined): unknown;
  /** After start: the exchange is over (response ended, client gone, or failed), called once. */
  end(): void;
}

export interface SpliceOptions {
  /** The exchange for a head, or undefined: the connection goes to the full path from this head on. */
  decide(head: RawRequestHead, socket: net.Socket): SpliceExchange | undefined;
  /** Gives the connection, with the bytes not yet read put back, to the node:http server. */
  handOver(socket: net.Socket): void;
  sockets: UpstreamSockets;
  /** SETTEE_GATEWAY_MAX_HEADER_BYTES: a longer head goes to node:http, which answers 431. */
  maxHeadBytes: number;
  /** SETTEE_GATEWAY_CLIENT_IDLE_TIMEOUT: silence allowed while the gateway waits on the client. */
  idleTimeoutMs: number;
  /** SETTEE_GATEWAY_UPSTREAM_HEADERS_TIMEOUT: silence allowed while waiting on the response head. */
  upstreamHeadersTimeoutMs: number;
  retryAfterSeconds: number;
}
