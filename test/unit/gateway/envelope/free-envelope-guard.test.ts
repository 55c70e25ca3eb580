import type { CouchInstance } from '../../../../api/couch-instance.js';
import { FreeEnvelopeGuard } from '../../../../gateway/envelope/free-envelope-guard.js';
import { loadGatewayConfig } from '../../../../gateway/config.js';
import { buildErrorResponse } from '../../../../gateway/http/error-response.js';

const ref = { namespace: 'ns', name: 'a' };
const instanceOf = (plan: 'free' | 'paid' | undefined, storageBytes?: number): CouchInstance => ({
  apiVersion: 'settee.dev/v1alpha1',
  kind: 'CouchInstance',
  metadata: { namespace: 'ns', name: 'a' },
  spec: plan === undefined ? {} : { plan },
  ...(storageBytes === undefined ? {} : { status: { usage: { storageBytes } } }),
});

function guardWith(env: Record<string, string> = {}): FreeEnvelopeGuard {
  return new FreeEnvelopeGuard(loadGatewayConfig({ SETTEE_GATEWAY_REPLICA: 'g', ...env }).envelope, () => 0);
}

const request = (instance: CouchInstance, method: string, upstreamPath: string, heldForWake = false) => ({
  instance,
  key: 'ns/a',
  ref,
  method,
  upstreamPath,
  heldForWake,
});

describe('FreeEnvelopeGuard', () => {
  it('when a free instance goes over its query rate, then a 429 with Retry-After and a CouchDB body answers', () => {
    const guard = guardWith({ SETTEE_GATEWAY_FREE_QUERIES_PER_SECOND: '2' });
    const free = instanceOf(undefined);
    expect(guard.refusal(request(free, 'POST', '/db/_find'))).toBeUndefined();
    expect(guard.refusal(request(free, 'POST', '/db/_find'))).toBeUndefined();
    const refusal = guard.refusal(request(free, 'POST', '/db/_find'));
    const answer = buildErrorResponse(refusal, { retryAfterSeconds: 5 });
    expect(answer.status).toBe(429);
    expect(answer.headers['Retry-After']).toBe('1');
    expect(answer.body.error).toBe('too_many_requests');
    expect(answer.body.reason).toContain('limited to 2 query requests per second');
    // Reads have their own rate.
    expect(guard.refusal(request(free, 'GET', '/db/doc'))).toBeUndefined();
  });

  it('when a request was held for a wake, then it is never refused for the rate', () => {
    const guard = guardWith({ SETTEE_GATEWAY_FREE_WRITES_PER_SECOND: '1' });
    const free = instanceOf('free');
    for (let i = 0; i < 50; i++) expect(guard.refusal(request(free, 'PUT', '/db/d', true))).toBeUndefined();
  });

  it('when Fauxton loads its files, then they spend none of the read rate', () => {
    const guard = guardWith({ SETTEE_GATEWAY_FREE_READS_PER_SECOND: '1' });
    const free = instanceOf('free');
    for (let i = 0; i < 50; i++)
      expect(guard.refusal(request(free, 'GET', `/_utils/dist/${i}.js`))).toBeUndefined();
    expect(guard.refusal(request(free, 'GET', '/db/doc'))).toBeUndefined();
  });

  it('when a paid instance sends any number of requests, then none is refused', () => {
    const guard = guardWith({
      SETTEE_GATEWAY_FREE_WRITES_PER_SECOND: '1',
      SETTEE_GATEWAY_FREE_STORAGE: '1Ki',
    });
    const paid = instanceOf('paid', 1e9);
    for (let i = 0; i < 50; i++) expect(guard.refusal(request(paid, 'PUT', '/db/d'))).toBeUndefined();
    expect(guard.databaseCreated(paid, 'PUT', '/db')).toBeUndefined();
  });

  it('when a free instance is above the storage limit, then writes that add data get 402 and the rest pass', () => {
    const guard = guardWith({ SETTEE_GATEWAY_FREE_STORAGE: '1Ki' });
    const full = instanceOf('free', 2048);
    const answer = buildErrorResponse(guard.refusal(request(full, 'PUT', '/db/doc')), {
      retryAfterSeconds: 5,
    });
    expect(answer.status).toBe(402);
    expect(answer.body.error).toBe('over_data_quota');
    expect(answer.body.reason).toContain('storage limit of 1Ki');
    expect(answer.headers['Retry-After']).toBeUndefined();
    expect(guard.refusal(request(full, 'POST', '/db/_bulk_docs'))?.code).toBe('STORAGE_LIMIT');
    for (const [method, path] of [
      ['GET', '/db/doc'],
      ['DELETE', '/db/doc?rev=1-a'],
      ['DELETE', '/db'],
      ['POST', '/db/_compact'],
      ['POST', '/db/_find'],
    ] as const) {
      expect(guard.refusal(request(full, method, path))).toBeUndefined();
    }
  });

  it('when the size is at the limit or unmeasured, then writes pass', () => {
    const guard = guardWith({ SETTEE_GATEWAY_FREE_STORAGE: '1Ki' });
    expect(guard.refusal(request(instanceOf('free', 1024), 'PUT', '/db/doc'))).toBeUndefined();
    expect(guard.refusal(request(instanceOf('free'), 'PUT', '/db/doc'))).toBeUndefined();
  });

  it('when a free instance creates a database, then the guard names it for counting', () => {
    const guard = guardWith();
    expect(guard.databaseCreated(instanceOf('free'), 'PUT', '/orders')).toBe('orders');
    expect(guard.databaseCreated(instanceOf('free'), 'PUT', '/orders/doc')).toBeUndefined();
    expect(guard.databaseLimit).toBe(20);
  });
});
