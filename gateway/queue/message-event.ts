import type { QueueTarget } from './binding-registry.js';
import type { QueueConfig } from './config.js';
import { labelsOf, type EventState } from './list-query.js';
import type { QueueMessage } from './message.js';

/** One state change of a message, as GET /v2/events gives it (the SDK's `Log`). */
export interface MessageEvent {
  /** Epoch ms. */
  time: number;
  state: EventState;
  messageId: string;
  url: string;
  label?: string;
  labels?: string[];
  /** Why the attempt failed (ERROR, FAILED). */
  error?: string;
  /** The failed attempt's status (ERROR, FAILED). */
  responseStatus?: number;
  /** When the next attempt is due (RETRY, and CREATED of a delayed message), epoch ms. */
  nextDeliveryTime?: number;
}

/** The event's JSON as the scripts store it on the events stream. */
export function eventJson(
  message: Pick<QueueMessage, 'id' | 'destination' | 'label'>,
  state: EventState,
  time: number,
  details: Pick<MessageEvent, 'error' | 'responseStatus' | 'nextDeliveryTime'> = {},
): string {
  const event: MessageEvent = { time, state, messageId: message.id, url: message.destination };
  if (message.label !== undefined) {
    event.label = message.label;
    event.labels = labelsOf(message.label);
  }
  if (details.error !== undefined) event.error = details.error;
  if (details.responseStatus !== undefined) event.responseStatus = details.responseStatus;
  if (details.nextDeliveryTime !== undefined) event.nextDeliveryTime = details.nextDeliveryTime;
  return JSON.stringify(event);
}

/** How many events a binding keeps, or 0 when the gateway records none (SETTEE_QUEUE_RECORD_EVENTS). */
export function eventCapOf(
  config: Pick<QueueConfig, 'recordEvents'>,
  target: Pick<QueueTarget, 'limits'>,
): number {
  return config.recordEvents ? target.limits.maxEvents : 0;
}
