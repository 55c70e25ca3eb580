import http from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';

/** A stand-in engine that records each request's `${method} ${url}` as it arrives. */
export interface RecordingEngine {
  port: number;
  /** What reached the engine, in order, recorded before the body is read. */
  seen: string[];
  close(): Promise<void>;
}

/**
 * A stand-in engine on loopback for tests that check what the gateway passed on (and what it did
 * not): each request is recorded, its body read to the end, and then `answer` writes the response,
 * so a test's handler decides only what (and when) to answer.
 */
export async function startRecordingEngine(
  answer: (req: http.IncomingMessage, res: http.ServerResponse) => void,
): Promise<RecordingEngine> {
  const seen: string[] = [];
  const server = http.createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    req.resume();
    req.on('end', () => answer(req, res));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: (server.address() as AddressInfo).port,
    seen,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
