import type http from 'node:http';
import { MalformedHostError } from './errors.js';

const SLASH = 0x2f;
/** `http(s)://<authority><path and query>`; a fragment is never sent, and would be dropped. */
const ABSOLUTE_FORM = /^https?:\/\/([^/?#]*)([^#]*)/i;

/**
 * Two things RFC 9112 asks of a server before it reads a request's target, done first in the
 * gateway's listener so that routing, forwarding and logging all see one consistent request:
 * - section 3.2: a request with more than one Host header is answered 400; which of them counts
 *   would differ between the gateway, undici and CouchDB. Throws MalformedHostError.
 * - section 3.2.2: a request target in absolute form (`GET http://host/path`, what a client sends
 *   to a forward proxy) must be accepted, its authority replacing any Host header. The request is
 *   rewritten to the origin form it stands for: path and query in `req.url`, the authority as its
 *   one Host header (validated with every other Host when the route is resolved).
 */
export function normaliseRequestHead(req: http.IncomingMessage): void {
  const { rawHeaders } = req;
  let hostIndex = -1;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i] as string;
    if (name.length !== 4 || name.toLowerCase() !== 'host') continue;
    if (hostIndex >= 0) {
      throw new MalformedHostError(
        `${rawHeaders[hostIndex + 1] ?? ''}, ${rawHeaders[i + 1] ?? ''}`,
        'is sent more than once',
      );
    }
    hostIndex = i;
  }
  const url = req.url ?? '/';
  if (url.charCodeAt(0) === SLASH) return;
  const absolute = ABSOLUTE_FORM.exec(url);
  if (absolute === null) return; // `*` of OPTIONS, or no URL at all: the gateway's 404
  const authority = absolute[1] ?? '';
  const rest = absolute[2] ?? '';
  req.url = rest === '' || rest.startsWith('?') ? `/${rest}` : rest;
  if (hostIndex >= 0) rawHeaders[hostIndex + 1] = authority;
  else rawHeaders.push('Host', authority);
  req.headers.host = authority;
}
