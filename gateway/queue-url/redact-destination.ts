import { hash } from 'node:crypto';
import { QUEUE_PATH_PREFIX } from '../../api/contract.js';
import { destinationFromUrl } from './queue-path.js';

/** How a destination appears in logs: its origin, and a hash that tells destinations apart. */
export interface LoggedDestination {
  /** scheme://host[:port], or `<unparsable destination>`. */
  destination: string;
  /** The first 12 hex digits of the SHA-256 of the whole destination as published. */
  destinationHash: string;
}

const UNPARSABLE = '<unparsable destination>';
/** `//user:password@`, the password possibly holding `?` or `#`. */
const USERINFO = /\/\/[^/]*@/g;

/**
 * A destination as it may appear in logs: the origin only, never userinfo, path or query.
 * Webhook receivers put their credentials in any of them: Slack and Discord in the path
 * (/services/T…/B…/<token>, /api/webhooks/<id>/<token>), Telegram in the first segment
 * (/bot<token>/…), others in the query or userinfo; so no part of the path is safe, not even its
 * first segment. The hash takes the path's place: it tells two destinations on one host apart, and
 * whoever holds a destination (the tenant, the dead-letter entry) can match it to the log line,
 * while a webhook token cannot be recovered from 48 bits of a hash.
 */
export function redactDestination(destination: string): LoggedDestination {
  const destinationHash = hash('sha256', destination, 'hex').slice(0, 12);
  try {
    return { destination: new URL(destination).origin, destinationHash };
  } catch {
    return { destination: UNPARSABLE, destinationHash };
  }
}

/**
 * A queue request URL as the request log may show it: a publish keeps its destination's origin
 * alone (see redactDestination); any other URL loses its query and whatever sits between a `//`
 * and an `@`, in case a malformed publish still carries a destination's userinfo.
 */
export function redactQueueRequestUrl(url: string): string {
  const destination = destinationFromUrl(url.slice(QUEUE_PATH_PREFIX.length));
  if (destination !== '') {
    return url.slice(0, url.length - destination.length) + redactDestination(destination).destination;
  }
  return url.replace(USERINFO, '//').split('?', 1)[0]!;
}
