import { createHash } from 'node:crypto';
import { InvalidRequestError } from '../../../../gateway/queue/core/errors.js';
import { parseRedactFields, redactHeaderLists } from '../../../../gateway/queue/core/redact-fields.js';

const sha = (value: string) => `REDACTED:${createHash('sha256').update(value).digest('hex')}`;

describe('Upstash-Redact-Fields', () => {
  it("when the SDK's and the docs' spellings are sent, then body, all headers or named headers are taken", () => {
    expect(parseRedactFields('body')).toEqual({ body: true });
    expect(parseRedactFields('body,header')).toEqual({ body: true, headers: true });
    expect(parseRedactFields('headers')).toEqual({ headers: true });
    expect(parseRedactFields('header[Authorization], headers[X-Key]')).toEqual({
      headers: ['authorization', 'x-key'],
    });
    expect(parseRedactFields(undefined)).toBeUndefined();
    expect(parseRedactFields(' , ')).toBeUndefined();
  });

  it('when an item is not a field, then it is a 400 naming it', () => {
    expect(() => parseRedactFields('body,url')).toThrow(InvalidRequestError);
    expect(() => parseRedactFields('body,url')).toThrow(/"url" is not body, header or header\[Name\]/);
  });

  it('when headers are shown, then the redacted values become their SHA-256 and the others stay', () => {
    const headers = { authorization: ['Bearer x'], 'x-tenant': ['acme'] };
    expect(redactHeaderLists(headers, { headers: ['authorization'] })).toEqual({
      authorization: [sha('Bearer x')],
      'x-tenant': ['acme'],
    });
    expect(redactHeaderLists(headers, { headers: true })['x-tenant']).toEqual([sha('acme')]);
    expect(redactHeaderLists(headers, { body: true })).toBe(headers);
  });
});
