import { createHmac } from 'node:crypto';
import { preparedHmacSha256 } from '../../../../gateway/queue/workers/hmac-sha256.js';

const expected = (key: Buffer, text: string): string =>
  createHmac('sha256', key).update(text, 'utf8').digest('base64url');

describe('the prepared HMAC-SHA256', () => {
  it.each([
    ['empty', Buffer.alloc(0)],
    ['shorter than a block', Buffer.from('sig_7Qb2xYz', 'utf8')],
    ['exactly a block', Buffer.alloc(64, 0xa7)],
    ['longer than a block (hashed first)', Buffer.from('ü'.repeat(70), 'utf8')],
  ])('when the key is %s, then every call equals createHmac', (_name, key) => {
    const mac = preparedHmacSha256(key);
    const texts = [
      '',
      'a',
      'eyJhbGciOiJIUzI1NiJ9.eyJpc3MiOiJVcHN0YXNoIn0',
      'x'.repeat(447),
      'y'.repeat(448),
      // Not ASCII: 2-, 3- and 4-byte UTF-8, enough of it to outgrow the buffer.
      'é€😀'.repeat(200),
    ];
    // Repeated and interleaved lengths: the reused buffers must not carry one call's bytes into the next.
    for (const text of [...texts, ...texts.reverse()]) expect(mac(text)).toBe(expected(key, text));
  });

  it('when the text outgrows its buffer, then the grown buffer keeps the key and later calls still match', () => {
    const key = Buffer.from('sig_grow', 'utf8');
    const mac = preparedHmacSha256(key);
    const long = 'z'.repeat(5_000);
    expect(mac(long)).toBe(expected(key, long));
    expect(mac('short')).toBe(expected(key, 'short'));
    expect(mac(long + 'q')).toBe(expected(key, long + 'q'));
  });
});
