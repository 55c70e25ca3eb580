import type http from 'node:http';
import type net from 'node:net';
import { TrustedProxies } from '../../../../gateway/http/trusted-proxies.js';

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

  describe("clientAddress (a publisher's callerIp)", () => {
    const request = (remoteAddress: string, forwardedFor?: string | string[]) =>
      ({
        socket: peer(remoteAddress),
        headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor },
      }) as unknown as http.IncomingMessage;

    it("when a trusted proxy sends X-Forwarded-For, then the chain's first address is the client", () => {
      expect(trusted.clientAddress(request('10.42.0.9', '203.0.113.7, 10.42.0.1'))).toBe('203.0.113.7');
      expect(trusted.clientAddress(request('10.42.0.9', ['2001:db8::7', '10.42.0.1']))).toBe('2001:db8::7');
    });

    it('when an untrusted peer sends X-Forwarded-For, then the header is ignored and the peer is the client', () => {
      expect(trusted.clientAddress(request('198.51.100.4', '203.0.113.7'))).toBe('198.51.100.4');
      expect(TrustedProxies.parse([]).clientAddress(request('127.0.0.1', '203.0.113.7'))).toBe('127.0.0.1');
    });

    it('when the first hop is not an address, or there is no header, then the trusted peer is the client; a mapped address reads as IPv4', () => {
      expect(trusted.clientAddress(request('10.42.0.9', 'unknown, 203.0.113.7'))).toBe('10.42.0.9');
      expect(trusted.clientAddress(request('10.42.0.9'))).toBe('10.42.0.9');
      expect(trusted.clientAddress(request('::ffff:198.51.100.4'))).toBe('198.51.100.4');
    });
  });
});
