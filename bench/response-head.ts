/**
 * Bytes allocated and CPU per proxied response head on the fast path, in-process (8f8ef5c's
 * per-head figure, docs/data-path.md): CouchDB 3.5.2's document GET head read (readResponseHead),
 * its client edits made (clientHeadEdits) and the client's head built (clientResponseHead). Bytes are
 * the heap's growth over a round run inside one young generation (--max-semi-space-size=64: a
 * round that saw a scavenge is refused), CPU the process's over the round.
 *
 *   node --max-semi-space-size=64 --min-semi-space-size=64 --import tsx bench/response-head.ts
 *     (RESPONSE_HEAD_ROUNDS=5, RESPONSE_HEAD_COUNT=20000 heads a round)
 */
import os from 'node:os';
import { PerformanceObserver } from 'node:perf_hooks';
import { readResponseHead, type ResponseHead } from '../gateway/http/response-head.js';
import { clientResponseHead } from '../gateway/http/splice-response.js';
import { CLIENT_RESPONSE_LINE_NAMES, clientHeadEdits } from '../gateway/proxy/forward-headers.js';
import { medianSpreadText, round } from './lib/stats.js';

const ROUNDS = Number(process.env.RESPONSE_HEAD_ROUNDS ?? '5');
const COUNT = Number(process.env.RESPONSE_HEAD_COUNT ?? '20000');
const HEAD = Buffer.from(
  'HTTP/1.1 200 OK\r\nCache-Control: must-revalidate\r\nContent-Length: 67\r\n' +
    'Content-Type: application/json\r\nDate: Sun, 29 Nov 2026 05:00:00 GMT\r\n' +
    'ETag: "1-967a00dff5e02add41819138abb3284d"\r\nServer: CouchDB/3.5.2 (Erlang OTP/26)\r\n' +
    'X-Couch-Request-ID: 2ce8a0c8b2\r\nX-CouchDB-Body-Time: 0\r\nVary: Accept-Encoding\r\n\r\n',
  'latin1',
);
const REWRITES = { locationForClient: (v: string) => v, setCookieForClient: (v: string) => v };

let scavenges = 0;
new PerformanceObserver((list) => (scavenges += list.getEntries().length)).observe({ entryTypes: ['gc'] });

function oneHead(): number {
  const response = readResponseHead(HEAD, CLIENT_RESPONSE_LINE_NAMES) as ResponseHead;
  const edits = clientHeadEdits(HEAD, response, REWRITES, '');
  return clientResponseHead(HEAD, { response, edits, chunked: response.chunked, close: response.close }, 0)
    .length;
}

const bytes: number[] = [];
const us: number[] = [];
for (let i = 0; i < COUNT; i++) oneHead();
for (let r = 0; r < ROUNDS * 3 && bytes.length < ROUNDS; r++) {
  await new Promise((resolve) => setImmediate(resolve));
  const gcBefore = scavenges;
  const heapBefore = process.memoryUsage().heapUsed;
  const cpuBefore = process.cpuUsage();
  for (let i = 0; i < COUNT; i++) oneHead();
  const cpu = process.cpuUsage(cpuBefore);
  const heap = process.memoryUsage().heapUsed - heapBefore;
  await new Promise((resolve) => setImmediate(resolve));
  if (scavenges !== gcBefore) continue;
  bytes.push(heap / COUNT);
  us.push((cpu.user + cpu.system) / COUNT);
}
console.log(
  `CouchDB's document GET head: ${medianSpreadText(bytes)} bytes, ${medianSpreadText(us, 2)} µs CPU a head ` +
    `(${bytes.length} rounds of ${COUNT}, load ${round(os.loadavg()[0]!, 1)})`,
);
