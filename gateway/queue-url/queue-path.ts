import { QUEUE_PATH_PREFIX } from '../../api/contract.js';

/**
 * `/<namespace>/<name>/v2/publish[/<destination>]`: the destination is everything after, query
 * string included. Case-insensitive, as the route table's literal segments are.
 */
const PUBLISH_PATH = /^\/([^/?]+)\/([^/?]+)\/v2\/publish(?:\/(.*)|\?.*)?$/is;

/** Whether a request URL is under QUEUE_PATH_PREFIX, so the queue answers it. */
export function isQueuePath(url: string): boolean {
  const end = QUEUE_PATH_PREFIX.length;
  if (url.slice(0, end).toLowerCase() !== QUEUE_PATH_PREFIX) return false;
  return url.length === end || url[end] === '/' || url[end] === '?';
}

/**
 * The destination exactly as the SDK put it in a publish path, its own `//` and query string
 * intact; '' for any other path. The request log redacts it before the route is matched.
 */
export function destinationFromUrl(url: string): string {
  return PUBLISH_PATH.exec(url)?.[3] ?? '';
}
