import type { KubeConfig } from '@kubernetes/client-node';
import type { Gateway } from '../../../gateway/gateway.js';
import { createCouchInstance, setInstancePod, startTestGateway } from './gateway-harness.js';

/** Whether a gateway runs the fast path (SETTEE_GATEWAY_FAST_PATH) or node:http alone. */
export type FastPath = 'on' | 'off';

/** Two gateways, one per path, for a test that checks both answer alike. */
export type BothPathGateways = Record<FastPath, Gateway> & { stop(): Promise<void> };

/**
 * A paid instance named `paid` served by the engine at `enginePort`, and a gateway in front of it
 * with the fast path on and one with it off, for tests that run each case on both paths.
 */
export async function startBothPathGateways(options: {
  kubeConfig: KubeConfig;
  namespace: string;
  enginePort: number;
}): Promise<BothPathGateways> {
  const { kubeConfig, namespace } = options;
  const ref = { namespace, name: 'paid' };
  await createCouchInstance(kubeConfig, ref, { plan: 'paid' });
  await setInstancePod(kubeConfig, ref, { port: options.enginePort, ready: true });
  const start = (fastPath: FastPath): Promise<Gateway> =>
    startTestGateway({
      kubeConfig,
      namespace,
      env: { SETTEE_GATEWAY_FAST_PATH: fastPath === 'on' ? 'true' : 'false' },
      writers: { activityLease: async () => undefined, wakeRequest: async () => undefined },
    });
  const on = await start('on');
  const off = await start('off').catch(async (err: unknown) => {
    await on.stop();
    throw err;
  });
  return {
    on,
    off,
    stop: async () => {
      await on.stop();
      await off.stop();
    },
  };
}
