/**
 * What signing a delivery costs inside a loop of signed POSTs, builds side by side (issue 26 item
 * 2): signing alone in a loop took about 6 µs, yet a signature made per request cost about 25 µs
 * more CPU a POST than a fixed header did (docs/queue.md, Performance). Each side is one signer
 * (this tree's gateway/queue/workers/signer.ts, or another checkout's given by path) sending
 * ROUNDS x COUNT POSTs of the bench's body with node:http and a keep-alive agent, IN_FLIGHT at a
 * time, to a plain node:http receiver in another process (its CPU is not counted); a side with one
 * signature made once and sent every time is the floor. Rounds alternate the sides' order; each
 * side's figure is the median CPU (user + system) of this process per POST, with the rounds' spread.
 * No Redis: the delivery's POST and its signature only.
 *
 *   npx tsx bench/queue-signing-post-loop.ts [/path/to/other/gateway/queue/workers/signer.ts ...]
 *     QUEUE_SIGNING_ROUNDS=5  QUEUE_SIGNING_COUNT=20000
 */
import { spawn } from 'node:child_process';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { DeliverySigner } from '../gateway/queue/workers/signer.js';
import { median, round } from './lib/stats.js';
import { BODY, SIGNING_KEY } from './queue-publish/publish-settings.js';

const ROUNDS = Number(process.env.QUEUE_SIGNING_ROUNDS ?? '5');
const COUNT = Number(process.env.QUEUE_SIGNING_COUNT ?? '20000');
const IN_FLIGHT = 128;
const RECEIVER = `const s = require('node:http').createServer((q, a) => { q.resume(); q.on('end', () => a.end('ok')); });
s.keepAliveTimeout = 60_000; s.listen(0, '127.0.0.1', () => console.log(s.address().port));`;

type Sign = (destination: string, body: Buffer) => string;

async function signerOf(file: string): Promise<Sign> {
  const module = (await import(pathToFileURL(path.resolve(file)).href)) as {
    createDeliverySigner(key: string): DeliverySigner;
  };
  const signer = module.createDeliverySigner(SIGNING_KEY);
  return (destination, body) => signer.sign({ destination, body });
}

/** CPU µs of this process per POST over `count` POSTs, each signed by `sign`. */
async function postLoop(port: number, agent: http.Agent, sign: Sign, count: number): Promise<number> {
  const body = Buffer.from(BODY);
  const destination = `http://127.0.0.1:${port}/hook`;
  const post = () =>
    new Promise<void>((resolve, reject) => {
      const request = http.request(
        {
          host: '127.0.0.1',
          port,
          path: '/hook',
          method: 'POST',
          agent,
          headers: {
            'content-type': 'application/json',
            'content-length': body.length,
            'upstash-signature': sign(destination, body),
          },
        },
        (response) => response.resume().on('end', resolve),
      );
      request.on('error', reject).end(body);
    });
  let started = 0;
  const sender = async () => {
    while (started++ < count) await post();
  };
  const before = process.cpuUsage();
  await Promise.all(Array.from({ length: IN_FLIGHT }, sender));
  const used = process.cpuUsage(before);
  return (used.user + used.system) / count;
}

async function main(): Promise<void> {
  const receiver = spawn(process.execPath, ['-e', RECEIVER], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve) =>
    receiver.stdout.once('data', (line: Buffer) => resolve(Number(line.toString().trim()))),
  );
  const agent = new http.Agent({ keepAlive: true, maxSockets: IN_FLIGHT });
  try {
    const here = await signerOf(path.join(import.meta.dirname, '../gateway/queue/workers/signer.ts'));
    const fixed = here(`http://127.0.0.1:${port}/hook`, Buffer.from(BODY));
    const sides: [string, Sign][] = [
      ['fixed signature (floor)', () => fixed],
      ['this tree', here],
      ...(await Promise.all(
        process.argv.slice(2).map(async (file): Promise<[string, Sign]> => [file, await signerOf(file)]),
      )),
    ];
    for (const [, sign] of sides) await postLoop(port, agent, sign, 5_000); // warm-up
    const cpu: number[][] = sides.map(() => []);
    for (let r = 0; r < ROUNDS; r++) {
      const order = sides.map((_, i) => i);
      if (r % 2 === 1) order.reverse();
      for (const i of order) {
        cpu[i]!.push(await postLoop(port, agent, sides[i]![1], COUNT));
        console.log(
          `round ${r + 1}: ${sides[i]![0]} ${round(cpu[i]!.at(-1)!, 1)} µs a POST, load ${round(os.loadavg()[0]!, 1)}`,
        );
      }
    }
    for (const [i, [name]] of sides.entries())
      console.log(
        `${name}: ${round(median(cpu[i]!), 1)} µs CPU a POST [${round(Math.min(...cpu[i]!), 1)}-${round(Math.max(...cpu[i]!), 1)}]`,
      );
  } finally {
    agent.destroy();
    receiver.kill();
  }
}

await main();
