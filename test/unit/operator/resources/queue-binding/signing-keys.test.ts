import {
  deriveSigningKey,
  SIGNING_KEY_PATTERN,
} from '../../../../../operator/resources/queue-binding/signing-keys.js';

const masterSecret = 'm'.repeat(16) + 'a-master-secret-for-tests';
const bindingUid = '6f1c2b4e-0d7a-4c55-9a7e-2f3b8d1e9c01';

describe('signing key derivation', () => {
  it("when a key is derived, then it has QStash's shape: sig_ and 28 base58 characters", () => {
    for (let generation = 0; generation < 50; generation++) {
      expect(deriveSigningKey({ masterSecret, bindingUid, generation })).toMatch(SIGNING_KEY_PATTERN);
    }
  });

  it('when the same inputs are derived twice, then the key is the same (stable across restarts and replicas)', () => {
    const first = deriveSigningKey({ masterSecret, bindingUid, generation: 3 });
    expect(deriveSigningKey({ masterSecret, bindingUid, generation: 3 })).toBe(first);
    // A golden vector: a change to the derivation would silently change every tenant's keys.
    expect(deriveSigningKey({ masterSecret: 'x'.repeat(32), bindingUid: 'uid-1', generation: 0 })).toBe(
      'sig_2ZgaPiW1dUzJSTaovqwF3PvLz26J',
    );
  });

  it('when the uid, the generation or the master secret differ, then the keys differ', () => {
    const keys = new Set([
      deriveSigningKey({ masterSecret, bindingUid, generation: 0 }),
      deriveSigningKey({ masterSecret, bindingUid, generation: 1 }),
      deriveSigningKey({ masterSecret, bindingUid: `${bindingUid}x`, generation: 0 }),
      deriveSigningKey({ masterSecret: `${masterSecret}x`, bindingUid, generation: 0 }),
    ]);
    expect(keys.size).toBe(4);
  });

  it('when the binding has no uid yet, then no key is derived', () => {
    expect(() => deriveSigningKey({ masterSecret, bindingUid: '', generation: 0 })).toThrow(/uid/);
  });
});
