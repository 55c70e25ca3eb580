import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@upstash/workflow';
import type { Redis } from 'ioredis';
import { startRedis, type RedisServer } from '../../../local/redis-server.js';
import { waitFor } from '../../../local/wait.js';
import type { QueueTarget } from '../../../gateway/queue/core/binding-registry.js';
import { queueKeys } from '../../../gateway/queue/core/keys.js';
import { WorkflowRunStore } from '../../../gateway/queue/stores/workflow-run-store.js';
import type { TestQueueGateway } from '../../helpers/queue/queue-gateway.js';
import { testQueueConfig } from '../../helpers/queue/queue-config.js';
import { connectTestRedis } from '../../helpers/queue/redis-snapshot.js';
import { randomSigningKey } from '../../helpers/queue/signing-keys.js';
import { testQueueTarget } from '../../helpers/queue/test-queue-target.js';
import type { TestReceiver } from '../../helpers/queue/test-receiver.js';
import { startRestartSuiteProcesses, stopRestartSuite } from '../../helpers/queue/restart-suite.js';
import { queueSdkClient } from '../../helpers/queue/queue-sdk-client.js';
import {
  startWorkflowEndpoints,
  type RouteFunction,
  type WorkflowEndpoints,
} from '../../helpers/queue/workflow-endpoints.js';
import { recordedSteps } from '../../helpers/queue/workflow-steps.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The binding's redis-server restarted (stopped gracefully or killed as a crash, then started
 * again on the same append-only data) while two gateway replicas hold a queue's slot or a
 * flow-control key's token, while a schedule's tick is due, and while workflow runs of the
 * unchanged @upstash/workflow SDK are mid-way: no message lost, none started out of order, no
 * slot or token left held, the tick fired exactly once, every run finished with all its steps.
 */
describe('a real redis-server restart under queues, schedules and workflow runs', () => {
  const config = testQueueConfig();
  const keys = queueKeys(config.keyPrefix);
  const password = 'restart-test-password';
  let dataDir: string;
  let redis: RedisServer;
  let replicas: TestQueueGateway[];
  let receiver: TestReceiver;
  let target: QueueTarget;
  let signingKey: string;
  let endpoints: WorkflowEndpoints;

  const client = () => queueSdkClient(replicas[0]!, target);

  /** How often each workflow step body ran: `${runId}/${step}`. */
  const executions = new Map<string, number>();
  let releaseHeld: () => void = () => undefined;
  /**
   * A workflow of one step, a parallel group of two, a sleep of `nap` seconds, then two steps.
   * With `hold`, step three's first execution waits for the test: its delivery is in flight, and
   * its result not yet published, while Redis is away.
   */
  const restartedRun: RouteFunction = async (context) => {
    const { nap, hold } = context.requestPayload as { nap: number; hold: boolean };
    const step = <T>(name: string, result: () => T) =>
      context.run(name, async () => {
        const key = `${context.workflowRunId}/${name}`;
        executions.set(key, (executions.get(key) ?? 0) + 1);
        if (hold && name === 'three' && executions.get(key) === 1)
          await new Promise<void>((resolve) => (releaseHeld = resolve));
        return result();
      });
    const one = await step('one', () => 1);
    const [twoA, twoB] = await Promise.all([step('two-a', () => one + 1), step('two-b', () => one + 2)]);
    await context.sleep('nap', nap);
    const three = await step('three', () => twoA + twoB);
    const four = await step('four', () => three * 2);
    return { four };
  };

  /**
   * Stops Redis, gracefully (SIGTERM) or as a crash (SIGKILL), and starts it again on the same
   * data. It fsyncs its append-only file before each reply (`appendfsync always`), so a crash
   * keeps everything it acknowledged (docs/queue.md, Guarantees). It comes back on the same port,
   * as a restarted pod behind its Service: the replicas' workers reconnect rather than being
   * replaced. (On a new port, the replaced workers' stop waited ~30 s: ioredis keeps commands sent to
   * a client disconnected while reconnecting until their 10 s timeout.)
   */
  async function restartRedis(
    how: 'stop' | 'kill' = 'stop',
    whileDown: () => void = () => undefined,
  ): Promise<void> {
    await (how === 'kill' ? redis.kill() : redis.stop());
    whileDown();
    redis = await startRedis({ dataDir, password, appendfsync: 'always', port: redis.port });
    target = testQueueTarget(redis, { signingKey });
    for (const replica of replicas) replica.registry.set(target);
  }

  async function inspect<T>(read: (redis: Redis) => Promise<T>): Promise<T> {
    const connection = connectTestRedis(redis);
    try {
      return await read(connection);
    } finally {
      connection.disconnect();
    }
  }

  beforeAll(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'settee-restart-test-'));
    redis = await startRedis({ dataDir, password, appendfsync: 'always' });
    signingKey = randomSigningKey();
    target = testQueueTarget(redis, { signingKey });
    ({ receiver, replicas } = await startRestartSuiteProcesses(target, signingKey, [
      'restart-a',
      'restart-b',
    ]));
    endpoints = await startWorkflowEndpoints({
      target,
      queueUrl: replicas[1]!.queueUrl(target),
      workflows: { restarted: { route: restartedRun } },
    });
  });

  afterAll(async () => {
    await endpoints?.close();
    await stopRestartSuite({ replicas, receiver, redis, dataDir });
  });

  /** What holds the one place a parallelism of 1 allows: a queue's slot, or a flow-control key's token. */
  interface SerialHolder {
    what: string;
    send(body: string): Promise<unknown>;
    /** Places held plus messages waiting. */
    outstanding(redis: Redis): Promise<number>;
  }
  const holders: SerialHolder[] = [
    {
      // enqueue creates the queue with parallelism 1.
      what: "a queue message holds the queue's slot",
      send: (body) =>
        client()
          .queue({ queueName: 'survivor' })
          .enqueue({ url: `${receiver.baseUrl}/restart`, body }),
      outstanding: async (r) =>
        (await r.scard(keys.queueActive('survivor'))) + (await r.llen(keys.queueWaiting('survivor'))),
    },
    {
      what: "a flow-control message holds its key's token",
      send: (body) =>
        client().publish({
          url: `${receiver.baseUrl}/restart`,
          body,
          flowControl: { key: 'survivor', parallelism: 1 },
        }),
      outstanding: async (r) =>
        (await r.scard(keys.flowControlActive('survivor'))) +
        (await r.llen(keys.flowControlWaiting('survivor'))),
    },
  ];

  const outages = holders.flatMap((holder) => (['stop', 'kill'] as const).map((how) => ({ ...holder, how })));
  it.each(outages)(
    'when Redis is restarted ($how) while $what, then every message is delivered, none before the one ahead of it, and nothing stays held',
    async ({ send, outstanding, how }) => {
      receiver.deliveries.length = 0;
      let releaseHead: () => void = () => undefined;
      const headHeld = new Promise<void>((resolve) => (releaseHead = resolve));
      receiver.respond = async (delivery) => {
        if (delivery.body.toString() === 'head') await headHeld;
        return 200;
      };
      for (const body of ['head', 'second', 'third']) await send(body);
      await waitFor('the head being delivered', async () => receiver.deliveries.length === 1 || undefined, {
        timeoutMs: 10_000,
      });

      await restartRedis(how);
      releaseHead();

      await waitFor(
        'every message delivered after the restart',
        async () => {
          const bodies = new Set(receiver.deliveries.map((d) => d.body.toString()));
          return bodies.has('second') && bodies.has('third') ? true : undefined;
        },
        { timeoutMs: 30_000, intervalMs: 50 },
      );
      const order = receiver.deliveries.map((d) => d.body.toString());
      // The head may be sent again (its outcome was not recorded while Redis was away): at least once.
      expect(order.indexOf('second')).toBeGreaterThan(order.lastIndexOf('head'));
      expect(order.indexOf('third')).toBeGreaterThan(order.indexOf('second'));
      await waitFor(
        'nothing held and nothing waiting',
        async () => (await inspect(outstanding)) === 0 || undefined,
        { timeoutMs: 10_000 },
      );
    },
    60_000,
  );

  it('when Redis restarts just as a schedule tick comes due, then that tick is delivered exactly once', async () => {
    receiver.deliveries.length = 0;
    receiver.respond = () => 200;
    const { scheduleId } = await client().schedules.create({
      destination: `${receiver.baseUrl}/tick`,
      cron: '0 0 1 1 *',
      body: 'tick',
    });
    const due = Date.now() - 1_000;
    await inspect((r) => r.zadd(keys.scheduleTicks, 'XX', due, scheduleId));
    await restartRedis();
    // Both replicas reconnect to the restarted server first.
    await waitFor('the tick delivered', async () => receiver.deliveries.length >= 1 || undefined, {
      timeoutMs: 30_000,
    });
    // Long enough for both replicas' tickers (25 ms) to have seen the tick many times.
    await sleep(1_000);
    expect(receiver.deliveries.filter((d) => d.headers['upstash-schedule-id'] === scheduleId)).toHaveLength(
      1,
    );
    expect(await inspect((r) => r.hget(keys.scheduleLastTicks, scheduleId))).toBe(String(due));
  }, 60_000);

  it.each(['stop', 'kill'] as const)(
    'when Redis is restarted (%s) while one workflow run is inside a step and another sleeps, then both finish with every step result, and only the step in flight may run twice',
    async (how) => {
      const url = endpoints.expressUrl('restarted');
      const workflowClient = new Client({ baseUrl: replicas[0]!.queueUrl(target), token: target.token });
      const { workflowRunId: held } = await workflowClient.trigger({ url, body: { nap: 1, hold: true } });
      const { workflowRunId: asleep } = await workflowClient.trigger({ url, body: { nap: 6, hold: false } });
      const runs = (r: Redis) => new WorkflowRunStore(r, keys);
      await waitFor(
        'one run inside step three, the other asleep',
        async () => {
          if (executions.get(`${held}/three`) !== 1) return undefined;
          const steps = await inspect((r) => recordedSteps(runs(r), asleep));
          return steps.some((step) => step.stepName === 'nap') || undefined;
        },
        { timeoutMs: 30_000, intervalMs: 20 },
      );
      expect(executions.get(`${asleep}/three`)).toBeUndefined();

      // Step three's result reaches the gateway while Redis is away (or as it comes back).
      await restartRedis(how, () => releaseHeld());

      for (const runId of [held, asleep]) {
        const run = await waitFor(
          `workflow run ${runId} finished`,
          async () => {
            const record = await inspect((r) => runs(r).get(runId));
            return record?.state === 'RUN_STARTED' ? undefined : record;
          },
          { timeoutMs: 30_000, intervalMs: 50 },
        );
        expect(run?.state).toBe('RUN_SUCCESS');
        expect(JSON.parse(run!.response!)).toEqual({ four: 10 });
        const recorded = await inspect((r) => recordedSteps(runs(r), runId));
        // Each step's result once: a step published again (its delivery repeated) is not kept twice.
        expect(recorded.map((step) => [step.stepName, step.out]).sort()).toEqual([
          ['four', '10'],
          ['nap', undefined],
          ['one', '1'],
          ['three', '5'],
          ['two-a', '2'],
          ['two-b', '3'],
        ]);
        // At least once: a step body runs again only when its delivery was in flight while
        // Redis was away (its result or its acknowledgement could not be recorded): the held
        // run's step three, once more at most. Every other step ran exactly once.
        const { three, ...others } = Object.fromEntries(
          ['one', 'two-a', 'two-b', 'three', 'four'].map((name) => [
            name,
            executions.get(`${runId}/${name}`),
          ]),
        );
        expect(others).toEqual({ one: 1, 'two-a': 1, 'two-b': 1, four: 1 });
        expect(runId === held ? [1, 2] : [1]).toContain(three);
      }
    },
    60_000,
  );
});
