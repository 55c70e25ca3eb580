import type https from 'node:https';
import { KubeConfig } from '@kubernetes/client-node';
import { withPooledConnections } from '../../../kube/clients.js';

const pem = (text: string) => Buffer.from(text).toString('base64');

/** A kubeconfig with inline TLS material, as the control plane and in-cluster configs have it. */
function kubeConfigWith(keyText: string): KubeConfig {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [{ name: 'c', server: 'https://127.0.0.1:6443', caData: pem('ca'), skipTLSVerify: false }],
    users: [{ name: 'u', certData: pem('cert'), keyData: pem(keyText) }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return withPooledConnections(kubeConfig);
}

async function agentOf(kubeConfig: KubeConfig): Promise<https.Agent | undefined> {
  const options: https.RequestOptions = {};
  await kubeConfig.applyToHTTPSOptions(options);
  return options.agent as https.Agent | undefined;
}

describe('withPooledConnections', () => {
  it('when requests carry the same TLS material (read afresh each time), then they share one keep-alive agent', async () => {
    const kubeConfig = kubeConfigWith('key-1');
    const first = await agentOf(kubeConfig);
    expect(first).toBeDefined();
    expect((first as unknown as { keepAlive: boolean }).keepAlive).toBe(true);
    expect(await agentOf(kubeConfig)).toBe(first);
  });

  it('when the client key changes (a rotated certificate), then the next request gets a new agent', async () => {
    const kubeConfig = kubeConfigWith('key-1');
    const first = await agentOf(kubeConfig);
    const user = kubeConfig.getCurrentUser() as { keyData?: string };
    user.keyData = pem('key-2');
    const second = await agentOf(kubeConfig);
    expect(second).not.toBe(first);
    expect(await agentOf(kubeConfig)).toBe(second);
  });
});
