import type { Gateway } from '../../../../gateway/gateway.js';
import {
  createCouchInstance,
  setInstancePod,
  startTestGateway,
} from '../../../helpers/gateway/gateway-harness.js';
import { jsonBodyOf, RawConnection, statusOf } from '../../../helpers/gateway/raw-connection.js';
import { type RecordingEngine, startRecordingEngine } from '../../../helpers/gateway/recording-engine.js';
import { testControlPlane, useTestNamespace } from '../../../helpers/kube.js';

/**
 * A client that sends its FIN before its request head is whole (a script piping a cut request, a
 * client that half-closes after writing): node:http's parser ends in HPE_INVALID_EOF_STATE and the
 * gateway's clientError answer (client-error.ts) says 400 in CouchDB's shape; nginx closes without
 * an answer. The fast path, which reads heads itself, must answer as the gateway's node:http path
 * does, so that a client sees the same whichever path its connection took; nothing reaches the
 * engine either way, and a FIN with no bytes before it gets no answer on either.
 */
describe('a client FIN before the request head is whole', () => {
  const namespace = useTestNamespace('gw-finhead');
  const { kubeConfig } = testControlPlane();
  let engine: RecordingEngine;
  const gateways: Record<'on' | 'off', Gateway | undefined> = { on: undefined, off: undefined };
  const cut = (): string => `GET /db/${namespace.name}/paid/doc HTTP/1.1\r\nHost: gw\r\nAccept: app`;

  beforeAll(async () => {
    engine = await startRecordingEngine((_req, res) => res.end('{}'));
    const ref = { namespace: namespace.name, name: 'paid' };
    await createCouchInstance(kubeConfig, ref, { plan: 'paid' });
    await setInstancePod(kubeConfig, ref, { port: engine.port, ready: true });
    for (const fastPath of ['on', 'off'] as const) {
      gateways[fastPath] = await startTestGateway({
        kubeConfig,
        namespace: namespace.name,
        env: { SETTEE_GATEWAY_FAST_PATH: fastPath === 'on' ? 'true' : 'false' },
        writers: { activityLease: async () => undefined, wakeRequest: async () => undefined },
      });
    }
  });

  afterAll(async () => {
    await gateways.on?.stop();
    await gateways.off?.stop();
    await engine?.close();
  });

  it.each([
    ['in the same segment', 'on'],
    ['in the same segment', 'off'],
    ['after a pause', 'on'],
    ['after a pause', 'off'],
  ] as const)(
    'when the FIN comes %s (fast path %s), then the client gets 400 bad_request and the connection closes',
    async (when, fastPath) => {
      const seen = engine.seen.length;
      const client = new RawConnection(gateways[fastPath]!.port);
      if (when === 'in the same segment') client.end(cut());
      else {
        client.write(cut());
        await new Promise((resolve) => setTimeout(resolve, 100));
        client.end();
      }
      const { text, closedByServer } = await client.finish(5_000);
      expect(closedByServer).toBe(true);
      expect(statusOf(text)).toBe(400);
      expect(jsonBodyOf(text)).toEqual({ error: 'bad_request', reason: 'the request is not valid HTTP' });
      expect(engine.seen.length).toBe(seen);
    },
  );

  it.each(['on', 'off'] as const)(
    'when the FIN comes with no bytes before it (fast path %s), then the connection closes with no answer',
    async (fastPath) => {
      const client = new RawConnection(gateways[fastPath]!.port);
      client.end();
      const { text, closedByServer } = await client.finish(5_000);
      expect(closedByServer).toBe(true);
      expect(text).toBe('');
    },
  );
});
