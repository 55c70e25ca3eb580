import type net from 'node:net';
import type { RawRequestHead } from './raw-request-head.js';
import type { ResponseHead } from './response-head.js';
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
  /** The client's response headers from the instance's, flat [name, value, ...], without framing ones. */
  responseHeaders(head: ResponseHead): string[];
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
