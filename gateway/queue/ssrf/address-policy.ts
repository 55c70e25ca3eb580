import net from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Which addresses a delivery may connect to: public unicast only, unless a range is allowlisted.
 * Loopback, private (RFC 1918, unique-local), link-local (169.254.169.254 included), carrier-grade
 * NAT, unspecified, multicast, reserved and the IPv6 forms that embed an IPv4 address (6to4,
 * Teredo, NAT64) are all refused; IPv4-mapped IPv6 is judged as the IPv4 address it maps.
 * Cluster-internal Service and Pod addresses come from private ranges and are refused with them.
 */
export interface AddressPolicy {
  readonly allowlist: readonly [ipaddr.IPv4 | ipaddr.IPv6, number][];
}

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
  const range = parsed.range();
  if (range === 'unicast') return { allowed: true };
  return { allowed: false, reason: `${parsed.toString()} is a ${range} address` };
}

function isAllowlisted(address: ipaddr.IPv4 | ipaddr.IPv6, policy: AddressPolicy): boolean {
  return policy.allowlist.some(
    ([network, bits]) => network.kind() === address.kind() && address.match(network, bits),
  );
}
