import { QUEUE_PATH_PREFIX } from '../../api/contract.js';
import { InvalidRequestError } from './errors.js';

/** Which endpoint of which binding a request is for. */
export type QueueRoute =
  | { kind: 'publish'; namespace: string; name: string; destination: string }
  | { kind: 'batch'; namespace: string; name: string };

/**
 * `/<namespace>/<name>/v2/publish[/<destination>]`: the destination is everything after, query
 * string included. Case-insensitive, as Express routes match by default, so paths accepted
 * before the queue left Express still are.
 */
const PUBLISH_PATH = /^\/([^/?]+)\/([^/?]+)\/v2\/publish(?:\/(.*)|\?.*)?$/is;
/** `/<namespace>/<name>/v2/batch`, with an optional trailing slash and any query string. */
const BATCH_PATH = /^\/([^/?]+)\/([^/?]+)\/v2\/batch\/?(?:\?.*)?$/is;

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
 * Matches a POST's URL, relative to QUEUE_PATH_PREFIX, to a queue endpoint; undefined when it is
 * none (a 404).
 */
export function matchQueueRoute(method: string | undefined, url: string): QueueRoute | undefined {
  if (method !== 'POST') return undefined;
  const publish = PUBLISH_PATH.exec(url);
  if (publish) {
    return {
      kind: 'publish',
      namespace: decodeSegment(publish[1]!),
      name: decodeSegment(publish[2]!),
      destination: publish[3] ?? '',
    };
  }
  const batch = BATCH_PATH.exec(url);
  if (batch) return { kind: 'batch', namespace: decodeSegment(batch[1]!), name: decodeSegment(batch[2]!) };
  return undefined;
}
