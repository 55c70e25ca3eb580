import type { Redis } from 'ioredis';
import { RateLimitedError } from '../core/errors.js';
import type { QueueKeys } from '../core/keys.js';
import type { QueueLimits } from '../core/binding-registry.js';
import { giveBackRateLimit } from '../scripts/give-back-rate-limit.js';
import { takeRateLimit } from '../scripts/take-rate-limit.js';

const SECOND_MS = 1_000;
const DAY_MS = 86_400_000;

/** Messages taken from the daily count, some of which may be given back. */
export interface MessagesTaken {
  /**
   * Gives back `messages` of them, which the request did not store (refused over a quota, a
   * duplicate, or not stored at all: a store error's request is told it failed, so it is not
   * charged). Best effort: when the database does not answer, the count stays spent.
   */
  giveBack(messages: number): Promise<void>;
}

const NOTHING_TAKEN: MessagesTaken = Object.freeze({ giveBack: () => Promise.resolve() });

/** A burst window a refusal found full: until `untilMs` (performance.now()) every request is refused. */
interface FullWindow {
  key: string;
  limit: number;
  used: number;
  endsAt: number;
  untilMs: number;
}

/**
 * The burst window each database (its connection) was last refused in. A refusal takes nothing and
 * no replica lowers a window's count before it ends, so once a request is refused every later one
 * in that window is refused too: answering those without the script is the same answer (the
 * same headers) at none of the database's CPU and an eighth less of the gateway's (a tenant
 * flooding past its limit, docs/limits.md). Kept per connection, not per RateLimits: one is made
 * per request.
 */
const fullBurstWindows = new WeakMap<Redis, FullWindow>();

/**
 * A binding's rate limits, counted in its own database so that every gateway replica shares one
 * count, and each binding's count is its own (another tenant's flood never spends it). The two
 * QStash documents (upstash/docs qstash/api/api-ratelimiting): a daily limit on new messages,
 * answered with RateLimit-Limit/-Remaining/-Reset, and a per-second burst limit on every request,
 * answered with Burst-RateLimit-*; both 429 with Retry-After. A limit of 0 is none.
 */
export class RateLimits {
  constructor(
    private readonly redis: Redis,
    private readonly keys: QueueKeys,
    private readonly limits: Pick<QueueLimits, 'maxMessagesPerDay' | 'maxRequestsPerSecond'>,
  ) {}

  /** Counts one request against the burst limit; throws RateLimitedError over it. */
  async takeRequest(): Promise<void> {
    const limit = this.limits.maxRequestsPerSecond;
    if (limit <= 0) return;
    const key = this.keys.burstRequests;
    const full = fullBurstWindows.get(this.redis);
    if (full?.key === key && full.limit === limit && performance.now() < full.untilMs) {
      // Answered after this turn's I/O, as the script's answer was: a body that came with the head
      // is read by then, so the connection stays open (refused in the head's own turn, the
      // body is unread and sendQueueError closes it: 4x the loop time a refusal, measured).
      await new Promise(setImmediate);
      throw burstRefusal(limit, full);
    }
    const sentAt = performance.now();
    const taken = await this.take(key, SECOND_MS, limit, 1);
    if (taken.ok) return;
    // The window's end on this process's clock, from the time it had left on the server's (never
    // later than its end: the script ran after sentAt, and its clock is whole ms, hence the 1).
    const untilMs = sentAt + taken.endsAt - taken.serverNow - 1;
    fullBurstWindows.set(this.redis, { key, limit, used: taken.used, endsAt: taken.endsAt, untilMs });
    throw burstRefusal(limit, taken);
  }

  /**
   * Counts `messages` new messages against the daily limit, all or none; throws RateLimitedError
   * when they do not all fit, and nothing is counted or stored.
   */
  async takeMessages(messages: number): Promise<MessagesTaken> {
    const limit = this.limits.maxMessagesPerDay;
    if (limit <= 0 || messages === 0) return NOTHING_TAKEN;
    const taken = await this.take(this.keys.dailyMessages, DAY_MS, limit, messages);
    if (taken.ok) {
      const window = taken.endsAt / DAY_MS - 1;
      let left = messages;
      return {
        giveBack: async (count) => {
          const amount = Math.min(count, left);
          if (amount <= 0) return;
          left -= amount;
          await giveBackRateLimit
            .run(this.redis, [this.keys.dailyMessages], [window, amount])
            .catch(() => undefined);
        },
      };
    }
    const left = Math.max(0, limit - taken.used);
    throw new RateLimitedError(
      `daily message limit reached: the binding takes ${limit} messages a day (QueueBinding spec.limits.maxMessagesPerDay), ${left} left until ${new Date(taken.endsAt).toISOString()}; this request has ${messages}`,
      rateLimitHeaders('RateLimit', limit, taken),
    );
  }

  private async take(
    key: string,
    windowMs: number,
    limit: number,
    amount: number,
  ): Promise<{ ok: boolean; used: number; endsAt: number; serverNow: number }> {
    const reply = (await takeRateLimit.run(this.redis, [key], [windowMs, limit, amount])) as [
      number,
      number,
      number,
      number,
    ];
    return { ok: reply[0] === 1, used: reply[1], endsAt: reply[2], serverNow: reply[3] };
  }
}

function burstRefusal(limit: number, window: { used: number; endsAt: number }): RateLimitedError {
  return new RateLimitedError(
    `burst rate limit reached: the binding takes ${limit} requests a second (QueueBinding spec.limits.maxRequestsPerSecond)`,
    rateLimitHeaders('Burst-RateLimit', limit, window),
  );
}

/**
 * QStash's headers for one limit (`prefix`-Limit, -Remaining, -Reset as a unix timestamp in
 * seconds) and Retry-After, the whole seconds until the window ends (at least 1).
 */
function rateLimitHeaders(
  prefix: 'RateLimit' | 'Burst-RateLimit',
  limit: number,
  window: { used: number; endsAt: number },
  now = Date.now(),
): Record<string, string> {
  return {
    [`${prefix}-Limit`]: String(limit),
    [`${prefix}-Remaining`]: String(Math.max(0, limit - window.used)),
    [`${prefix}-Reset`]: String(Math.ceil(window.endsAt / 1000)),
    'Retry-After': String(Math.max(1, Math.ceil((window.endsAt - now) / 1000))),
  };
}
