import { InvalidRequestError } from '../../../../gateway/queue/core/errors.js';
import { parsePublishHeaders } from '../../../../gateway/queue/http/publish/publish-headers.js';

const limits = { defaultRetries: 3, maxRetries: 10, maxTimeoutMs: 30_000, maxDelayMs: 7 * 86_400_000 };

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

  it('when Upstash-Delay is set, then the first delivery waits that long; Upstash-Not-Before wins over it', () => {
    const now = 1_700_000_000_000;
    const at = (headers: Record<string, string>) => parsePublishHeaders(headers, limits, now).notBefore;
    expect(at({ 'upstash-delay': '10s' })).toBe(now + 10_000);
    expect(at({ 'upstash-delay': '5m' })).toBe(now + 300_000);
    expect(at({ 'upstash-delay': '1h30m' })).toBe(now + 5_400_000);
    expect(at({ 'upstash-delay': '2d' })).toBe(now + 172_800_000);
    expect(at({ 'upstash-delay': '7d' })).toBe(now + 604_800_000);
    expect(at({ 'upstash-delay': '0s' })).toBeUndefined();
    expect(at({ 'upstash-not-before': '1700000100', 'upstash-delay': '1h' })).toBe(now + 100_000);
    expect(at({ 'upstash-not-before': '1600000000' })).toBeUndefined();
    expect(() =>
      parsePublishHeaders({ 'upstash-delay': '2h' }, { ...limits, maxDelayMs: 3_600_000 }, now),
    ).toThrow(/maximum delay of 1h/);
  });

  it('when Upstash-Label is set, then it is kept', () => {
    expect(parsePublishHeaders({ 'upstash-label': 'orders' }, limits).label).toBe('orders');
  });

  it.each([
    [{ 'upstash-retries': 'abc' }, /Upstash-Retries/],
    [{ 'upstash-retries': '-1' }, /Upstash-Retries/],
    [{ 'upstash-retries': '11' }, /more than the allowed 10/],
    [{ 'upstash-retry-delay': 'pow(2,' }, /Upstash-Retry-Delay/],
    [{ 'upstash-method': 'FETCH' }, /Upstash-Method/],
    [{ 'upstash-timeout': 'soon' }, /Upstash-Timeout/],
    [
      { 'upstash-timeout': '1h' },
      /Upstash-Timeout 1h is longer than the queue's maximum timeout of 30s \(QueueBinding spec.limits.maxTimeout\)/,
    ],
    [{ 'upstash-delay': 'later' }, /Upstash-Delay "later" is not a duration/],
    [{ 'upstash-delay': '-5s' }, /Upstash-Delay/],
    [
      { 'upstash-delay': '8d' },
      /Upstash-Delay 8d is longer than the queue's maximum delay of 7d \(QueueBinding spec.limits.maxDelay\)/,
    ],
    [{ 'upstash-not-before': 'tomorrow' }, /Upstash-Not-Before "tomorrow" is not a unix time in seconds/],
    [
      { 'upstash-not-before': '99999999999' },
      /Upstash-Not-Before 99999999999 is further ahead than the queue's maximum delay/,
    ],
    [{ 'upstash-label': ' ' }, /Upstash-Label must have 1 to 256 characters/],
    [
      { 'upstash-flow-control-key': 'k' },
      /Upstash-Flow-Control-Key is set without Upstash-Flow-Control-Value/,
    ],
    [
      { 'upstash-flow-control-value': 'rate=1' },
      /Upstash-Flow-Control-Value is set without Upstash-Flow-Control-Key/,
    ],
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
