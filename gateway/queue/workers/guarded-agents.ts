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
  maxSockets?: number;
}

/** Keep-alive agents for deliveries, with the SSRF guard at the DNS lookup and connect layer. */
export function createGuardedAgents(options: GuardedAgentOptions): GuardedAgents {
  const lookup = createGuardedLookup(options.policy, options.resolve);
  const common = { keepAlive: true, maxSockets: options.maxSockets ?? 256, lookup };
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
