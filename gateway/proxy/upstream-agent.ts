import { Agent } from 'undici';

export interface UpstreamAgentOptions {
  /** Keep-alive connections per instance address. */
  connections: number;
  idleTimeoutMs: number;
}

/**
 * The connection pool to instances: an undici Agent (one keep-alive Pool per address). Measured
 * here, undici forwards about three times as many requests per CPU second as http-proxy-3, and 1.6
 * times as many as a hand-tuned node:http client.
 *
 * No header or body timeouts: a continuous _changes feed or a long poll may be silent for as long
 * as the client wants; a client that goes away aborts its upstream request instead.
 */
export function createUpstreamAgent(options: UpstreamAgentOptions): Agent {
  return new Agent({
    connections: options.connections,
    keepAliveTimeout: options.idleTimeoutMs,
    keepAliveMaxTimeout: options.idleTimeoutMs,
    headersTimeout: 0,
    bodyTimeout: 0,
  });
}
