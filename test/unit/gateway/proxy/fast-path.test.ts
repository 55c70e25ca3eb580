import net from 'node:net';
import type { CouchInstance } from '../../../../api/couch-instance.js';
import { loadGatewayConfig } from '../../../../gateway/config.js';
import { FreeEnvelopeGuard } from '../../../../gateway/envelope/free-envelope-guard.js';
import { RequestMeter } from '../../../../gateway/envelope/request-meter.js';
import { readRawRequestHead, type RawRequestHead } from '../../../../gateway/http/raw-request-head.js';
import { TrustedProxies } from '../../../../gateway/http/trusted-proxies.js';
import { createGatewayMetrics } from '../../../../gateway/metrics.js';
import { createFastPathDecider, type FastPathOptions } from '../../../../gateway/proxy/fast-path.js';
import { InstanceConcurrency } from '../../../../gateway/proxy/instance-concurrency.js';
import { createSilentLogger } from '../../../../observability/logger.js';

const instance = {
  apiVersion: 'settee.dev/v1alpha1',
  kind: 'CouchInstance',
  metadata: { namespace: 'ns', name: 'a', uid: 'u' },
  spec: {},
  status: { phase: 'Running' },
} as unknown as CouchInstance;
const key = 'ns/a';

function headOf(text: string): RawRequestHead {
  const head = readRawRequestHead(Buffer.from(text, 'latin1'), 16384);
  if (typeof head === 'string') throw new Error(`not a head: ${head}`);
  return head;
}

const query = headOf('POST /db/ns/a/db1/_find HTTP/1.1\r\nHost: gw\r\nContent-Length: 2\r\n\r\n{}');
/** What instance-handler.ts's envelope check asks of the guard for the same request. */
const fullPathQuery = {
  instance,
  key,
  ref: { namespace: 'ns', name: 'a' },
  method: 'POST',
  upstreamPath: '/db1/_find',
  heldForWake: false,
};

/** A decider over the gateway's own guard and concurrency, at 2 queries a second on a frozen clock. */
function setup(overrides: Partial<FastPathOptions> = {}) {
  const guard = new FreeEnvelopeGuard(
    loadGatewayConfig({ SETTEE_GATEWAY_REPLICA: 'g', SETTEE_GATEWAY_FREE_QUERIES_PER_SECOND: '2' }).envelope,
    () => 0,
  );
  const concurrency = new InstanceConcurrency(1);
  const metrics = createGatewayMetrics({ defaultMetrics: false });
  const options: FastPathOptions = {
    domain: undefined,
    routes: { resolve: () => instance },
    awaitReady: { readyOrigin: () => 'http://127.0.0.1:1', invalidate: () => undefined },
    activity: { begin: () => undefined, end: () => undefined },
    trustedProxies: TrustedProxies.parse([]),
    upstreamHeadersTimeoutMs: 1000,
    idleTimeoutMs: 1000,
    metrics,
    envelope: guard,
    meter: new RequestMeter(metrics.registry),
    concurrency,
    isDraining: () => false,
    logger: createSilentLogger(),
    ...overrides,
  };
  return { guard, concurrency, decide: createFastPathDecider(options) };
}

describe('the fast path decider', () => {
  const socket = new net.Socket();
  afterAll(() => socket.destroy());

  it('when the instance is at its concurrency limit, then the declined request is charged once, by the full path', () => {
    const { guard, concurrency, decide } = setup();
    expect(concurrency.tryEnter(key)).toBe(true);
    for (let i = 0; i < 2; i++) {
      expect(decide(query, socket)).toBeUndefined();
      // The full path takes it: 2 queries at 2 a second both pass.
      expect(guard.refusal(fullPathQuery)).toBeUndefined();
    }
  });

  it('when a taken request is abandoned (no instance connection), then its rate token goes back', () => {
    const { guard, concurrency, decide } = setup();
    for (let i = 0; i < 2; i++) {
      const exchange = decide(query, socket);
      expect(exchange).toBeDefined();
      exchange?.abandon(false);
      expect(guard.refusal(fullPathQuery)).toBeUndefined();
    }
    // Each abandon gave its concurrency slot back too.
    expect(concurrency.tryEnter(key)).toBe(true);
  });

  it('when the rate refuses, then the request is declined without keeping a concurrency slot', () => {
    const { guard, concurrency, decide } = setup();
    expect(guard.refusal(fullPathQuery)).toBeUndefined();
    expect(guard.refusal(fullPathQuery)).toBeUndefined();
    expect(decide(query, socket)).toBeUndefined();
    expect(concurrency.tryEnter(key)).toBe(true);
  });
});
