import type { CoreV1EventList } from '@kubernetes/client-node';
import type { KubeHttp } from '../kube/kube-http.js';
import type { UserRequest } from './user-context.js';

/** One Kubernetes Event about an object, newest first on the page. */
export interface EventView {
  type: string;
  reason: string;
  message: string;
  count: number;
  lastSeen: string | null;
}

const MAX_EVENTS = 50;

/** The Events about one object, read as the user (who may lack the right: then none, not an error). */
export async function listEvents(
  kube: KubeHttp,
  options: Pick<UserRequest, 'credentials' | 'namespace'> & { kind: string; name: string },
): Promise<EventView[] | null> {
  const list = await kube
    .call<CoreV1EventList>(options.credentials, {
      method: 'GET',
      path: `/api/v1/namespaces/${options.namespace}/events`,
      query: { fieldSelector: `involvedObject.kind=${options.kind},involvedObject.name=${options.name}` },
    })
    .catch((err: unknown) => {
      if ((err as { statusCode?: number }).statusCode === 403) return null;
      throw err;
    });
  if (list === null) return null;
  return list.items
    .map((event) => ({
      type: event.type ?? 'Normal',
      reason: event.reason ?? '',
      message: event.message ?? '',
      count: event.count ?? 1,
      lastSeen:
        String(event.lastTimestamp ?? event.eventTime ?? event.metadata?.creationTimestamp ?? '') || null,
    }))
    .sort((a, b) => (b.lastSeen ?? '').localeCompare(a.lastSeen ?? ''))
    .slice(0, MAX_EVENTS);
}
