import { Command } from 'ioredis';
import { encodeScriptCall, type ScriptArgument } from '../../../../gateway/queue/scripts/script-command.js';

/** The bytes ioredis's own encoder writes for the same call (its Command.toWritable). */
function ioredisBytes(
  command: 'evalsha' | 'eval',
  script: string,
  keys: string[],
  args: ScriptArgument[],
): Buffer {
  const sent = new Command(command, [script, keys.length, ...keys, ...args]);
  sent.promise.catch(() => undefined);
  const writable = sent.toWritable(undefined as never);
  return typeof writable === 'string' ? Buffer.from(writable) : writable;
}

describe('a script call encoded for Redis (script-command.ts)', () => {
  it("when a call has keys, numbers, empty, non-ASCII, long and binary arguments, then its bytes are exactly ioredis's encoding of the same call", () => {
    const sha = 'f'.repeat(40);
    const keys = ['{q}:stream', '{q}:stream-index', '{q}:événements'];
    const calls: ScriptArgument[][] = [
      [],
      ['m', 0, 10_000, -3, 2.5, 1e21, ''],
      ['ünïcödé ✓ 𝄞', 'x'.repeat(9), 'y'.repeat(10), 'z'.repeat(99), 'w'.repeat(100), 'v'.repeat(10_000)],
      [Buffer.from([0, 13, 10, 255, 36]), Buffer.alloc(0), 'after a buffer', 7],
      [JSON.stringify({ state: 'CREATED', body: 'é'.repeat(500) })],
    ];
    for (const args of calls) {
      expect(encodeScriptCall('evalsha', sha, keys, args)).toEqual(ioredisBytes('evalsha', sha, keys, args));
      expect(encodeScriptCall('eval', 'return 1', [], args)).toEqual(
        ioredisBytes('eval', 'return 1', [], args),
      );
    }
  });

  it("when one script's calls name other keys, then each call's bytes are its own keys' (the head kept per script is not reused for them)", () => {
    const sha = 'e'.repeat(40);
    const args: ScriptArgument[] = ['m', 0, 'x'];
    const keySets = [
      ['{q}:stream', '{q}:stream-index'],
      ['{q}:queue-waiting:a', '{q}:queue-active:a', '{q}:events'],
      ['{q}:stream', '{q}:stream-index'],
      // The same names as new strings: equal keys, other objects.
      ['{q}:stream', '{q}:stream-index'].map((key) => `${key.slice(0, 3)}${key.slice(3)}`),
      ['{q}:stream', '{q}:stream-other'],
      [],
    ];
    for (const keys of [...keySets, ...keySets.reverse()])
      expect(encodeScriptCall('evalsha', sha, keys, args)).toEqual(ioredisBytes('evalsha', sha, keys, args));
  });
});
