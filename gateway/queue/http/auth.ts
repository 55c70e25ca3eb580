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
 * Checks `Authorization: Bearer <token>` against the binding's database password, sent as it is
 * or in QStash's token format with the binding's user id (api/qstash-token.ts: what the workflow
 * SDK's createWebhook needs). Both sides are hashed first so the comparison takes the same time
 * whatever the length or content of the guess; an empty password never authorizes anything.
 */
export function authenticate(
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
