import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { installNetworkTripwire } from '../../helpers/network-tripwire.js';

/**
 * The tripwire is what keeps the SSRF tests from ever reaching a non-loopback address, so it is
 * proven here without one: 127.0.0.2 (loopback, safe to reach) plays the forbidden address.
 */
describe('the network tripwire', () => {
  let server: http.Server;
  let port: number;
  let accepted = 0;

  beforeAll(async () => {
    server = http.createServer((_req, res) => res.end('ok'));
    server.on('connection', () => (accepted += 1));
    await new Promise<void>((resolve) => server.listen(0, '0.0.0.0', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const forbid127002 = (address: string): boolean => address === '127.0.0.2';

  const get = (options: http.RequestOptions): Promise<string> =>
    new Promise((resolve) => {
      const req = http.get({ port, agent: false, ...options }, (res) => {
        res.resume();
        res.on('end', () => resolve(`status ${res.statusCode}`));
      });
      req.on('error', (err) => resolve(`error ${err.message}`));
    });

  async function withTripwire(run: (tripwire: ReturnType<typeof installNetworkTripwire>) => Promise<void>) {
    const tripwire = installNetworkTripwire(forbid127002);
    try {
      await run(tripwire);
    } finally {
      tripwire.uninstall();
    }
  }

  /** The request fails, the tripwire records the address, and the server never sees a connection. */
  const expectStoppedBeforeConnecting = (options: http.RequestOptions) =>
    withTripwire(async (tripwire) => {
      const before = accepted;
      expect(await get(options)).toMatch(/^error/);
      expect(tripwire.violations).toEqual(['127.0.0.2']);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(tripwire.connected).toEqual([]);
      expect(accepted).toBe(before);
    });

  it('when a socket connects to a forbidden IP literal, then it is destroyed before connecting and recorded', () =>
    expectStoppedBeforeConnecting({ host: '127.0.0.2' }));

  it('when a name resolves to a forbidden address, then the socket is destroyed at the lookup, before connecting', () => {
    const lookup = ((_host: string, options: { all?: boolean }, cb: (...args: unknown[]) => void) =>
      options.all ? cb(null, [{ address: '127.0.0.2', family: 4 }]) : cb(null, '127.0.0.2', 4)) as never;
    return expectStoppedBeforeConnecting({ host: 'forbidden.test', lookup });
  });

  it('when a socket connects to an allowed address, then it connects and is recorded as connected', () =>
    withTripwire(async (tripwire) => {
      expect(await get({ host: '127.0.0.1' })).toBe('status 200');
      expect(tripwire.violations).toEqual([]);
      expect(tripwire.connected).toEqual(['127.0.0.1']);
    }));
});
