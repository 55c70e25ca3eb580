import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { LookupAddress } from 'node:dns';
import { createHttpDeliverer, type Deliverer } from '../../../../gateway/queue/workers/http-delivery.js';
import { compileAddressPolicy } from '../../../../gateway/queue/core/address-policy.js';
import { createGuardedAgents, type GuardedAgents } from '../../../../gateway/queue/workers/guarded-agents.js';
import { installNetworkTripwire, type NetworkTripwire } from '../../../helpers/network-tripwire.js';
import { closeServer } from '../../../helpers/queue/test-receiver.js';

/**
 * Deliveries through the guarded agents, with real HTTP servers on loopback only. The guard's
 * allowlist admits 127.0.0.2 alone, which plays "a public server"; 127.0.0.1 plays an internal
 * one. Names resolve from a table (no DNS traffic), some of them to private and link-local
 * addresses; the network tripwire makes sure no socket could ever reach those, and each test
 * asserts it never had to act: the guard refused first.
 */
describe('the SSRF guard on deliveries', () => {
  let internal: http.Server;
  let publicLooking: http.Server;
  let internalPort: number;
  let publicPort: number;
  let internalHits = 0;
  let redirectsServed = 0;
  let agents: GuardedAgents;
  let deliver: Deliverer;
  let tripwire: NetworkTripwire;

  const table: Record<string, LookupAddress[]> = {
    'public-looking.test': [{ address: '127.0.0.2', family: 4 }],
    'internal.test': [{ address: '127.0.0.1', family: 4 }],
    'metadata.test': [{ address: '169.254.169.254', family: 4 }],
    'private.test': [{ address: '10.0.0.1', family: 4 }],
    'compatible.test': [{ address: '::7f00:1', family: 6 }],
  };

  beforeAll(async () => {
    internal = http.createServer((_req, res) => {
      internalHits += 1;
      res.end('internal secret');
    });
    publicLooking = http.createServer((req, res) => {
      const to = new URL(req.url ?? '/', 'http://x').searchParams.get('to');
      if (to) redirectsServed += 1;
      if (to) res.writeHead(302, { location: to }).end();
      else res.writeHead(200).end('ok');
    });
    await new Promise<void>((resolve) => internal.listen(0, '127.0.0.1', resolve));
    await new Promise<void>((resolve) => publicLooking.listen(0, '127.0.0.2', resolve));
    internalPort = (internal.address() as AddressInfo).port;
    publicPort = (publicLooking.address() as AddressInfo).port;
    agents = createGuardedAgents({
      policy: compileAddressPolicy(['127.0.0.2/32']),
      resolve: async (hostname) => table[hostname] ?? [],
    });
    deliver = createHttpDeliverer({ agents, maxRedirects: 5 });
  });

  afterAll(async () => {
    agents.http.destroy();
    await Promise.all([closeServer(internal), closeServer(publicLooking)]);
  });

  beforeEach(() => {
    tripwire = installNetworkTripwire();
    internalHits = 0;
    redirectsServed = 0;
  });
  afterEach(() => {
    tripwire.uninstall();
    expect(tripwire.violations).toEqual([]);
  });

  const send = (url: string) =>
    deliver({ url, method: 'POST', headers: {}, body: Buffer.from('{}'), timeoutMs: 2_000 });

  it('when the destination is allowed, then the delivery connects and gets its answer', async () => {
    expect(await send(`http://public-looking.test:${publicPort}/ok`)).toMatchObject({
      ok: true,
      status: 200,
      refused: false,
    });
  });

  it.each([
    ['127.0.0.1', () => `http://127.0.0.1:${internalPort}/`],
    ['10.0.0.1', () => 'http://10.0.0.1/'],
    ['172.16.0.1', () => 'http://172.16.0.1/'],
    ['192.168.1.1', () => 'http://192.168.1.1/'],
    ['100.64.0.1', () => 'http://100.64.0.1/'],
    ['169.254.169.254', () => 'http://169.254.169.254/latest/meta-data/'],
    ['[::1]', () => `http://[::1]:${internalPort}/`],
    ['[::ffff:127.0.0.1]', () => `http://[::ffff:127.0.0.1]:${internalPort}/`],
    ['[::127.0.0.1] (IPv4-compatible)', () => `http://[::127.0.0.1]:${internalPort}/`],
    ['[::a00:1] (IPv4-compatible 10.0.0.1)', () => 'http://[::a00:1]/'],
    ['2130706433 (decimal 127.0.0.1)', () => `http://2130706433:${internalPort}/`],
    ['0x7f000001 (hex 127.0.0.1)', () => `http://0x7f000001:${internalPort}/`],
  ])(
    'when the destination is the IP literal %s, then it is refused before any socket exists',
    async (_name, url) => {
      const result = await send(url());
      expect(result).toMatchObject({ ok: false, refused: true });
      expect(result.error).toMatch(/DESTINATION_REFUSED/);
      expect(tripwire.sockets).toHaveLength(0);
      expect(internalHits).toBe(0);
    },
  );

  it.each(['internal.test', 'metadata.test', 'private.test', 'compatible.test'])(
    'when the destination is a name (%s) that resolves to a non-public address, then it is refused at the lookup and no socket connects',
    async (hostname) => {
      const result = await send(`http://${hostname}:${internalPort}/`);
      expect(result).toMatchObject({ ok: false, refused: true });
      expect(tripwire.connected).toEqual([]);
      expect(internalHits).toBe(0);
    },
  );

  it.each([
    ['127.0.0.1', () => `http://127.0.0.1:${internalPort}/admin`],
    ['169.254.169.254', () => 'http://169.254.169.254/latest/meta-data/'],
    ['a name resolving to 127.0.0.1', () => `http://internal.test:${internalPort}/admin`],
    ['a name resolving to 10.0.0.1', () => 'http://private.test/'],
  ])(
    'when a public-looking destination redirects to %s, then the redirect is refused',
    async (_name, target) => {
      const result = await send(
        `http://public-looking.test:${publicPort}/r?to=${encodeURIComponent(target())}`,
      );
      expect(result).toMatchObject({ ok: false, refused: true });
      expect(redirectsServed).toBe(1);
      expect(internalHits).toBe(0);
    },
  );
});
