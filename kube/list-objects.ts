import http from 'node:http';
import https from 'node:https';
import type { KubeConfig, KubernetesListObject, KubernetesObject } from '@kubernetes/client-node';
import { currentServer } from './clients.js';
import { KubeApiError } from './errors.js';
import { resourceCollectionPath, type WatchedResource } from './resource-path.js';

const LIST_TIMEOUT_MS = 60_000;
/** client-go's pager's default page size: a restarted operator never holds one whole list's JSON at once. */
export const LIST_PAGE_SIZE = 500;

type ListBody<T extends KubernetesObject> = KubernetesListObject<T> & { reason?: string; message?: string };

/**
 * Lists a collection as the plain JSON the API server sends, in pages of LIST_PAGE_SIZE (limit and
 * continue), so that no response's buffer, string and parse spans the whole collection. No
 * resourceVersion is sent, so the first page is a consistent read and every later page is cut from
 * the first page's snapshot; the returned list keeps its resourceVersion for the watch to start from.
 * client-go's reflector pages differently: its first list asks for resourceVersion=0, which the
 * API server answers whole from its watch cache, ignoring the limit; here the pages are what bounds
 * the memory. Informers list with this rather than a typed client because the typed clients turn
 * timestamps into Date objects while watch events carry strings; one cache must not hold both shapes.
 * `onPage` is handed each page's objects as it arrives, before the next page is asked for.
 */
export async function listObjects<T extends KubernetesObject>(
  kubeConfig: KubeConfig,
  resource: WatchedResource,
  onPage?: (items: readonly T[]) => void,
): Promise<KubernetesListObject<T>> {
  const url = new URL(currentServer(kubeConfig) + resourceCollectionPath(resource));
  if (resource.labelSelector) url.searchParams.set('labelSelector', resource.labelSelector);
  if (resource.fieldSelector) url.searchParams.set('fieldSelector', resource.fieldSelector);
  const items: T[] = [];
  let next: string | undefined;
  for (;;) {
    const pageUrl = new URL(url);
    pageUrl.searchParams.set('limit', String(LIST_PAGE_SIZE));
    if (next) pageUrl.searchParams.set('continue', next);
    let page: KubernetesListObject<T>;
    try {
      page = await requestList<T>(kubeConfig, pageUrl);
    } catch (err) {
      // A continue token expires once etcd compacts past its snapshot (410 Gone). As client-go's
      // pager does (FullListIfExpired), list again from the start without a limit: one whole
      // response rather than paging into expiry again. No test reaches this (it needs a compaction
      // in the middle of a list).
      if (next && err instanceof KubeApiError && err.statusCode === 410) {
        const whole = await requestList<T>(kubeConfig, url);
        onPage?.(whole.items);
        return whole;
      }
      throw err;
    }
    // Before the next page is asked for: what onPage drops from this page's objects (an informer's
    // trims) is garbage before the next page's JSON arrives, not kept until the whole list is in.
    onPage?.(page.items);
    for (const item of page.items) items.push(item);
    // Plain JSON: the field is `continue`, not client-node's `_continue`.
    next = (page.metadata as { continue?: string } | undefined)?.continue;
    if (!next) return { ...page, items };
  }
}

function requestList<T extends KubernetesObject>(
  kubeConfig: KubeConfig,
  url: URL,
): Promise<KubernetesListObject<T>> {
  const options: https.RequestOptions = {
    method: 'GET',
    headers: { Accept: 'application/json' },
    timeout: LIST_TIMEOUT_MS,
  };
  return kubeConfig.applyToHTTPSOptions(options).then(
    () =>
      new Promise((resolve, reject) => {
        const transport = url.protocol === 'http:' ? http : https;
        const request = transport.request(url, options, (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('error', reject);
          response.on('end', () => {
            const statusCode = response.statusCode ?? 0;
            let body: ListBody<T>;
            try {
              body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ListBody<T>;
            } catch (err) {
              const message = `list answered ${statusCode} with a body that is not JSON`;
              return reject(new KubeApiError({ statusCode, message, cause: err }));
            }
            if (statusCode === 200) return resolve(body);
            const message = body.message ?? `list answered ${statusCode}`;
            reject(new KubeApiError({ statusCode, reason: body.reason, message }));
          });
        });
        request.on('timeout', () => request.destroy(new Error(`list of ${url.pathname} timed out`)));
        request.on('error', reject);
        request.end();
      }),
  );
}
