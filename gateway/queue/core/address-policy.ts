import net from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Which addresses a delivery may connect to: public unicast only, unless a range is allowlisted.
 * Loopback, private (RFC 1918, unique-local), link-local (169.254.169.254 included), carrier-grade
 * NAT, unspecified, multicast, reserved and the IPv6 forms that embed an IPv4 address (6to4,
 * Teredo, NAT64) are all refused; IPv4-mapped IPv6 is judged as the IPv4 address it maps.
 * Cluster-internal Service and Pod addresses come from private ranges and are refused with them.
 * IPv6 is allowed only inside global unicast 2000::/3: ipaddr.js calls everything it has no name
 * for "unicast", which includes the deprecated IPv4-compatible block ::/96 (::127.0.0.1 is
 * ::7f00:1) and unassigned space, none of which a public webhook receiver lives in.
 */
export interface AddressPolicy {
  readonly allowlist: readonly [ipaddr.IPv4 | ipaddr.IPv6, number][];
}

const GLOBAL_UNICAST_V6 = ipaddr.IPv6.parseCIDR('2000::/3');
const IPV4_COMPATIBLE_V6 = ipaddr.IPv6.parseCIDR('::/96');

export type AddressVerdict = { allowed: true } | { allowed: false; reason: string };

export function compileAddressPolicy(allowlist: readonly string[]): AddressPolicy {
  return Object.freeze({ allowlist: Object.freeze(allowlist.map((range) => ipaddr.parseCIDR(range))) });
}

export function isIpLiteral(host: string): boolean {
  return net.isIP(stripBrackets(host)) !== 0;
}

export function stripBrackets(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

export function checkAddress(address: string, policy: AddressPolicy): AddressVerdict {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    // process() turns ::ffff:127.0.0.1 into 127.0.0.1, so a mapped address is judged as IPv4.
    parsed = ipaddr.process(stripBrackets(address));
  } catch {
    return { allowed: false, reason: `${address} is not an IP address` };
  }
  if (isAllowlisted(parsed, policy)) return { allowed: true };
  const range = rangeOf(parsed);
  if (range === 'unicast') return { allowed: true };
  return { allowed: false, reason: `${parsed.toString()} is a ${range} address` };
}

/** ipaddr.js's name for the address's range, with its "unicast" narrowed to 2000::/3 for IPv6. */
function rangeOf(address: ipaddr.IPv4 | ipaddr.IPv6): string {
  const range = address.range();
  if (range !== 'unicast' || !(address instanceof ipaddr.IPv6)) return range;
  if (address.match(GLOBAL_UNICAST_V6)) return range;
  return address.match(IPV4_COMPATIBLE_V6) ? 'ipv4Compatible' : 'nonGlobal';
}

function isAllowlisted(address: ipaddr.IPv4 | ipaddr.IPv6, policy: AddressPolicy): boolean {
  return policy.allowlist.some(
    ([network, bits]) => network.kind() === address.kind() && address.match(network, bits),
  );
}
