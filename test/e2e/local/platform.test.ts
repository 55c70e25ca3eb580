import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { CoreV1Api, CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { Client, Receiver } from '@upstash/qstash';
import { startLocalPlatform, type LocalPlatform } from '../../../local/platform.js';
import { waitFor } from '../../../local/wait.js';

/**
 * Pids of the platform's processes (gateway, operator, console, kubelet stand-in and its engines),
 * by entry point: `gateway/main.ts` through tsx, or its bundle `.settee/build/gateway-main.<hash>.cjs`
 * (the gateway and the operator, run through local/bundle-runner.ts) or `.mjs` (the others).
 */
function platformPids(stateDir: string): number[] {
  const out = execFileSync('ps', ['-eo', 'pid=,args=']).toString();
  return out
    .split('\n')
    .filter((line) =>
      /(gateway|operator|kubelet-stand-in|console)(\/main\.ts|-main\.\w+\.[cm]js)|pouchdb-stand-in-server/.test(
        line,
      ),
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
    platform = await startLocalPlatform({ stateDir, console: true });
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
      // Its engine started by the platform's own kubelet stand-in, beside a second control plane.
      { timeoutMs: 90_000, intervalMs: 250 },
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
  }, 120_000);

  it('when a message is published to the example queue with the QStash SDK, then a local receiver gets it signed', async () => {
    const core = new KubeConfig();
    core.loadFromFile(platform.kubeconfigPath);
    const secrets = core.makeApiClient(CoreV1Api);
    const env = await waitFor(
      'the example QueueBinding env Secret cache-vqueue',
      async () => {
        const secret = await secrets
          .readNamespacedSecret({ name: 'cache-vqueue', namespace: 'default' })
          .catch(() => undefined);
        if (!secret?.data) return undefined;
        return Object.fromEntries(
          Object.entries(secret.data).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]),
        );
      },
      { timeoutMs: 30_000, intervalMs: 250 },
    );
    expect(env.VQUEUE_URL).toBe(`${platform.gatewayUrl}/queue/default/cache`);

    const received: Array<{ body: string; signature: string; url: string }> = [];
    const receiver = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const { port } = receiver.address() as AddressInfo;
        received.push({
          body: Buffer.concat(chunks).toString('utf8'),
          signature: String(req.headers['upstash-signature']),
          url: `http://127.0.0.1:${port}${req.url}`,
        });
        res.end('ok');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = receiver.address() as AddressInfo;
      const client = new Client({ baseUrl: env.VQUEUE_URL, token: env.VQUEUE_TOKEN ?? '' });
      const { messageId } = await client.publishJSON({
        url: `http://127.0.0.1:${port}/hook`,
        body: { hello: 'settee' },
      });
      expect(messageId).toMatch(/^msg_/);
      const delivery = await waitFor('the delivery', async () => received[0], {
        timeoutMs: 15_000,
        intervalMs: 50,
      });
      expect(JSON.parse(delivery.body)).toEqual({ hello: 'settee' });
      const verifier = new Receiver({
        currentSigningKey: env.VQUEUE_CURRENT_SIGNING_KEY ?? '',
        // VQUEUE_NEXT_SIGNING_KEY is "" unless a rotation is pending; the SDK wants two keys.
        nextSigningKey: env.VQUEUE_NEXT_SIGNING_KEY ?? '',
      });
      await expect(
        verifier.verify({ signature: delivery.signature, body: delivery.body, url: delivery.url }),
      ).resolves.toBe(true);
    } finally {
      await new Promise((resolve) => receiver.close(resolve));
    }
  });

  it('when the paid example pins a region no node has, then the scheduler leaves its pod Pending and says why', async () => {
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromFile(platform.kubeconfigPath);
    const core = kubeConfig.makeApiClient(CoreV1Api);
    let seen = 'no pod yet';
    const scheduled = await waitFor(
      'the scheduler to give up on orders-0',
      async () => {
        const pod = await core
          .readNamespacedPod({ namespace: 'default', name: 'orders-0' })
          .catch(() => undefined);
        // First its claim is not bound yet; once it is, the scheduler names the node affinity.
        const condition = pod?.status?.conditions?.find((c) => c.type === 'PodScheduled');
        if (pod !== undefined) seen = JSON.stringify(condition ?? pod.status?.phase);
        if (condition?.status === 'False' && /affinity/.test(condition.message ?? '')) return condition;
        // What the scheduler last said, in the timeout's message (a CI run at load timed out here once).
        throw new Error(`orders-0's PodScheduled: ${seen}`);
      },
      // The scheduler retries a pod it found unschedulable after a back-off of up to 10 s per try, so a
      // loaded machine can take a few tries past the claim's binding.
      { timeoutMs: 60_000, intervalMs: 250 },
    );
    expect(scheduled.reason).toBe('Unschedulable');
    expect(scheduled.message).toMatch(/node affinity/);
  }, 90_000);

  it("when the console runs, then the demo tenant's token signs in and lists the demo namespace's instances only", async () => {
    const consoleUrl = platform.console?.url ?? '';
    const token = fs.readFileSync(platform.console?.demo.tokenFile ?? '', 'utf8').trim();
    expect((await fetch(consoleUrl)).headers.get('content-security-policy')).toContain("script-src 'self'");
    const signIn = await fetch(`${consoleUrl}/api/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: consoleUrl },
      body: JSON.stringify({ token }),
    });
    expect(signIn.status).toBe(201);
    const cookie = (signIn.headers.getSetCookie()[0] ?? '').split(';')[0] ?? '';
    const list = (await (
      await fetch(`${consoleUrl}/api/namespaces/demo/instances`, { headers: { cookie } })
    ).json()) as { items: { name: string }[] };
    expect(list.items.map((row) => row.name)).toEqual(['notes']);
    const other = await fetch(`${consoleUrl}/api/namespaces/default/instances`, { headers: { cookie } });
    expect(other.status).toBe(403);
  });

  it('when stopped, then none of its processes is left and the gateway port is closed', async () => {
    // The gateway, the operator, the kubelet stand-in, and the free example's engine (the paid one
    // pins a region make run's one node is not in).
    expect(platformPids(stateDir).length).toBeGreaterThanOrEqual(4);
    await platform.stop();
    expect(platformPids(stateDir)).toEqual([]);
    await expect(fetch(`${platform.gatewayUrl}/healthz`)).rejects.toThrow();
  });
});

function kubectlPath(): string {
  const planes = JSON.parse(process.env.SETTEE_TEST_CONTROL_PLANES ?? '[]') as Array<{ kubectl: string }>;
  return planes[0]?.kubectl ?? 'kubectl';
}
