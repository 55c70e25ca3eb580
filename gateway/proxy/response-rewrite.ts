/**
 * In the path form an instance lives under `/db/<namespace>/<name>` at the gateway, while its
 * CouchDB believes it is at the root of its own address. Two response headers carry that belief
 * back to clients and are rewritten: Location (201 Created, the /_utils redirect) and the Path of
 * Set-Cookie (the AuthSession cookie, which would otherwise be sent to every instance on the
 * gateway's host and overwrite theirs). Neither rewrite throws: a response the instance gave (a
 * database it created) must reach the client as an answer, never become a 502.
 */
export interface RewriteContext {
  /** `/db/<namespace>/<name>`, or `` in the host form. */
  basePath: string;
  /**
   * The origin the client used, `<scheme>://<host>`; undefined when it named no host (an HTTP/1.0
   * request without Host).
   */
  publicOrigin: string | undefined;
  /** The instance's own origin, `http://<ip>:<port>`. */
  upstreamOrigin: string;
}

export function rewriteLocation(location: string, context: RewriteContext): string {
  if (location.startsWith('/') && !location.startsWith('//')) return `${context.basePath}${location}`;
  let url: URL;
  try {
    url = new URL(location);
  } catch {
    return location; // a relative reference resolves against the client's URL already
  }
  const publicHost = hostOf(context.publicOrigin);
  if (url.origin !== context.upstreamOrigin && (publicHost === undefined || url.host !== publicHost)) {
    return location;
  }
  const path = `${context.basePath}${url.pathname}${url.search}${url.hash}`;
  // With no public host to name, a path: Location may be a relative reference (RFC 9110 section
  // 10.2.2), and the client resolves it against the URL it asked for.
  return publicHost === undefined ? path : `${context.publicOrigin}${path}`;
}

/** The host of `origin`, or undefined when there is none or it is no URL (a garbled X-Forwarded-Host). */
function hostOf(origin: string | undefined): string | undefined {
  if (origin === undefined) return undefined;
  try {
    return new URL(origin).host || undefined;
  } catch {
    return undefined;
  }
}

/** Cheap pre-check in the host form, where only a Domain attribute needs the cookie parsed. */
const MAY_NAME_DOMAIN = /domain/i;

/**
 * A Set-Cookie value for the client. Its attributes are read as browsers read them (RFC 6265
 * section 5.2: split on `;`, names case-insensitive, blanks around names and values ignored, the
 * last Path the one that counts) rather than matched with a pattern a tenant could step around:
 * - Domain is dropped, in both forms: `Domain=.<domain>` would hand a cookie set by one tenant's
 *   show or update function to every instance under the gateway's domain. Without it the cookie
 *   belongs to the exact host that set it.
 * - In the path form the cookie gets exactly one Path, under the instance's base path: the last
 *   Path's value put under it when that value is an absolute path, else the base path itself. A
 *   browser would scope a cookie without a usable Path to the request's directory, which for a
 *   request to `/db/<ns>/<name>` is `/db/<ns>`, every instance of the namespace.
 * - In the host form every instance has a host of its own, and Path stays as the instance sent it.
 */
export function rewriteSetCookie(cookie: string, basePath: string): string {
  if (basePath === '' && !MAY_NAME_DOMAIN.test(cookie)) return cookie;
  const [pair = '', ...attributes] = cookie.split(';');
  const kept = [pair.trim()];
  let path: string | undefined;
  let pathIndex = -1;
  for (const attribute of attributes) {
    const text = attribute.trim();
    if (text === '') continue;
    const equals = text.indexOf('=');
    const name = (equals < 0 ? text : text.slice(0, equals)).trim().toLowerCase();
    if (name === 'domain') continue;
    if (name === 'path' && basePath !== '') {
      path = equals < 0 ? '' : text.slice(equals + 1).trim();
      if (pathIndex < 0) pathIndex = kept.push('') - 1; // the one Path goes where the first stood
      continue;
    }
    kept.push(text);
  }
  if (basePath !== '') {
    const scoped = `Path=${path?.startsWith('/') && path !== '/' ? `${basePath}${path}` : basePath}`;
    if (pathIndex < 0) kept.push(scoped);
    else kept[pathIndex] = scoped;
  }
  return kept.join('; ');
}
