import { decideSigningKeys } from '../../../../../operator/controllers/queue-binding/signing-key-rotation.js';

const t0 = new Date('2030-01-01T00:00:00Z');
const at = (ms: number) => new Date(t0.getTime() + ms);
const graceMs = 60_000;

describe('signing key rotation', () => {
  it('when a binding has no state and no request, then generation 0 is current and nothing is pending', () => {
    expect(decideSigningKeys({ previous: undefined, requested: undefined, now: t0, graceMs })).toEqual({
      state: { currentGeneration: 0 },
    });
  });

  it('when a rotation is requested, then the next generation is published at once and due after the grace period', () => {
    expect(
      decideSigningKeys({ previous: { currentGeneration: 0 }, requested: 'r1', now: t0, graceMs }),
    ).toEqual({
      state: {
        currentGeneration: 0,
        nextGeneration: 1,
        promoteAfter: at(graceMs).toISOString(),
        rotationRequest: 'r1',
      },
      transition: 'started',
      promoteInMs: graceMs,
    });
  });

  it('when the grace period has passed, then next becomes current, and next is empty again', () => {
    const pending = {
      currentGeneration: 0,
      nextGeneration: 1,
      promoteAfter: at(graceMs).toISOString(),
      rotationRequest: 'r1',
    };
    expect(decideSigningKeys({ previous: pending, requested: 'r1', now: at(graceMs - 1), graceMs })).toEqual({
      state: pending,
      promoteInMs: 1,
    });
    expect(decideSigningKeys({ previous: pending, requested: 'r1', now: at(graceMs), graceMs })).toEqual({
      state: { currentGeneration: 1, rotationRequest: 'r1' },
      transition: 'promoted',
    });
  });

  it('when the same request is seen again after its rotation, then nothing changes; a new value rotates again', () => {
    const done = { currentGeneration: 1, rotationRequest: 'r1' };
    expect(decideSigningKeys({ previous: done, requested: 'r1', now: t0, graceMs })).toEqual({ state: done });
    expect(decideSigningKeys({ previous: done, requested: 'r2', now: t0, graceMs }).state).toMatchObject({
      currentGeneration: 1,
      nextGeneration: 2,
    });
  });

  it('when a new request arrives while one is pending, then it waits for the pending one to finish', () => {
    const pending = {
      currentGeneration: 0,
      nextGeneration: 1,
      promoteAfter: at(graceMs).toISOString(),
      rotationRequest: 'r1',
    };
    expect(decideSigningKeys({ previous: pending, requested: 'r2', now: at(10), graceMs }).state).toEqual(
      pending,
    );
    const promoted = decideSigningKeys({
      previous: pending,
      requested: 'r2',
      now: at(graceMs),
      graceMs,
    }).state;
    expect(promoted).toEqual({ currentGeneration: 1, rotationRequest: 'r1' });
    expect(
      decideSigningKeys({ previous: promoted, requested: 'r2', now: at(graceMs), graceMs }).state,
    ).toMatchObject({ nextGeneration: 2, rotationRequest: 'r2' });
  });

  it('when the grace period is zero, then a request rotates in one pass', () => {
    expect(
      decideSigningKeys({ previous: { currentGeneration: 4 }, requested: 'now', now: t0, graceMs: 0 }),
    ).toEqual({
      state: { currentGeneration: 5, rotationRequest: 'now' },
      transition: 'promoted',
    });
  });
});
