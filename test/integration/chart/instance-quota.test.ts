import { CoreV1Api, type KubernetesObject, type V1ResourceQuota } from '@kubernetes/client-node';
import { toKubeApiError } from '../../../kube/errors.js';
import { createCouchInstance } from '../../helpers/gateway/gateway-harness.js';
import { testControlPlane, useTestNamespace } from '../../helpers/kube.js';
import { FULL_VALUES, renderChart } from '../../helpers/chart/chart-harness.js';

const COUNT = 'count/couchinstances.settee.dev';
const quotasOf = (objects: readonly KubernetesObject[]): V1ResourceQuota[] =>
  objects.filter((o) => o.kind === 'ResourceQuota') as V1ResourceQuota[];

/** Instances per namespace: the chart's ResourceQuota, and the real API server refusing the create past it. */
describe("the chart's CouchInstance quota in tenant namespaces", () => {
  const ns = useTestNamespace('quota');

  it('when no tenant namespace is listed and none is watched, then no quota is rendered', async () => {
    expect(quotasOf(await renderChart({ release: 'prod', namespace: 'settee-system' }))).toEqual([]);
  });

  it('when tenant namespaces are listed and one is watched, then each gets the count quota once', async () => {
    const quotas = quotasOf(
      await renderChart({
        release: 'prod',
        namespace: 'settee-system',
        valuesFiles: [FULL_VALUES],
        set: { watchNamespace: 'team-a', 'freeEnvelope.instanceQuotaNamespaces': '{team-a,team-b}' },
      }),
    );
    expect(quotas.map((q) => q.metadata?.namespace)).toEqual(['team-a', 'team-b']);
    expect(quotas[0]?.spec?.hard).toEqual({ [COUNT]: '3' });
  });

  it('when a namespace holds as many instances as its quota, then the API server refuses the next with "exceeded quota"', async () => {
    const { kubeConfig } = testControlPlane();
    const [quota] = quotasOf(
      await renderChart({
        release: 'prod',
        namespace: 'settee-system',
        set: { watchNamespace: ns.name, 'freeEnvelope.instancesPerNamespace': '2' },
      }),
    );
    if (!quota?.metadata?.name) throw new Error('no quota rendered');
    const core = kubeConfig.makeApiClient(CoreV1Api);
    await core.createNamespacedResourceQuota({ namespace: ns.name, body: quota });
    // The control plane's kube-controller-manager (its resource quota controller) fills in status;
    // from then on the API server's quota admission counts by itself.
    const deadline = Date.now() + 30_000;
    for (;;) {
      const current = await core.readNamespacedResourceQuota({
        name: quota.metadata.name,
        namespace: ns.name,
      });
      if (current.status?.hard?.[COUNT] === '2' && current.status.used?.[COUNT] !== undefined) break;
      if (Date.now() > deadline)
        throw new Error('the resource quota controller did not fill in the quota status');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const ref = (name: string) => ({ namespace: ns.name, name });
    await createCouchInstance(kubeConfig, ref('one'));
    await createCouchInstance(kubeConfig, ref('two'));
    const refusal = await createCouchInstance(kubeConfig, ref('three')).then(
      () => 'accepted',
      (err: unknown) => `${toKubeApiError(err)?.statusCode} ${toKubeApiError(err)?.message}`,
    );
    expect(refusal).toMatch(
      /^403 .*exceeded quota: prod-settee-couchinstances.*limited: count\/couchinstances\.settee\.dev=2/,
    );
  });
});
