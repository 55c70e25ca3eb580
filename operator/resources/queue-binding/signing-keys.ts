import { createHmac } from 'node:crypto';

/**
 * Signing keys in QStash's shape (`sig_` and 28 base58 characters), derived rather than stored:
 * HMAC-SHA256(master secret, "<binding uid>/<generation>"). The same inputs give the same key on
 * every operator replica and after every restart; a new generation gives an unrelated key; and a
 * binding recreated under the same name (a new uid) gets new keys.
 */

const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
const KEY_CHARACTERS = 28;
export const SIGNING_KEY_PATTERN = /^sig_[1-9A-HJ-NP-Za-km-z]{28}$/;
/** Shorter master secrets are refused by the configuration: they would make every key guessable. */
export const MIN_MASTER_SECRET_LENGTH = 32;

function base58(bytes: Buffer): string {
  let value = BigInt(`0x${bytes.toString('hex')}`);
  let text = '';
  while (value > 0n) {
    text = BASE58[Number(value % 58n)] + text;
    value /= 58n;
  }
  return text;
}

export function deriveSigningKey(input: {
  masterSecret: string;
  bindingUid: string;
  generation: number;
}): string {
  if (!input.bindingUid) throw new Error('a signing key needs the binding uid');
  const digest = createHmac('sha256', input.masterSecret)
    .update(`${input.bindingUid}/${input.generation}`)
    .digest();
  // 256 bits give 43 or 44 base58 digits; 28 of them keep about 164 bits.
  return `sig_${base58(digest).padStart(KEY_CHARACTERS, '1').slice(0, KEY_CHARACTERS)}`;
}
