import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { startLocalPlatform, type LocalPlatform } from '../../../local/platform.js';
import { waitFor } from '../../../local/wait.js';

/** Pids of the platform's processes (gateway, operator, kubelet stand-in and its engines), by entry point. */
function platformPids(stateDir: string): number[] {
  const out = execFileSync('ps', ['-eo', 'pid=,args=']).toString();
  return out
    .split('\n')
    .filter(
      (line) =>
        line.includes('tsx') &&
        /(gateway|operator|kubelet-stand-in)\/main\.ts|pouchdb-stand-in-server/.test(line),
    )
    .map((line) => Number(line.trim().split(/\s+/)[0]))
    .filter(
      (pid) =>
        fs.existsSync(`/proc/${pid}/environ`) && fs.readFileSync(`/proc/${pid}/environ`).includes(stateDir),
    );
}

interface Instance {
  status?: { phase?: string; endpoint?: string; credentialsSecret?: string };
}

describe('the local platform (make run)', () => {
  const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'settee-platform-'));
  let platform: LocalPlatform;

  beforeAll(async () => {
    platform = await startLocalPlatform({ stateDir });
  }, 120_000);
  afterAll(async () => {
    await platform?.stop();
    fs.rmSync(stateDir, { recursive: true, force: true });
  });

  it('when started, then the env file exports KUBECONFIG and SETTEE_GATEWAY_URL, and kubectl works with it', () => {
    const env = fs.readFileSync(path.join(stateDir, 'env'), 'utf8');
    expect(env).toContain(`export KUBECONFIG=${platform.kubeconfigPath}`);
    expect(env).toContain(`export SETTEE_GATEWAY_URL=${platform.gatewayUrl}`);
    const namespaces = execFileSync(kubectlPath(), ['get', 'namespaces', '-o', 'name'], {
      env: { ...process.env, KUBECONFIG: platform.kubeconfigPath },
    }).toString();
    expect(namespaces).toContain('namespace/default');
  });

  it('when the examples are applied, then an example instance runs and answers through the gateway', async () => {
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromFile(platform.kubeconfigPath);
    const custom = kubeConfig.makeApiClient(CustomObjectsApi);
    const instance = await waitFor(
      'the example instance "notes" to be Running',
      async () => {
        const object = (await custom.getNamespacedCustomObject({
          group: 'settee.dev',
          version: 'v1alpha1',
          namespace: 'default',
          plural: 'couchinstances',
          name: 'notes',
        })) as Instance;
        return object.status?.phase === 'Running' ? object : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 250 },
    );
    expect(instance.status?.endpoint).toBe(`${platform.gatewayUrl}/db/default/notes`);
    const secret = execFileSync(
      'bash',
      ['-c', `"$KUBECTL" get secret notes-admin -n default -o jsonpath='{.data.url}' | base64 -d`],
      { env: { ...process.env, KUBECONFIG: platform.kubeconfigPath, KUBECTL: kubectlPath() } },
    ).toString();
    const url = new URL(secret);
    const response = await fetch(`${url.origin}${url.pathname}`, {
      headers: {
        authorization: `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64')}`,
      },
    });
    expect(response.status).toBe(200);
    expect(((await response.json()) as { couchdb?: string }).couchdb).toBe('Welcome');
  });

  it('when stopped, then none of its processes is left and the gateway port is closed', async () => {
    // Each of the three runs under tsx (two processes), and two example instances run engines.
    expect(platformPids(stateDir).length).toBeGreaterThanOrEqual(5);
    await platform.stop();
    expect(platformPids(stateDir)).toEqual([]);
    await expect(fetch(`${platform.gatewayUrl}/healthz`)).rejects.toThrow();
  });
});

function kubectlPath(): string {
  const planes = JSON.parse(process.env.SETTEE_TEST_CONTROL_PLANES ?? '[]') as Array<{ kubectl: string }>;
  return planes[0]?.kubectl ?? 'kubectl';
}
