import {
  ClientBodyTimeoutError,
  HoldQueueFullError,
  InstanceDeletingError,
  MalformedHostError,
  MalformedInstancePathError,
  MethodNotAllowedError,
  UnknownInstanceError,
  UpstreamError,
  UpstreamTimeoutError,
  WakeTimeoutError,
} from '../../../../gateway/http/errors.js';
import { buildErrorResponse } from '../../../../gateway/http/error-response.js';

const ref = { namespace: 'ns', name: 'app' };
const options = { retryAfterSeconds: 5 };

describe('buildErrorResponse', () => {
  it('when an instance is unknown or being deleted, then the answer is a CouchDB-shaped 404', () => {
    expect(buildErrorResponse(new UnknownInstanceError(ref), options)).toMatchObject({
      status: 404,
      body: { error: 'not_found', reason: 'there is no instance ns/app' },
    });
    expect(buildErrorResponse(new InstanceDeletingError(ref), options)).toMatchObject({
      status: 404,
      body: { error: 'not_found' },
    });
  });

  it('when the Host is malformed, then the answer is 400 bad_request', () => {
    expect(buildErrorResponse(new MalformedHostError('a b'), options)).toMatchObject({
      status: 400,
      body: { error: 'bad_request' },
    });
  });

  it('when the client sent a very long path or host, then the reason repeats only the first 200 characters of it', () => {
    const path = `/db/${'x'.repeat(15_000)}/a/`;
    const reason = buildErrorResponse(new MalformedInstancePathError(path), options).body.reason;
    expect(reason).toBe(
      `the path "/db/${'x'.repeat(196)}..." does not name an instance as /db/<namespace>/<name>/`,
    );
    const host = buildErrorResponse(new MalformedHostError('h'.repeat(5_000)), options).body.reason;
    expect(host.length).toBeLessThan(300);
  });

  it('when a request body stopped arriving, then the answer is 408 request_timeout', () => {
    expect(buildErrorResponse(new ClientBodyTimeoutError(65_000), options)).toMatchObject({
      status: 408,
      body: { error: 'request_timeout', reason: 'the request body stopped arriving for 65000 ms' },
    });
  });

  it('when the method is CONNECT, then the answer is 405 method_not_allowed', () => {
    expect(buildErrorResponse(new MethodNotAllowedError('CONNECT'), options)).toMatchObject({
      status: 405,
      body: { error: 'method_not_allowed', reason: 'the gateway does not serve CONNECT requests' },
    });
  });

  it('when the upstream fails, then the answer is 502 without Retry-After', () => {
    const answer = buildErrorResponse(
      new UpstreamError(ref, Object.assign(new Error('x'), { code: 'ECONNRESET' })),
      options,
    );
    expect(answer.status).toBe(502);
    expect(answer.body.reason).toContain('ECONNRESET');
    expect(answer.headers['Retry-After']).toBeUndefined();
  });

  it('when the upstream does not start its response in time, then the answer is a 504 gateway_timeout without Retry-After', () => {
    const answer = buildErrorResponse(new UpstreamTimeoutError(ref, 300_000), options);
    expect(answer).toMatchObject({
      status: 504,
      body: {
        error: 'gateway_timeout',
        reason: 'the instance ns/app did not start its response within 300000 ms',
      },
    });
    expect(answer.headers['Retry-After']).toBeUndefined();
  });

  it('when a wake times out or the hold queue is full, then the answer is 503 with Retry-After', () => {
    for (const err of [new WakeTimeoutError(ref, 1000), new HoldQueueFullError(ref, 10)]) {
      const answer = buildErrorResponse(err, options);
      expect(answer).toMatchObject({ status: 503, body: { error: 'service_unavailable' } });
      expect(answer.headers['Retry-After']).toBe('5');
    }
  });

  it("when the error is not one of the gateway's own, then the answer is a 500 that does not leak its message", () => {
    const answer = buildErrorResponse(new Error('internal detail at /srv/secret'), options);
    expect(answer).toEqual({
      status: 500,
      headers: { 'Content-Type': 'application/json', 'Cache-Control': 'must-revalidate' },
      body: { error: 'internal_server_error', reason: 'the gateway failed' },
    });
  });
});
