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

/** Namespaces and instance names are DNS labels (the instance name also names its Services). */
const DNS_LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;
/** `<namespace>/<name>`, both DNS labels: the path form's key, checked with one match. */
const INSTANCE_KEY = new RegExp(`^${DNS_LABEL.source.slice(1, -1)}/${DNS_LABEL.source.slice(1, -1)}$`);
/** A host name or an IP literal, with an optional port: what a well-formed Host header holds. */
const HOST_HEADER = /^([a-z0-9_]([a-z0-9_.-]*[a-z0-9_])?\.?|\[[0-9a-f:.]+\])(:\d{1,5})?$/;

const PATH_PREFIX = `${INSTANCE_PATH_PREFIX}/`;
const SLASH = 0x2f;
const QUESTION_MARK = 0x3f;

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
  if (host !== undefined && !HOST_HEADER.test(host)) throw new MalformedHostError(request.host ?? '');
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
  if (labels.length !== 2 || !name || !namespace || !DNS_LABEL.test(name) || !DNS_LABEL.test(namespace)) {
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
  const key = url.slice(PATH_PREFIX.length, nameEnd);
  if (nameEnd < 0 || !INSTANCE_KEY.test(key)) {
    throw new MalformedInstancePathError(url.split('?', 1)[0] ?? url);
  }
  const rest = url.slice(nameEnd);
  return {
    kind: 'instance',
    instance: {
      namespace: url.slice(PATH_PREFIX.length, namespaceEnd),
      name: url.slice(namespaceEnd + 1, nameEnd),
    },
    key,
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
