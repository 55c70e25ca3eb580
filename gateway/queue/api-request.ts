import type http from 'node:http';
import type { Redis } from 'ioredis';
import type { QueueTarget } from './binding-registry.js';
import type { QueueConfig } from './config.js';
import type { QueueKeys } from './keys.js';
import type { ManagementRoute } from './queue-route.js';

/** An authenticated request to one of a binding's management routes (messages, DLQ, events). */
export interface ApiRequest {
  req: http.IncomingMessage;
  res: http.ServerResponse;
  route: ManagementRoute;
  target: QueueTarget;
  /** The binding database's shared command connection. */
  redis: Redis;
  keys: QueueKeys;
  config: QueueConfig;
}

export type ApiHandler = (request: ApiRequest) => Promise<void>;
