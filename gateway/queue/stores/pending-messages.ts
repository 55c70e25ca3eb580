import type { Redis } from 'ioredis';
import { DELIVERY_GROUP, MESSAGE_FIELD, type QueueKeys } from '../core/keys.js';
import { slotQueueOf, type QueueMessage } from '../core/message.js';
import { CorruptMessageError, decodeMessage } from '../core/message-codec.js';
import { eventJson, hasEvents } from '../core/message-event.js';
import type { PendingMessage } from '../core/message-answer.js';
import { flowLimitsJson } from '../core/flow-control.js';
import { cancelFlowControlMessages } from '../scripts/cancel-flow-control-messages.js';
import { cancelMessages } from '../scripts/cancel-messages.js';
import { findPendingMessage } from '../scripts/find-pending-message.js';
import type { QueueWakeups } from './queue-wakeups.js';

type RawEntry = [Buffer, Buffer[] | null];

interface BufferCommands {
  xrangeBuffer(...args: (string | number)[]): Promise<RawEntry[]>;
  hscanBuffer(...args: (string | number)[]): Promise<[Buffer, Buffer[]]>;
}

/** How many messages one step of a scan decodes, and how many ids one cancel script takes. */
const SCAN_CHUNK = 500;

function messageOf(fields: Buffer[] | null): Buffer | undefined {
  for (let i = 0; fields && i + 1 < fields.length; i += 2)
    if (fields[i]!.toString() === MESSAGE_FIELD) return fields[i + 1];
  return undefined;
}

function decodedOrUndefined(stored: Buffer | undefined | null): QueueMessage | undefined {
  if (!stored) return undefined;
  try {
    return decodeMessage(stored);
  } catch (err) {
    if (err instanceof CorruptMessageError) return undefined;
    throw err;
  }
}

/**
 * The messages API's view of a binding's pending messages (key layout in keys.ts): finding one
 * by id, walking them all, cancelling them. Delivery itself goes through MessageStore.
 */
export class PendingMessages {
  private readonly buffers: BufferCommands;

  /**
   * `eventCap`: as for MessageStore; cancels record CANCEL_REQUESTED and CANCELLED. `wakeups`: this
   * replica's wake-ups of the database's queues (queue-store.ts queueWakeupsOf), armed when a
   * cancel frees a queue slot and the queue's oldest waiting message is delayed.
   */
  constructor(
    private readonly redis: Redis,
    private readonly keys: QueueKeys,
    private readonly eventCap = 0,
    private readonly wakeups?: QueueWakeups,
  ) {
    this.buffers = redis as unknown as BufferCommands;
  }

  /**
   * The message, read in one script wherever it is (find-pending-message.ts): a message being
   * delivered moves between the stores, and two reads could fall between two moves. The due time
   * is read after; a message that moved on since has none.
   */
  async find(id: string): Promise<PendingMessage | undefined> {
    const k = this.keys;
    const found = (await findPendingMessage.runForBuffers(
      this.redis,
      [k.scheduledMessages, k.streamIndex, k.stream],
      [id, MESSAGE_FIELD],
    )) as [Buffer, Buffer] | null;
    const message = decodedOrUndefined(found?.[1]);
    if (!found || !message) return undefined;
    if (found[0].toString() === 'queued') return { message, state: 'queued' };
    // A flow-control message waits for its due time in its key's own set.
    const schedule =
      message.flowControl === undefined ? k.schedule : k.flowControlDue(message.flowControl.key);
    const score = await this.redis.zscore(schedule, id);
    return { message, state: 'scheduled', ...(score !== null && { dueAt: Number(score) }) };
  }

  /**
   * Cancels these messages (given whole, or by id) if they are still pending; returns how many
   * were. A message given by id is read first, for its events, for the queue slot it can free and,
   * when it has a flow-control key, for the key it leaves (cancel-messages.ts,
   * cancel-flow-control-messages.ts). A cancel by filter spans any number of queues: each message
   * names its own queue's keys, so the script touches only keys it was given.
   */
  async cancel(targets: readonly (string | QueueMessage)[], now = Date.now()): Promise<number> {
    const k = this.keys;
    let cancelled = 0;
    for (let i = 0; i < targets.length; i += SCAN_CHUNK) {
      const chunk = await Promise.all(
        targets
          .slice(i, i + SCAN_CHUNK)
          .map(async (target) =>
            typeof target === 'string' ? ((await this.find(target))?.message ?? target) : target,
          ),
      );
      const events = (target: string | QueueMessage): [string, string] =>
        typeof target === 'string' || this.eventCap === 0 || !hasEvents(target)
          ? ['', '']
          : [eventJson(target, 'CANCEL_REQUESTED', now), eventJson(target, 'CANCELLED', now)];
      // Both scripts' ARGV begin alike, before the per-message groups.
      const leadingArgs = [this.eventCap, MESSAGE_FIELD, DELIVERY_GROUP];
      const plainArgs: (string | number)[] = [...leadingArgs];
      const plainSlotKeys: string[] = [];
      const flowArgs: (string | number)[] = [...leadingArgs];
      const flowKeys: string[] = [];
      const flowSlotKeys: string[] = [];
      for (const target of chunk) {
        const flowControl = typeof target === 'string' ? undefined : target.flowControl;
        const id = typeof target === 'string' ? target : target.id;
        const slotQueue = (typeof target !== 'string' && slotQueueOf(target)) || '';
        const slotKeys = slotQueue === '' ? [] : [k.queueWaiting(slotQueue), k.queueActive(slotQueue)];
        if (flowControl === undefined) {
          plainArgs.push(id, slotQueue, ...events(target));
          plainSlotKeys.push(...slotKeys);
          continue;
        }
        flowArgs.push(id, flowControl.key, flowLimitsJson(flowControl), slotQueue, ...events(target));
        flowKeys.push(k.flowControlWaiting(flowControl.key), k.flowControlDue(flowControl.key));
        flowSlotKeys.push(...slotKeys);
      }
      if (plainArgs.length > leadingArgs.length)
        cancelled += this.wakeFreedQueues(
          await cancelMessages.run(
            this.redis,
            [k.stream, k.streamIndex, k.schedule, k.scheduledMessages, k.events, k.queues, ...plainSlotKeys],
            plainArgs,
          ),
        );
      if (flowArgs.length > leadingArgs.length)
        cancelled += this.wakeFreedQueues(
          await cancelFlowControlMessages.run(
            this.redis,
            [
              k.stream,
              k.streamIndex,
              k.scheduledMessages,
              k.events,
              k.flowControls,
              k.schedule,
              k.queues,
              ...flowKeys,
              ...flowSlotKeys,
            ],
            flowArgs,
          ),
        );
    }
    return cancelled;
  }

  /**
   * A cancel script's answer `{cancelled, {queue, waitMs, ...}}`: arms a wake-up for each queue
   * whose dispatch stopped at a delayed message, as releases do; returns how many were cancelled.
   */
  private wakeFreedQueues(answer: unknown): number {
    const [count, waits] = answer as [number, (string | number)[]];
    for (let w = 0; w + 1 < waits.length; w += 2)
      this.wakeups?.wakeIn(String(waits[w]), Number(waits[w + 1]));
    return count;
  }

  /**
   * Every pending message, scheduled ones first, in chunks; each chunk is handed to `visit`
   * before the next is read, so a scan of millions holds only a chunk in memory.
   */
  async scan(visit: (messages: QueueMessage[]) => Promise<void>): Promise<void> {
    let cursor = '0';
    do {
      const [next, fields] = await this.buffers.hscanBuffer(
        this.keys.scheduledMessages,
        cursor,
        'COUNT',
        SCAN_CHUNK,
      );
      cursor = next.toString();
      const messages: QueueMessage[] = [];
      for (let i = 1; i < fields.length; i += 2) {
        const message = decodedOrUndefined(fields[i]);
        if (message) messages.push(message);
      }
      if (messages.length > 0) await visit(messages);
    } while (cursor !== '0');

    let start = '-';
    for (;;) {
      const entries = await this.buffers.xrangeBuffer(this.keys.stream, start, '+', 'COUNT', SCAN_CHUNK);
      if (entries.length === 0) break;
      const messages = entries
        .map(([, fields]) => decodedOrUndefined(messageOf(fields)))
        .filter((m): m is QueueMessage => m !== undefined);
      if (messages.length > 0) await visit(messages);
      if (entries.length < SCAN_CHUNK) break;
      start = `(${entries[entries.length - 1]![0].toString()}`;
    }
  }
}
