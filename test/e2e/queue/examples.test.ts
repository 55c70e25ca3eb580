import { spawn, type ChildProcess } from 'node:child_process';
import net, { type AddressInfo } from 'node:net';
import path from 'node:path';
import { startRedis, type RedisServer } from '../../../local/redis-server.js';
import { waitFor } from '../../../local/wait.js';
import type { QueueTarget } from '../../../gateway/queue/core/binding-registry.js';
import { startTestQueueGateway, type TestQueueGateway } from '../../helpers/queue/queue-gateway.js';
import { testQueueConfig } from '../../helpers/queue/queue-config.js';
import { randomSigningKey } from '../../helpers/queue/signing-keys.js';
import { testQueueTarget } from '../../helpers/queue/test-queue-target.js';
import { buildQStashFormatToken, workflowUserIdOf } from '../../../api/qstash-token.js';

const ROOT = path.resolve(import.meta.dirname, '../../..');

/** A script of examples/ run as a user runs it (tsx), its output kept line by line. */
interface ExampleRun {
  child: ChildProcess;
  lines: string[];
  exited: Promise<number | null>;
}

function runExample(script: string, env: Record<string, string>): ExampleRun {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, script)], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  let rest = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    const text = rest + chunk.toString('utf8');
    const parts = text.split('\n');
    rest = parts.pop() ?? '';
    lines.push(...parts.filter((line) => line !== ''));
  });
  child.stderr!.on('data', (chunk: Buffer) => lines.push(`stderr: ${chunk.toString('utf8')}`));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, lines, exited };
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * The four programs under examples/ run as their comments tell a user to run them, against a
 * gateway and its Redis: the receiver verifies what the queue example enqueues, the schedule
 * example creates its schedule, and the workflow example serves and runs a workflow. The e2e suites test the examples' functions; this tests the
 * programs around them (their environment, their output).
 */
describe('the programs under examples/', () => {
  let redis: RedisServer;
  let gateway: TestQueueGateway;
  let target: QueueTarget;
  let receiver: ExampleRun | undefined;

  beforeAll(async () => {
    redis = await startRedis();
    target = testQueueTarget(redis);
    gateway = await startTestQueueGateway({ config: testQueueConfig(), targets: [target] });
    gateway.startWorkers();
  });

  afterAll(async () => {
    receiver?.child.kill('SIGKILL');
    await gateway?.stop();
    await redis?.stop();
  });

  const clientEnv = (receiverUrl: string) => ({
    VQUEUE_URL: gateway.queueUrl(target),
    VQUEUE_TOKEN: target.token,
    RECEIVER: receiverUrl,
  });

  it('when the receiver runs and the queue example enqueues order events, then the receiver verifies each delivery and the example prints its message ids and queues', async () => {
    const port = await freePort();
    receiver = runExample('examples/receiver/main.ts', {
      VQUEUE_CURRENT_SIGNING_KEY: target.signingKey,
      VQUEUE_NEXT_SIGNING_KEY: randomSigningKey(),
      PORT: String(port),
    });
    const listening = async () =>
      receiver!.lines.some((l) => l.includes('receiver listening')) ? true : undefined;
    await waitFor('the example receiver to listen', listening, { timeoutMs: 30_000, abort: receiver.exited });

    const queues = runExample('examples/queues/main.ts', clientEnv(`http://127.0.0.1:${port}`));
    expect(await queues.exited).toBe(0);
    const printed = JSON.parse(queues.lines.at(-1)!) as {
      messageIds: string[];
      queues: { name: string; parallelism: number }[];
    };
    expect(printed.messageIds).toHaveLength(3);
    expect(printed.queues.map((q) => [q.name, q.parallelism])).toEqual([
      ['invoices', 2],
      ['order-events', 1],
    ]);

    const verified = () =>
      receiver!.lines
        .filter((line) => line.includes('delivery verified'))
        .map((line) => JSON.parse(line) as { url: string; messageId: string; body: string });
    const allVerified = async () => (verified().length === 4 ? true : undefined);
    await waitFor('four verified deliveries at the example receiver', allVerified, {
      timeoutMs: 30_000,
      abort: receiver.exited,
    });
    const fulfilment = verified().filter((d) => d.url.endsWith('/fulfilment'));
    expect(fulfilment.map((d) => d.messageId)).toEqual(printed.messageIds);
    expect(fulfilment.map((d) => (JSON.parse(d.body) as { status: string }).status)).toEqual([
      'created',
      'paid',
      'shipped',
    ]);

    receiver.child.kill('SIGTERM');
    expect(await receiver.exited).toBe(0);
    // Two example processes started through tsx, and waits of 30 s each.
  }, 120_000);

  it('when the schedule example runs, then it prints the schedule it created with its next tick', async () => {
    // Its next tick comes after the example started; not necessarily after it exited, should the
    // schedule's time (02:30 in Berlin) come in between.
    const startedAt = Date.now();
    const schedules = runExample('examples/schedules/main.ts', clientEnv('http://127.0.0.1:9'));
    expect(await schedules.exited).toBe(0);
    const printed = JSON.parse(schedules.lines.at(-1)!) as {
      scheduleId: string;
      cron: string;
      nextScheduleTime: number;
    };
    expect(printed.scheduleId).toMatch(/\S/);
    expect(printed.cron).toMatch(/\S/);
    expect(printed.nextScheduleTime).toBeGreaterThan(startedAt);
    expect(printed.nextScheduleTime % 60_000).toBe(0);
  });

  it('when the workflow example runs, then its run of the order workflow ends RUN_SUCCESS with the fulfilment as its result, every step in its logs, and it exits 0', async () => {
    const workflow = runExample('examples/workflow/main.ts', {
      VQUEUE_URL: gateway.queueUrl(target),
      // As the operator writes it into the env Secret.
      VQUEUE_QSTASH_TOKEN: buildQStashFormatToken(workflowUserIdOf(target), target.token),
      VQUEUE_CURRENT_SIGNING_KEY: target.signingKey,
      VQUEUE_NEXT_SIGNING_KEY: target.nextSigningKey,
      PORT: String(await freePort()),
    });
    expect(await workflow.exited).toBe(0);
    const printed = JSON.parse(workflow.lines.at(-1)!) as {
      workflowRunId: string;
      state: string;
      result: unknown;
      steps: string[];
    };
    expect(printed.workflowRunId).toMatch(/^wfr_/);
    expect(printed.state).toBe('RUN_SUCCESS');
    expect(printed.result).toEqual({
      orderId: 'o-1',
      chargeId: 'ch_o-1_4250',
      reserved: ['book:reserved', 'pen:reserved'],
      emailed: true,
      trackingNumber: 'trk_o-1',
    });
    expect(printed.steps).toEqual(
      expect.arrayContaining(['charge', 'reserve-stock', 'email-receipt', 'wait-for-pickup', 'ship']),
    );
  }, 60_000);

  it('when an example runs without VQUEUE_URL and VQUEUE_TOKEN, then it says which variables to set and exits 1', async () => {
    const run = runExample('examples/queues/main.ts', {});
    expect(await run.exited).toBe(1);
    expect(run.lines.join('\n')).toMatch(/set VQUEUE_URL and VQUEUE_TOKEN/);
  });
});
