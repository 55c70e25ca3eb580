import { QUEUE_LIMIT_DEFAULTS, resolveQueueLimits } from '../../../../api/queue-limits.js';
import { toQueueLimits } from '../../../../gateway/queue/bindings/queue-target.js';
import { BindingRegistry, type QueueTarget } from '../../../../gateway/queue/core/binding-registry.js';
import { KeyRotationPendingError, KeyRotationTimeoutError } from '../../../../gateway/queue/core/errors.js';
import {
  rotateSigningKeys,
  signingKeysOf,
  type RotationRequestWriter,
} from '../../../../gateway/queue/bindings/signing-key-rotation.js';

const keyOf = (generation: number) => `sig_generation${String(generation).padStart(14, '0')}`;

function targetAt(generation: number, rotation: { answered: string; requested: string }): QueueTarget {
  return {
    key: 'ns/db',
    namespace: 'ns',
    name: 'db',
    token: 'pw',
    signingKey: keyOf(generation),
    nextSigningKey: keyOf(generation + 1),
    signingKeyRotation: rotation.answered,
    requestedSigningKeyRotation: rotation.requested,
    connection: { host: '127.0.0.1', port: 6379, tls: false, db: 0 },
    limits: toQueueLimits(resolveQueueLimits(undefined, QUEUE_LIMIT_DEFAULTS)),
  };
}

/**
 * The gateway's side of a rotation, with the registry filled as its informers would fill it: the
 * writer plays the API server (the annotation shows up) and the operator (which answers after
 * `answerAfterMs`, the status first, the env Secret's keys later, as two separate watches may).
 */
describe('POST /v2/keys/rotate, the gateway side', () => {
  function operatorAnswering(
    registry: BindingRegistry,
    answerAfterMs: number | undefined,
  ): RotationRequestWriter {
    return async (_binding, requestValue) => {
      const before = registry.get('ns', 'db')!;
      const generation = Number(before.signingKey.slice(-14));
      registry.set({ ...before, requestedSigningKeyRotation: requestValue });
      if (answerAfterMs === undefined) return;
      setTimeout(() => {
        registry.set({
          ...before,
          signingKeyRotation: requestValue,
          requestedSigningKeyRotation: requestValue,
        });
        setTimeout(
          () => registry.set(targetAt(generation + 1, { answered: requestValue, requested: requestValue })),
          5,
        );
      }, answerAfterMs);
    };
  }

  it('when the operator answers, then the answer is the new pair: the old next key is current, a new next key follows', async () => {
    const registry = new BindingRegistry();
    registry.set(targetAt(4, { answered: '', requested: '' }));
    const answer = await rotateSigningKeys({
      registry,
      target: registry.get('ns', 'db')!,
      write: operatorAnswering(registry, 10),
      timeoutMs: 2_000,
    });
    expect(answer).toEqual({ current: keyOf(5), next: keyOf(6) });
  });

  it('when a rotation is requested and not answered yet, then another one is a 409 and nothing is written', async () => {
    const registry = new BindingRegistry();
    registry.set(targetAt(4, { answered: 'r1', requested: 'r2' }));
    let writes = 0;
    await expect(
      rotateSigningKeys({
        registry,
        target: registry.get('ns', 'db')!,
        write: async () => {
          writes += 1;
        },
        timeoutMs: 2_000,
      }),
    ).rejects.toBeInstanceOf(KeyRotationPendingError);
    expect(writes).toBe(0);
  });

  it('when the last request is answered, then a new rotation is accepted', async () => {
    const registry = new BindingRegistry();
    registry.set(targetAt(4, { answered: 'r1', requested: 'r1' }));
    await expect(
      rotateSigningKeys({
        registry,
        target: registry.get('ns', 'db')!,
        write: operatorAnswering(registry, 0),
        timeoutMs: 2_000,
      }),
    ).resolves.toEqual({ current: keyOf(5), next: keyOf(6) });
  });

  it('when the operator does not answer in time, then it is a 504 naming where the keys show up', async () => {
    const registry = new BindingRegistry();
    registry.set(targetAt(0, { answered: '', requested: '' }));
    await expect(
      rotateSigningKeys({
        registry,
        target: registry.get('ns', 'db')!,
        write: operatorAnswering(registry, undefined),
        timeoutMs: 50,
      }),
    ).rejects.toThrow(KeyRotationTimeoutError);
  });

  it('when an older operator left VQUEUE_NEXT_SIGNING_KEY empty, then GET /v2/keys still answers two keys', () => {
    const target = { ...targetAt(2, { answered: '', requested: '' }), nextSigningKey: '' };
    expect(signingKeysOf(target)).toEqual({ current: keyOf(2), next: keyOf(2) });
    expect(signingKeysOf(targetAt(2, { answered: '', requested: '' }))).toEqual({
      current: keyOf(2),
      next: keyOf(3),
    });
  });
});
