import type net from 'node:net';
import { TrustedProxies } from '../../../../gateway/proxy/trusted-proxies.js';

/** The part of a socket the decision reads. */
const peer = (remoteAddress: string | undefined) => ({ remoteAddress }) as net.Socket;

describe('TrustedProxies', () => {
  const trusted = TrustedProxies.parse(['10.42.0.0/16', 'fd00:42::/64']);

  it('when an address lies in an IPv4 or IPv6 range, then it is trusted, and outside them it is not', () => {
    expect(trusted.trustsAddress('10.42.7.9')).toBe(true);
    expect(trusted.trustsAddress('fd00:42::17')).toBe(true);
    expect(trusted.trustsAddress('10.43.0.1')).toBe(false);
    expect(trusted.trustsAddress('fd00:43::1')).toBe(false);
    expect(trusted.trustsAddress('203.0.113.5')).toBe(false);
  });

  it('when a dual-stack socket reports an IPv4-mapped IPv6 address, then it is judged as the IPv4 address', () => {
    expect(trusted.trustsAddress('::ffff:10.42.0.3')).toBe(true);
    expect(trusted.trustsAddress('::ffff:192.0.2.1')).toBe(false);
  });

  it('when the address is missing or not an address, then it is not trusted', () => {
    expect(trusted.trustsAddress(undefined)).toBe(false);
    expect(trusted.trustsAddress('not-an-ip')).toBe(false);
  });

  it('when no range is configured, then no peer is trusted, loopback included', () => {
    const none = TrustedProxies.parse([]);
    expect(none.trustsPeer(peer('127.0.0.1'))).toBe(false);
    expect(none.trustsAddress('10.42.0.1')).toBe(false);
  });

  it('when a connection was judged once, then its later requests get the same answer', () => {
    const socket = peer('10.42.1.1');
    expect(trusted.trustsPeer(socket)).toBe(true);
    // A closed socket reports no address any more; the connection's answer does not change.
    (socket as { remoteAddress: string | undefined }).remoteAddress = undefined;
    expect(trusted.trustsPeer(socket)).toBe(true);
    expect(trusted.trustsPeer(peer('192.0.2.1'))).toBe(false);
  });
});
