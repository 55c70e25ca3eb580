/**
 * When a request the instance closed its connection on may be sent to it once more, for both paths
 * (the fast path's splice and node:http's undici forward; docs/data-path.md, "What is sent again").
 *
 * An instance closes a kept-alive connection when it likes (its idle timeout, a restart); a FIN or
 * reset that crosses the next request written on it, or is still unread then, loses that request.
 * nginx sends such a request again when nothing of the response reached the client and the method
 * is not POST, LOCK or PATCH (proxy_next_upstream error, its cached-connection try), undici 6 and
 * Node's http.Agent fail it (undici checks an idle socket a loop turn before reusing it, which
 * catches only a close already read). The rule here is narrower than nginx's: a safe method (RFC
 * 9110 §9.2.1), nothing to observe if the first copy was served after all; PUT and DELETE are
 * idempotent by the RFC, but a CouchDB DELETE served twice answers the second with a 409 conflict
 * for a delete that happened; and no body, since bodies are streamed, not kept, so there is nothing
 * to send again. Once only: a second close says the instance is failing, not the connection.
 */
const RESENDABLE_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Whether a request with `method`, without a body, may be sent again once. */
export function mayResend(method: string | undefined, hasBody: boolean): boolean {
  return !hasBody && method !== undefined && RESENDABLE_METHODS.has(method);
}

/** undici's codes for a connection closed or reset under a request (not a refused one). */
const CLOSED_CODES: ReadonlySet<string> = new Set(['UND_ERR_SOCKET', 'ECONNRESET', 'EPIPE']);

/** Whether `err`, before any response head, is the instance closing or resetting the connection. */
export function isClosedUnder(err: Error): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  return code !== undefined && CLOSED_CODES.has(code);
}
