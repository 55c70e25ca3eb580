import { createHmac } from 'node:crypto';
import { waitFor } from '../../../../local/wait.js';
import { createMessage } from '../../../../gateway/queue/core/message.js';
import { useDeliveryFixture } from '../../../helpers/queue/delivery-fixture.js';

/** The key an Upstash-Signature was signed with, of `keys` (HS256 over its first two parts). */
function signedWith(signature: string, keys: readonly string[]): string | undefined {
  const [header, payload, mac] = signature.split('.');
  return keys.find(
    (key) => createHmac('sha256', key).update(`${header}.${payload}`).digest('base64url') === mac,
  );
}

describe("a delivery worker's binding changing while it runs", () => {
  const f = useDeliveryFixture('worker-update');

  it('when the signing key changes, then the next delivery is signed with the new key', async () => {
    const { config, store } = f.freshConfig();
    const { worker } = f.startWorker({ config });
    const deliver = async (path: string): Promise<string> => {
      await store.enqueue([
        createMessage({
          destination: `${f.destination.baseUrl}${path}`,
          method: 'POST',
          headers: {},
          body: Buffer.from(path),
          retries: 0,
        }),
      ]);
      const request = await waitFor(
        `the delivery to ${path}`,
        async () => f.destination.requests.find((r) => r.path === path),
        { timeoutMs: 10_000 },
      );
      return String(request.headers['upstash-signature']);
    };
    const newKey = 'sig_rotatedRotatedRotated0000000';
    const keys = [f.target.signingKey, newKey];

    expect(signedWith(await deliver('/before'), keys)).toBe(f.target.signingKey);
    worker.update({ ...f.target, signingKey: newKey });
    // The worker keeps what every delivery shares between deliveries: the change must reach it.
    expect(signedWith(await deliver('/after'), keys)).toBe(newKey);
  });
});
