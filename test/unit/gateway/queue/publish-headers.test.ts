import { InvalidRequestError } from '../../../../gateway/queue/errors.js';
import { parsePublishHeaders } from '../../../../gateway/queue/publish-headers.js';

const limits = { defaultRetries: 3, maxRetries: 10, deliveryTimeoutMs: 30_000 };

describe('publish headers', () => {
  it('when only a body is published, then the message is a POST with 3 retries and no extra headers', () => {
    expect(
      parsePublishHeaders({ host: 'gateway', authorization: 'Bearer x', 'user-agent': 'sdk' }, limits),
    ).toEqual({
      method: 'POST',
      headers: {},
      retries: 3,
    });
  });

  it('when Upstash-Forward-* headers are sent, then they are delivered without the prefix, and Content-Type is kept', () => {
    const options = parsePublishHeaders(
      {
        'upstash-forward-x-tenant': 'acme',
        'upstash-forward-authorization': 'Bearer downstream',
        'upstash-forward-host': 'evil.example',
        'upstash-forward-content-length': '999',
        'content-type': 'application/json',
        'upstash-telemetry-sdk': 'upstash-qstash-js@2.12.0',
      },
      limits,
    );
    expect(options.headers).toEqual({
      'x-tenant': 'acme',
      authorization: 'Bearer downstream',
      'content-type': 'application/json',
    });
  });

  it('when the method, retries, retry delay and timeout are set, then they are taken', () => {
    expect(
      parsePublishHeaders(
        {
          'upstash-method': 'put',
          'upstash-retries': '5',
          'upstash-retry-delay': 'pow(2, retried) * 100',
          'upstash-timeout': '10s',
        },
        limits,
      ),
    ).toEqual({
      method: 'PUT',
      headers: {},
      retries: 5,
      retryDelay: 'pow(2, retried) * 100',
      timeoutMs: 10_000,
    });
    expect(parsePublishHeaders({ 'upstash-timeout': '7', 'upstash-delay': '0s' }, limits).timeoutMs).toBe(
      7_000,
    );
  });

  it.each([
    [{ 'upstash-retries': 'abc' }, /Upstash-Retries/],
    [{ 'upstash-retries': '-1' }, /Upstash-Retries/],
    [{ 'upstash-retries': '11' }, /more than the allowed 10/],
    [{ 'upstash-retry-delay': 'pow(2,' }, /Upstash-Retry-Delay/],
    [{ 'upstash-method': 'FETCH' }, /Upstash-Method/],
    [{ 'upstash-timeout': 'soon' }, /Upstash-Timeout/],
    [{ 'upstash-timeout': '1h' }, /longer than the allowed/],
    [{ 'upstash-delay': '10s' }, /Upstash-Delay/],
    [{ 'upstash-delay': 'later' }, /Upstash-Delay/],
    [{ 'upstash-not-before': '1700000000' }, /Upstash-Not-Before/],
    [{ 'upstash-deduplication-id': 'x' }, /deduplication/],
    [{ 'upstash-flow-control-key': 'k' }, /flow control/],
    [{ 'upstash-forward-x': 'a\r\nInjected: 1' }, /header "upstash-forward-x" has a value .*CR, LF/],
    [{ 'upstash-forward-x': 'a\u0000b' }, /header "upstash-forward-x" has a value/],
    [
      { 'upstash-forward-bad name': 'x' },
      /header "upstash-forward-bad name": "bad name" is not a valid HTTP header name/,
    ],
    [{ 'upstash-forward-x(y)': 'x' }, /"x\(y\)" is not a valid HTTP header name/],
    [{ 'content-type': 'text/plain\nx: y' }, /header "content-type" has a value/],
  ])('when %j is sent, then it is a 400 that names the header', (headers, message) => {
    const parse = () => parsePublishHeaders(headers, limits);
    expect(parse).toThrow(InvalidRequestError);
    expect(parse).toThrow(message);
  });
});
