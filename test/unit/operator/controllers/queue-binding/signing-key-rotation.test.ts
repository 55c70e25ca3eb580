import { decideSigningKeys } from '../../../../../operator/controllers/queue-binding/signing-key-rotation.js';

const t0 = new Date('2030-01-01T00:00:00Z');
const at = (ms: number) => new Date(t0.getTime() + ms);

describe('signing keys, the QStash way', () => {
  it('when a binding has no state and no request, then generation 0 signs and generation 1 is the next key', () => {
    expect(decideSigningKeys({ previous: undefined, requested: undefined, now: t0 })).toEqual({
      state: { currentGeneration: 0, nextGeneration: 1 },
    });
  });

  it('when a rotation is requested, then the next key becomes current and a new next is derived, in one pass', () => {
    expect(
      decideSigningKeys({ previous: { currentGeneration: 0, nextGeneration: 1 }, requested: 'r1', now: t0 }),
    ).toEqual({
      state: { currentGeneration: 1, nextGeneration: 2, rotationRequest: 'r1' },
      transition: 'rotated',
    });
  });

  it('when the answered request is seen again, then nothing changes; a new value rotates again', () => {
    const done = { currentGeneration: 1, nextGeneration: 2, rotationRequest: 'r1' };
    expect(decideSigningKeys({ previous: done, requested: 'r1', now: t0 })).toEqual({ state: done });
    expect(decideSigningKeys({ previous: done, requested: 'r2', now: t0 })).toEqual({
      state: { currentGeneration: 2, nextGeneration: 3, rotationRequest: 'r2' },
      transition: 'rotated',
    });
  });

  it('when the annotation is removed after a rotation, then the keys stay where they are', () => {
    const done = { currentGeneration: 3, nextGeneration: 4, rotationRequest: 'r1' };
    expect(decideSigningKeys({ previous: done, requested: undefined, now: t0 })).toEqual({ state: done });
  });

  it('when a binding was created with the annotation already set, then that request rotates once', () => {
    expect(decideSigningKeys({ previous: undefined, requested: 'r0', now: t0 })).toEqual({
      state: { currentGeneration: 1, nextGeneration: 2, rotationRequest: 'r0' },
      transition: 'rotated',
    });
  });

  describe('upgrading status written by the grace-period model', () => {
    it('when only currentGeneration is set, then the signing key stays and the next key is published', () => {
      expect(
        decideSigningKeys({
          previous: { currentGeneration: 4, rotationRequest: 'r1' },
          requested: 'r1',
          now: t0,
        }),
      ).toEqual({
        state: { currentGeneration: 4, nextGeneration: 5, rotationRequest: 'r1' },
        transition: 'next-published',
      });
    });

    const pending = {
      currentGeneration: 2,
      nextGeneration: 3,
      promoteAfter: at(60_000).toISOString(),
      rotationRequest: 'r1',
    };

    it('when a pending rotation is not due, then its keys stay (both published) until promoteAfter', () => {
      expect(decideSigningKeys({ previous: pending, requested: 'r1', now: at(59_000) })).toEqual({
        state: pending,
        rotateInMs: 1_000,
      });
    });

    it('when a pending rotation is due, then it completes as a rotation: its next key current, a new next', () => {
      expect(decideSigningKeys({ previous: pending, requested: 'r1', now: at(60_000) })).toEqual({
        state: { currentGeneration: 3, nextGeneration: 4, rotationRequest: 'r1' },
        transition: 'rotated',
      });
    });

    it('when a new request arrives during a pending rotation, then that rotation completes at once and answers it', () => {
      expect(decideSigningKeys({ previous: pending, requested: 'r2', now: at(10) })).toEqual({
        state: { currentGeneration: 3, nextGeneration: 4, rotationRequest: 'r2' },
        transition: 'rotated',
      });
    });

    it('when promoteAfter is unreadable, then the pending rotation completes rather than never', () => {
      expect(
        decideSigningKeys({ previous: { ...pending, promoteAfter: 'soon' }, requested: 'r1', now: t0 }),
      ).toMatchObject({ state: { currentGeneration: 3, nextGeneration: 4 }, transition: 'rotated' });
    });
  });
});
