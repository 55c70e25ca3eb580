import type { LookupAddress } from 'node:dns';
import { DestinationRefusedError } from '../../../../../gateway/queue/core/errors.js';
import { compileAddressPolicy } from '../../../../../gateway/queue/core/address-policy.js';
import {
  createGuardedLookup,
  type HostResolver,
} from '../../../../../gateway/queue/workers/guarded-lookup.js';

/** A resolver that answers from a table: no DNS query and no socket, so private answers are safe here. */
function tableResolver(table: Record<string, LookupAddress[]>): HostResolver {
  return async (hostname) => table[hostname] ?? [];
}

function lookup(
  resolver: HostResolver,
  hostname: string,
  options: { all?: boolean; family?: number } = {},
  allowlist: string[] = [],
) {
  const guarded = createGuardedLookup(compileAddressPolicy(allowlist), resolver);
  return new Promise<{ err: Error | null; address: unknown; family?: number }>((resolve) =>
    guarded(hostname, options as never, (err, address, family) => resolve({ err, address, family })),
  );
}

const v4 = (address: string): LookupAddress => ({ address, family: 4 });
const v6 = (address: string): LookupAddress => ({ address, family: 6 });

describe('the guarded DNS lookup', () => {
  const resolver = tableResolver({
    'loopback.test': [v4('127.0.0.1')],
    'metadata.test': [v4('169.254.169.254')],
    'private.test': [v4('10.0.0.1')],
    'cgnat.test': [v4('100.64.0.1')],
    'mapped.test': [v6('::ffff:127.0.0.1')],
    'v6-loopback.test': [v6('::1')],
    'mixed.test': [v4('93.184.216.34'), v4('192.168.1.1')],
    'public.test': [v4('93.184.216.34'), v6('2606:2800:220:1::1')],
  });

  it.each([
    'loopback.test',
    'metadata.test',
    'private.test',
    'cgnat.test',
    'mapped.test',
    'v6-loopback.test',
  ])(
    'when %s resolves to a non-public address, then the lookup fails with DestinationRefusedError',
    async (hostname) => {
      const { err } = await lookup(resolver, hostname, { all: true });
      expect(err).toBeInstanceOf(DestinationRefusedError);
      expect((err as DestinationRefusedError).code).toBe('DESTINATION_REFUSED');
    },
  );

  it('when a name resolves to a public and a private address, then it is refused: the socket could fall back to either', async () => {
    const { err } = await lookup(resolver, 'mixed.test');
    expect(err).toBeInstanceOf(DestinationRefusedError);
  });

  it('when a name resolves to public addresses only, then the lookup answers in the form the caller asked for', async () => {
    expect(await lookup(resolver, 'public.test', { all: true })).toEqual({
      err: null,
      address: [v4('93.184.216.34'), v6('2606:2800:220:1::1')],
      family: undefined,
    });
    expect(await lookup(resolver, 'public.test')).toEqual({ err: null, address: '93.184.216.34', family: 4 });
    expect(await lookup(resolver, 'public.test', { family: 6 })).toEqual({
      err: null,
      address: '2606:2800:220:1::1',
      family: 6,
    });
  });

  it('when loopback is allowlisted, then a name resolving to loopback is allowed, and metadata still refused', async () => {
    expect((await lookup(resolver, 'loopback.test', {}, ['127.0.0.0/8'])).address).toBe('127.0.0.1');
    expect((await lookup(resolver, 'metadata.test', {}, ['127.0.0.0/8'])).err).toBeInstanceOf(
      DestinationRefusedError,
    );
  });

  it('when a name has no address, then the lookup fails with ENOTFOUND', async () => {
    const { err } = await lookup(resolver, 'nowhere.test');
    expect((err as NodeJS.ErrnoException).code).toBe('ENOTFOUND');
  });
});
