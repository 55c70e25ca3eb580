import { hash, timingSafeEqual } from 'node:crypto';
import { UnauthorizedError } from '../core/errors.js';
import { parseQStashFormatToken, workflowUserIdOf } from '../../../api/qstash-token.js';

const BEARER = /^Bearer\s+(.+)$/i;

function digest(value: string): Buffer {
  // The one-shot hash: a Hash object per call costs more than the digest on the publish path.
  return hash('sha256', value, 'buffer');
}

/** The bindings' tokens change rarely: each one's digest is computed once, not on every publish. */
const expectedDigests = new Map<string, Buffer>();
const MAX_CACHED_DIGESTS = 10_000;

function expectedDigest(token: string): Buffer {
  let cached = expectedDigests.get(token);
  if (!cached) {
    if (expectedDigests.size >= MAX_CACHED_DIGESTS) expectedDigests.clear();
    cached = digest(token);
    expectedDigests.set(token, cached);
  }
  return cached;
}

/**
 * The header each binding last accepted, with the token it was accepted for. A publisher sends the
 * same header on every request, and checking it afresh (the regular expression, a SHA-256 of the
 * guess) took 1.2 us of CPU against 0.2 for the comparison in isolation; the same header again is
 * accepted after a constant-time comparison with the remembered one instead. Keyed by the binding's object, which
 * the registry replaces when the binding changes, and checked against its token, so a new password
 * is never answered from the old one's header.
 */
const accepted = new WeakMap<object, { header: string; token: string }>();

/**
 * Whether `given` is `known`, in a time that depends on `known`'s length only: every character of
 * `known` is compared, with no early exit on a difference (a guess's length and content leave no
 * trace in the time, as the hashed comparison below leaves none). `known` is a header this binding
 * accepted, so its length is no secret beyond the header's own.
 */
function isSameHeader(given: string, known: string): boolean {
  let difference = given.length ^ known.length;
  for (let i = 0; i < known.length; i++)
    difference |= (i < given.length ? given.charCodeAt(i) : 0) ^ known.charCodeAt(i);
  return difference === 0;
}

/**
 * Checks `Authorization: Bearer <token>` against the binding's database password, sent as it is
 * or in QStash's token format with the binding's user id (api/qstash-token.ts: what the workflow
 * SDK's createWebhook needs). Both sides are hashed first so the comparison takes the same time
 * whatever the length or content of the guess; an empty password never authorizes anything.
 */
export function authenticate(
  authorization: string | undefined,
  binding: { token: string; namespace: string; name: string },
): void {
  const remembered = accepted.get(binding);
  if (
    remembered !== undefined &&
    authorization !== undefined &&
    remembered.token === binding.token &&
    isSameHeader(authorization, remembered.header)
  )
    return;
  checkToken(authorization, binding);
  // Only a header that passed is remembered (authorization is defined here: checkToken threw otherwise).
  accepted.set(binding, { header: authorization!, token: binding.token });
}

/** authenticate's whole check, of a header not accepted just before. */
function checkToken(
  authorization: string | undefined,
  binding: { token: string; namespace: string; name: string },
): void {
  const match = authorization === undefined ? null : BEARER.exec(authorization.trim());
  if (!match) throw new UnauthorizedError('missing bearer token: send Authorization: Bearer <VQUEUE_TOKEN>');
  const expected = binding.token;
  if (expected.length === 0) throw new UnauthorizedError('invalid token');
  if (timingSafeEqual(digest(match[1]!), expectedDigest(expected))) return;
  const wrapped = parseQStashFormatToken(match[1]!);
  const matchesWrapped =
    wrapped !== undefined &&
    timingSafeEqual(digest(wrapped.password), expectedDigest(expected)) &&
    wrapped.userId === workflowUserIdOf(binding);
  if (!matchesWrapped) throw new UnauthorizedError('invalid token');
}
