/**
 * A schedule ticker replica's Redis connection with one fault put in, as the ticker tests need:
 * a fire that fails mid-round, a replica killed right after its claim, a slow round.
 */
import type { Command, Redis } from 'ioredis';
import { claimScheduleTicks } from '../../../gateway/queue/scripts/claim-schedule-ticks.js';
import { fireScheduleTicks } from '../../../gateway/queue/scripts/fire-schedule-ticks.js';

/** The script a sent command runs (its SHA-1, or its text when sent by EVAL), from sendCommand's arguments. */
function scriptOf(sendArgs: unknown[]): unknown {
  return (sendArgs[0] as Command | undefined)?.args[0];
}

/**
 * The replica's connection, except that its next fire script run fails as a connection lost
 * mid-round makes it fail: 'unsent' before Redis ran it, 'reply lost' after Redis ran it.
 */
export function failingNextFire(connection: Redis, how: 'unsent' | 'reply lost'): Redis {
  let failed = false;
  return new Proxy(connection, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      // Scripts go out through sendCommand (lua-script.ts).
      if (property !== 'sendCommand') return (value as (...args: unknown[]) => unknown).bind(target);
      return async (...args: unknown[]) => {
        if (failed || scriptOf(args) !== fireScheduleTicks.sha)
          return (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        failed = true;
        if (how === 'reply lost') await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        throw new Error('Connection is closed.');
      };
    },
  });
}

/**
 * The replica's connection, except that every call after its first claim never reaches Redis:
 * the replica is killed right after claiming (no fire, no renewal). `release` fails the calls
 * left hanging, so the dead ticker's promises settle when the test ends.
 */
export function killedAfterClaim(connection: Redis): { redis: Redis; release(): void } {
  let claimed = false;
  const hanging: (() => void)[] = [];
  const hang = () => new Promise((_, reject) => hanging.push(() => reject(new Error('killed'))));
  const redis = new Proxy(connection, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      const call = (value as (...args: unknown[]) => Promise<unknown>).bind(target);
      return async (...args: unknown[]) => {
        if (claimed) return hang();
        // Killed once the claim is stored: by EVALSHA, or by EVAL when the server did not have
        // the script yet (the first claim on a fresh Redis answers NOSCRIPT and is sent again).
        const script = scriptOf(args);
        const claims = script === claimScheduleTicks.sha || script === claimScheduleTicks.lua;
        const result = await call(...args);
        if (claims) claimed = true;
        return result;
      };
    },
  });
  return { redis, release: () => hanging.splice(0).forEach((fail) => fail()) };
}

/** The replica's connection, with loading schedules slowed by `delayMs` (a slow, loaded round). */
export function slowLoads(connection: Redis, delayMs: number): Redis {
  return new Proxy(connection, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      const call = (value as (...args: unknown[]) => Promise<unknown>).bind(target);
      if (property !== 'hmget' && property !== 'hmgetBuffer') return call;
      return async (...args: unknown[]) => {
        await new Promise((resolve) => setTimeout(resolve, delayMs));
        return call(...args);
      };
    },
  });
}
