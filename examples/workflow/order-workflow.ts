import type { WorkflowContext } from '@upstash/workflow';

/**
 * An order's fulfilment as a durable workflow, written as any Upstash Workflow user writes one:
 * each `context.run` is a step whose result the queue keeps, so a crash or a redeploy between
 * steps resumes after the last finished one instead of charging the card twice.
 */

export interface Order {
  orderId: string;
  amount: number;
  items: string[];
}

export interface Fulfilment {
  orderId: string;
  chargeId: string;
  reserved: string[];
  emailed: boolean;
  trackingNumber: string;
}

export async function fulfilOrder(context: WorkflowContext<Order>): Promise<Fulfilment> {
  const order = context.requestPayload;
  const chargeId = await context.run('charge', () => `ch_${order.orderId}_${Math.round(order.amount * 100)}`);
  // Independent steps run side by side, each delivered on its own.
  const [reserved, emailed] = await Promise.all([
    context.run('reserve-stock', () => order.items.map((item) => `${item}:reserved`)),
    context.run('email-receipt', () => true),
  ]);
  // A durable pause: no process waits, the queue delivers the next step a second later.
  await context.sleep('wait-for-pickup', 1);
  const trackingNumber = await context.run('ship', () => `trk_${order.orderId}`);
  return { orderId: order.orderId, chargeId, reserved, emailed, trackingNumber };
}
