import https from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';

/** Requests answered, keyed `VERB resource[/subresource]` (server-side applies are `APPLY`), or TOO_MANY_REQUESTS. */
export type RequestCounts = Map<string, number>;

/** The key under which apiserverRequestCounts counts every request answered 429, whatever its verb. */
export const TOO_MANY_REQUESTS = '429';

/** apiserver_request_total by verb and resource, from the API server's own /metrics. */
export async function apiserverRequestCounts(kubeConfig: KubeConfig): Promise<RequestCounts> {
  const cluster = kubeConfig.getCurrentCluster();
  const options: https.RequestOptions = {};
  await kubeConfig.applyToHTTPSOptions(options);
  const text = await new Promise<string>((resolve, reject) => {
    https
      .get(`${cluster?.server}/metrics`, options, (response) => {
        let body = '';
        response.on('data', (chunk: Buffer) => (body += chunk.toString()));
        response.on('end', () => resolve(body));
      })
      .on('error', reject);
  });
  const counts: RequestCounts = new Map();
  for (const line of text.split('\n')) {
    if (!line.startsWith('apiserver_request_total{')) continue;
    const labels = Object.fromEntries([...line.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    const key =
      labels.code === '429'
        ? TOO_MANY_REQUESTS
        : `${labels.verb} ${labels.resource}${labels.subresource ? `/${labels.subresource}` : ''}`;
    counts.set(key, (counts.get(key) ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1)));
  }
  return counts;
}
