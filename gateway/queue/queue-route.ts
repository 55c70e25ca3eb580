import { QUEUE_PATH_PREFIX } from '../../api/contract.js';
import { InvalidRequestError } from './errors.js';

/** The QStash operations the queue answers, each one route and method. */
export type QueueOperation =
  | 'publish'
  | 'batch'
  | 'message.get'
  | 'message.cancel'
  | 'messages.cancel'
  | 'dlq.list'
  | 'dlq.get'
  | 'dlq.delete'
  | 'dlq.deleteMany'
  | 'dlq.retry'
  | 'dlq.retryMany'
  | 'events.list';

/** Which operation of which binding a request is for. */
export type QueueRoute =
  | { kind: 'publish'; namespace: string; name: string; destination: string }
  | { kind: 'batch'; namespace: string; name: string }
  | ManagementRoute;

/** A route of the messages, DLQ and events APIs. */
export interface ManagementRoute {
  kind: Exclude<QueueOperation, 'publish' | 'batch'>;
  namespace: string;
  name: string;
  /** The message or dead letter id from the path, when the route has one. */
  id?: string;
  query: URLSearchParams;
}

/** A known path asked with a method it does not take: a 405 listing `allow`. */
export interface WrongMethod {
  kind: 'wrong-method';
  allow: string[];
}

/**
 * `/<namespace>/<name>/v2/publish[/<destination>]`: the destination is everything after, query
 * string included. Case-insensitive, as Express routes match by default, so paths accepted
 * before the queue left Express still are.
 */
const PUBLISH_PATH = /^\/([^/?]+)\/([^/?]+)\/v2\/publish(?:\/(.*)|\?.*)?$/is;
/** Every other route: `/<namespace>/<name>/v2/<rest>`, with an optional trailing slash and query. */
const API_PATH = /^\/([^/?]+)\/([^/?]+)\/v2\/([^?]*?)\/?(?:\?(.*))?$/is;

type ApiOperation = Exclude<QueueOperation, 'publish'>;
type MethodTable = Readonly<Partial<Record<string, ApiOperation>>>;

/** Routes under /v2 other than publish: the path after /v2/ (`{id}` = one segment) and its methods. */
const ROUTES: readonly { path: RegExp; methods: MethodTable }[] = [
  { path: /^batch$/i, methods: { POST: 'batch' } },
  { path: /^messages$/i, methods: { DELETE: 'messages.cancel' } },
  { path: /^messages\/([^/]+)$/i, methods: { GET: 'message.get', DELETE: 'message.cancel' } },
  { path: /^dlq$/i, methods: { GET: 'dlq.list', DELETE: 'dlq.deleteMany' } },
  { path: /^dlq\/retry$/i, methods: { POST: 'dlq.retryMany' } },
  { path: /^dlq\/retry\/([^/]+)$/i, methods: { POST: 'dlq.retry' } },
  { path: /^dlq\/([^/]+)$/i, methods: { GET: 'dlq.get', DELETE: 'dlq.delete' } },
  { path: /^(?:events|logs)$/i, methods: { GET: 'events.list' } },
];

/** Whether a request URL is under QUEUE_PATH_PREFIX, so the queue answers it. */
export function isQueuePath(url: string): boolean {
  const end = QUEUE_PATH_PREFIX.length;
  if (url.slice(0, end).toLowerCase() !== QUEUE_PATH_PREFIX) return false;
  return url.length === end || url[end] === '/' || url[end] === '?';
}

/** The destination exactly as the SDK put it in the path: its own `//` and its query string intact. */
export function destinationFromUrl(url: string): string {
  return PUBLISH_PATH.exec(url)?.[3] ?? '';
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new InvalidRequestError(`the path segment ${JSON.stringify(segment)} is not percent-encoded text`);
  }
}

/**
 * Matches a request's method and URL, relative to QUEUE_PATH_PREFIX, to a queue operation;
 * WrongMethod for a known path asked with another method; undefined when it is no route (a 404).
 */
export function matchQueueRoute(
  method: string | undefined,
  url: string,
): QueueRoute | WrongMethod | undefined {
  const publish = PUBLISH_PATH.exec(url);
  if (publish) {
    if (method !== 'POST') return { kind: 'wrong-method', allow: ['POST'] };
    return {
      kind: 'publish',
      namespace: decodeSegment(publish[1]!),
      name: decodeSegment(publish[2]!),
      destination: publish[3] ?? '',
    };
  }
  const api = API_PATH.exec(url);
  if (!api) return undefined;
  for (const route of ROUTES) {
    const path = route.path.exec(api[3]!);
    if (!path) continue;
    const operation = route.methods[method ?? ''];
    if (!operation) return { kind: 'wrong-method', allow: Object.keys(route.methods) };
    const namespace = decodeSegment(api[1]!);
    const name = decodeSegment(api[2]!);
    if (operation === 'batch') return { kind: 'batch', namespace, name };
    const matched: QueueRoute = {
      kind: operation,
      namespace,
      name,
      query: new URLSearchParams(api[4] ?? ''),
    };
    if (path[1] !== undefined) matched.id = decodeSegment(path[1]);
    return matched;
  }
  return undefined;
}
