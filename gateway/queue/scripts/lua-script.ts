import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { quotaExceededIn } from './quota-exceeded.js';
import { encodeScriptCall, ScriptCommand, sendScriptCommand, type ScriptArgument } from './script-command.js';

/**
 * How many KEYS a script takes: a fixed number, or a fixed `first` followed by groups of `each`
 * (a script that works on several objects of one kind in one run), at least one unless
 * `groupsOptional` (a run may name none of them, e.g. a cancel of messages of no queue).
 */
export type ScriptKeyCount = number | { first: number; each: number; groupsOptional?: boolean };

/**
 * A Lua script run with EVALSHA, falling back to EVAL once when the server does not have it yet
 * (first use, or after SCRIPT FLUSH / a restart). Every key it touches is passed in KEYS. A script's
 * refusal over a quota is thrown as a QuotaExceededError (quota-exceeded.ts).
 */
export class LuaScript {
  readonly sha: string;

  constructor(
    readonly name: string,
    readonly numberOfKeys: ScriptKeyCount,
    readonly lua: string,
  ) {
    this.sha = createHash('sha1').update(lua).digest('hex');
  }

  run(redis: Redis, keys: readonly string[], args: readonly ScriptArgument[]): Promise<unknown> {
    return this.call(redis, 'utf8', keys, args);
  }

  /** As run, with the reply's strings as Buffers: for scripts that return message bodies (bytes). */
  runForBuffers(redis: Redis, keys: readonly string[], args: readonly ScriptArgument[]): Promise<unknown> {
    return this.call(redis, null, keys, args);
  }

  /**
   * One promise on ioredis's, not async layers: every publish and delivery runs a script, and each
   * async wrapper cost a promise and a microtask of its own (docs/queue.md, Performance). The call
   * goes out encoded by script-command.ts rather than through ioredis's command methods.
   */
  private call(
    redis: Redis,
    replyEncoding: 'utf8' | null,
    keys: readonly string[],
    args: readonly ScriptArgument[],
  ): Promise<unknown> {
    if (!takesKeyCount(this.numberOfKeys, keys.length))
      return Promise.reject(
        new Error(`${this.name} takes ${JSON.stringify(this.numberOfKeys)} keys, got ${keys.length}`),
      );
    return this.send(redis, 'evalsha', replyEncoding, keys, args).then(undefined, (err: unknown) => {
      if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) return typedFailure(err);
      return this.send(redis, 'eval', replyEncoding, keys, args).then(undefined, typedFailure);
    });
  }

  private send(
    redis: Redis,
    command: 'evalsha' | 'eval',
    replyEncoding: 'utf8' | null,
    keys: readonly string[],
    args: readonly ScriptArgument[],
  ): Promise<unknown> {
    const script = command === 'evalsha' ? this.sha : this.lua;
    return sendScriptCommand(
      redis,
      new ScriptCommand(
        command,
        encodeScriptCall(command, script, keys, args),
        [script, keys.length, ...keys, ...args],
        replyEncoding,
      ),
    );
  }
}

/** A script's refusal over a quota as the typed error (quota-exceeded.ts); any other failure as it is. */
function typedFailure(err: unknown): never {
  throw quotaExceededIn(err) ?? err;
}

function takesKeyCount(count: ScriptKeyCount, given: number): boolean {
  if (typeof count === 'number') return given === count;
  const fewest = count.groupsOptional ? count.first : count.first + count.each;
  return given >= fewest && (given - count.first) % count.each === 0;
}
