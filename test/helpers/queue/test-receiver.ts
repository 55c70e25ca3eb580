import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createReceiverServer, type ReceivedDelivery } from '../../../examples/receiver/receiver.js';
import { randomSigningKey } from './signing-keys.js';

/** A delivery as a test sees it: what arrived, and when. */
export interface RecordedDelivery extends ReceivedDelivery {
  at: number;
}

export interface TestReceiver {
  /** http://127.0.0.1:<port> */
  baseUrl: string;
  deliveries: RecordedDelivery[];
  /** Raw requests, verified or not (the example receiver answers 403 to the unverified ones). */
  requests: number;
  /** Decides the status of each verified delivery; default 200. */
  respond: (delivery: RecordedDelivery) => number | Promise<number>;
  close(): Promise<void>;
}

/** The example receiver (examples/receiver) on a loopback port, recording what it verified. */
export async function startTestReceiver(keys: {
  currentSigningKey: string;
  nextSigningKey?: string;
}): Promise<TestReceiver> {
  const state: TestReceiver = {
    baseUrl: '',
    deliveries: [],
    requests: 0,
    respond: () => 200,
    close: async () => undefined,
  };
  const server = createReceiverServer({
    currentSigningKey: keys.currentSigningKey,
    // A receiver always holds two keys; a test that does not look at the next one gets an unrelated key.
    nextSigningKey: keys.nextSigningKey ?? randomSigningKey(),
    onDelivery: (delivery) => {
      const recorded = { ...delivery, at: Date.now() };
      state.deliveries.push(recorded);
      return state.respond(recorded);
    },
  });
  server.on('request', () => (state.requests += 1));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.close = () => closeServer(server);
  return state;
}

export function closeServer(server: http.Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}
