import type { Client } from '@upstash/qstash';

/** One change to an order, as the shop emits them. */
export interface OrderEvent {
  orderId: string;
  status: 'created' | 'paid' | 'shipped';
}

/**
 * Order events to a fulfilment service that must see each order's events in the order they
 * happened and can take two requests at a time, as a QStash user writes it: a queue with
 * parallelism 1 for the ordering, another with parallelism 2 for the invoice renderer that only
 * needs its load capped. Running it again changes the queues rather than adding new ones.
 */
export async function sendOrderEvents(
  client: Client,
  endpoints: { fulfilment: string; invoices: string },
  events: readonly OrderEvent[],
): Promise<string[]> {
  const ordered = client.queue({ queueName: 'order-events' });
  await ordered.upsert({ parallelism: 1 });
  await client.queue({ queueName: 'invoices' }).upsert({ parallelism: 2 });
  const messageIds: string[] = [];
  for (const event of events) {
    // Awaited one by one: the queue delivers in the order its messages were enqueued.
    const { messageId } = await ordered.enqueueJSON({ url: endpoints.fulfilment, body: event, retries: 3 });
    messageIds.push(messageId);
    if (event.status === 'paid')
      await client
        .queue({ queueName: 'invoices' })
        .enqueueJSON({ url: endpoints.invoices, body: { orderId: event.orderId } });
  }
  return messageIds;
}
