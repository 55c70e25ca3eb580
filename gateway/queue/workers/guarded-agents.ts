import http from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { DestinationRefusedError } from '../core/errors.js';
import { checkAddress, isIpLiteral, stripBrackets, type AddressPolicy } from '../core/address-policy.js';
import { createGuardedLookup, type HostResolver } from './guarded-lookup.js';

type CreateConnection = (
  options: http.ClientRequestArgs,
  callback?: (err: Error | null, stream: Duplex) => void,
) => Duplex | null | undefined;

/**
 * A host that is an IP literal never reaches `lookup` (net.connect skips it), so the agent checks
 * it itself before any socket exists. Redirects go through the same agent, so every hop is checked.
 */
function guardCreateConnection(policy: AddressPolicy, original: CreateConnection): CreateConnection {
  return (options, callback) => {
    const host = stripBrackets(options.host ?? options.hostname ?? '');
    if (isIpLiteral(host)) {
      const verdict = checkAddress(host, policy);
      if (!verdict.allowed) {
        callback?.(new DestinationRefusedError(host, verdict.reason), undefined as unknown as Duplex);
        return undefined;
      }
    }
    return original(options, callback);
  };
}

export interface GuardedAgents {
  http: http.Agent;
  https: https.Agent;
}

export interface GuardedAgentOptions {
  policy: AddressPolicy;
  /** Host name resolution; tests pass one that returns chosen addresses without any DNS traffic. */
  resolve?: HostResolver;
  /** Sockets per destination host (default 256); the idle ones kept are a quarter of it. */
  maxSockets?: number;
}

/**
 * How long a socket may sit idle in the pool before it is closed: under the shortest keep-alive
 * receivers commonly have (Node's and Apache's 5 s; nginx 75 s, load balancers 60 s), so the pool
 * rarely holds a socket its receiver is about to close, and no binding keeps sockets to a host it no
 * longer delivers to. Node's agent lowers it further to a receiver's `Keep-Alive: timeout` less 1 s.
 */
export const FREE_SOCKET_TIMEOUT_MS = 4_000;

/**
 * Idle sockets kept per destination host for FREE_SOCKET_TIMEOUT_MS: a quarter of its sockets,
 * the batch the delivery worker reads when a quarter of its slots are free (delivery-worker.ts), so
 * steady deliveries find warm sockets. Node's default (256) let each binding keep every socket of a
 * burst open to each host until the receiver closed it.
 */
export function freeSocketCap(maxSockets: number): number {
  return Math.max(1, Math.floor(maxSockets / 4));
}

/**
 * How long a socket beyond freeSocketCap may sit idle before it is closed: a burst's surplus goes
 * a second after the burst. Not at once: a worker draining a backlog frees sockets faster than it
 * reads the next batch (it waits for a quarter of its slots, then a round trip to Redis), so
 * closing each one freed beyond the cap made it open a new connection for about every other
 * delivery (4,774 connections for 10,000 deliveries, 128 in flight; docs/queue.md, Performance).
 */
export const SURPLUS_SOCKET_TIMEOUT_MS = 1_000;

/**
 * Gives each socket that joins the free pool beyond `cap` the short SURPLUS_SOCKET_TIMEOUT_MS
 * (after Node's own 'free' listener, which pushed it and set the agent's timeout). The pool is a
 * stack (scheduling 'lifo'): sockets beyond the cap are on its top, the next request takes the
 * last one freed, and those left under the cap keep the agent's timeout.
 */
function closeSurplusSoon(agent: http.Agent, cap: number): void {
  agent.on('free', (socket: Socket, options: http.ClientRequestArgs) => {
    const pool = agent.freeSockets[agent.getName(options)];
    if (pool !== undefined && pool.length > cap && pool[pool.length - 1] === socket)
      socket.setTimeout(Math.min(SURPLUS_SOCKET_TIMEOUT_MS, socket.timeout ?? SURPLUS_SOCKET_TIMEOUT_MS));
  });
}

export function createGuardedAgents(options: GuardedAgentOptions): GuardedAgents {
  const lookup = createGuardedLookup(options.policy, options.resolve);
  const maxSockets = options.maxSockets ?? 256;
  const common = {
    keepAlive: true,
    maxSockets,
    maxFreeSockets: maxSockets,
    scheduling: 'lifo' as const,
    timeout: FREE_SOCKET_TIMEOUT_MS,
    lookup,
  };
  const httpAgent = new http.Agent(common);
  const httpsAgent = new https.Agent(common);
  httpAgent.createConnection = guardCreateConnection(
    options.policy,
    httpAgent.createConnection.bind(httpAgent),
  );
  httpsAgent.createConnection = guardCreateConnection(
    options.policy,
    httpsAgent.createConnection.bind(httpsAgent),
  );
  for (const agent of [httpAgent, httpsAgent]) closeSurplusSoon(agent, freeSocketCap(maxSockets));
  return { http: httpAgent, https: httpsAgent };
}
