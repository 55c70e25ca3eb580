/**
 * QStash's token format: base64 of `{"UserID": ..., "Password": ...}`. The workflow SDK reads it:
 * `context.createWebhook` decodes the UserID from the endpoint's QStash client token to build the
 * webhook URL, `{baseUrl}/v2/workflows/hooks/{UserID}/{workflowRunId}/{eventId}`
 * (@upstash/workflow 1.3.3, getUserIdFromToken), and fails on any other token. A binding's token
 * (its database password) wrapped this way, with the binding's user id, is taken by the gateway as
 * the token itself (the plain token stays valid); the operator writes it into the env Secret as
 * VQUEUE_QSTASH_TOKEN.
 */

/** A binding's user id: namespace and name joined by a dot (a namespace holds none, so it is unique). */
export function workflowUserIdOf(binding: { namespace: string; name: string }): string {
  return `${binding.namespace}.${binding.name}`;
}

/** The binding's token in QStash's format, for a workflow endpoint's QStash client. */
export function buildQStashFormatToken(userId: string, token: string): string {
  return Buffer.from(JSON.stringify({ UserID: userId, Password: token }), 'utf8').toString('base64');
}

/** The user id and password of a token in QStash's format; undefined for any other string. */
export function parseQStashFormatToken(value: string): { userId: string; password: string } | undefined {
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(value)) return undefined;
  try {
    const parsed = JSON.parse(Buffer.from(value, 'base64').toString('utf8')) as unknown;
    if (typeof parsed !== 'object' || parsed === null) return undefined;
    const { UserID: userId, Password: password } = parsed as Record<string, unknown>;
    return typeof userId === 'string' && typeof password === 'string' ? { userId, password } : undefined;
  } catch {
    return undefined;
  }
}
