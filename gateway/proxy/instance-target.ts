import { INSTANCE_PATH_PREFIX } from '../../operator/api/contract.js';
import { MalformedHostError, MalformedInstancePathError } from '../http/errors.js';

export interface InstanceRef {
  namespace: string;
  name: string;
}

/** Where a request goes: to an instance (and which path of it), or to the gateway's own routes. */
export type RequestTarget =
  | {
      kind: 'instance';
      instance: InstanceRef;
      /** Path and query as the instance's CouchDB sees them, still percent-encoded. */
      upstreamPath: string;
      /** What the client's URLs have in front of the instance's paths: `/db/<ns>/<name>` or `` (host form). */
      basePath: string;
    }
  | { kind: 'gateway' };

/** Namespaces and instance names are DNS labels (the instance name also names its Services). */
const DNS_LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;
/** A host name or an IP literal, with an optional port: what a well-formed Host header holds. */
const HOST_HEADER = /^([a-z0-9_]([a-z0-9_.-]*[a-z0-9_])?\.?|\[[0-9a-f:.]+\])(:\d{1,5})?$/;

const PATH_PREFIX = `${INSTANCE_PATH_PREFIX}/`;

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
    const fromHost = instanceFromHost(host, options.domain);
    if (fromHost) return { kind: 'instance', instance: fromHost, upstreamPath: request.url, basePath: '' };
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

function instanceFromPath(url: string): RequestTarget {
  const queryAt = url.indexOf('?');
  const path = queryAt < 0 ? url : url.slice(0, queryAt);
  const query = queryAt < 0 ? '' : url.slice(queryAt);
  const [namespace, name] = path.slice(PATH_PREFIX.length).split('/', 2);
  if (!namespace || !name || !DNS_LABEL.test(namespace) || !DNS_LABEL.test(name)) {
    throw new MalformedInstancePathError(path);
  }
  const basePath = `${PATH_PREFIX}${namespace}/${name}`;
  const rest = path.slice(basePath.length);
  return {
    kind: 'instance',
    instance: { namespace, name },
    upstreamPath: `${rest || '/'}${query}`,
    basePath,
  };
}

function stripPort(host: string): string {
  if (host.startsWith('[')) return host.slice(0, host.indexOf(']') + 1);
  const colon = host.lastIndexOf(':');
  return colon < 0 ? host : host.slice(0, colon);
}
