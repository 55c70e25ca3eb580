import http from 'node:http';
import https from 'node:https';
import type { KubeConfig, KubernetesListObject, KubernetesObject } from '@kubernetes/client-node';
import { currentServer } from './clients.js';
import { KubeApiError } from './errors.js';
import { resourceCollectionPath, type WatchedResource } from './resource-path.js';

const LIST_TIMEOUT_MS = 60_000;

/**
 * Lists a collection as the plain JSON the API server sends. Informers list with this rather than
 * a typed client because the typed clients turn timestamps into Date objects while watch events
 * carry strings; one cache must not hold both shapes.
 */
export async function listObjects<T extends KubernetesObject>(
  kubeConfig: KubeConfig,
  resource: WatchedResource,
): Promise<KubernetesListObject<T>> {
  const url = new URL(currentServer(kubeConfig) + resourceCollectionPath(resource));
  if (resource.labelSelector) url.searchParams.set('labelSelector', resource.labelSelector);
  if (resource.fieldSelector) url.searchParams.set('fieldSelector', resource.fieldSelector);
  const options: https.RequestOptions = {
    method: 'GET',
    headers: { Accept: 'application/json' },
    timeout: LIST_TIMEOUT_MS,
  };
  await kubeConfig.applyToHTTPSOptions(options);
  const transport = url.protocol === 'http:' ? http : https;
  return new Promise((resolve, reject) => {
    const request = transport.request(url, options, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', reject);
      response.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const statusCode = response.statusCode ?? 0;
        try {
          const body = JSON.parse(text) as KubernetesListObject<T> & { reason?: string; message?: string };
          if (statusCode === 200) return resolve(body);
          reject(
            new KubeApiError({
              statusCode,
              reason: body.reason,
              message: body.message ?? `list answered ${statusCode}`,
            }),
          );
        } catch (err) {
          reject(
            new KubeApiError({
              statusCode,
              message: `list answered ${statusCode} with a body that is not JSON`,
              cause: err,
            }),
          );
        }
      });
    });
    request.on('timeout', () => request.destroy(new Error(`list of ${url.pathname} timed out`)));
    request.on('error', reject);
    request.end();
  });
}
