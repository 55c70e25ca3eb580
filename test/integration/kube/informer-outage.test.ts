import { CoreV1Api, type V1ConfigMap } from '@kubernetes/client-node';
import { DEFAULT_INFORMER_RESTART_BACKOFF, ResilientInformer } from '../../../kube/informer.js';
import { startControlPlane, type ControlPlane } from '../../../local/control-plane.js';
import { waitFor } from '../../../local/wait.js';
import { createSilentLogger } from '../../../observability/logger.js';

// Long enough for an uncapped back-off to pass the bound: client-go's 30 s cap would have the
// informer's next attempt 25 s after the API server is back.
const OUTAGE_MS = 30_000;
// Every recovery of the platform is to be within 10 s of its fault's end (issue 29).
const SEEN_WITHIN_MS = 10_000;
// Retried every 200 ms, a 30 s outage would cost about 150 attempts; backed off, about 15.
const MAX_ATTEMPTS_DURING_OUTAGE = 30;

describe('ResilientInformer across a kube-apiserver outage', () => {
  // A control plane of its own: the outage would stop the one the other suites share.
  let plane: ControlPlane;
  beforeAll(async () => {
    plane = await startControlPlane();
  }, 180_000);
  afterAll(async () => {
    await plane?.stop();
  });

  it('when kube-apiserver is down for 30 s, then the informer retries with a growing back-off, and sees a change within 10 s of the API server taking writes again', async () => {
    const core = plane.kubeConfig.makeApiClient(CoreV1Api);
    let attempts = 0;
    // Built as the operator's and the gateway's informers are: the default back-off.
    const informer = new ResilientInformer<V1ConfigMap>({
      kubeConfig: plane.kubeConfig,
      resource: { apiVersion: 'v1', kind: 'ConfigMap', plural: 'configmaps', namespace: 'default' },
      logger: createSilentLogger(),
      restartBackoff: DEFAULT_INFORMER_RESTART_BACKOFF,
      onRestart: () => attempts++,
    });
    informer.start();
    try {
      await informer.synced;
      await plane.outage('kube-apiserver', OUTAGE_MS);
      const attemptsDuringOutage = attempts;
      // A new name per attempt: a create committed while its answer was lost to the booting API
      // server would have every retry of the same name answered 409 until the deadline.
      let writes = 0;
      const name = await waitFor(
        'kube-apiserver to take a write again',
        () => {
          const attempt = `after-outage-${++writes}`;
          return core
            .createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: attempt } } })
            .then(() => attempt);
        },
        { timeoutMs: 120_000, intervalMs: 100 },
      );
      const written = Date.now();
      await waitFor(
        'the informer to see the ConfigMap written after the outage',
        async () => (informer.get({ namespace: 'default', name }) ? true : undefined),
        { timeoutMs: SEEN_WITHIN_MS, intervalMs: 20 },
      );
      expect(Date.now() - written).toBeLessThan(SEEN_WITHIN_MS);
      // Not a retry every 200 ms: a down API server is not flooded by every informer of every replica.
      expect(attemptsDuringOutage).toBeGreaterThan(3);
      expect(attemptsDuringOutage).toBeLessThanOrEqual(MAX_ATTEMPTS_DURING_OUTAGE);
    } finally {
      await informer.stop();
    }
  }, 240_000);
});
