import type { Redis } from 'ioredis';
import type { Logger } from 'winston';
import type { QueueKeys } from '../core/keys.js';
import { FlowControlStore } from '../stores/flow-control-store.js';
import type { MessageStore } from '../stores/message-store.js';

const PROMOTE_BATCH = 500;
/**
 * Delayed messages must be delivered within a second of their due time: the mover runs at least
 * this often, whatever the (longer) maintenance interval.
 */
export const MAX_PROMOTE_INTERVAL_MS = 250;
/**
 * How long a replica stays its binding's mover without moving again: four of its passes, so a
 * live mover never loses it, and a dead one's due messages wait at most this long for the next.
 */
const MOVER_LEASE_MS = 4 * MAX_PROMOTE_INTERVAL_MS;

/**
 * A delivery worker's mover pass: one replica per binding moves due delayed messages and retries
 * onto the stream and lets the flow-control keys start what their rate windows allow.
 */
export class DueMessageMover {
  private readonly flowControls: FlowControlStore;

  constructor(
    private readonly options: {
      redis: Redis;
      keys: QueueKeys;
      consumerName: string;
      logger: Logger;
      /** Whether the worker still runs: a pass stops between batches once it does not. */
      running: () => boolean;
    },
  ) {
    this.flowControls = new FlowControlStore(options.redis, options.keys);
  }

  /**
   * Moves due delayed messages and retries onto the stream if this replica is the binding's mover
   * (it holds the mover lease, or takes it when it has lapsed): one mover per binding across the
   * replicas. The script is atomic, so a message moves once even if two ever overlap.
   */
  async promoteDue(store: MessageStore): Promise<void> {
    const mover = { name: this.options.consumerName, leaseMs: MOVER_LEASE_MS };
    try {
      let moved: number | 'not-mover';
      do moved = await store.promoteDueMessages(Date.now(), PROMOTE_BATCH, mover);
      while (moved === PROMOTE_BATCH && this.options.running());
      if (moved !== 'not-mover') await this.tickFlowControls();
    } catch (err) {
      this.options.logger.warn('moving due messages failed', { error: (err as Error).message });
    }
  }

  /**
   * The mover's pass over the flow-control keys: due delayed messages and retries join their key's
   * waiting list, a rate window that ended lets the next messages start, tokens whose release never
   * reached Redis are freed, and keys with nothing left are forgotten (tick-flow-control.ts).
   */
  private async tickFlowControls(): Promise<void> {
    for (const { key, freed } of await this.flowControls.tickAll(() => this.options.running()))
      if (freed > 0)
        this.options.logger.info('freed the tokens of finished flow-control messages', {
          flowControlKey: key,
          freed,
        });
  }
}
