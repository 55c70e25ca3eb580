/**
 * What a header line may hold, as llhttp and undici read it: both the request reader
 * (raw-request-head.ts) and the response reader (response-head.ts) refuse anything else, so no
 * head the gateway writes carries a name or value two parsers could split differently. A request
 * outside visible ASCII is only declined (node:http reads it); a response's values may also hold
 * obs-text, which the full path passes on.
 */

export const SP = 0x20;
export const HTAB = 0x09;
export const CR = 0x0d;
export const LF = 0x0a;

/** RFC 9110 tchar: what a header name is made of. */
const TOKEN = (() => {
  const table = new Uint8Array(128);
  for (let c = 0x21; c < 0x7f; c++) table[c] = 1;
  for (const c of '"(),/:;<=>?@[\\]{}') table[c.charCodeAt(0)] = 0;
  return table;
})();

/** Whether one byte is a tchar. */
export function isTokenByte(c: number): boolean {
  return c < 0x80 && TOKEN[c] === 1;
}

export function isToken(text: string, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0x80 || TOKEN[c] === 0) return false;
  }
  return true;
}

/** Visible ASCII, with blanks inside: a control (a bare CR or LF among them) or a byte above 0x7e is refused. */
export function isVisibleValue(text: string, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    if ((c < SP && c !== HTAB) || c >= 0x7f) return false;
  }
  return true;
}

/**
 * Where a field value starts in `text[start, end)`: past the blanks (SP, HTAB) after the colon, the
 * only ones llhttp strips (String.prototype.trim would also strip 0xa0, an obs-text byte of the value).
 */
export function skipBlanks(text: string, start: number, end: number): number {
  let i = start;
  while (i < end && (text.charCodeAt(i) === SP || text.charCodeAt(i) === HTAB)) i++;
  return i;
}

/** Where a field value in `text[start, end)` ends: before its trailing blanks (SP, HTAB). */
export function trimBlanks(text: string, start: number, end: number): number {
  let i = end;
  while (i > start && (text.charCodeAt(i - 1) === SP || text.charCodeAt(i - 1) === HTAB)) i--;
  return i;
}

/** skipBlanks over raw head bytes: where a field value in `bytes[start, end)` starts. */
export function skipBlankBytes(bytes: Uint8Array, start: number, end: number): number {
  let i = start;
  while (i < end && (bytes[i] === SP || bytes[i] === HTAB)) i++;
  return i;
}

/** trimBlanks over raw head bytes: where a field value in `bytes[start, end)` ends. */
export function trimBlankBytes(bytes: Uint8Array, start: number, end: number): number {
  let i = end;
  while (i > start && (bytes[i - 1] === SP || bytes[i - 1] === HTAB)) i--;
  return i;
}
