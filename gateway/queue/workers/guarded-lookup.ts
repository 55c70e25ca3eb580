import dns from 'node:dns';
import type { LookupFunction } from 'node:net';
import { DestinationRefusedError } from '../core/errors.js';
import { checkAddress, type AddressPolicy } from '../core/address-policy.js';

export interface ResolvedAddress {
  address: string;
  family: number;
}

/** Resolves a host name to every address it has; the system resolver by default. */
export type HostResolver = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemResolver: HostResolver = (hostname) =>
  dns.promises.lookup(hostname, { all: true, verbatim: true });

/**
 * A `lookup` for http(s) agents that resolves the name and refuses the connection unless every
 * address it resolved to passes the policy. The check runs on the addresses the socket will
 * actually use, at connect time, so a name that resolves to 127.0.0.1 (or changes between publish
 * and delivery) cannot slip through; refusing when any address is bad leaves no address for the
 * socket to fall back to.
 */
export function createGuardedLookup(
  policy: AddressPolicy,
  resolve: HostResolver = systemResolver,
): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname).then(
      (addresses) => {
        const wanted =
          options.family === 4 || options.family === 6
            ? addresses.filter((a) => a.family === options.family)
            : addresses;
        if (wanted.length === 0) {
          const notFound: NodeJS.ErrnoException = new Error(`${hostname} has no address`);
          notFound.code = 'ENOTFOUND';
          return callback(notFound, '', 0);
        }
        for (const candidate of wanted) {
          const verdict = checkAddress(candidate.address, policy);
          if (!verdict.allowed) return callback(new DestinationRefusedError(hostname, verdict.reason), '', 0);
        }
        if (options.all) return callback(null, wanted);
        const first = wanted[0]!;
        callback(null, first.address, first.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, '', 0),
    );
  };
}
