import crypto from 'node:crypto';
import zlib from 'node:zlib';
import { isPackedAttachment } from '../../../../operator/backup/attachment-packing.js';

const json = Buffer.from(JSON.stringify(Array.from({ length: 2_000 }, (_, i) => ({ i, name: `item ${i}` }))));

describe('isPackedAttachment', () => {
  it('when the content type is an image, a video or an archive, then it is packed whatever the bytes', () => {
    for (const type of [
      'image/jpeg',
      'image/png; charset=binary',
      'video/mp4',
      'application/zip',
      'application/gzip',
    ])
      expect([type, isPackedAttachment(type, json)]).toEqual([type, true]);
  });

  it('when the content type is text, JSON or XML (SVG included), then it is not, whatever the bytes', () => {
    for (const type of ['text/plain', 'application/json', 'image/svg+xml', 'application/xml'])
      expect([type, isPackedAttachment(type, crypto.randomBytes(32 * 1024))]).toEqual([type, false]);
  });

  it('when an octet-stream or an uncompressed image type holds random or gzipped bytes, then its sample says packed; when it holds JSON, not', () => {
    expect(isPackedAttachment('image/bmp', crypto.randomBytes(32 * 1024))).toBe(true);
    expect(isPackedAttachment('image/bmp', json)).toBe(false);
    expect(isPackedAttachment('application/octet-stream', crypto.randomBytes(32 * 1024))).toBe(true);
    expect(isPackedAttachment('application/octet-stream', zlib.gzipSync(crypto.randomBytes(20_000)))).toBe(
      true,
    );
    expect(isPackedAttachment('application/octet-stream', json)).toBe(false);
  });

  it('when an octet-stream is shorter than a sample worth reading, then it is not packed', () => {
    expect(isPackedAttachment('application/octet-stream', crypto.randomBytes(1_000))).toBe(false);
  });
});
