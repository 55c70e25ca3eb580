import type { Redis } from 'ioredis';
import { DELIVERY_GROUP, type QueueKeys } from '../core/keys.js';
import { toEntries, type RawEntry, type StreamEntry } from './stream-entry.js';
import { claimDeadConsumer } from '../scripts/claim-dead-consumer.js';
import { heartbeatConsumer } from '../scripts/heartbeat-consumer.js';

/** Deliveries taken over from a consumer whose lease ran out. */
export interface ClaimedDeliveries {
  deadConsumer: string;
  entries: StreamEntry[];
}

/**
 * Which consumers of a binding's group are alive, by heartbeat (a lease in Redis): each replica's
 * worker renews its own every fifth of the lease, on a timer that no delivery holds up, so a
 * replica whose receivers are merely slow stays alive however long its deliveries take, while a
 * replica that died stops renewing and its deliveries are taken over one lease later instead of
 * after the reclaim idle time.
 */
export class ConsumerLiveness {
  constructor(
    private readonly redis: Redis,
    private readonly keys: QueueKeys,
  ) {}

  async heartbeat(consumer: string): Promise<void> {
    await heartbeatConsumer.run(this.redis, [this.keys.consumerHeartbeats], [consumer]);
  }

  /**
   * Gives up the lease at once (graceful shutdown): what this consumer still holds after its
   * grace is taken over by the next survivor's check rather than one lease later.
   */
  async release(consumer: string): Promise<void> {
    await this.redis.zadd(this.keys.consumerHeartbeats, 0, consumer);
  }

  /** How many consumers (gateway replicas) hold a live lease, by the Redis server's clock. */
  async liveConsumers(leaseMs: number): Promise<number> {
    const [seconds, micros] = await this.redis.time();
    const now = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
    return this.redis.zcount(this.keys.consumerHeartbeats, now - leaseMs, '+inf');
  }

  /** Deliveries in flight across the replicas: the group's entries handed out and not yet acknowledged. */
  async deliveriesInFlight(): Promise<number> {
    try {
      const summary = (await this.redis.xpending(this.keys.stream, DELIVERY_GROUP)) as [number, ...unknown[]];
      return Number(summary[0]);
    } catch (err) {
      // No stream or group yet: nothing was ever delivered.
      if (err instanceof Error && err.message.startsWith('NOGROUP')) return 0;
      throw err;
    }
  }

  /**
   * Claims up to `count` pending entries of one dead consumer for `claimer`; undefined when no dead
   * consumer holds anything. Call again while it returns entries.
   */
  async claimFromDead(
    claimer: string,
    leaseMs: number,
    count: number,
  ): Promise<ClaimedDeliveries | undefined> {
    const reply = (await claimDeadConsumer.runForBuffers(
      this.redis,
      [this.keys.stream, this.keys.consumerHeartbeats],
      [DELIVERY_GROUP, claimer, leaseMs, count],
    )) as [Buffer, (RawEntry | null)[]] | [];
    if (reply.length === 0) return undefined;
    return { deadConsumer: reply[0].toString(), entries: toEntries(reply[1]) };
  }
}
