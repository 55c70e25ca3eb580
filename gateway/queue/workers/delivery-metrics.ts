import { Counter, Registry } from 'prom-client';
import type { EntryOutcome } from './process-entry.js';

/** An entry's outcome, or `unrecorded`: storing it failed (Redis away), and it will be reclaimed. */
export type DeliveryOutcome = EntryOutcome | 'unrecorded';

/**
 * The queue's delivery metrics, in a registry of its own that the gateway serves beside its own
 * (docs/monitoring.md's alerts on failing deliveries and a growing DLQ read them). Counted in
 * plain numbers and handed to prom-client at scrape time, as the gateway's forwarding counter is:
 * a labelled inc() per delivery would hash its labels each time. No binding label: a failing
 * tenant is found in its own events (GET /v2/events); the counter says that one fails.
 */
export class DeliveryMetrics {
  readonly registry = new Registry();
  private readonly pending = new Map<DeliveryOutcome, number>();

  constructor() {
    const pending = this.pending;
    new Counter({
      name: 'settee_queue_deliveries_total',
      help:
        'Queue entries handled by the delivery workers, by outcome: delivered, retry-scheduled (an ' +
        'attempt failed), dead-lettered (the last attempt failed: the DLQ grew), cancelled, skipped, ' +
        'admitted (to its flow-control key) or unrecorded (storing the outcome failed).',
      labelNames: ['outcome'],
      registers: [this.registry],
      collect() {
        for (const [outcome, count] of pending) if (count > 0) this.inc({ outcome }, count);
        pending.clear();
      },
    });
  }

  count(outcome: DeliveryOutcome): void {
    this.pending.set(outcome, (this.pending.get(outcome) ?? 0) + 1);
  }
}
