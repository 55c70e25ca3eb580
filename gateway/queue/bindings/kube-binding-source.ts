import type { KubeConfig, V1Secret } from '@kubernetes/client-node';
import type { Logger } from 'winston';
import { SETTEE_API_VERSION } from '../../../api/contract.js';
import {
  LABEL_QUEUE_BINDING,
  QUEUE_BINDING_KIND,
  QUEUE_BINDING_PLURAL,
  type QueueBinding,
} from '../../../api/queue-binding.js';
import { DEFAULT_INFORMER_RESTART_BACKOFF, ResilientInformer } from '../../../kube/informer.js';
import type { BindingRegistry } from '../core/binding-registry.js';
import { buildQueueTarget } from './queue-target.js';

export interface KubeBindingSourceOptions {
  kubeConfig: KubeConfig;
  /** Watch one namespace only (tests); default every namespace. */
  namespace?: string | undefined;
  registry: BindingRegistry;
  logger: Logger;
}

export interface KubeBindingSource {
  /** Resolves once both informers have listed once and the registry holds what they found. */
  readonly synced: Promise<void>;
  stop(): Promise<void>;
}

/**
 * Keeps the registry equal to what the Kubernetes API says, from two informers: QueueBindings,
 * and the env Secrets the operator writes for them (selected by label, so the gateway caches only
 * those). The env Secret gives both the token (the database password, copied there by the
 * operator) and the current signing key (derived by the operator from its master secret, which the
 * gateway never holds). Any event re-reads both caches for that binding: level-triggered.
 */
export function watchQueueBindings(options: KubeBindingSourceOptions): KubeBindingSource {
  const { kubeConfig, namespace, registry } = options;
  const logger = options.logger.child({ component: 'queue-bindings' });
  const bindings = new ResilientInformer<QueueBinding>({
    kubeConfig,
    resource: {
      apiVersion: SETTEE_API_VERSION,
      kind: QUEUE_BINDING_KIND,
      plural: QUEUE_BINDING_PLURAL,
      namespace,
    },
    logger,
    restartBackoff: DEFAULT_INFORMER_RESTART_BACKOFF,
  });
  const secrets = new ResilientInformer<V1Secret>({
    kubeConfig,
    resource: {
      apiVersion: 'v1',
      kind: 'Secret',
      plural: 'secrets',
      namespace,
      labelSelector: LABEL_QUEUE_BINDING,
    },
    logger,
    restartBackoff: DEFAULT_INFORMER_RESTART_BACKOFF,
  });

  const refresh = (bindingNamespace: string, name: string): void => {
    const key = `${bindingNamespace}/${name}`;
    const binding = bindings.get({ namespace: bindingNamespace, name });
    const envSecretName = binding?.status?.envSecret;
    const secret = envSecretName
      ? secrets.get({ namespace: bindingNamespace, name: envSecretName })
      : undefined;
    const target =
      binding && !binding.metadata.deletionTimestamp ? buildQueueTarget(binding, secret) : undefined;
    const current = registry.get(bindingNamespace, name);
    if (target) {
      if (!current || JSON.stringify(current) !== JSON.stringify(target)) registry.set(target);
    } else if (current) {
      registry.delete(key);
      logger.info('queue binding no longer served', { binding: key });
    }
  };

  bindings.onEvent((event) =>
    refresh(event.object.metadata.namespace ?? '', event.object.metadata.name ?? ''),
  );
  secrets.onEvent((event) => {
    const owner = event.object.metadata?.labels?.[LABEL_QUEUE_BINDING];
    if (owner) refresh(event.object.metadata?.namespace ?? '', owner);
  });
  bindings.start();
  secrets.start();

  return {
    synced: Promise.all([bindings.synced, secrets.synced]).then(() => undefined),
    async stop() {
      await Promise.all([bindings.stop(), secrets.stop()]);
    },
  };
}
