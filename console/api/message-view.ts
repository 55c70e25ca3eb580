/**
 * The messages view: the queue's events (GET /v2/events, QStash's `Log`, newest first) folded into
 * one row per message, with its state now, its attempts and the receiver's last status.
 */

/** An event as the queue's events API gives it; only the fields the view reads. */
export interface QueueEvent {
  time: number;
  state: string;
  messageId: string;
  url: string;
  label?: string;
  error?: string;
  responseStatus?: number;
  nextDeliveryTime?: number;
}

/** Where a message stands, in the words the page shows. */
export type MessageState =
  'Delayed' | 'Queued' | 'Delivering' | 'Retrying' | 'Delivered' | 'Failed' | 'Cancelled';

/** Which tab of the page a state belongs to. */
export type MessageGroup = 'in-flight' | 'delivered' | 'failed' | 'cancelled';

export const MESSAGE_GROUPS: readonly MessageGroup[] = ['in-flight', 'delivered', 'failed', 'cancelled'];

const GROUP_OF: Record<MessageState, MessageGroup> = {
  Delayed: 'in-flight',
  Queued: 'in-flight',
  Delivering: 'in-flight',
  Retrying: 'in-flight',
  Delivered: 'delivered',
  Failed: 'failed',
  Cancelled: 'cancelled',
};

/** One attempt to deliver: when it started, and how it ended if it has. */
export interface AttemptView {
  startedAt: number;
  outcome: 'pending' | 'delivered' | 'failed';
  responseStatus: number | null;
  error: string | null;
}

export interface MessageRow {
  messageId: string;
  url: string;
  label: string | null;
  state: MessageState;
  group: MessageGroup;
  /** Attempts seen in the events read (ACTIVE events). */
  attempts: number;
  /** False when the message's CREATED event is older than the events read: attempts may be more. */
  historyComplete: boolean;
  /** The receiver's status on the last attempt that has one. */
  lastResponseStatus: number | null;
  /** Why the last failed attempt failed, when there was no status (timeout, refused, ...). */
  lastError: string | null;
  /** When the next attempt is due (delayed or retrying), epoch ms. */
  nextDeliveryAt: number | null;
  createdAt: number | null;
  updatedAt: number;
  /** Oldest first. */
  attemptLog: AttemptView[];
}

function stateOf(latest: QueueEvent, now: number): MessageState {
  switch (latest.state) {
    case 'CREATED':
      return latest.nextDeliveryTime !== undefined && latest.nextDeliveryTime > now ? 'Delayed' : 'Queued';
    case 'ACTIVE':
      return 'Delivering';
    case 'ERROR':
    case 'RETRY':
      return 'Retrying';
    case 'DELIVERED':
      return 'Delivered';
    case 'FAILED':
      return 'Failed';
    default:
      // CANCEL_REQUESTED and CANCELLED: Settee's cancel takes effect at once.
      return 'Cancelled';
  }
}

/** One message's events, oldest first, as its row. */
function buildRow(events: QueueEvent[], now: number): MessageRow {
  const latest = events[events.length - 1]!;
  const attemptLog: AttemptView[] = [];
  let lastResponseStatus: number | null = null;
  let lastError: string | null = null;
  for (const event of events) {
    const current = attemptLog[attemptLog.length - 1];
    if (event.state === 'ACTIVE')
      attemptLog.push({ startedAt: event.time, outcome: 'pending', responseStatus: null, error: null });
    else if (event.state === 'DELIVERED' || event.state === 'ERROR' || event.state === 'FAILED') {
      if (event.responseStatus !== undefined) lastResponseStatus = event.responseStatus;
      if (event.state !== 'DELIVERED') lastError = event.error ?? null;
      // FAILED repeats the last ERROR's answer: it ends the message, not another attempt.
      if (current && current.outcome === 'pending') {
        current.outcome = event.state === 'DELIVERED' ? 'delivered' : 'failed';
        current.responseStatus = event.responseStatus ?? null;
        current.error = event.error ?? null;
      }
    }
  }
  const state = stateOf(latest, now);
  const due = [...events].reverse().find((e) => e.nextDeliveryTime !== undefined)?.nextDeliveryTime;
  const created = events.find((e) => e.state === 'CREATED');
  return {
    messageId: latest.messageId,
    url: latest.url,
    label: latest.label ?? null,
    state,
    group: GROUP_OF[state],
    attempts: attemptLog.length,
    historyComplete: created !== undefined,
    lastResponseStatus,
    lastError: state === 'Delivered' ? null : lastError,
    nextDeliveryAt: (state === 'Delayed' || state === 'Retrying') && due !== undefined ? due : null,
    createdAt: created?.time ?? null,
    updatedAt: latest.time,
    attemptLog,
  };
}

/**
 * Rows for the messages in `events` (newest first, as the API gives them), the most recently
 * changed message first, optionally only one group's.
 */
export function buildMessageRows(
  events: readonly QueueEvent[],
  options: { now: number; group?: MessageGroup },
): MessageRow[] {
  const byMessage = new Map<string, QueueEvent[]>();
  // Walk oldest first so each message's list is in the order things happened.
  for (let i = events.length - 1; i >= 0; i--) {
    const event = events[i]!;
    const list = byMessage.get(event.messageId);
    if (list) list.push(event);
    else byMessage.set(event.messageId, [event]);
  }
  const rows = [...byMessage.values()].map((list) => buildRow(list, options.now));
  rows.sort((a, b) => b.updatedAt - a.updatedAt);
  return options.group ? rows.filter((row) => row.group === options.group) : rows;
}

export function isMessageGroup(value: unknown): value is MessageGroup {
  return typeof value === 'string' && (MESSAGE_GROUPS as readonly string[]).includes(value);
}
