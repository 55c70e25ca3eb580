/**
 * Part 3 of bench/workflow.ts: W runs waiting on an event each (context.waitForEvent), then
 * notified (client.notify, NOTIFY_IN_FLIGHT at a time): notify-to-resume latency (the notify sent
 * to the step after the wait running).
 */
import type { WorkflowContext } from '@upstash/workflow';
import { waitFor } from '../../local/wait.js';
import { finishedRuns, now, type WorkflowHarness } from './workflow-bench-harness.js';

export const NOTIFY_IN_FLIGHT = 10;

/** When the step after each run's wait first ran (epoch ms, sub-ms), by the run's event id. */
const resumedAt = new Map<string, number>();
const eventOf = (context: WorkflowContext<unknown>): string =>
  `evt-${(context.requestPayload as { key: number }).key}`;

export async function waiterWorkflow(context: WorkflowContext<unknown>): Promise<void> {
  await context.waitForEvent('wait', eventOf(context), { timeout: '1h' });
  await context.run('resumed', () => {
    if (!resumedAt.has(eventOf(context))) resumedAt.set(eventOf(context), now());
  });
}

/** Notify-to-resume latencies (ms) of `waiters` runs triggered `batch` at a time, each waiting on its own event. */
export async function notifyRound(
  h: WorkflowHarness,
  options: { waiters: number; batch: number },
): Promise<number[]> {
  const { waiters, batch } = options;
  const url = h.endpoints.expressUrl('waiter');
  const runIds: string[] = [];
  for (let b = 0; b < waiters; b += batch) {
    const items = Array.from({ length: Math.min(batch, waiters - b) }, (_, i) => ({
      url,
      body: { key: b + i },
    }));
    runIds.push(...(await h.workflows.trigger(items)).map((r) => r.workflowRunId));
  }
  await waitFor(
    `${waiters} runs waiting`,
    async () => {
      const pipeline = h.inspect.pipeline();
      for (let i = 0; i < waiters; i++) pipeline.exists(h.keys.workflowWaiters(`evt-${i}`));
      const replies = (await pipeline.exec()) ?? [];
      return replies.every(([, n]) => n === 1) ? true : undefined;
    },
    { timeoutMs: 600_000, intervalMs: 200 },
  );
  const sentAt = new Map<string, number>();
  let next = 0;
  await Promise.all(
    Array.from({ length: NOTIFY_IN_FLIGHT }, async () => {
      while (next < waiters) {
        const eventId = `evt-${next++}`;
        sentAt.set(eventId, now());
        await h.workflows.notify({ eventId, eventData: { ok: true } });
      }
    }),
  );
  await finishedRuns(h, runIds, 600_000);
  return [...sentAt].map(([eventId, at]) => resumedAt.get(eventId)! - at);
}
