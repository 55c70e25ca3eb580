import { INSTANCE_PATH_PREFIX } from '../../api/contract.js';
import { objectKey } from '../../kube/controller-runtime/object-key.js';
import { MalformedHostError, MalformedInstancePathError } from '../http/errors.js';
import type { InstanceRef } from '../instance-ref.js';

/** Where a request goes: to an instance (and which path of it), or to the gateway's own routes. */
export type RequestTarget =
  | {
      kind: 'instance';
      instance: InstanceRef;
      /** `namespace/name`: the instance's key in the gateway's caches (objectKey). */
      key: string;
      /** Path and query as the instance's CouchDB sees them, still percent-encoded. */
      upstreamPath: string;
      /** What the client's URLs have in front of the instance's paths: `/db/<ns>/<name>` or `` (host form). */
      basePath: string;
    }
  | { kind: 'gateway' };

const PATH_PREFIX = `${INSTANCE_PATH_PREFIX}/`;
const SLASH = 0x2f;
const QUESTION_MARK = 0x3f;
const HYPHEN = 0x2d;
const DOT = 0x2e;
const COLON = 0x3a;
const UNDERSCORE = 0x5f;
const OPEN_BRACKET = 0x5b;

/**
 * Decides where a request goes. With a domain, `<name>.<namespace>.<domain>` names the instance
 * and every path goes to it; otherwise `/db/<namespace>/<name>/...` does (the form that needs no
 * DNS), and anything else belongs to the gateway itself.
 */
export function resolveRequestTarget(
  request: { url: string; host: string | undefined },
  options: { domain: string | undefined },
): RequestTarget {
  const host = request.host?.toLowerCase();
  if (host !== undefined && !isHostHeader(host)) throw new MalformedHostError(request.host ?? '');
  if (options.domain !== undefined && host !== undefined) {
    const instance = instanceFromHost(host, options.domain);
    if (instance) {
      return {
        kind: 'instance',
        instance,
        key: objectKey(instance),
        upstreamPath: request.url,
        basePath: '',
      };
    }
  }
  if (request.url === INSTANCE_PATH_PREFIX || request.url.startsWith(PATH_PREFIX)) {
    return instanceFromPath(request.url);
  }
  return { kind: 'gateway' };
}

function instanceFromHost(host: string, domain: string): InstanceRef | undefined {
  const hostname = stripPort(host).replace(/\.$/, '');
  const suffix = `.${domain}`;
  if (!hostname.endsWith(suffix)) return undefined;
  const labels = hostname.slice(0, -suffix.length).split('.');
  const [name, namespace] = labels;
  if (
    labels.length !== 2 ||
    name === undefined ||
    namespace === undefined ||
    !isDnsLabel(name, 0, name.length) ||
    !isDnsLabel(namespace, 0, namespace.length)
  ) {
    throw new MalformedHostError(host);
  }
  return { namespace, name };
}

/**
 * `/db/<namespace>/<name>[/rest][?query]`, read by index in one pass: this runs for every request,
 * and slices of the URL give the key, base path and upstream path without building new strings
 * from parts (a path that is only the base gets `/`).
 */
function instanceFromPath(url: string): RequestTarget {
  const namespaceEnd = url.indexOf('/', PATH_PREFIX.length);
  const nameEnd = namespaceEnd < 0 ? -1 : segmentEnd(url, namespaceEnd + 1);
  if (
    nameEnd < 0 ||
    !isDnsLabel(url, PATH_PREFIX.length, namespaceEnd) ||
    !isDnsLabel(url, namespaceEnd + 1, nameEnd)
  ) {
    throw new MalformedInstancePathError(url.split('?', 1)[0] ?? url);
  }
  const rest = url.slice(nameEnd);
  return {
    kind: 'instance',
    instance: {
      namespace: url.slice(PATH_PREFIX.length, namespaceEnd),
      name: url.slice(namespaceEnd + 1, nameEnd),
    },
    key: url.slice(PATH_PREFIX.length, nameEnd),
    upstreamPath: rest === '' || rest.charCodeAt(0) === QUESTION_MARK ? `/${rest}` : rest,
    basePath: url.slice(0, nameEnd),
  };
}

/** Where the path segment starting at `from` ends: at the next `/`, the query, or the end. */
function segmentEnd(url: string, from: number): number {
  let at = from;
  while (at < url.length) {
    const code = url.charCodeAt(at);
    if (code === SLASH || code === QUESTION_MARK) break;
    at++;
  }
  return at;
}

function stripPort(host: string): string {
  if (host.startsWith('[')) return host.slice(0, host.indexOf(']') + 1);
  const colon = host.lastIndexOf(':');
  return colon < 0 ? host : host.slice(0, colon);
}

/*
 * The checks below run for every request: character codes, not regular expressions (a match costs
 * more than the walk on strings this short; bench/gateway-hybrid.ts's profile). Each is the exact
 * language of the pattern in its comment, which test/unit/gateway/proxy/instance-target.test.ts
 * holds as the reference and compares on generated strings.
 */

/** `text[start, end)` is a DNS label, as namespaces and instance names are: ^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$ */
function isDnsLabel(text: string, start: number, end: number): boolean {
  if (end - start < 1 || end - start > 63) return false;
  if (!isLowerAlnum(text.charCodeAt(start)) || !isLowerAlnum(text.charCodeAt(end - 1))) return false;
  for (let i = start + 1; i < end - 1; i++) {
    const c = text.charCodeAt(i);
    if (c !== HYPHEN && !isLowerAlnum(c)) return false;
  }
  return true;
}

/**
 * A lower-cased Host header a well-formed request holds: a host name or an IP literal, with an
 * optional port. ^([a-z0-9_]([a-z0-9_.-]*[a-z0-9_])?\.?|\[[0-9a-f:.]+\])(:\d{1,5})?$
 */
function isHostHeader(host: string): boolean {
  if (host.charCodeAt(0) === OPEN_BRACKET) {
    const close = host.indexOf(']');
    if (close < 2) return false;
    for (let i = 1; i < close; i++) {
      const c = host.charCodeAt(i);
      if (!isDigit(c) && !(c >= 0x61 && c <= 0x66) && c !== COLON && c !== DOT) return false;
    }
    return close + 1 === host.length || isPort(host, close + 1);
  }
  const colon = host.indexOf(':');
  if (colon >= 0 && !isPort(host, colon)) return false;
  let end = colon < 0 ? host.length : colon;
  // One trailing dot: the root of a fully qualified name.
  if (end > 1 && host.charCodeAt(end - 1) === DOT) end--;
  if (end === 0 || !isHostNameEnd(host.charCodeAt(0)) || !isHostNameEnd(host.charCodeAt(end - 1)))
    return false;
  for (let i = 1; i < end - 1; i++) {
    const c = host.charCodeAt(i);
    if (c !== DOT && c !== HYPHEN && !isHostNameEnd(c)) return false;
  }
  return true;
}

/** `text` from `colon` to its end is `:` and 1 to 5 digits. */
function isPort(text: string, colon: number): boolean {
  const digits = text.length - colon - 1;
  if (text.charCodeAt(colon) !== COLON || digits < 1 || digits > 5) return false;
  for (let i = colon + 1; i < text.length; i++) if (!isDigit(text.charCodeAt(i))) return false;
  return true;
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

function isLowerAlnum(c: number): boolean {
  return isDigit(c) || (c >= 0x61 && c <= 0x7a);
}

/** [a-z0-9_]: what a host name's first and last characters are. */
function isHostNameEnd(c: number): boolean {
  return c === UNDERSCORE || isLowerAlnum(c);
}
