import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  AppsV1Api,
  CoreV1Api,
  KubeConfig,
  type KubernetesObject,
  type V1Deployment,
} from '@kubernetes/client-node';
import { COUCHDB_PORT } from '../../../api/contract.js';
import type { CouchInstance } from '../../../api/couch-instance.js';
import { loadGatewayConfig } from '../../../gateway/config.js';
import { startGateway, type Gateway } from '../../../gateway/gateway.js';
import {
  startKubeletStandIn,
  type KubeletStandIn,
} from '../../../local/kubelet-stand-in/kubelet-stand-in.js';
import { loadOperatorConfig } from '../../../operator/config.js';
import { startOperator, type RunningOperator } from '../../../operator/operator.js';
import { createSilentLogger } from '../../../observability/logger.js';
import { TEST_NODES } from '../../helpers/control-plane-env.js';
import { createCouchInstance } from '../../helpers/gateway/gateway-harness.js';
import { basicAuth, request } from '../../helpers/gateway/http-request.js';
import { readAdminCredentials, waitForInstance } from '../../helpers/gateway/platform-harness.js';
import { testControlPlane, useTestNamespace } from '../../helpers/kube.js';
import { createMemoryLogger, type MemoryLogger } from '../../helpers/memory-logger.js';
import {
  applyManifests,
  containerEnvironment,
  deleteClusterScoped,
  findObject,
  renderChart,
  uniqueRelease,
} from '../../helpers/chart/chart-harness.js';
import { mayConnect } from '../../helpers/chart/network-policy-check.js';

/*
 * The chart's RBAC on the fuller cluster: the helm-rendered ServiceAccounts, Roles and bindings
 * are applied to the test control plane (real kube-controller-manager and kube-scheduler), and the
 * operator and the gateway run from the code with the chart's container environment and their
 * ServiceAccounts' own tokens (TokenRequest), against instances whose pods the real StatefulSet
 * controller makes, the scheduler places and the kubelet stand-in runs. A verb the chart forgot
 * shows as a step that never happens or a "forbidden" in either component's log, and fails here.
 * Only the kubelet stand-in uses the administrator's credentials: it plays the node.
 */

const releaseNamespace = useTestNamespace('chart-ids');
const tenantNamespace = useTestNamespace('chart-ids-tenant');

const isRunning = (instance: CouchInstance) => instance.status?.phase === 'Running';
const isHibernated = (instance: CouchInstance) => instance.status?.phase === 'Hibernated';

/** A kubeconfig that authenticates as the ServiceAccount with a token from the TokenRequest API. */
async function serviceAccountKubeConfig(serviceAccount: string): Promise<KubeConfig> {
  const admin = testControlPlane().kubeConfig;
  const { status } = await admin.makeApiClient(CoreV1Api).createNamespacedServiceAccountToken({
    name: serviceAccount,
    namespace: releaseNamespace.name,
    body: { spec: { audiences: [], expirationSeconds: 3600 } },
  });
  const cluster = admin.getCurrentCluster();
  if (!cluster || !status?.token) throw new Error(`no token for ${serviceAccount}`);
  const config = new KubeConfig();
  config.loadFromOptions({
    clusters: [cluster],
    users: [{ name: serviceAccount, token: status.token }],
    contexts: [{ name: serviceAccount, cluster: cluster.name, user: serviceAccount }],
    currentContext: serviceAccount,
  });
  return config;
}

/** What the chart gives the component's container, and the ServiceAccount its pods run as. */
function deploymentOf(objects: readonly KubernetesObject[], component: 'operator' | 'gateway') {
  const deployment = findObject<V1Deployment>(objects, 'Deployment', new RegExp(`-${component}$`));
  const env = containerEnvironment({
    deployment,
    objects,
    podName: `${deployment.metadata?.name ?? component}-identity-test`,
    namespace: releaseNamespace.name,
  });
  const serviceAccount = deployment.spec?.template.spec?.serviceAccountName;
  if (!serviceAccount) throw new Error(`the ${component} Deployment names no ServiceAccount`);
  return { env, serviceAccount, podLabels: deployment.spec?.template.metadata?.labels ?? {} };
}

const forbidden = (memory: MemoryLogger) =>
  memory.entries.filter((entry) => /forbidden/i.test(JSON.stringify(entry)));

describe("the chart's RBAC and NetworkPolicies, with the operator and gateway as the chart's ServiceAccounts on the fuller cluster", () => {
  let rendered: KubernetesObject[];
  let clusterScoped: KubernetesObject[] = [];
  let operator: RunningOperator | undefined;
  let gateway: Gateway | undefined;
  let standIn: KubeletStandIn | undefined;
  let dataRoot: string;
  const operatorLog = createMemoryLogger('info');
  const gatewayLog = createMemoryLogger('info');

  beforeAll(async () => {
    rendered = await renderChart({
      release: uniqueRelease('ids'),
      namespace: releaseNamespace.name,
      set: { watchNamespace: tenantNamespace.name, 'gateway.tls.existingSecret': '' },
    });
    const rbacKinds = new Set(['ServiceAccount', 'Role', 'RoleBinding', 'ClusterRole', 'ClusterRoleBinding']);
    const rbac = rendered.filter((o) => rbacKinds.has(o.kind ?? ''));
    clusterScoped = rbac.filter((o) => o.kind?.startsWith('Cluster'));
    await applyManifests(rbac);

    const operatorChart = deploymentOf(rendered, 'operator');
    const gatewayChart = deploymentOf(rendered, 'gateway');
    gateway = await startGateway({
      config: loadGatewayConfig({
        ...gatewayChart.env,
        // Loopback on a free port instead of 0.0.0.0:8080; a short drain for the suite.
        SETTEE_GATEWAY_HOST: '127.0.0.1',
        SETTEE_GATEWAY_PORT: '0',
        SETTEE_SHUTDOWN_TIMEOUT: '2s',
        // The wake below starts an engine through the kubelet stand-in: more than the chart's 15 s
        // on a loaded CI machine.
        SETTEE_GATEWAY_WAKE_TIMEOUT: '60s',
      }),
      kubeConfig: await serviceAccountKubeConfig(gatewayChart.serviceAccount),
      logger: gatewayLog.logger,
    });
    operator = await startOperator({
      config: loadOperatorConfig({
        ...operatorChart.env,
        SETTEE_METRICS_HOST: '127.0.0.1',
        SETTEE_METRICS_PORT: '0',
        SETTEE_SHUTDOWN_TIMEOUT: '5s',
        SETTEE_ENDPOINT_TEMPLATE: `${gateway.url}/db/{namespace}/{name}`,
      }),
      kubeConfig: await serviceAccountKubeConfig(operatorChart.serviceAccount),
      logger: operatorLog.logger,
    });
    dataRoot = await fs.mkdtemp(path.join(os.tmpdir(), 'settee-chart-ids-'));
    standIn = await startKubeletStandIn({
      kubeConfig: testControlPlane().kubeConfig,
      namespace: tenantNamespace.name,
      dataRoot,
      nodes: TEST_NODES,
      logger: createSilentLogger(),
    });
  }, 120_000);

  afterAll(async () => {
    await gateway?.stop();
    await operator?.stop();
    await standIn?.stop();
    if (dataRoot) await fs.rm(dataRoot, { recursive: true, force: true });
    // The console's TokenReview grant, named after this release; the rest goes with the namespaces.
    await deleteClusterScoped(clusterScoped);
  });

  it('when an instance is created, used, left idle and used again through the gateway, then every step happens under the chart RBAC and neither component is refused anything', async () => {
    const { kubeConfig } = testControlPlane();
    const ref = { namespace: tenantNamespace.name, name: 'app' };
    await createCouchInstance(kubeConfig, ref, { plan: 'free', hibernation: { idleAfter: '4s' } });
    const created = await waitForInstance(kubeConfig, ref, (i) => isRunning(i) || isHibernated(i), 60_000);
    expect(created.status?.endpoint).toBe(`${gateway?.url}/db/${ref.namespace}/app`);
    const admin = await readAdminCredentials(kubeConfig, ref);
    const auth = basicAuth(admin.username, admin.password);
    const base = `${gateway?.url}/db/${ref.namespace}/app`;

    expect((await request(`${base}/notes`, { method: 'PUT', headers: { Authorization: auth } })).status).toBe(
      201,
    );
    await waitForInstance(kubeConfig, ref, isHibernated, 60_000);
    const statefulSet = await kubeConfig
      .makeApiClient(AppsV1Api)
      .readNamespacedStatefulSet({ namespace: ref.namespace, name: 'app' });
    expect(statefulSet.spec?.replicas).toBe(0);

    // The first request wakes it: the gateway writes the wake request, the operator scales up.
    const woken = await request(`${base}/notes`, { headers: { Authorization: auth } });
    expect(woken.status).toBe(200);
    const events = await kubeConfig
      .makeApiClient(CoreV1Api)
      .listNamespacedEvent({ namespace: ref.namespace });
    const reasons = events.items
      .filter((e) => e.involvedObject.kind === 'CouchInstance' && e.involvedObject.name === 'app')
      .map((e) => e.reason);
    expect(reasons).toEqual(expect.arrayContaining(['CredentialsCreated', 'Started', 'Hibernated', 'Woken']));

    expect(forbidden(operatorLog)).toEqual([]);
    expect(forbidden(gatewayLog)).toEqual([]);
  }, 240_000);

  it("when the chart's NetworkPolicies are evaluated for the pod the StatefulSet controller made, then the operator and the gateway may reach its CouchDB port", async () => {
    const { kubeConfig } = testControlPlane();
    const ref = { namespace: tenantNamespace.name, name: 'reach' };
    await createCouchInstance(kubeConfig, ref, { plan: 'free', hibernation: { idleAfter: '10m' } });
    await waitForInstance(kubeConfig, ref, isRunning, 60_000);
    const pod = await kubeConfig
      .makeApiClient(CoreV1Api)
      .readNamespacedPod({ namespace: ref.namespace, name: 'reach-0' });
    const port = pod.spec?.containers[0]?.ports?.find(
      (p) => p.name === 'couchdb' || p.containerPort === COUCHDB_PORT,
    );
    expect(port?.containerPort).toBe(COUCHDB_PORT);
    expect(rendered.some((o) => o.kind === 'NetworkPolicy')).toBe(true);
    for (const component of ['operator', 'gateway'] as const) {
      const allowed = mayConnect({
        objects: rendered,
        from: deploymentOf(rendered, component).podLabels,
        to: pod.metadata?.labels ?? {},
        port: port?.containerPort ?? NaN,
      });
      expect({ component, allowed }).toEqual({ component, allowed: true });
    }
  }, 90_000);
});
