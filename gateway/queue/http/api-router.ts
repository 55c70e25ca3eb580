import type { ApiHandler } from './api-request.js';
import { InvalidRequestError, MethodNotAllowedError } from '../core/errors.js';

/**
 * One route: a path under `/v2/` in segments (`topics/:name/endpoints`) and a handler per method.
 * A last segment `*name` takes the rest of the URL raw, slashes and query string included (a
 * destination URL, as in `schedules/*destination`).
 */
export interface ApiRoute {
  path: string;
  methods: Readonly<Partial<Record<string, ApiHandler>>>;
  /**
   * A last resort for paths no other route matched (a name holding `/`, sent unencoded by the
   * SDK): skipped once an earlier route matched the path, and never part of a 405's Allow.
   */
  fallback?: true;
  /**
   * Answered without the binding's token: a URL the binding hands to an outside system (a
   * workflow's webhook), which holds no token. The binding is still the one its path names.
   */
  public?: true;
}

export interface ApiMatch {
  namespace: string;
  name: string;
  /** The matched route's pattern, as written in the table. */
  path: string;
  handler: ApiHandler;
  /** The route is public (ApiRoute.public): no token is asked. */
  public: boolean;
  params: Record<string, string>;
  query: URLSearchParams;
}

/** `/<namespace>/<name>/v2/<rest>`, relative to QUEUE_PATH_PREFIX. */
const API_PATH = /^\/([^/?]+)\/([^/?]+)\/v2\/([^?]*)(?:\?(.*))?$/is;

function decodeSegment(segment: string, what: string): string {
  // Without a % there is nothing to decode: decodeURIComponent cost about 0.09 us of CPU a call,
  // twice a request (the namespace and the binding name), against 0.01 for the check.
  if (!segment.includes('%')) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new InvalidRequestError(`the ${what} ${JSON.stringify(segment)} is not percent-encoded text`);
  }
}

/** The params of a route whose pattern matches the path's segments, decoded; undefined when it does not match. */
function matchSegments(
  patterns: readonly string[],
  segments: readonly string[],
  rest: string,
): Record<string, string> | undefined {
  const last = patterns.at(-1)!;
  const restParam = last.startsWith('*');
  if (restParam ? segments.length < patterns.length : segments.length !== patterns.length) return undefined;
  const params: Record<string, string> = {};
  let consumed = 0;
  for (let i = 0; i < patterns.length; i++) {
    const pattern = patterns[i]!;
    const segment = segments[i]!;
    if (pattern.startsWith('*')) {
      const raw = rest.slice(consumed);
      if (raw === '') return undefined;
      params[pattern.slice(1)] = raw;
      return params;
    }
    if (pattern.startsWith(':')) {
      if (segment === '') return undefined;
      params[pattern.slice(1)] = decodeSegment(segment, pattern.slice(1));
    } else if (pattern !== segment.toLowerCase()) return undefined;
    consumed += segment.length + 1;
  }
  return params;
}

/**
 * The queue's whole API (publish, batch, messages, dead letters, events, signing keys, URL groups,
 * schedules, queues): one table of path patterns, each with the methods it answers, matched in
 * order. A path that matches a pattern of literal segments only is that route, so a known path
 * asked with another method is a 405 as QStash answers; a pattern with params lets a later one
 * take a method it lacks (`schedules/:id` GET, then `schedules/*destination` POST). An unknown
 * path is undefined (a 404). Literal segments match case-insensitively, as Express routes did
 * before the queue left Express; a trailing slash is ignored.
 */
export function createApiRouter(
  routes: readonly ApiRoute[],
): (method: string, url: string) => ApiMatch | undefined {
  const compiled = routes.map((route) => {
    const segments = route.path
      .split('/')
      .map((segment) => (/^[:*]/.test(segment) ? segment : segment.toLowerCase()));
    return { route, segments, literal: segments.every((segment) => !/^[:*]/.test(segment)) };
  });

  return (method, url) => {
    const match = API_PATH.exec(url);
    if (!match) return undefined;
    const rest = url.slice(`/${match[1]}/${match[2]}/v2/`.length);
    const segments = match[3]!.replace(/\/+$/, '').split('/');
    let allowed: Set<string> | undefined;
    for (const { route, segments: patterns, literal } of compiled) {
      if (route.fallback && (allowed?.size ?? 0) > 0) continue;
      const params = matchSegments(patterns, segments, rest);
      if (!params) continue;
      const handler = route.methods[method];
      if (!handler) {
        if (route.fallback) continue;
        allowed ??= new Set<string>();
        for (const known of Object.keys(route.methods)) allowed.add(known);
        if (literal) break;
        continue;
      }
      return {
        namespace: decodeSegment(match[1]!, 'namespace'),
        name: decodeSegment(match[2]!, 'binding name'),
        path: route.path,
        handler,
        public: route.public === true,
        params,
        query: new URLSearchParams(patterns.at(-1)!.startsWith('*') ? '' : (match[4] ?? '')),
      };
    }
    if (allowed !== undefined && allowed.size > 0) throw new MethodNotAllowedError([...allowed]);
    return undefined;
  };
}
