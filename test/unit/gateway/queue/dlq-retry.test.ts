import { buildDeadLetter } from '../../../../gateway/queue/core/dead-letter.js';
import { buildDeadLetterAnswer } from '../../../../gateway/queue/core/dlq-answer.js';
import { buildRetriedMessage, parseRetryOverrides } from '../../../../gateway/queue/http/dlq-retry.js';
import { createMessage } from '../../../../gateway/queue/core/message.js';

const limits = { defaultRetries: 3, maxRetries: 10, maxTimeoutMs: 30_000, maxDelayMs: 86_400_000 };
const now = 1_800_000_000_000;
const request = () => ({
  destination: 'https://a.example/hook',
  method: 'POST',
  headers: {},
  body: Buffer.from('x'),
  retries: 1,
});
const letter = buildDeadLetter({
  message: {
    ...createMessage({
      destination: 'https://a.example/hook',
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-a': '1' },
      body: Buffer.from('{"n":1}'),
      retries: 2,
      retryDelay: '1000',
      label: 'orders',
    }),
    retried: 2,
  },
  reason: 'retries-exhausted',
  failedAt: now - 1_000,
  lastStatus: 500,
  lastResponseBody: 'boom',
  lastResponseHeaders: { 'x-why': ['down'] },
});

describe('retrying a dead letter', () => {
  it('when the request carries no publish header, then the new message is the stored one with a new id and no retries made', () => {
    const message = buildRetriedMessage(
      letter,
      parseRetryOverrides({ authorization: 'Bearer t' }, limits, now),
      now,
    );
    expect(message).toEqual({
      id: expect.stringMatching(/^msg_/) as unknown,
      destination: 'https://a.example/hook',
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-a': '1' },
      body: Buffer.from('{"n":1}'),
      retries: 2,
      retryDelay: '1000',
      label: 'orders',
      retried: 0,
      createdAt: now,
    });
    expect(message.id).not.toBe(letter.messageId);
  });

  it('when the request carries publish headers, then each one present overrides the stored setting', () => {
    const overrides = parseRetryOverrides(
      {
        'upstash-retries': '5',
        'upstash-method': 'put',
        'upstash-delay': '10s',
        'upstash-forward-x-b': '2',
        'upstash-label': 'replay',
        'content-type': 'text/plain',
      },
      limits,
      now,
    );
    const message = buildRetriedMessage(letter, overrides, now);
    expect(message).toMatchObject({
      method: 'PUT',
      retries: 5,
      notBefore: now + 10_000,
      label: 'replay',
      headers: { 'content-type': 'application/json', 'x-a': '1', 'x-b': '2' },
    });
  });

  it('when the dead message had callbacks, then the retried one keeps them, unless the request names others', () => {
    const callback = { url: 'https://cb.example/a', method: 'POST', headers: {}, retries: 1 };
    const withCallbacks = buildDeadLetter({
      message: { ...createMessage({ ...request(), callback, failureCallback: callback }), retried: 1 },
      reason: 'retries-exhausted',
      failedAt: now,
    });
    expect(buildRetriedMessage(withCallbacks, parseRetryOverrides({}, limits, now), now)).toMatchObject({
      callback,
      failureCallback: callback,
    });
    const replaced = buildRetriedMessage(
      withCallbacks,
      parseRetryOverrides(
        { 'upstash-callback': 'https://cb.example/b', 'upstash-callback-retries': '0' },
        limits,
        now,
      ),
      now,
    );
    expect(replaced.callback).toEqual({
      url: 'https://cb.example/b',
      method: 'POST',
      headers: {},
      retries: 0,
    });
    expect(replaced.failureCallback).toEqual(callback);
  });

  it('when a dead letter had a flow-control key, then its retry waits on it, unless the request names another', () => {
    const flowLetter = { ...letter, flowControl: { key: 'k', parallelism: 2 } };
    expect(buildRetriedMessage(flowLetter, parseRetryOverrides({}, limits, now), now).flowControl).toEqual({
      key: 'k',
      parallelism: 2,
    });
    const overrides = parseRetryOverrides(
      { 'upstash-flow-control-key': 'other', 'upstash-flow-control-value': 'rate=3, period=10s' },
      limits,
      now,
    );
    expect(buildRetriedMessage(flowLetter, overrides, now).flowControl).toEqual({
      key: 'other',
      rate: 3,
      periodSeconds: 10,
    });
    expect(
      buildRetriedMessage(letter, parseRetryOverrides({}, limits, now), now).flowControl,
    ).toBeUndefined();
  });

  it('when a retry asks for deduplication or a callback the SSRF policy refuses, then it is a 400', () => {
    expect(() => parseRetryOverrides({ 'upstash-deduplication-id': 'x' }, limits, now)).toThrow(
      /upstash-deduplication-id does not apply to a DLQ retry/,
    );
    expect(() => parseRetryOverrides({ 'upstash-callback': 'http://10.0.0.1/' }, limits, now)).toThrow(
      /^Upstash-Callback: /,
    );
  });

  it('when a retry header is bad, then it is refused as a publish would refuse it', () => {
    expect(() => parseRetryOverrides({ 'upstash-retries': '99' }, limits, now)).toThrow(
      /more than the allowed 10/,
    );
  });

  it("when a dead letter is answered, then it has QStash's DlqMessage fields", () => {
    expect(buildDeadLetterAnswer(letter)).toEqual({
      messageId: letter.messageId,
      url: 'https://a.example/hook',
      method: 'POST',
      header: { 'content-type': ['application/json'], 'x-a': ['1'] },
      body: '{"n":1}',
      maxRetries: 2,
      retryDelayExpression: '1000',
      notBefore: letter.createdAt,
      createdAt: letter.createdAt,
      label: 'orders',
      labels: ['orders'],
      dlqId: letter.dlqId,
      responseStatus: 500,
      responseHeader: { 'x-why': ['down'] },
      responseBody: 'boom',
    });
  });
});
