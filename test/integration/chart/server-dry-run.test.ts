import {
  ApiextensionsV1Api,
  CoreV1Api,
  type KubernetesObject,
  type V1Deployment,
  type V1Pod,
} from '@kubernetes/client-node';
import { applyObject, makeObjectClient } from '../../../kube/apply.js';
import { waitFor } from '../../../local/wait.js';
import { testControlPlane, useTestNamespace } from '../../helpers/kube.js';
import {
  FULL_VALUES,
  kubectl,
  renderChart,
  toYamlStream,
  uniqueRelease,
  type CommandResult,
} from '../../helpers/chart/chart-harness.js';
import {
  buildPrometheusRuleStandInCrd,
  buildServiceMonitorStandInCrd,
} from './server-dry-run/service-monitor-crd.js';

const releaseNamespace = useTestNamespace('chart-dry-run');
const tenantNamespace = useTestNamespace('chart-dry-run-tenant');

/**
 * `kubectl apply --server-side --dry-run=server`: admission, schema and strict field validation run
 * as for a real install, and nothing is stored.
 */
function dryRunApply(objects: readonly KubernetesObject[]): Promise<CommandResult> {
  return kubectl(
    // Ownership conflicts (the control plane installed the CRDs under its own field manager) say
    // nothing about validity, so they are forced.
    [
      'apply',
      '--server-side',
      '--force-conflicts',
      '--dry-run=server',
      '--field-manager=helm',
      '--validate=strict',
      '-o',
      'name',
      '-f',
      '-',
    ],
    toYamlStream(objects),
  );
}

function acceptedNames(result: CommandResult): string[] {
  if (result.code !== 0) throw new Error(`the API server refused:\n${result.stderr}`);
  return result.stdout.trim().split('\n').filter(Boolean);
}

/** The pod a Deployment would create, for admission checks that apply to pods only (Pod Security). */
function podOf(deployment: V1Deployment, namespace: string): V1Pod {
  const template = deployment.spec?.template;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `${deployment.metadata?.name}-pod`, namespace, labels: template?.metadata?.labels },
    spec: template?.spec,
  } as V1Pod;
}

describe('every rendered manifest against the real API server (server-side dry run)', () => {
  const standIns = [buildServiceMonitorStandInCrd(), buildPrometheusRuleStandInCrd()];

  beforeAll(async () => {
    const { kubeConfig } = testControlPlane();
    const crds = kubeConfig.makeApiClient(ApiextensionsV1Api);
    for (const standIn of standIns) {
      await applyObject(makeObjectClient(kubeConfig), standIn);
      const name = standIn.metadata?.name ?? '';
      await waitFor(
        `the ${name} stand-in CRD to be Established`,
        async () => {
          const crd = await crds.readCustomResourceDefinition({ name });
          return crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')
            ? true
            : undefined;
        },
        { timeoutMs: 20_000 },
      );
    }
    // Pods of this namespace must meet the "restricted" Pod Security Standard.
    await kubeConfig.makeApiClient(CoreV1Api).patchNamespace({
      name: releaseNamespace.name,
      body: [
        { op: 'add', path: '/metadata/labels/pod-security.kubernetes.io~1enforce', value: 'restricted' },
      ],
    });
  });

  afterAll(async () => {
    const crds = testControlPlane().kubeConfig.makeApiClient(ApiextensionsV1Api);
    for (const standIn of standIns)
      await crds
        .deleteCustomResourceDefinition({ name: standIn.metadata?.name ?? '' })
        .catch(() => undefined);
  });

  it('when the chart is rendered with the default values and its CRDs, then the API server accepts every object', async () => {
    const objects = await renderChart({
      release: uniqueRelease('dry'),
      namespace: releaseNamespace.name,
      includeCrds: true,
    });
    expect(objects.length).toBeGreaterThan(15);
    expect(acceptedNames(await dryRunApply(objects))).toHaveLength(objects.length);
  });

  it('when the chart is rendered with every value set and one watched namespace, then the API server accepts every object', async () => {
    const objects = await renderChart({
      release: uniqueRelease('dry'),
      namespace: releaseNamespace.name,
      valuesFiles: [FULL_VALUES],
      // The dashboard's ConfigMap goes where Grafana's sidecar watches: a namespace that exists here.
      set: { watchNamespace: tenantNamespace.name, 'grafanaDashboard.namespace': tenantNamespace.name },
      includeCrds: true,
    });
    const kinds = new Set(objects.map((o) => o.kind));
    for (const kind of [
      'Ingress',
      'HorizontalPodAutoscaler',
      'ServiceMonitor',
      'PrometheusRule',
      'Role',
      'RoleBinding',
      'Secret',
    ]) {
      expect(kinds).toContain(kind);
    }
    expect(acceptedNames(await dryRunApply(objects))).toHaveLength(objects.length);
  });

  it("when the Deployments' pods are admitted where the restricted Pod Security Standard is enforced, then all three pass", async () => {
    for (const valuesFiles of [[], [FULL_VALUES]]) {
      const objects = await renderChart({
        release: uniqueRelease('pss'),
        namespace: releaseNamespace.name,
        valuesFiles,
      });
      const pods = objects
        .filter((o): o is V1Deployment => o.kind === 'Deployment')
        .map((deployment) => podOf(deployment, releaseNamespace.name));
      expect(pods).toHaveLength(3);
      expect(acceptedNames(await dryRunApply(pods))).toHaveLength(3);
    }
  });

  it('when a pod runs as root, then the same check refuses it (the Pod Security check is in force)', async () => {
    const objects = await renderChart({ release: uniqueRelease('pss'), namespace: releaseNamespace.name });
    const deployment = objects.find((o): o is V1Deployment => o.kind === 'Deployment');
    if (!deployment?.spec?.template.spec) throw new Error('no Deployment rendered');
    deployment.spec.template.spec.securityContext = { runAsUser: 0 };
    const result = await dryRunApply([podOf(deployment, releaseNamespace.name)]);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('violates PodSecurity "restricted');
  });

  it('when a manifest carries a field its kind does not have, then the dry run refuses it (validation is strict)', async () => {
    const objects = await renderChart({ release: uniqueRelease('dry'), namespace: releaseNamespace.name });
    const deployment = objects.find((o) => o.kind === 'Deployment') as KubernetesObject & {
      spec: Record<string, unknown>;
    };
    deployment.spec.replicaz = 2;
    const result = await dryRunApply([deployment]);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('.spec.replicaz: field not declared in schema');
  });
});
