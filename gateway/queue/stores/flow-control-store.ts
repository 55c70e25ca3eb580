import type { Redis } from 'ioredis';
import { DELIVERY_GROUP, MESSAGE_FIELD, type QueueKeys } from '../core/keys.js';
import type { QueueMessage } from '../core/message.js';
import { encodeMessage } from '../core/message-codec.js';
import { eventJson } from '../core/message-event.js';
import { enqueueAnswers, type EnqueueAnswer } from '../core/enqueue-answer.js';
import { admitFlowControlEntry } from '../scripts/admit-flow-control-entry.js';
import { enqueueFlowControlMessages } from '../scripts/enqueue-flow-control-messages.js';
import { releaseFlowControlToken } from '../scripts/release-flow-control-token.js';
import { tickFlowControl } from '../scripts/tick-flow-control.js';
import { updateFlowControl } from '../scripts/update-flow-control.js';
import {
  flowLimitsJson,
  toFlowControlInfo,
  type FlowControl,
  type FlowControlInfo,
  type FlowControlRecord,
} from '../core/flow-control.js';

/**
 * The keys of flow-control key `key` in the order flow_control_keys names them
 * (dispatch-flow-control.ts): every script that stores into a key or dispatches it takes these.
 */
export function flowControlScriptKeys(k: QueueKeys, key: string): string[] {
  return [
    k.flowControls,
    k.flowControlWaiting(key),
    k.flowControlActive(key),
    k.flowControlDue(key),
    k.scheduledMessages,
    k.stream,
    k.streamIndex,
  ];
}

/**
 * Keys per script run of the mover's pass: a run holds Redis for about 20 µs per key, so 100 keep
 * each run near 2 ms while a pass at 5,000 keys takes 50 round trips instead of 5,000.
 */
const TICK_BATCH = 100;

/** What the mover's tick did to one key. */
export interface FlowControlTick {
  key: string;
  /** Tokens of messages no longer on the stream, freed. */
  freed: number;
  started: number;
  /** The key was idle and has been removed. */
  forgotten: boolean;
}

/** What `client.flowControl.*` changes on a key (update-flow-control.ts). */
export type FlowControlChange =
  | { change: 'pause' | 'resume' | 'resetRate' }
  | { change: 'pin'; parallelism?: number; rate?: number; periodSeconds?: number }
  | { change: 'unpin'; parallelism: boolean; rate: boolean };

/** What a worker's check before a send found (admit-flow-control-entry.ts). */
export type EntryCheck = 'deliver' | 'gone' | 'admitted';

/**
 * A binding's flow-control keys in its database (keys.ts): a hash of key records, and per key a
 * waiting list, a due set and the set of its messages being delivered (its tokens). Every change
 * that can free or add work runs the dispatch in the same script (dispatch-flow-control.ts), on
 * the Redis server's clock, so the limits hold across gateway replicas.
 */
export class FlowControlStore {
  constructor(
    private readonly redis: Redis,
    private readonly keys: QueueKeys,
    private readonly eventCap = 0,
  ) {}

  private scriptKeys(key: string): string[] {
    return flowControlScriptKeys(this.keys, key);
  }

  /**
   * Stores messages that all carry `flowControl.key`, all or none; each joins the key with its own
   * limits, and the key runs by the highest among its unfinished messages' unless pinned. A message
   * whose deduplication key is held within `deduplicationWindowMs` is not stored and answers the
   * first.
   */
  async enqueue(
    messages: readonly QueueMessage[],
    options: { deduplicationWindowMs: number; now?: number },
  ): Promise<EnqueueAnswer[]> {
    const key = messages[0]?.flowControl?.key;
    if (key === undefined) throw new Error('flow-control messages without a flow-control key');
    const now = options.now ?? Date.now();
    const args: (string | number | Buffer)[] = [
      MESSAGE_FIELD,
      options.deduplicationWindowMs,
      this.eventCap,
      key,
    ];
    for (const message of messages) {
      if (message.flowControl?.key !== key) throw new Error('flow-control messages of different keys');
      const due = message.notBefore !== undefined && message.notBefore > now ? message.notBefore : 0;
      const created =
        this.eventCap > 0 ? eventJson(message, 'CREATED', now, due > 0 ? { nextDeliveryTime: due } : {}) : '';
      args.push(
        message.id,
        due,
        encodeMessage(message),
        message.deduplicationKey ?? '',
        created,
        flowLimitsJson(message.flowControl),
      );
    }
    const k = this.keys;
    const answers = (await enqueueFlowControlMessages.run(
      this.redis,
      [...this.scriptKeys(key), k.deduplicationIds, k.deduplicationExpiries, k.events],
      args,
    )) as string[];
    return enqueueAnswers(messages, answers);
  }

  /**
   * A worker's check before it sends `message`, which has a flow-control key, from stream entry
   * `entryId`: 'deliver' when the message holds one of the key's tokens (its `activeEvent` is
   * then recorded), 'admitted' when it came onto the stream another way and now waits in its key,
   * 'gone' when the entry was cancelled or finished by another consumer.
   */
  async admit(
    entryId: string,
    message: QueueMessage & { flowControl: FlowControl },
    activeEvent: string,
  ): Promise<EntryCheck> {
    const key = message.flowControl.key;
    const result = await admitFlowControlEntry.run(
      this.redis,
      [...this.scriptKeys(key), this.keys.events],
      [
        MESSAGE_FIELD,
        DELIVERY_GROUP,
        entryId,
        key,
        message.id,
        flowLimitsJson(message.flowControl),
        this.eventCap,
        activeEvent,
      ],
    );
    return result === 1 ? 'deliver' : result === 2 ? 'admitted' : 'gone';
  }

  /**
   * One attempt of the key's message ended: its token goes back, a message that finished for good
   * leaves the key's counts, and the key starts what it can.
   */
  async release(flowControl: FlowControl, messageId: string): Promise<void> {
    await releaseFlowControlToken.run(this.redis, this.scriptKeys(flowControl.key), [
      MESSAGE_FIELD,
      flowControl.key,
      messageId,
      flowLimitsJson(flowControl),
    ]);
  }

  /** The mover's tick of one key (tick-flow-control.ts). */
  async tick(key: string): Promise<Omit<FlowControlTick, 'key'>> {
    const { key: _, ...tick } = (await this.tickKeys([key]))[0]!;
    return tick;
  }

  /**
   * The mover's pass: every key ticked, TICK_BATCH keys per script run, until `goOn` says stop
   * (checked between runs). Returns each ticked key's outcome.
   */
  async tickAll(goOn: () => boolean = () => true): Promise<FlowControlTick[]> {
    const names = await this.names();
    const ticks: FlowControlTick[] = [];
    for (let i = 0; i < names.length && goOn(); i += TICK_BATCH)
      ticks.push(...(await this.tickKeys(names.slice(i, i + TICK_BATCH))));
    return ticks;
  }

  private async tickKeys(names: readonly string[]): Promise<FlowControlTick[]> {
    const k = this.keys;
    const scriptKeys = [k.flowControls, k.scheduledMessages, k.stream, k.streamIndex];
    for (const name of names)
      scriptKeys.push(k.flowControlWaiting(name), k.flowControlActive(name), k.flowControlDue(name));
    const results = (await tickFlowControl.run(this.redis, scriptKeys, [MESSAGE_FIELD, ...names])) as [
      number,
      number,
      number,
    ][];
    return results.map(([freed, started, forgotten], i) => ({
      key: names[i]!,
      freed,
      started,
      forgotten: forgotten === 1,
    }));
  }

  /** Applies a change; pause and pin create a missing key. Returns whether the key exists. */
  async update(key: string, change: FlowControlChange): Promise<boolean> {
    let args: (string | number)[] = ['', '', ''];
    if (change.change === 'pin')
      args = [change.parallelism ?? '', change.rate ?? '', change.periodSeconds ?? ''];
    if (change.change === 'unpin') args = [change.parallelism ? '1' : '', change.rate ? '1' : '', ''];
    const create = change.change === 'pause' || change.change === 'pin' ? '1' : '0';
    const result = await updateFlowControl.run(this.redis, this.scriptKeys(key), [
      MESSAGE_FIELD,
      key,
      change.change,
      ...args,
      create,
    ]);
    return result === 1;
  }

  async get(key: string): Promise<FlowControlInfo | undefined> {
    const k = this.keys;
    const [raw, waiting, active] = await Promise.all([
      this.redis.hget(k.flowControls, key),
      this.redis.llen(k.flowControlWaiting(key)),
      this.redis.scard(k.flowControlActive(key)),
    ]);
    return raw === null
      ? undefined
      : toFlowControlInfo(key, JSON.parse(raw) as FlowControlRecord, { waiting, active });
  }

  /** Every key, by name. */
  async list(): Promise<FlowControlInfo[]> {
    const k = this.keys;
    const all = await this.redis.hgetall(k.flowControls);
    const names = Object.keys(all).sort();
    const pipeline = this.redis.pipeline();
    for (const name of names) pipeline.llen(k.flowControlWaiting(name)).scard(k.flowControlActive(name));
    const counts = (await pipeline.exec()) ?? [];
    return names.map((name, i) =>
      toFlowControlInfo(name, JSON.parse(all[name]!) as FlowControlRecord, {
        waiting: Number(counts[2 * i]?.[1] ?? 0),
        active: Number(counts[2 * i + 1]?.[1] ?? 0),
      }),
    );
  }

  async names(): Promise<string[]> {
    return this.redis.hkeys(this.keys.flowControls);
  }
}
