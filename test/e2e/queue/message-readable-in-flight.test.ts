import net from 'node:net';
import { useSdkQueueSuite } from '../../helpers/queue/sdk-queue-suite.js';

/**
 * A message is readable through GET /v2/messages/{id} on either replica in every state until it
 * is delivered or dead-lettered: while a slow receiver holds its delivery, and while it moves
 * between the stream and the retry schedule against a destination that refuses connections. A
 * read that looked in one store and then the other could fall between two moves and answer 404.
 */
describe('messages readable while being delivered, across two gateway replicas', () => {
  const suite = useSdkQueueSuite();
  const { client } = suite;

  /** A loopback port nothing listens on: connections to it are refused. */
  async function refusingUrl(): Promise<string> {
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as net.AddressInfo;
    await new Promise((resolve) => server.close(resolve));
    return `http://127.0.0.1:${port}/refused`;
  }

  const api = async (replica: number, path: string) => {
    const response = await fetch(`${suite.replicas[replica]!.queueUrl(suite.target)}${path}`, {
      headers: { authorization: `Bearer ${suite.target.token}` },
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  /** Reads the message on both replicas by turns until it is gone; returns how many reads found it. */
  async function readUntilGone(messageId: string): Promise<number> {
    for (let reads = 0; ; reads += 1) {
      const { status } = await api(reads % 2, `/v2/messages/${messageId}`);
      if (status === 404) return reads;
      expect(status).toBe(200);
    }
  }

  it('when a slow receiver holds each delivery, then every read until it is delivered finds the message', async () => {
    suite.holdDeliveries(150);
    for (let i = 0; i < 10; i += 1) {
      const { messageId } = await client(i % 2).publish({
        url: `${suite.receiver.baseUrl}/slow`,
        body: `${i}`,
      });
      expect(await readUntilGone(messageId)).toBeGreaterThan(0);
      const { body } = await api(0, `/v2/events?messageId=${messageId}`);
      const states = (body.events as { state: string }[]).map((e) => e.state);
      expect({ messageId, delivered: states.includes('DELIVERED') }).toEqual({ messageId, delivered: true });
    }
  });

  it('when the destination refuses every connection, then every read until it is dead-lettered finds the message', async () => {
    const url = await refusingUrl();
    for (let i = 0; i < 10; i += 1) {
      const { messageId } = await client(i % 2).publish({ url, body: `${i}`, retries: 3, retryDelay: '20' });
      await readUntilGone(messageId);
      const { body } = await api(1, `/v2/dlq?messageId=${messageId}`);
      expect({ messageId, deadLetters: (body.messages as unknown[]).length }).toEqual({
        messageId,
        deadLetters: 1,
      });
    }
  });
});
