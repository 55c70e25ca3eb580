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
  /** The failed answer's body: its first bytes, base64. */
  responseBody?: string;
  nextDeliveryTime?: number;
  method?: string;
  header?: Record<string, string[]>;
  /** The message's body: its first bytes, base64, or `REDACTED:<sha256>`. */
  body?: string;
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
  /** The start of a failed answer's body, as text. */
  responseBody: string | null;
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
}

/** GET .../bindings/:name/messages: the rows folded from the newest events. */
export interface MessagePage {
  messages: MessageRow[];
  /** Older events exist: a message first seen near the window's end may have more history. */
  partial: boolean;
  eventsRead: number;
}

/** One message with what the list leaves out: its request and every attempt. */
export interface MessageDetail extends MessageRow {
  method: string | null;
  /** Name and value pairs, as delivered (redacted ones as the queue redacted them). */
  headers: [string, string][];
  /** The start of the body as text (events keep its first bytes), or the queue's redaction mark. */
  body: string | null;
  /** Oldest first. */
  attemptLog: AttemptView[];
}

/** A body as events keep it (first bytes in base64, or `REDACTED:<sha256>`), as text for the page. */
function bodyText(stored: string | undefined): string | null {
  if (stored === undefined) return null;
  if (stored.startsWith('REDACTED:')) return stored;
  return Buffer.from(stored, 'base64').toString('utf8');
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

/** One message's events, oldest first, folded. */
function foldMessage(events: QueueEvent[], now: number): MessageDetail {
  const latest = events[events.length - 1]!;
  const attemptLog: AttemptView[] = [];
  let lastResponseStatus: number | null = null;
  let lastError: string | null = null;
  for (const event of events) {
    const current = attemptLog[attemptLog.length - 1];
    if (event.state === 'ACTIVE')
      attemptLog.push({
        startedAt: event.time,
        outcome: 'pending',
        responseStatus: null,
        error: null,
        responseBody: null,
      });
    else if (event.state === 'DELIVERED' || event.state === 'ERROR' || event.state === 'FAILED') {
      if (event.responseStatus !== undefined) lastResponseStatus = event.responseStatus;
      if (event.state !== 'DELIVERED') lastError = event.error ?? null;
      // FAILED repeats the last ERROR's answer: it ends the message, not another attempt.
      if (current && current.outcome === 'pending') {
        current.outcome = event.state === 'DELIVERED' ? 'delivered' : 'failed';
        current.responseStatus = event.responseStatus ?? null;
        current.error = event.error ?? null;
        current.responseBody = bodyText(event.responseBody);
      }
    }
  }
  const state = stateOf(latest, now);
  const due = [...events].reverse().find((e) => e.nextDeliveryTime !== undefined)?.nextDeliveryTime;
  const created = events.find((e) => e.state === 'CREATED');
  const described = [...events].reverse().find((e) => e.header !== undefined || e.body !== undefined);
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
    method: latest.method ?? null,
    headers: Object.entries(described?.header ?? {}).flatMap(([name, values]) =>
      values.map((value): [string, string] => [name, value]),
    ),
    body: bodyText(described?.body),
    attemptLog,
  };
}

function groupByMessage(events: readonly QueueEvent[]): QueueEvent[][] {
  const byMessage = new Map<string, QueueEvent[]>();
  // Walk oldest first so each message's list is in the order things happened.
  for (let i = events.length - 1; i >= 0; i--) {
    const event = events[i]!;
    const list = byMessage.get(event.messageId);
    if (list) list.push(event);
    else byMessage.set(event.messageId, [event]);
  }
  return [...byMessage.values()];
}

/**
 * Rows for the messages in `events` (newest first, as the API gives them), the most recently
 * changed message first, optionally only one group's.
 */
export function buildMessageRows(
  events: readonly QueueEvent[],
  options: { now: number; group?: MessageGroup },
): MessageRow[] {
  const rows = groupByMessage(events).map((list): MessageRow => {
    // The list carries no bodies, headers or attempts: the detail route gives them.
    const { method: _m, headers: _h, body: _b, attemptLog: _a, ...row } = foldMessage(list, options.now);
    return row;
  });
  rows.sort((a, b) => b.updatedAt - a.updatedAt);
  return options.group ? rows.filter((row) => row.group === options.group) : rows;
}

/** One message's detail from its events (newest first), or undefined when there are none. */
export function buildMessageDetail(
  events: readonly QueueEvent[],
  options: { now: number; messageId: string },
): MessageDetail | undefined {
  const own = groupByMessage(events).find((list) => list[0]?.messageId === options.messageId);
  return own ? foldMessage(own, options.now) : undefined;
}

export function isMessageGroup(value: unknown): value is MessageGroup {
  return typeof value === 'string' && (MESSAGE_GROUPS as readonly string[]).includes(value);
}
