import type { KubeConfig } from '@kubernetes/client-node';
import type { Gateway } from '../../../gateway/gateway.js';
import { testControlPlane, useTestNamespace } from '../kube.js';
import { createCouchInstance, setInstancePod, startTestGateway } from './gateway-harness.js';
import type { RecordingEngine } from './recording-engine.js';

/** Whether a gateway runs the fast path (SETTEE_GATEWAY_FAST_PATH) or node:http alone. */
export type FastPath = 'on' | 'off';

/** What a describe block's tests use, set once its beforeAll has run. */
export interface BothPathSetup {
  readonly namespace: { readonly name: string };
  /** The stand-in engine behind the instance `paid`. */
  engine: RecordingEngine;
  /** A gateway in front of it with the fast path on and one with it off. */
  gateways: Record<FastPath, Gateway>;
}

/**
 * For tests that run each case on both paths and check they answer alike: a namespace of the
 * block's own, the engine `startEngine` starts, a paid instance named `paid` served by it, and a
 * gateway per path, all started in the block's beforeAll and stopped in its afterAll.
 */
export function useBothPathGateways(
  prefix: string,
  startEngine: () => Promise<RecordingEngine>,
): BothPathSetup {
  const namespace = useTestNamespace(prefix);
  const setup = { namespace } as BothPathSetup;
  const started: Array<{ stop(): Promise<void> }> = [];
  beforeAll(async () => {
    const { kubeConfig } = testControlPlane();
    setup.engine = await startEngine();
    started.push({ stop: () => setup.engine.close() });
    const ref = { namespace: namespace.name, name: 'paid' };
    await createCouchInstance(kubeConfig, ref, { plan: 'paid' });
    await setInstancePod(kubeConfig, ref, { port: setup.engine.port, ready: true });
    const on = await startGateway(kubeConfig, namespace.name, 'on');
    started.push(on);
    const off = await startGateway(kubeConfig, namespace.name, 'off');
    started.push(off);
    setup.gateways = { on, off };
  });
  afterAll(async () => {
    for (const part of started.reverse()) await part.stop();
  });
  return setup;
}

function startGateway(kubeConfig: KubeConfig, namespace: string, fastPath: FastPath): Promise<Gateway> {
  return startTestGateway({
    kubeConfig,
    namespace,
    env: { SETTEE_GATEWAY_FAST_PATH: fastPath === 'on' ? 'true' : 'false' },
    writers: { activityLease: async () => undefined, wakeRequest: async () => undefined },
  });
}
