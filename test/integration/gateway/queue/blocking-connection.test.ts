import { createMessage } from '../../../../gateway/queue/core/message.js';
import { waitFor } from '../../../../local/wait.js';
import { TcpForwarder } from '../../../helpers/tcp-forwarder.js';
import { useDeliveryFixture } from '../../../helpers/queue/delivery-fixture.js';

/** database-connections.ts's grace after a read's BLOCK time. */
const BLOCKING_REPLY_GRACE_MS = 1_000;
const BLOCK_MS = 200;

describe("a delivery worker's blocking connection", () => {
  const f = useDeliveryFixture('blocking');
  let forwarder: TcpForwarder;

  beforeEach(async () => {
    forwarder = await TcpForwarder.start(`redis://${f.server.host}:${f.server.port}`);
  });
  afterEach(() => forwarder.cut());

  it('when it goes silent without closing (half-open), then the worker gives up its read, reconnects and delivers what is published after', async () => {
    // Reclaiming would deliver a message a lost read had claimed; it must not be what saves it here.
    const { config, store } = f.freshConfig({ blockMs: BLOCK_MS, reclaimIdleMs: 600_000 });
    // Only the blocking connection goes through the relay: the shared one stays direct.
    const target = { ...f.target };
    target.connection = { ...target.connection, host: '127.0.0.1', port: forwarder.port };
    f.startWorker({ config, target });
    const message = (n: number) =>
      createMessage({
        destination: `${f.destination.baseUrl}/half-open/${n}`,
        method: 'POST',
        headers: {},
        body: Buffer.from(`message ${n}`),
        retries: 0,
      });
    await store.enqueue([message(1)]);
    await waitFor(
      'the first delivery',
      async () => (f.destination.requests.length === 1 ? true : undefined),
      {
        timeoutMs: 5_000,
      },
    );

    forwarder.freeze();
    const frozenAt = Date.now();
    // Published while the worker's read waits on the silent connection.
    await new Promise((resolve) => setTimeout(resolve, BLOCK_MS));
    await store.enqueue([message(2)]);
    await waitFor(
      'the delivery after the freeze',
      async () => (f.destination.requests.length === 2 ? true : undefined),
      {
        timeoutMs: 10_000,
      },
    );
    const recoveredMs = Date.now() - frozenAt;
    expect(f.destination.requests.map((r) => r.path)).toEqual(['/half-open/1', '/half-open/2']);
    // At most: the read in flight settles empty, one more read on the dead connection while it is
    // replaced, and that read settles empty too (the margin is wide for a loaded machine).
    expect(recoveredMs).toBeLessThan(2 * (BLOCK_MS + BLOCKING_REPLY_GRACE_MS) + 3_000);
    // And the new connection keeps working.
    await store.enqueue([message(3)]);
    await waitFor(
      'a delivery on the new connection',
      async () => (f.destination.requests.length === 3 ? true : undefined),
      {
        timeoutMs: 5_000,
      },
    );
  });
});
