import { checkAddress, compileAddressPolicy } from '../../../../../gateway/queue/core/address-policy.js';

const strict = compileAddressPolicy([]);

describe('the address policy', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['10.0.0.1', 'private'],
    ['172.16.0.1', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'carrierGradeNat'],
    ['169.254.169.254', 'linkLocal'],
    ['0.0.0.0', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:169.254.169.254', 'linkLocal'],
    ['fd00::1', 'uniqueLocal'],
    ['fe80::1', 'linkLocal'],
    ['64:ff9b::a00:1', 'rfc6052'],
    ['2002:7f00:1::', '6to4'],
    // ipaddr.js calls these "unicast"; none is global unicast (2000::/3).
    ['::7f00:1', 'ipv4Compatible'],
    ['::a00:1', 'ipv4Compatible'],
    ['::a9fe:a9fe', 'ipv4Compatible'],
    ['4000::1', 'nonGlobal'],
    ['e000::1', 'nonGlobal'],
  ])('when a destination resolves to %s, then it is refused as %s', (address, range) => {
    expect(checkAddress(address, strict)).toEqual({
      allowed: false,
      reason: expect.stringContaining(`a ${range} address`),
    });
  });

  it('when a destination resolves to public unicast, then it is allowed', () => {
    for (const address of ['93.184.216.34', '1.1.1.1', '2606:4700:4700::1111', '::ffff:8.8.8.8']) {
      expect(checkAddress(address, strict)).toEqual({ allowed: true });
    }
  });

  it('when a range is allowlisted, then its addresses (and their mapped forms) are allowed and nothing else', () => {
    const policy = compileAddressPolicy(['127.0.0.0/8', '10.1.0.0/16']);
    expect(checkAddress('127.0.0.5', policy)).toEqual({ allowed: true });
    expect(checkAddress('::ffff:127.0.0.1', policy)).toEqual({ allowed: true });
    expect(checkAddress('10.1.2.3', policy)).toEqual({ allowed: true });
    expect(checkAddress('10.2.0.1', policy).allowed).toBe(false);
    expect(checkAddress('::1', policy).allowed).toBe(false);
  });

  it('when an IPv4-compatible IPv6 address (::/96) is allowlisted as an IPv6 range, then it is allowed', () => {
    expect(checkAddress('::7f00:1', compileAddressPolicy(['::/96']))).toEqual({ allowed: true });
    expect(checkAddress('::7f00:1', compileAddressPolicy(['127.0.0.0/8'])).allowed).toBe(false);
  });

  it('when the address is not an IP, then it is refused', () => {
    expect(checkAddress('localhost', strict).allowed).toBe(false);
  });
});
