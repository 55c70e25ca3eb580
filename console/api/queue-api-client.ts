import { renderQueueUrl } from '../../api/queue-binding.js';
import { QueueUnavailableError, QueueApiError } from '../http/errors.js';
import type { KubeHttp } from '../kube/kube-http.js';
import { readQueueEnv } from './queue-env.js';
import type { UserRequest } from './user-context.js';

const QUEUE_TIMEOUT_MS = 10_000;

/**
 * Calls a binding's own QStash API (the gateway's /v2 routes) for the user. The token is the
 * binding's VQUEUE_TOKEN, read with the user's Kubernetes token, so only a user who may read the
 * env Secret can act on the queue; the URL is built from the console's configured gateway address,
 * never taken from anything a tenant can write.
 */
export async function callQueueApi<T>(options: {
  kube: KubeHttp;
  user: UserRequest;
  binding: string;
  queueBaseUrl: string | undefined;
  method: 'GET' | 'POST' | 'DELETE';
  /** After /v2/, e.g. `dlq?count=50` or `dlq/retry/<id>`. */
  path: string;
}): Promise<T> {
  // The Secret first: whoever may not read it hears RBAC's answer, whatever the configuration.
  const env = await readQueueEnv(options.kube, options.user, options.binding);
  if (!options.queueBaseUrl) throw new QueueUnavailableError('not-configured');
  const url = `${renderQueueUrl(options.queueBaseUrl, { namespace: options.user.namespace, name: options.binding })}/v2/${options.path}`;
  let response: Response;
  try {
    response = await fetch(url, {
      method: options.method,
      headers: { Authorization: `Bearer ${env.VQUEUE_TOKEN}`, Accept: 'application/json' },
      signal: AbortSignal.timeout(QUEUE_TIMEOUT_MS),
      redirect: 'error',
    });
  } catch (err) {
    throw new QueueUnavailableError('unreachable', { cause: err });
  }
  const text = await response.text();
  let body: unknown = {};
  try {
    body = text === '' ? {} : JSON.parse(text);
  } catch {
    body = { error: text.slice(0, 300) };
  }
  if (!response.ok) {
    const message = (body as { error?: unknown }).error;
    throw new QueueApiError(
      response.status,
      typeof message === 'string' ? message : `the queue answered ${response.status}`,
    );
  }
  return body as T;
}

/** Ids the queue hands out (message ids, dlq ids, cursors): a conservative alphabet, so they go into a path as they are. */
export const QUEUE_ID_PATTERN = /^[A-Za-z0-9_:.-]{1,200}$/;
