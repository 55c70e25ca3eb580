/**
 * In the path form every instance shares one browser origin, the gateway's: an HTML attachment of
 * one tenant, opened at `/db/<ns>/<a>/db/doc/page.html`, could run script that fetches
 * `/db/<other>/<b>/...` with that tenant's AuthSession cookie (its Path is `/db/<other>/<b>`) and
 * read the answer, since it is same-origin. CouchDB 3.2+ sends `Content-Security-Policy: sandbox`
 * on attachments, but a tenant is its instance's admin and can turn that off, and show and list
 * functions return any content type they like. So the gateway sandboxes every response of the
 * path form itself: a sandboxed document runs no script and has an opaque origin of its own, so it
 * can read nothing of the gateway's.
 *
 * The policy is a header of its own next to whatever the instance sent, not merged into it: a
 * browser enforces every Content-Security-Policy header separately, so a second policy can only
 * restrict, the instance's stays whole, and nothing needs parsing.
 *
 * `X-Content-Type-Options: nosniff` goes with it: it only stops a browser guessing a type other
 * than the declared one (and loading a mislabelled response as a script or style), which no
 * CouchDB client relies on; API clients ignore it and fetch/XHR are unaffected.
 *
 * Fauxton (/_utils/) is left out: it is CouchDB's own code, served by CouchDB from its install
 * directory, and a sandbox would stop it running. A path that could resolve outside /_utils/ once
 * decoded (a dot segment, an encoded `.` or `/`, a backslash) is not taken for Fauxton's.
 *
 * The host form needs none of this: each instance is an origin of its own.
 */
export const PATH_FORM_ISOLATION_HEADERS: readonly string[] = [
  'Content-Security-Policy',
  'sandbox',
  'X-Content-Type-Options',
  'nosniff',
];

const FAUXTON = '/_utils';
/** What could move a path out of /_utils/ once a server decodes or normalises it. */
const ESCAPES_DIRECTORY = /%2e|%2f|%5c|\\|\/\.\.?(\/|$)/i;

/** Whether the response to `upstreamPath` (an instance's path and query) gets the path form's sandbox. */
export function isolatesResponse(basePath: string, upstreamPath: string): boolean {
  return basePath !== '' && !isFauxtonPath(upstreamPath);
}

function isFauxtonPath(upstreamPath: string): boolean {
  if (!upstreamPath.startsWith(FAUXTON)) return false;
  const next = upstreamPath.charAt(FAUXTON.length);
  if (next !== '' && next !== '/' && next !== '?') return false;
  const queryStart = upstreamPath.indexOf('?');
  const path = queryStart < 0 ? upstreamPath : upstreamPath.slice(0, queryStart);
  return !ESCAPES_DIRECTORY.test(path);
}
