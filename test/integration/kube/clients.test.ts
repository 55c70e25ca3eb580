import type { V1ConfigMap } from '@kubernetes/client-node';
import { waitFor } from '../../../local/wait.js';
import { KubeRequestTimeoutError, makeKubeClients, withPooledConnections } from '../../../kube/clients.js';
import { ResilientInformer } from '../../../kube/informer.js';
import { createSilentLogger } from '../../../observability/logger.js';
import { testControlPlane, useTestNamespace } from '../../helpers/kube.js';
import { TcpForwarder } from '../../helpers/tcp-forwarder.js';

const namespace = useTestNamespace('clients');
/**
 * Long enough that a loaded API server answers the calls that should succeed in time (500 ms was
 * seen to cut an ordinary GET under CI-like load); the frozen call waits it out.
 */
const REQUEST_TIMEOUT_MS = 2_000;

describe('makeKubeClients', () => {
  let forwarder: TcpForwarder;
  const informers: ResilientInformer<V1ConfigMap>[] = [];

  beforeEach(async () => {
    forwarder = await TcpForwarder.start(testControlPlane().server);
  });
  afterEach(async () => {
    await Promise.all(informers.splice(0).map((informer) => informer.stop()));
    await forwarder.cut();
  });

  /** Through the relay, with keep-alive connections as the operator and the gateway have them. */
  const pooledKubeConfig = () =>
    withPooledConnections(forwarder.kubeConfigThrough(testControlPlane().kubeConfig));

  it('when the connection of a call goes silent, then the call fails with KubeRequestTimeoutError after the request timeout, and the next call succeeds', async () => {
    const { core } = makeKubeClients(pooledKubeConfig(), { requestTimeoutMs: REQUEST_TIMEOUT_MS });
    await core.readNamespace({ name: namespace.name });
    // The pooled connection of that call is reused by the next one: it goes silent, not closed.
    forwarder.freeze();
    const startedAt = Date.now();
    const failure = await core.readNamespace({ name: namespace.name }).then(
      () => undefined,
      (err: unknown) => err,
    );
    const tookMs = Date.now() - startedAt;
    expect(failure).toBeInstanceOf(KubeRequestTimeoutError);
    expect(failure).toMatchObject({
      code: 'KUBE_REQUEST_TIMEOUT',
      request: { method: 'GET', path: `/api/v1/namespaces/${namespace.name}` },
    });
    expect(tookMs).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS - 50);
    // Soon after the timeout (wide for a loaded machine); a call that is not cut never returns.
    expect(tookMs).toBeLessThan(REQUEST_TIMEOUT_MS + 3_000);
    // The silent connection went with the call; the next one opens a fresh connection.
    expect((await core.readNamespace({ name: namespace.name })).metadata?.name).toBe(namespace.name);
  });

  it('when a watch stays idle longer than the request timeout, then it is not cut by it', async () => {
    const kubeConfig = pooledKubeConfig();
    const { core } = makeKubeClients(kubeConfig, { requestTimeoutMs: REQUEST_TIMEOUT_MS });
    let restarts = 0;
    const informer = new ResilientInformer<V1ConfigMap>({
      kubeConfig,
      resource: { apiVersion: 'v1', kind: 'ConfigMap', plural: 'configmaps', namespace: namespace.name },
      logger: createSilentLogger(),
      restartBackoff: { baseMs: 50, maxMs: 400 },
      onRestart: () => restarts++,
    });
    informers.push(informer);
    informer.start();
    await informer.synced;
    await new Promise((resolve) => setTimeout(resolve, 2 * REQUEST_TIMEOUT_MS + 500));
    await core.createNamespacedConfigMap({
      namespace: namespace.name,
      body: { metadata: { name: 'after-idle' }, data: { v: '1' } },
    });
    await waitFor(
      'the watch to deliver the new ConfigMap',
      async () => informer.get({ namespace: namespace.name, name: 'after-idle' }),
      { timeoutMs: 10_000 },
    );
    expect(restarts).toBe(0);
  });
});
