import { parseBatchRequest, type BatchItem } from '../../../../gateway/queue/http/publish/batch-request.js';
import { compileAddressPolicy } from '../../../../gateway/queue/core/address-policy.js';
import { InvalidRequestError, WorkflowStepRefusedError } from '../../../../gateway/queue/core/errors.js';

const limits = {
  defaultRetries: 3,
  maxRetries: 10,
  maxTimeoutMs: 30_000,
  maxBatchSize: 3,
  maxBodyBytes: 64,
  maxDelayMs: 7 * 86_400_000,
};
const policy = compileAddressPolicy([]);
const parseAll = (value: unknown) =>
  parseBatchRequest(Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)), limits, policy);
const parseItems = (value: unknown): BatchItem[] =>
  parseAll(value).map((item) => {
    if ('refused' in item) throw new Error(`unexpected refusal: ${item.refused}`);
    return item;
  });
const parse = (value: unknown) => parseItems(value).map((item) => item.request);

describe('batch requests', () => {
  it("when items come in the SDK's form, then destination, headers and the string body are taken as sent", () => {
    const [message] = parse([
      {
        destination: 'https://a.example/hook?x=1',
        headers: {
          'content-type': 'application/json',
          'upstash-method': 'PATCH',
          'upstash-forward-x-id': '7',
          'upstash-retries': '1',
        },
        body: '{"a":1}',
      },
    ]);
    expect(message).toEqual({
      destination: 'https://a.example/hook?x=1',
      method: 'PATCH',
      headers: { 'content-type': 'application/json', 'x-id': '7' },
      retries: 1,
      body: Buffer.from('{"a":1}'),
    });
  });

  it('when items come in the short form, then a JSON body is serialized and labelled JSON, a string body is kept', () => {
    const [json, text, empty] = parse([
      { url: 'https://a.example/1', body: { a: [1, 2] } },
      { url: 'https://a.example/2', body: 'plain' },
      { url: 'https://a.example/3' },
    ]);
    expect(json?.body.toString()).toBe('{"a":[1,2]}');
    expect(json?.headers['content-type']).toBe('application/json');
    expect(text?.body.toString()).toBe('plain');
    expect(text?.headers['content-type']).toBeUndefined();
    expect(empty?.body.length).toBe(0);
  });

  it('when an item names a URL group instead of a URL, then it is marked for fan-out and its URL is not checked', () => {
    const [group, url] = parseItems([
      { destination: 'orders.v2', body: 'x' },
      { destination: 'https://a.example/1' },
    ]);
    expect(group?.urlGroup).toBe('orders.v2');
    expect(group?.request.body.toString()).toBe('x');
    expect(url?.urlGroup).toBeUndefined();
  });

  it.each([
    ['[{"url": "https://a.example"', /not valid JSON/],
    [{ url: 'https://a.example' }, /must be a JSON array/],
    [[], /empty/],
    [
      [
        { url: 'https://a.example/1' },
        { url: 'https://a.example/2' },
        { url: 'https://a.example/3' },
        { url: 'https://a.example/4' },
      ],
      /4 messages, more than the allowed 3/,
    ],
    [
      [{ url: 'https://a.example' }, { body: 'no destination' }],
      /batch item 1 must have a destination or a url/,
    ],
    [[{ url: 'https://a.example', extra: true }], /unknown field "extra"/],
    [[{ url: 42 }], /batch item 0.url must be string/],
    [[{ url: 'https://a.example', headers: { 'upstash-retries': 2 } }], /must be string/],
  ])(
    'when the batch is not well-formed (%j), then all of it is refused with a message that says why',
    (batch, message) => {
      expect(() => parseAll(batch)).toThrow(message);
    },
  );

  it.each([
    [{ url: 'ftp://a.example/file' }, /^batch item 1: .*only http and https/],
    [{ url: 'not a url' }, /^batch item 1: destination "not a url" is not a URL/],
    [{ url: 'https://a.example', headers: { 'Upstash-Retries': 'abc' } }, /^batch item 1: Upstash-Retries/],
    [{ url: 'https://a.example', body: 'x'.repeat(65) }, /^batch item 1: its body is larger than 64 bytes/],
    [{ url: 'http://169.254.169.254/latest/meta-data' }, /^batch item 1: .*linkLocal/],
    [
      { destination: 'https://a.example', queue: 'a/b' },
      /^batch item 1: queue "a\/b" may contain only letters/,
    ],
    [
      { destination: 'https://a.example', queue: 'q1', headers: { 'Upstash-Delay': '8d' } },
      /^batch item 1: Upstash-Delay 8d is longer than the queue's maximum delay of 7d/,
    ],
    [
      { url: 'https://a.example', headers: { 'Upstash-Forward-X': 'a\r\nInjected: 1' } },
      /^batch item 1: header "upstash-forward-x" has a value/,
    ],
    [
      { url: 'https://a.example', headers: { 'Upstash-Forward-Bad Name': 'x' } },
      /^batch item 1: header "upstash-forward-bad name": "bad name" is not a valid HTTP header name/,
    ],
  ])(
    'when one well-formed item is bad (%j), then it alone is refused and the items around it are kept',
    (bad, message) => {
      const [first, refused, last] = parseAll([
        { url: 'https://a.example/1' },
        bad,
        { url: 'https://a.example/3' },
      ]);
      expect(first).toMatchObject({ request: { destination: 'https://a.example/1' } });
      expect(refused).toEqual({ refused: expect.stringMatching(message) as unknown });
      expect(last).toMatchObject({ request: { destination: 'https://a.example/3' } });
    },
  );

  it("when an item of a workflow's batch is bad, then all of it is refused naming the item (the SDK reads no item's answer)", () => {
    const trigger = (headers: Record<string, string> = {}, destination = 'https://a.example/wf') => ({
      destination,
      headers: {
        'Upstash-Workflow-RunId': 'wfr_a',
        'Upstash-Workflow-Init': 'true',
        'Upstash-Workflow-Url': destination,
        ...headers,
      },
      body: '{}',
    });
    expect(parse([trigger()])).toHaveLength(1);
    expect(() => parseAll([trigger(), trigger({ 'Upstash-Retry-Delay': 'pow(2' })])).toThrow(
      'batch item 1: Upstash-Retry-Delay "pow(2" is not a valid expression: expected )',
    );
    expect(() => parseAll([trigger({}, 'http://169.254.169.254/x')])).toThrow(/^batch item 0: .*linkLocal/);
    expect(() => parseAll([trigger({}, 'http://169.254.169.254/x')])).toThrow(InvalidRequestError);
  });

  it("when an item of a running workflow's step batch is bad, then all of it is refused with a 412 naming the item (a 400 the SDK takes as a cancelled run)", () => {
    const step = (destination: string) => ({
      destination,
      headers: {
        'Upstash-Workflow-RunId': 'wfr_a',
        'Upstash-Workflow-Init': 'false',
        'Upstash-Workflow-Url': 'https://a.example/wf',
        'Upstash-Workflow-CallType': 'toCallback',
      },
      body: '{}',
    });
    const steps = [step('https://a.example/ok'), step('http://10.0.0.1/x')];
    expect(() => parseAll(steps)).toThrow(WorkflowStepRefusedError);
    expect(() => parseAll(steps)).toThrow(/^batch item 1: .*10\.0\.0\.1/);
    expect(new WorkflowStepRefusedError('x').status).toBe(412);
  });

  it('when an item names a queue, then its message is enqueued there, with its delay', () => {
    const inAnHour = Math.floor(Date.now() / 1000) + 3_600;
    const [item, delayed] = parseAll([
      { destination: 'https://a.example/1', queue: 'orders' },
      {
        destination: 'https://a.example/2',
        queue: 'orders',
        headers: { 'Upstash-Not-Before': `${inAnHour}` },
      },
    ]);
    expect(item).toMatchObject({ request: { destination: 'https://a.example/1', queueName: 'orders' } });
    expect(delayed).toMatchObject({ request: { queueName: 'orders', notBefore: inAnHour * 1000 } });
  });
});
