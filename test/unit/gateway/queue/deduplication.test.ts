import { contentHash, deduplicationKey } from '../../../../gateway/queue/http/publish/deduplication.js';
import { InvalidRequestError } from '../../../../gateway/queue/core/errors.js';

const content = {
  destination: 'https://a.example/hook',
  headers: { 'content-type': 'application/json', 'x-tenant': 'acme' },
  body: Buffer.from('{"n":1}'),
};

describe('deduplication keys', () => {
  it('when no deduplication header is sent, then the message has no key', () => {
    expect(deduplicationKey({}, content)).toBeUndefined();
    expect(deduplicationKey({ 'upstash-content-based-deduplication': 'false' }, content)).toBeUndefined();
  });

  it('when Upstash-Deduplication-Id is sent, then it is the key, whatever the content', () => {
    expect(deduplicationKey({ 'upstash-deduplication-id': 'order-42' }, content)).toBe('id:order-42');
    expect(
      deduplicationKey(
        { 'upstash-deduplication-id': 'order-42', 'upstash-content-based-deduplication': 'true' },
        { ...content, body: Buffer.from('other') },
      ),
    ).toBe('id:order-42');
  });

  it('when content-based deduplication is on, then equal messages share a key and any difference in destination, header or body gives another', () => {
    const on = { 'upstash-content-based-deduplication': 'TRUE' };
    const key = deduplicationKey(on, content);
    expect(key).toBe(`content:${contentHash(content)}`);
    expect(
      deduplicationKey(on, {
        ...content,
        headers: { 'x-tenant': 'acme', 'content-type': 'application/json' },
      }),
    ).toBe(key);
    const variants = [
      { ...content, destination: 'https://a.example/hook2' },
      { ...content, headers: { ...content.headers, 'x-tenant': 'other' } },
      { ...content, headers: { 'content-type': 'application/json' } },
      { ...content, body: Buffer.from('{"n":2}') },
    ];
    for (const variant of variants) expect(deduplicationKey(on, variant)).not.toBe(key);
  });

  it('when bytes move between fields, then the hash differs (fields are framed by their length)', () => {
    const a = contentHash({ destination: 'https://a.example/ab', headers: {}, body: Buffer.from('c') });
    const b = contentHash({ destination: 'https://a.example/a', headers: {}, body: Buffer.from('bc') });
    expect(a).not.toBe(b);
  });

  it.each([
    [{ 'upstash-content-based-deduplication': 'yes' }, /^Upstash-Content-Based-Deduplication "yes"/],
    [{ 'upstash-deduplication-id': '' }, /^Upstash-Deduplication-Id must not be empty/],
    [{ 'upstash-deduplication-id': 'x'.repeat(1_001) }, /^Upstash-Deduplication-Id is longer than 1000/],
  ])('when the headers are %j, then a 400 names the header', (headers, message) => {
    expect(() => deduplicationKey(headers, content)).toThrow(InvalidRequestError);
    expect(() => deduplicationKey(headers, content)).toThrow(message);
  });
});
