import { Client } from '@upstash/qstash';
import { renderQueueUrl } from '../../../api/queue-binding.js';
import type { QueueTarget } from '../../../gateway/queue/core/binding-registry.js';

/**
 * The official TypeScript SDK against one binding's queue on a gateway (in-process or a child
 * process: anything serving the queue under `baseUrl`), as a tenant sets it up from VQUEUE_URL and
 * VQUEUE_TOKEN, with the SDK's own retries off (a test sees each answer as the gateway gave it)
 * and its telemetry headers off. `token` defaults to the binding's own.
 */
export function queueSdkClient(
  gateway: { baseUrl: string },
  target: Pick<QueueTarget, 'namespace' | 'name' | 'token'>,
  token: string = target.token,
): Client {
  return new Client({
    baseUrl: renderQueueUrl(gateway.baseUrl, target),
    token,
    retry: false,
    enableTelemetry: false,
  });
}
