import { parseCallbackRequest } from '../../../../gateway/queue/http/publish/callback-headers.js';
import {
  buildCallbackBody,
  buildCallbackMessage,
} from '../../../../gateway/queue/workers/callback-message.js';
import { InvalidRequestError } from '../../../../gateway/queue/core/errors.js';
import { createMessage } from '../../../../gateway/queue/core/message.js';
import { compileAddressPolicy } from '../../../../gateway/queue/core/address-policy.js';

const limits = { defaultRetries: 3, maxRetries: 10, maxTimeoutMs: 30_000, maxDelayMs: 604_800_000 };
const policy = compileAddressPolicy([]);

describe('callback headers', () => {
  it('when no callback is named, then there is none', () => {
    expect(parseCallbackRequest({ 'upstash-retries': '2' }, 'callback', limits, policy)).toBeUndefined();
  });

  it('when a callback is named with its settings, then they configure the callback message, apart from the message’s own', () => {
    const headers = {
      'upstash-callback': 'https://cb.example/answer',
      'upstash-callback-method': 'put',
      'upstash-callback-retries': '5',
      'upstash-callback-retry-delay': '1000 * retried',
      'upstash-callback-timeout': '10s',
      'upstash-callback-forward-x-secret': 's',
      'upstash-failure-callback': 'https://cb.example/failed',
      'upstash-retries': '1',
      'upstash-forward-x-tenant': 'acme',
    };
    expect(parseCallbackRequest(headers, 'callback', limits, policy)).toEqual({
      url: 'https://cb.example/answer',
      method: 'PUT',
      headers: { 'x-secret': 's' },
      retries: 5,
      retryDelay: '1000 * retried',
      timeoutMs: 10_000,
    });
    expect(parseCallbackRequest(headers, 'failure-callback', limits, policy)).toEqual({
      url: 'https://cb.example/failed',
      method: 'POST',
      headers: {},
      retries: 3,
    });
  });

  it.each([
    [{ 'upstash-callback': 'https://10.0.0.1/x' }, /^Upstash-Callback: /],
    [{ 'upstash-callback': 'mailto:a@b.c' }, /^Upstash-Callback: .*http and https/],
    [
      { 'upstash-callback': 'https://a.example', 'upstash-callback-retries': '11' },
      /^Upstash-Callback-Retries 11 is more/,
    ],
    [
      { 'upstash-callback': 'https://a.example', 'upstash-callback-timeout': '1h' },
      /^Upstash-Callback-Timeout 1h is longer/,
    ],
    [
      { 'upstash-callback': 'https://a.example', 'upstash-callback-forward-x': 'a\nb' },
      /"upstash-callback-forward-x"/,
    ],
    [
      { 'upstash-callback': 'https://a.example', 'upstash-callback-delay': '1s' },
      /^upstash-callback-delay is not supported/,
    ],
    [{ 'upstash-callback-method': 'GET' }, /^upstash-callback-method is set without Upstash-Callback/],
  ])('when the headers are %j, then a 400 names the header', (headers, message) => {
    expect(() => parseCallbackRequest(headers, 'callback', limits, policy)).toThrow(InvalidRequestError);
    expect(() => parseCallbackRequest(headers, 'callback', limits, policy)).toThrow(message);
  });
});

describe('callback messages', () => {
  const source = {
    ...createMessage({
      destination: 'https://a.example/hook',
      method: 'POST',
      headers: { 'content-type': 'text/plain', 'x-tenant': 'acme' },
      body: Buffer.from([0xff, 0x00, 0x41]),
      retries: 2,
    }),
    retried: 2,
  };

  it('when a failure is reported, then the body is QStash’s, bytes in base64 and headers as lists, with the dead letter’s id', () => {
    const body = buildCallbackBody({
      source,
      response: {
        status: 500,
        headers: { 'set-cookie': ['a=1', 'b=2'], 'x-a': 'b' },
        body: Buffer.from('boom'),
      },
      dlqId: 'dlq_1',
    });
    expect(body).toEqual({
      status: 500,
      header: { 'set-cookie': ['a=1', 'b=2'], 'x-a': ['b'] },
      body: Buffer.from('boom').toString('base64'),
      retried: 2,
      maxRetries: 2,
      sourceMessageId: source.id,
      url: 'https://a.example/hook',
      method: 'POST',
      sourceHeader: { 'content-type': ['text/plain'], 'x-tenant': ['acme'] },
      sourceBody: '/wBB',
      createdAt: source.createdAt,
      dlqId: 'dlq_1',
    });
  });

  it('when the callback message is built, then it is JSON to the callback URL with the callback’s settings and none of its own', () => {
    const body = buildCallbackBody({ source, response: { status: 200, headers: {}, body: Buffer.alloc(0) } });
    const message = buildCallbackMessage(
      { url: 'https://cb.example', method: 'PUT', headers: { 'x-s': '1' }, retries: 1, timeoutMs: 5_000 },
      body,
    );
    expect(message).toMatchObject({
      destination: 'https://cb.example',
      method: 'PUT',
      headers: { 'content-type': 'application/json', 'x-s': '1' },
      retries: 1,
      retried: 0,
      timeoutMs: 5_000,
    });
    expect(message.id).not.toBe(source.id);
    expect(message.callback).toBeUndefined();
    expect(JSON.parse(message.body.toString('utf8'))).toEqual(body);
  });
});
