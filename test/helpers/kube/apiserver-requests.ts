import https from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';

/** Requests answered, keyed `VERB resource[/subresource]` (server-side applies are `APPLY`), or TOO_MANY_REQUESTS. */
export type RequestCounts = Map<string, number>;

/** The key under which apiserverRequestCounts counts every request answered 429, whatever its verb. */
export const TOO_MANY_REQUESTS = '429';

/** The API server's own /metrics, as text. */
async function apiserverMetrics(kubeConfig: KubeConfig): Promise<string> {
  const cluster = kubeConfig.getCurrentCluster();
  const options: https.RequestOptions = {};
  await kubeConfig.applyToHTTPSOptions(options);
  return new Promise<string>((resolve, reject) => {
    https
      .get(`${cluster?.server}/metrics`, options, (response) => {
        let body = '';
        response.on('data', (chunk: Buffer) => (body += chunk.toString()));
        response.on('end', () => resolve(body));
      })
      .on('error', reject);
  });
}

const labelsOf = (line: string): Record<string, string | undefined> =>
  Object.fromEntries([...line.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));

/** apiserver_request_total by verb and resource, from the API server's own /metrics. */
export async function apiserverRequestCounts(kubeConfig: KubeConfig): Promise<RequestCounts> {
  const text = await apiserverMetrics(kubeConfig);
  const counts: RequestCounts = new Map();
  for (const line of text.split('\n')) {
    if (!line.startsWith('apiserver_request_total{')) continue;
    const labels = labelsOf(line);
    const key =
      labels.code === '429'
        ? TOO_MANY_REQUESTS
        : `${labels.verb} ${labels.resource}${labels.subresource ? `/${labels.subresource}` : ''}`;
    counts.set(key, (counts.get(key) ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1)));
  }
  return counts;
}

/**
 * Watches of `resource` in one namespace open on the API server now (its
 * apiserver_longrunning_requests gauge): the controller manager's own cluster-wide watches, which
 * it restarts now and then, are not counted.
 */
export async function apiserverOpenWatches(kubeConfig: KubeConfig, resource: string): Promise<number> {
  let open = 0;
  for (const line of (await apiserverMetrics(kubeConfig)).split('\n')) {
    if (!line.startsWith('apiserver_longrunning_requests{')) continue;
    const labels = labelsOf(line);
    if (labels.verb === 'WATCH' && labels.resource === resource && labels.scope === 'namespace')
      open += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return open;
}
