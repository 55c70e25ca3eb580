import {
  CorruptMessageError,
  decodeMessage,
  encodeMessage,
} from '../../../../gateway/queue/core/message-codec.js';
import { createMessage } from '../../../../gateway/queue/core/message.js';

describe('the stored message format', () => {
  it('when a message with a binary body is encoded and decoded, then it comes back equal, body byte for byte', () => {
    const body = Buffer.from([0, 10, 13, 255, 254, 10, 0x7b]);
    const message = createMessage({
      destination: 'https://a.example/x?y=1',
      method: 'POST',
      headers: { 'content-type': 'application/octet-stream', 'x-multi': 'a\nb' },
      body,
      retries: 2,
      retryDelay: '1000 * retried',
    });
    const decoded = decodeMessage(encodeMessage(message));
    expect(decoded).toEqual(message);
    expect(decoded.body.equals(body)).toBe(true);
    expect(message.id).toMatch(/^msg_[A-Za-z0-9_-]{24}$/);
  });

  it('when stored bytes are not a message, then decoding fails with CorruptMessageError', () => {
    for (const stored of ['no newline', '{"id": 1}\nbody', 'not json\nbody', 'null\n']) {
      expect(() => decodeMessage(Buffer.from(stored))).toThrow(CorruptMessageError);
    }
  });
});
