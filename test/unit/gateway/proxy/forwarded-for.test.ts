import type http from 'node:http';
import { deriveForwardedFor } from '../../../../gateway/proxy/forwarded-for.js';
import { TrustedProxies } from '../../../../gateway/http/trusted-proxies.js';

/** The parts of a request deriveForwardedFor reads: the socket's address and TLS flag, and headers. */
function requestFrom(
  peer: { remoteAddress: string; encrypted?: boolean },
  headers: http.IncomingHttpHeaders,
): http.IncomingMessage {
  return { socket: { ...peer }, headers } as unknown as http.IncomingMessage;
}

const ingress = TrustedProxies.parse(['10.42.0.0/16']);
const fromIngress = {
  host: 'app.team.couch.example.com',
  'x-forwarded-proto': 'https',
  'x-forwarded-host': 'app.team.couch.example.com',
};

describe('deriveForwardedFor', () => {
  it('when a trusted proxy says the client used https, then proto and host are taken from its headers', () => {
    const req = requestFrom(
      { remoteAddress: '10.42.3.4' },
      {
        host: 'settee-gateway.settee-system.svc',
        'x-forwarded-proto': 'https',
        'x-forwarded-host': 'couch.example.com',
      },
    );
    expect(deriveForwardedFor(req, ingress)).toEqual({
      remoteAddress: '10.42.3.4',
      proto: 'https',
      host: 'couch.example.com',
      fromTrustedProxy: true,
    });
  });

  it('when the same headers come from an untrusted peer, then the socket and the Host header decide', () => {
    const req = requestFrom({ remoteAddress: '203.0.113.9' }, { ...fromIngress, host: 'gw.example.com' });
    expect(deriveForwardedFor(req, ingress)).toEqual({
      remoteAddress: '203.0.113.9',
      proto: 'http',
      host: 'gw.example.com',
      fromTrustedProxy: false,
    });
    const overTls = requestFrom(
      { remoteAddress: '203.0.113.9', encrypted: true },
      { host: 'gw.example.com' },
    );
    expect(deriveForwardedFor(overTls, ingress).proto).toBe('https');
  });

  it('when a trusted proxy sends lists, then the first hop counts, and a scheme other than http(s) is not believed', () => {
    const listed = requestFrom(
      { remoteAddress: '10.42.0.1' },
      { host: 'h', 'x-forwarded-proto': 'HTTPS, http', 'x-forwarded-host': ' a.example.com , b.example.com' },
    );
    expect(deriveForwardedFor(listed, ingress)).toMatchObject({ proto: 'https', host: 'a.example.com' });
    const odd = requestFrom({ remoteAddress: '10.42.0.1' }, { host: 'h', 'x-forwarded-proto': 'javascript' });
    expect(deriveForwardedFor(odd, ingress)).toMatchObject({ proto: 'http', host: 'h' });
  });

  it('when a trusted proxy sends no X-Forwarded-* headers, then what the gateway saw applies', () => {
    const bare = requestFrom(
      { remoteAddress: '10.42.0.1', encrypted: true },
      { host: 'h', 'x-forwarded-host': '' },
    );
    expect(deriveForwardedFor(bare, ingress)).toEqual({
      remoteAddress: '10.42.0.1',
      proto: 'https',
      host: 'h',
      fromTrustedProxy: true,
    });
  });
});
