/**
 * In the path form an instance lives under `/db/<namespace>/<name>` at the gateway, while its
 * CouchDB believes it is at the root of its own address. Two response headers carry that belief
 * back to clients and are rewritten: Location (201 Created, the /_utils redirect) and the Path of
 * Set-Cookie (the AuthSession cookie, which would otherwise be sent to every instance on the
 * gateway's host and overwrite theirs).
 */
export interface RewriteContext {
  /** `/db/<namespace>/<name>`, or `` in the host form. */
  basePath: string;
  /** The origin the client used: `<scheme>://<Host header>`. */
  publicOrigin: string;
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
  const publicHost = new URL(context.publicOrigin).host;
  if (url.origin !== context.upstreamOrigin && url.host !== publicHost) return location;
  return `${context.publicOrigin}${context.basePath}${url.pathname}${url.search}${url.hash}`;
}

const PATH_ATTRIBUTE = /;\s*path=([^;]*)/i;

export function rewriteSetCookiePath(cookie: string, basePath: string): string {
  if (basePath === '') return cookie;
  return cookie.replace(PATH_ATTRIBUTE, (attribute, value: string) => {
    const path = value.trim();
    if (!path.startsWith('/')) return attribute;
    return `; Path=${basePath}${path === '/' ? '' : path}`;
  });
}
