import { createHash } from 'node:crypto';
import { Receiver } from '@upstash/qstash';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { createDeliverySigner } from '../../../../gateway/queue/workers/signer.js';
import { randomSigningKey } from '../../../helpers/queue/signing-keys.js';

describe('the delivery signer', () => {
  const current = randomSigningKey();
  const next = randomSigningKey();
  const destination = 'https://receiver.example/hooks/orders?source=queue&n=1';
  const body = Buffer.from('{"order":42,"note":"ünïcödé"}', 'utf8');

  it("when a delivery is signed with the current key, then the SDK's Receiver verifies it", async () => {
    const signature = createDeliverySigner(current).sign({ destination, body });
    const receiver = new Receiver({ currentSigningKey: current, nextSigningKey: next });
    await expect(receiver.verify({ signature, body: body.toString('utf8'), url: destination })).resolves.toBe(
      true,
    );
  });

  it("when a delivery is signed with the next key, then the SDK's Receiver verifies it through its next key", async () => {
    const signature = createDeliverySigner(next).sign({ destination, body });
    const receiver = new Receiver({ currentSigningKey: current, nextSigningKey: next });
    await expect(receiver.verify({ signature, body: body.toString('utf8'), url: destination })).resolves.toBe(
      true,
    );
  });

  it('when the body, the URL or the key differ, then the Receiver rejects the signature', async () => {
    const signature = createDeliverySigner(current).sign({ destination, body });
    const receiver = new Receiver({ currentSigningKey: current, nextSigningKey: next });
    await expect(receiver.verify({ signature, body: '{"order":43}', url: destination })).rejects.toThrow(
      /body hash/,
    );
    await expect(
      receiver.verify({ signature, body: body.toString('utf8'), url: 'https://receiver.example/other' }),
    ).rejects.toThrow(/subject/);
    const stranger = new Receiver({
      currentSigningKey: randomSigningKey(),
      nextSigningKey: randomSigningKey(),
    });
    await expect(
      stranger.verify({ signature, body: body.toString('utf8'), url: destination }),
    ).rejects.toThrow();
  });

  it('when a signature is decoded, then it carries exactly the claims QStash sends', () => {
    const now = Date.parse('2030-05-06T07:08:09.500Z');
    const signature = createDeliverySigner(current).sign({ destination, body, now });
    expect(decodeProtectedHeader(signature)).toEqual({ alg: 'HS256', typ: 'JWT' });
    const claims = decodeJwt(signature);
    const seconds = Math.floor(now / 1000);
    expect(claims).toEqual({
      iss: 'Upstash',
      sub: destination,
      iat: seconds,
      nbf: seconds,
      exp: seconds + 300,
      jti: expect.stringMatching(/^jwt_/),
      body: createHash('sha256').update(body).digest('base64url'),
    });
  });

  it('when two deliveries are signed, then their jti differ', () => {
    const signer = createDeliverySigner(current);
    const [a, b] = [signer.sign({ destination, body }), signer.sign({ destination, body })];
    expect(decodeJwt(a).jti).not.toBe(decodeJwt(b).jti);
  });
});
