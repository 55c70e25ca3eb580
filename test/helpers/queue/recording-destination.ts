import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { closeServer } from './test-receiver.js';

export interface RecordedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  at: number;
}

/** How the destination answers one request: a status with headers and a body (default `answer`), after a delay, or never (until closed). */
export type DestinationAnswer =
  { status: number; headers?: Record<string, string>; body?: string; delayMs?: number } | 'hang';

export interface RecordingDestination {
  baseUrl: string;
  requests: RecordedRequest[];
  answer: (request: RecordedRequest) => DestinationAnswer;
  /** Attempts per Upstash-Message-Id, in arrival order. */
  attemptsOf(messageId: string): RecordedRequest[];
  close(): Promise<void>;
}

/** A loopback HTTP destination that records every request and answers as the test scripts it. */
export async function startRecordingDestination(): Promise<RecordingDestination> {
  const destination: RecordingDestination = {
    baseUrl: '',
    requests: [],
    answer: () => ({ status: 200 }),
    attemptsOf: (id) => destination.requests.filter((r) => r.headers['upstash-message-id'] === id),
    close: async () => undefined,
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request: RecordedRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks),
        at: Date.now(),
      };
      destination.requests.push(request);
      const answer = destination.answer(request);
      if (answer === 'hang') return;
      const send = (): void => {
        res.writeHead(answer.status, answer.headers ?? {});
        res.end(answer.body ?? 'answer');
      };
      if (answer.delayMs) setTimeout(send, answer.delayMs);
      else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  destination.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  destination.close = () => closeServer(server);
  return destination;
}
