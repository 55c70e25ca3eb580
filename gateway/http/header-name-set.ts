/**
 * A few header names, found in raw head bytes without a string: the fast path reads an instance's
 * response head in place (response-head.ts) and copies its lines as they are, so a name is only
 * turned into a string when it is one the gateway acts on. Most names have a length none of the set
 * has and are passed over on that alone.
 */
export class HeaderNameSet {
  /** By length: each name's lower-case string and its bytes. */
  private readonly byLength: Array<Array<{ name: string; bytes: Uint8Array }> | undefined> = [];

  /** `lowerNames`: lower-case letters and '-' only (what the byte comparison below relies on). */
  constructor(lowerNames: Iterable<string>) {
    for (const name of lowerNames) {
      if (!/^[a-z-]+$/.test(name)) throw new Error(`not a lower-case header name: ${name}`);
      (this.byLength[name.length] ??= []).push({ name, bytes: Buffer.from(name, 'latin1') });
    }
  }

  /**
   * The set's lower-case name equal to `bytes[start, end)` whatever its case, or undefined. The range
   * must hold no CR (a header line's name or value, checked before): then OR-ing 0x20 lower-cases a
   * letter and leaves '-' as it is, and no other byte becomes a lower-case letter or '-' (only CR
   * would become '-').
   */
  match(bytes: Uint8Array, start: number, end: number): string | undefined {
    const candidates = this.byLength[end - start];
    if (candidates === undefined) return undefined;
    for (const candidate of candidates) {
      const wanted = candidate.bytes;
      let i = 0;
      while (i < wanted.length && ((bytes[start + i] as number) | 0x20) === wanted[i]) i++;
      if (i === wanted.length) return candidate.name;
    }
    return undefined;
  }
}
