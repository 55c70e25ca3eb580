import type { ApiHandler } from './api-request.js';
import type { ApiRoute } from './api-router.js';
import { InvalidRequestError } from './errors.js';

const FLOW_CONTROL =
  'flow control (/v2/flowControl, /v2/globalParallelism, Upstash-Flow-Control-Key) is not supported yet';

const refuse =
  (message: string): ApiHandler =>
  async () => {
    throw new InvalidRequestError(message);
  };

/**
 * The QStash routes of features Settee does not have yet, each refused with a 400 that says so
 * rather than a bare 404 (the SDK's `client.flowControl` calls).
 */
export function unsupportedRoutes(): ApiRoute[] {
  const flow = refuse(FLOW_CONTROL);
  return [
    { path: 'flowControl', methods: { GET: flow } },
    { path: 'flowControl/:key', methods: { GET: flow } },
    ...['pause', 'resume', 'pin', 'unpin', 'resetRate'].map((action) => ({
      path: `flowControl/:key/${action}`,
      methods: { POST: flow },
    })),
    { path: 'globalParallelism', methods: { GET: flow } },
  ];
}
