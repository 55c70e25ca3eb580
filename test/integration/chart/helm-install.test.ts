import { AppsV1Api, CoreV1Api } from '@kubernetes/client-node';
import { testControlPlane, useTestNamespace } from '../../helpers/kube.js';
import { CHART_DIR, helm, succeeded } from '../../helpers/chart/chart-harness.js';

const namespace = useTestNamespace('chart-install');
const RELEASE = 'couch';
const MASTER_SECRET = `${RELEASE}-settee-queue-master`;

/** Helm against the real API server; one namespace served, so the release grants nothing cluster-wide. */
async function helmRelease(
  command: 'install' | 'upgrade',
  set: Record<string, string> = {},
): Promise<string> {
  const values = { watchNamespace: namespace.name, ...set };
  const args = [command, RELEASE, CHART_DIR, '--namespace', namespace.name];
  for (const [key, value] of Object.entries(values)) args.push('--set', `${key}=${value}`);
  return succeeded(`helm ${command}`, await helm(args)).stdout;
}

async function readMasterSecret(): Promise<string | undefined> {
  const core = testControlPlane().kubeConfig.makeApiClient(CoreV1Api);
  const secret = await core.readNamespacedSecret({ name: MASTER_SECRET, namespace: namespace.name });
  return secret.data?.['master-secret'];
}

async function operatorEnv(): Promise<Record<string, string | undefined>> {
  const apps = testControlPlane().kubeConfig.makeApiClient(AppsV1Api);
  const deployment = await apps.readNamespacedDeployment({
    name: `${RELEASE}-settee-operator`,
    namespace: namespace.name,
  });
  return Object.fromEntries(
    (deployment.spec?.template.spec?.containers[0]?.env ?? []).map((e) => [e.name, e.value]),
  );
}

describe('helm install, upgrade and uninstall against the real API server', () => {
  afterAll(async () => {
    await helm(['uninstall', RELEASE, '--namespace', namespace.name]);
  });

  it('when the chart is installed, then every object is stored and the notes say how to create an instance and where its credentials are', async () => {
    const output = await helmRelease('install');
    expect(output).toContain('STATUS: deployed');
    expect(output).toContain('kind: CouchInstance');
    expect(output).toContain(`kubectl apply -n ${namespace.name} -f -`);
    expect(output).toContain('Secret "my-couch-admin" (keys username, password, and url');
    expect(output).toContain(`Signing keys derive from the Secret ${MASTER_SECRET}`);
    expect(await readMasterSecret()).toMatch(/^[A-Za-z0-9+/=]{80,}$/);
  });

  it('when the release is upgraded with other values, then the change is applied and the master secret is the one generated at install', async () => {
    const generated = await readMasterSecret();
    await helmRelease('upgrade', { logLevel: 'debug' });
    expect((await operatorEnv()).SETTEE_LOG_LEVEL).toBe('debug');
    expect(await readMasterSecret()).toBe(generated);
  });

  it('when the release is uninstalled and installed again, then the master secret outlives it, so signing keys stay the same', async () => {
    const generated = await readMasterSecret();
    succeeded('helm uninstall', await helm(['uninstall', RELEASE, '--namespace', namespace.name]));
    const apps = testControlPlane().kubeConfig.makeApiClient(AppsV1Api);
    const left = await apps.listNamespacedDeployment({ namespace: namespace.name });
    expect(left.items).toEqual([]);
    expect(await readMasterSecret()).toBe(generated);

    await helmRelease('install');
    expect(await readMasterSecret()).toBe(generated);
  });
});
