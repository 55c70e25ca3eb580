import { Targets } from '../../../../gateway/queue/workers/http-delivery.js';
import { CACHED_DESTINATION_LENGTH } from '../../../../gateway/queue/core/message.js';

/** The deliverer's per-destination targets: what is kept, and what is not a URL it can send to. */
describe("a deliverer's targets", () => {
  const ofLength = (length: number): string => {
    const start = 'http://127.0.0.1/';
    return start + 'a'.repeat(length - start.length);
  };

  it('when a destination is at most the cached length, then the same target is returned again (kept)', () => {
    const targets = new Targets();
    const text = ofLength(CACHED_DESTINATION_LENGTH);
    expect(targets.of(text)).toBe(targets.of(text));
  });

  it('when a destination is longer than the cached length, then each call builds its target anew (not kept)', () => {
    const targets = new Targets();
    const text = ofLength(CACHED_DESTINATION_LENGTH + 1);
    const first = targets.of(text);
    expect(first?.url.href).toBe(text);
    expect(targets.of(text)).not.toBe(first);
  });

  it('when the credentials hold a bad percent-encoding, then it is no target and nothing throws', () => {
    expect(new Targets().of('http://u%ZZ@127.0.0.1/x')).toBeNull();
  });
});
