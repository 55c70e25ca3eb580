import type http from 'node:http';
import type { Redis } from 'ioredis';
import type { QueueTarget } from '../core/binding-registry.js';
import type { QueueConfig } from '../core/config.js';
import type { QueueKeys } from '../core/keys.js';

/** An authenticated request to one of a binding's routes, with what its handler needs. */
export interface ApiRequest {
  req: http.IncomingMessage;
  res: http.ServerResponse;
  target: QueueTarget;
  /** The `:name` segments of the route's pattern, percent-decoded; a `*name` segment raw. */
  params: Readonly<Record<string, string>>;
  query: URLSearchParams;
  /**
   * The client's address, recorded as the `callerIp` of what it publishes: the peer, or the first
   * X-Forwarded-For address when the peer is a trusted proxy (gateway/http/trusted-proxies.ts).
   */
  callerIp: string | undefined;
  /** The binding database's shared command connection. */
  redis: Redis;
  keys: QueueKeys;
  config: QueueConfig;
}

export type ApiHandler = (request: ApiRequest) => Promise<void>;
