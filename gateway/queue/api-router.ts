import type http from 'node:http';
import type { QueueTarget } from './binding-registry.js';
import { InvalidRequestError, MethodNotAllowedError } from './errors.js';

/** What a management route's handler gets: the authenticated binding and the matched path. */
export interface ApiRequest {
  req: http.IncomingMessage;
  res: http.ServerResponse;
  target: QueueTarget;
  /** The `:name` segments of the pattern, percent-decoded. */
  params: Readonly<Record<string, string>>;
  query: URLSearchParams;
}

export type ApiHandler = (request: ApiRequest) => Promise<void>;

/** One route: a path under `/v2/` in segments (`topics/:name/endpoints`) and a handler per method. */
export interface ApiRoute {
  path: string;
  methods: Readonly<Partial<Record<string, ApiHandler>>>;
}

export interface ApiMatch {
  namespace: string;
  name: string;
  handler: ApiHandler;
  params: Record<string, string>;
  query: URLSearchParams;
}

/** `/<namespace>/<name>/v2/<rest>`, relative to QUEUE_PATH_PREFIX. */
const API_PATH = /^\/([^/?]+)\/([^/?]+)\/v2\/([^?]*)(?:\?(.*))?$/s;

function decodeSegment(segment: string, what: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new InvalidRequestError(`the ${what} ${JSON.stringify(segment)} is not percent-encoded text`);
  }
}

/**
 * The queue's management API (signing keys, URL groups, schedules, queues): a small table of
 * path patterns, each with the methods it answers. A known path asked with another method is a
 * 405, as QStash answers; an unknown path is undefined (a 404). Matching is case-sensitive on the
 * route's literal segments, as QStash's router is; a trailing slash is ignored.
 */
export function createApiRouter(
  routes: readonly ApiRoute[],
): (method: string, url: string) => ApiMatch | undefined {
  const compiled = routes.map((route) => ({ segments: route.path.split('/'), methods: route.methods }));
  return (method, url) => {
    const match = API_PATH.exec(url);
    if (!match) return undefined;
    const segments = match[3]!.replace(/\/+$/, '').split('/');
    for (const route of compiled) {
      if (route.segments.length !== segments.length) continue;
      const params: Record<string, string> = {};
      const matches = route.segments.every((pattern, i) => {
        const segment = segments[i]!;
        if (pattern.startsWith(':')) {
          if (segment === '') return false;
          params[pattern.slice(1)] = segment;
          return true;
        }
        return pattern === segment;
      });
      if (!matches) continue;
      const handler = route.methods[method];
      if (!handler) {
        throw new MethodNotAllowedError(
          `${method} is not allowed here; use ${Object.keys(route.methods).join(' or ')}`,
        );
      }
      for (const [key, value] of Object.entries(params)) params[key] = decodeSegment(value, key);
      return {
        namespace: decodeSegment(match[1]!, 'namespace'),
        name: decodeSegment(match[2]!, 'binding name'),
        handler,
        params,
        query: new URLSearchParams(match[4] ?? ''),
      };
    }
    return undefined;
  };
}
