import fs from 'node:fs/promises';
import path from 'node:path';
import { CoreV1Api, type KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import { INSTANCE_PATH_PREFIX } from '../api/contract.js';
import { QUEUE_BINDING_KIND, QueueEnvKey, queueEnvSecretName } from '../api/queue-binding.js';
import type { DemoTenant } from './demo-tenant.js';
import { waitFor } from './wait.js';

/*
 * What `make run` tells its user once the platform runs: the env file to source, the next
 * commands, the example queues' environment and the console's sign-in.
 */

/** How to sign in to the console: its URL, the demo tenant and where its token is. */
export function printConsoleSignIn(info: { url: string; demo: DemoTenant }): void {
  const tokenFile = path.relative(process.cwd(), info.demo.tokenFile);
  console.log(`Console: ${info.url}
  Sign in as the demo tenant (${info.demo.username}, namespace ${info.demo.namespace}) with the token in
  ${tokenFile} (valid 24 h, renewed every 12 h while this runs):   cat ${tokenFile}
  or any ServiceAccount's:   kubectl create token <serviceaccount> -n <namespace>
`);
}

/** Writes `<stateDir>/env`, which a shell sources to reach the platform. */
export async function writeEnvFile(
  stateDir: string,
  info: { kubeconfigPath: string; gatewayUrl: string; toolsDir: string },
): Promise<void> {
  const lines = [
    `export KUBECONFIG=${info.kubeconfigPath}`,
    `export SETTEE_GATEWAY_URL=${info.gatewayUrl}`,
    // The kubectl and helm built for this control plane's version, ahead of any other on the PATH.
    `export PATH=${info.toolsDir}:$PATH`,
  ];
  await fs.writeFile(path.join(stateDir, 'env'), `${lines.join('\n')}\n`);
}

export function printNextSteps(stateDir: string, info: { kubeconfigPath: string; gatewayUrl: string }): void {
  const envFile = path.relative(process.cwd(), path.join(stateDir, 'env'));
  console.log(`
Settee is running. In another shell:

  source ${envFile}          # KUBECONFIG, SETTEE_GATEWAY_URL=${info.gatewayUrl}, kubectl on PATH
  kubectl get couch                          # the example instances: Phase, Plan, Endpoint
  kubectl apply -f examples/couchinstance-free.yaml   # or your own CouchInstance manifest
  kubectl get secret <name>-admin -o jsonpath='{.data.url}' | base64 -d   # the URL with credentials

Gateway: ${info.gatewayUrl}   (instances at ${info.gatewayUrl}${INSTANCE_PATH_PREFIX}/<namespace>/<name>)
Press Ctrl-C to stop everything.
`);
}

/** Prints the VQUEUE_* values of each example QueueBinding, once the operator has written them. */
export async function printQueueEnvironments(
  kubeConfig: KubeConfig,
  manifests: KubernetesObject[],
): Promise<void> {
  const core = kubeConfig.makeApiClient(CoreV1Api);
  for (const binding of manifests.filter((o) => o.kind === QUEUE_BINDING_KIND)) {
    const namespace = binding.metadata?.namespace ?? 'default';
    const name = queueEnvSecretName(binding.metadata?.name ?? '');
    const secret = await waitFor(
      `Secret ${namespace}/${name}`,
      () => core.readNamespacedSecret({ name, namespace }).catch(() => undefined),
      { timeoutMs: 30_000, intervalMs: 250 },
    ).catch(() => undefined);
    if (!secret?.data) {
      console.log(
        `(the queue environment of ${namespace}/${binding.metadata?.name} is not ready yet: kubectl get qb)`,
      );
      continue;
    }
    console.log(`Webhook queue of QueueBinding ${namespace}/${binding.metadata?.name} (Secret ${name}):`);
    for (const key of Object.values(QueueEnvKey)) {
      console.log(`  ${key}=${Buffer.from(secret.data[key] ?? '', 'base64').toString('utf8')}`);
    }
    console.log('');
  }
}
