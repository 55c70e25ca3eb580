import type { EventState } from '../core/list-query.js';
import type { EventLog } from './event-log.js';
import type { LastScheduleState } from '../core/schedule.js';

/** A message's last event as QStash sums it up for a schedule: delivered, given up, or not yet either. */
export function lastScheduleStateOf(state: EventState): LastScheduleState {
  if (state === 'DELIVERED') return 'SUCCESS';
  if (state === 'FAILED' || state === 'CANCELLED') return 'FAIL';
  return 'IN_PROGRESS';
}

/** Events examined for one schedule's answer: its last tick's messages, newest event first. */
const EVENTS_READ = 1_000;

/**
 * The state of each message of a schedule's last tick, from that message's newest event since the
 * tick (the events stream is read from now back to the tick, one bounded page). A message with no
 * event there (events not recorded, or trimmed) is left out rather than guessed.
 */
export async function lastScheduleStates(
  events: EventLog,
  messageIds: readonly string[],
  since: number,
): Promise<Record<string, LastScheduleState>> {
  const states: Record<string, LastScheduleState> = {};
  if (messageIds.length === 0) return states;
  const page = await events.page({
    count: EVENTS_READ,
    filters: { messageId: [...messageIds], fromDate: since },
  });
  for (const event of page.events)
    if (!(event.messageId in states)) states[event.messageId] = lastScheduleStateOf(event.state);
  return states;
}
