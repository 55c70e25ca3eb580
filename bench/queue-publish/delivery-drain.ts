/** bench/queue-publish.ts, phase 2: sustained delivery of a stored backlog. */
import type { Redis } from 'ioredis';
import { MESSAGE_FIELD } from '../../gateway/queue/core/keys.js';
import { encodeMessage } from '../../gateway/queue/core/message-codec.js';
import { createMessage } from '../../gateway/queue/core/message.js';
import { waitFor } from '../../local/wait.js';
import { cpuSeconds, mainThreadMs } from '../lib/process-usage.js';
import type { CountingReceiver } from '../queue/counting-receiver.js';
import { BACKLOG, BODY } from './publish-settings.js';

/**
 * `count` messages like the bench's backlog to `destination`, added to `stream` directly (a caller
 * that wants only them empties the stream first).
 */
export async function storeBacklog(
  inspect: Redis,
  stream: string,
  destination: string,
  count: number,
): Promise<void> {
  const pipeline = inspect.pipeline();
  for (let i = 0; i < count; i++) {
    const message = createMessage({
      destination,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: Buffer.from(BODY),
      retries: 3,
    });
    pipeline.xadd(stream, '*', MESSAGE_FIELD, encodeMessage(message));
  }
  await pipeline.exec();
}

export interface DrainFigures {
  perSecond: number;
  cpuUs: number;
  /**
   * Shares of the drain's wall time the process's main thread ran, and was ready to run but waited
   * for a CPU (a shared machine's other work). What is left, the loop idle, is its own waits (a
   * read, a timer, a slot): near none, its rate is set by its CPU per delivery (1 / cpuUs).
   */
  mainThread: { ran: number; waitedForCpu: number };
}

/**
 * Drains the stored backlog with a just started process (`pid`): deliveries a second, first to
 * last, its CPU per delivery from the moment it listens (what it delivered before is left out),
 * and where its main thread's time went meanwhile.
 */
export async function drain(receiver: CountingReceiver, pid: number): Promise<DrainFigures> {
  const [cpu, mainThread, startedAt, before] = [
    cpuSeconds(pid),
    mainThreadMs(pid),
    performance.now(),
    receiver.received,
  ];
  await waitFor('the backlog to drain', async () => (receiver.received >= BACKLOG ? true : undefined), {
    timeoutMs: 300_000,
    intervalMs: 20,
  });
  const [after, wallMs] = [mainThreadMs(pid), performance.now() - startedAt];
  return {
    perSecond: ((BACKLOG - 1) / (receiver.lastAt - receiver.firstAt)) * 1_000,
    cpuUs: ((cpuSeconds(pid) - cpu) * 1e6) / (BACKLOG - before),
    mainThread: {
      ran: (after.ran - mainThread.ran) / wallMs,
      waitedForCpu: (after.waited - mainThread.waited) / wallMs,
    },
  };
}
