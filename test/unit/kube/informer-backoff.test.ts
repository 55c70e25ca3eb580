import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig, type V1ConfigMap } from '@kubernetes/client-node';
import { DEFAULT_INFORMER_RESTART_BACKOFF, ResilientInformer } from '../../../kube/informer.js';
import { createSilentLogger } from '../../../observability/logger.js';

// A back-off reset by each watch's 200 retries every 100-200 ms: 15 or more watches in this window.
// Backed off from 200 ms it opens at most 5 (100 + 200 + 400 + 800 ms, the shortest jittered
// delays, then 1.6 s).
const WINDOW_MS = 3_000;
const MAX_WATCHES_IN_WINDOW = 8;

/**
 * An API server on loopback that lists ConfigMaps (200, none) and answers every watch 200 but cuts
 * its connection at once, as a proxy or a booting API server in trouble may.
 */
async function cuttingWatchesApiServer(): Promise<{
  server: http.Server;
  url: string;
  watches: () => number;
}> {
  let watches = 0;
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    res.setHeader('content-type', 'application/json');
    res.writeHead(200);
    if (url.searchParams.get('watch') === 'true') {
      watches++;
      res.flushHeaders();
      setImmediate(() => res.socket?.destroy());
      return;
    }
    res.end(
      JSON.stringify({
        kind: 'ConfigMapList',
        apiVersion: 'v1',
        metadata: { resourceVersion: '1' },
        items: [],
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { server, url: `http://127.0.0.1:${port}`, watches: () => watches };
}

describe('ResilientInformer back-off', () => {
  it('when every watch is answered 200 but cut at once, then restarts back off instead of retrying every 200 ms', async () => {
    const api = await cuttingWatchesApiServer();
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromOptions({
      clusters: [{ name: 'c', server: api.url, skipTLSVerify: true }],
      users: [{ name: 'u' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    const informer = new ResilientInformer<V1ConfigMap>({
      kubeConfig,
      resource: { apiVersion: 'v1', kind: 'ConfigMap', plural: 'configmaps', namespace: 'default' },
      logger: createSilentLogger(),
      restartBackoff: DEFAULT_INFORMER_RESTART_BACKOFF,
    });
    informer.start();
    try {
      await informer.synced;
      // The count over a stretch of time is what is tested: a window, not a wait on a condition.
      await new Promise((resolve) => setTimeout(resolve, WINDOW_MS));
      // It kept trying, and not every 100-200 ms.
      expect(api.watches()).toBeGreaterThanOrEqual(2);
      expect(api.watches()).toBeLessThanOrEqual(MAX_WATCHES_IN_WINDOW);
    } finally {
      await informer.stop();
      // client-node keeps its connections alive; close() alone would wait for them.
      api.server.closeAllConnections();
      await new Promise((resolve) => api.server.close(resolve));
    }
  });
});
