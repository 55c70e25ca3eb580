import http from 'node:http';
import https from 'node:https';
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
 * Idle sockets kept per destination host: a quarter of its sockets, the batch the delivery worker
 * reads when a quarter of its slots are free (delivery-worker.ts), so steady deliveries find warm
 * sockets while a burst's surplus is closed as it comes free. Node's default (256) let each
 * binding keep every socket of a burst open to each host until the receiver closed it.
 */
export function freeSocketCap(maxSockets: number): number {
  return Math.max(1, Math.floor(maxSockets / 4));
}

/**
 * Keep-alive agents for deliveries, with the SSRF guard at the DNS lookup and connect layer, and a
 * bounded idle pool. Node's agent `timeout` closes a socket that idles that long in the pool; on a
 * socket in use it only emits `timeout`, which http-delivery.ts does not act on (its own timer
 * bounds an attempt), so a slow receiver is waited for as before.
 */
export function createGuardedAgents(options: GuardedAgentOptions): GuardedAgents {
  const lookup = createGuardedLookup(options.policy, options.resolve);
  const maxSockets = options.maxSockets ?? 256;
  const common = {
    keepAlive: true,
    maxSockets,
    maxFreeSockets: freeSocketCap(maxSockets),
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
  return { http: httpAgent, https: httpsAgent };
}
