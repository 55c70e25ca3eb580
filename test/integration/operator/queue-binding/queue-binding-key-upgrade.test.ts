import { Receiver } from '@upstash/qstash';
import { waitFor } from '../../../../local/wait.js';
import { getFreePort } from '../../../../local/ports.js';
import { createDeliverySigner } from '../../../../gateway/queue/workers/signer.js';
import { deriveSigningKey } from '../../../../operator/resources/queue-binding/signing-keys.js';
import type { RunningOperator } from '../../../../operator/operator.js';
import { useTestNamespace } from '../../../helpers/kube.js';
import {
  createBinding,
  createPasswordSecret,
  eventsFor,
  readBinding,
  requestRotation,
  startQueueBindingOperator,
  TEST_MASTER_SECRET,
  waitForBinding,
  waitForQueueEnv,
  writeBindingStatus,
} from '../../../helpers/queue/queue-binding-harness.js';

/**
 * Bindings whose status an operator of the grace-period model wrote (VQUEUE_NEXT_SIGNING_KEY ""
 * outside a rotation; a rotation pending until promoteAfter), taken over by this operator: the key
 * deliveries are signed with changes only where the old operator had promised it would, so
 * receivers configured from the old env Secret keep verifying.
 */
describe('upgrading signing keys from the grace-period model', () => {
  const ns = useTestNamespace('queue-key-upgrade');
  let operator: RunningOperator | undefined;
  afterAll(() => operator?.stop());

  const spec = (port: number) => ({
    engine: 'valkey' as const,
    connection: { host: '127.0.0.1', port, passwordSecretRef: { name: 'auth', key: 'password' } },
  });

  /** A delivery signed as the gateway signs it with `signingKey`, checked by the SDK's Receiver. */
  async function verifies(
    signingKey: string,
    receiverKeys: { current: string; next: string },
  ): Promise<boolean> {
    const url = 'https://receiver.example/hook';
    const body = Buffer.from('{"id":1}');
    const signature = createDeliverySigner(signingKey).sign({ destination: url, body });
    return new Receiver({ currentSigningKey: receiverKeys.current, nextSigningKey: receiverKeys.next })
      .verify({ signature, body: body.toString('utf8'), url })
      .catch(() => false);
  }

  it('when a binding has only currentGeneration, then its signing key stays and the next key is published; a pending rotation completes at its promoteAfter', async () => {
    await createPasswordSecret(ns.name, 'auth', 'x');
    // Nothing listens there: the database check fails fast, which this test does not look at.
    const port = await getFreePort();
    const steady = await createBinding(ns.name, 'steady', spec(port));
    // Two pending rotations: one due in an hour shows the keys kept until promoteAfter, one due in
    // three seconds shows the promotion at promoteAfter; neither depends on how soon the operator
    // gets to them.
    const pending = await createBinding(ns.name, 'pending', spec(port));
    const due = await createBinding(ns.name, 'due', spec(port));
    const keyOf = (uid: string | undefined, generation: number) =>
      deriveSigningKey({ masterSecret: TEST_MASTER_SECRET, bindingUid: uid ?? '', generation });
    await writeBindingStatus(ns.name, 'steady', { signingKeys: { currentGeneration: 3 } });
    const pendingRotation = async (name: string, promoteAfter: string) => {
      await requestRotation(ns.name, name, 'r1');
      await writeBindingStatus(ns.name, name, {
        signingKeys: { currentGeneration: 2, nextGeneration: 3, promoteAfter, rotationRequest: 'r1' },
      });
    };
    const inAnHour = new Date(Date.now() + 3_600_000).toISOString();
    const promoteAfter = new Date(Date.now() + 3_000).toISOString();
    await pendingRotation('pending', inAnHour);
    await pendingRotation('due', promoteAfter);

    operator = await startQueueBindingOperator({ namespace: ns.name });

    const steadyEnv = await waitForQueueEnv(ns.name, 'steady', 'written', () => true);
    expect(steadyEnv.VQUEUE_CURRENT_SIGNING_KEY).toBe(keyOf(steady.metadata.uid, 3));
    expect(steadyEnv.VQUEUE_NEXT_SIGNING_KEY).toBe(keyOf(steady.metadata.uid, 4));
    // The env Secret is written before the status: the status is waited for, not read once.
    const published = await waitForBinding(
      ns.name,
      'steady',
      'the next key in status',
      (b) => b.status?.signingKeys?.nextGeneration !== undefined,
    );
    expect(published.status?.signingKeys).toEqual({ currentGeneration: 3, nextGeneration: 4 });
    // Receivers of the old model held the current key twice (the SDK wants two); they still verify.
    const oldReceiver = { current: keyOf(steady.metadata.uid, 3), next: keyOf(steady.metadata.uid, 3) };
    expect(await verifies(steadyEnv.VQUEUE_CURRENT_SIGNING_KEY, oldReceiver)).toBe(true);
    const event = await waitFor(
      'the NextSigningKeyPublished Event',
      async () => (await eventsFor(ns.name, 'steady')).find((e) => e.reason === 'NextSigningKeyPublished'),
      { timeoutMs: 10_000, intervalMs: 100 },
    );
    expect(event.message).toMatch(/generation 4; deliveries are still signed with generation 3/);

    // A pending rotation keeps both of its keys until promoteAfter, as the old Event promised.
    const during = await waitForQueueEnv(ns.name, 'pending', 'written', () => true);
    expect(during).toMatchObject({
      VQUEUE_CURRENT_SIGNING_KEY: keyOf(pending.metadata.uid, 2),
      VQUEUE_NEXT_SIGNING_KEY: keyOf(pending.metadata.uid, 3),
    });
    expect((await readBinding(ns.name, 'pending')).status?.signingKeys).toMatchObject({
      currentGeneration: 2,
      nextGeneration: 3,
      promoteAfter: inAnHour,
    });

    // And completes at promoteAfter, not before.
    const done = await waitForBinding(
      ns.name,
      'due',
      'the pending rotation completed',
      (b) => b.status?.signingKeys?.currentGeneration === 3,
    );
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(promoteAfter));
    expect(done.status?.signingKeys).toEqual({
      currentGeneration: 3,
      nextGeneration: 4,
      rotationRequest: 'r1',
    });
    const after = await waitForQueueEnv(
      ns.name,
      'due',
      'rotated',
      (env) => env.VQUEUE_CURRENT_SIGNING_KEY === keyOf(due.metadata.uid, 3),
    );
    expect(after.VQUEUE_NEXT_SIGNING_KEY).toBe(keyOf(due.metadata.uid, 4));
    // A receiver given the pending pair verifies what is signed after the rotation.
    const pendingPair = { current: keyOf(due.metadata.uid, 2), next: keyOf(due.metadata.uid, 3) };
    expect(await verifies(after.VQUEUE_CURRENT_SIGNING_KEY, pendingPair)).toBe(true);
  });
});
