import type { ApiHandler } from './api-request.js';
import type { ApiRoute } from './api-router.js';
import { InvalidRequestError } from './errors.js';

const QUEUES =
  'queues (/v2/queues, /v2/enqueue) are not supported yet: publish with /v2/publish, which delivers without ordering or a parallelism limit';
const FLOW_CONTROL =
  'flow control (/v2/flowControl, /v2/globalParallelism, Upstash-Flow-Control-Key) is not supported yet';

const refuse =
  (message: string): ApiHandler =>
  async () => {
    throw new InvalidRequestError(message);
  };

/**
 * The QStash routes of features Settee does not have yet, each refused with a 400 that says so
 * rather than a bare 404 (the SDK's `client.queue(...)` and `client.flowControl` calls).
 */
export function unsupportedRoutes(): ApiRoute[] {
  const queues = refuse(QUEUES);
  const flow = refuse(FLOW_CONTROL);
  return [
    { path: 'queues', methods: { GET: queues, POST: queues } },
    { path: 'queues/:name', methods: { GET: queues, DELETE: queues } },
    { path: 'queues/:name/pause', methods: { POST: queues } },
    { path: 'queues/:name/resume', methods: { POST: queues } },
    { path: 'enqueue/:name/*destination', methods: { POST: queues } },
    { path: 'flowControl', methods: { GET: flow } },
    { path: 'flowControl/:key', methods: { GET: flow } },
    ...['pause', 'resume', 'pin', 'unpin', 'resetRate'].map((action) => ({
      path: `flowControl/:key/${action}`,
      methods: { POST: flow },
    })),
    { path: 'globalParallelism', methods: { GET: flow } },
  ];
}
