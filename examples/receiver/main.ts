import { createReceiverServer } from './receiver.js';

/**
 * Runs the example receiver:
 *   VQUEUE_CURRENT_SIGNING_KEY=... VQUEUE_NEXT_SIGNING_KEY=... PORT=3000 npx tsx examples/receiver/main.ts
 * then publish to http://127.0.0.1:3000/<any path> (the local platform allows loopback destinations).
 */
const currentSigningKey = process.env.VQUEUE_CURRENT_SIGNING_KEY;
const nextSigningKey = process.env.VQUEUE_NEXT_SIGNING_KEY;
if (!currentSigningKey || !nextSigningKey) {
  console.error(
    'set VQUEUE_CURRENT_SIGNING_KEY and VQUEUE_NEXT_SIGNING_KEY (the binding env Secret has both)',
  );
  process.exit(1);
}
const port = Number(process.env.PORT ?? '3000');
const server = createReceiverServer({
  currentSigningKey,
  nextSigningKey,
  onDelivery: (delivery) => {
    console.log(
      JSON.stringify({
        message: 'delivery verified',
        url: delivery.url,
        messageId: delivery.headers['upstash-message-id'],
        body: delivery.body.toString('utf8'),
      }),
    );
  },
});
server.listen(port, '127.0.0.1', () => console.log(`receiver listening on http://127.0.0.1:${port}`));
for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.once(signal, () => server.close(() => process.exit(0)));
