import type { Client } from '@upstash/qstash';
import { Receiver } from '@upstash/qstash';
import type { Redis } from 'ioredis';
import { startRedis, type RedisServer } from '../../../local/redis-server.js';
import { waitFor } from '../../../local/wait.js';
import type { QueueTarget } from '../../../gateway/queue/core/binding-registry.js';
import { queueKeys } from '../../../gateway/queue/core/keys.js';
import { startTestQueueGateway, type TestQueueGateway } from '../../helpers/queue/queue-gateway.js';
import { testQueueConfig } from '../../helpers/queue/queue-config.js';
import { connectTestRedis, snapshotDatabase } from '../../helpers/queue/redis-snapshot.js';
import { randomSigningKey } from '../../helpers/queue/signing-keys.js';
import { testQueueTarget } from '../../helpers/queue/test-queue-target.js';
import { startTestReceiver, type TestReceiver } from '../../helpers/queue/test-receiver.js';
import { scheduleNightlyReport } from '../../../examples/schedules/nightly-report.js';
import { quietly } from '../../helpers/queue/quietly.js';
import { clearOfMinute } from '../../helpers/clock-boundary.js';
import { queueSdkClient } from '../../helpers/queue/queue-sdk-client.js';

/**
 * Cron schedules (`client.schedules.*`) through the unchanged SDK, with two gateway replicas on
 * one database: each tick fires exactly once. Ticks come each minute; all but one test make a
 * tick come now by moving the schedule's next tick into the past in Redis, as the clock would.
 */
describe('schedules with the @upstash/qstash SDK, two gateway replicas', () => {
  const keys = queueKeys(testQueueConfig().keyPrefix);
  let redis: RedisServer;
  let otherRedis: RedisServer;
  let replicas: TestQueueGateway[];
  let receiver: TestReceiver;
  let target: QueueTarget;
  let otherTarget: QueueTarget;
  let inspect: Redis;

  const client = (token = target.token, replica = 0): Client =>
    queueSdkClient(replicas[replica]!, target, token);

  beforeAll(async () => {
    [redis, otherRedis] = await Promise.all([startRedis(), startRedis()]);
    const signingKey = randomSigningKey();
    // spec.limits.maxSchedules 20 rather than the free plan's 10: the racing test needs 20.
    target = testQueueTarget(redis, {
      namespace: 'tenant-a',
      name: 'cache',
      signingKey,
      limits: { maxSchedules: 20 },
    });
    otherTarget = testQueueTarget(otherRedis, { namespace: 'tenant-b', name: 'cache' });
    receiver = await startTestReceiver({ currentSigningKey: signingKey });
    inspect = connectTestRedis(redis);
    // Each replica has its own consumer name, registry, workers and schedule tickers.
    replicas = await Promise.all(
      [0, 1].map(() => startTestQueueGateway({ config: testQueueConfig(), targets: [target, otherTarget] })),
    );
  });

  afterAll(async () => {
    await Promise.all((replicas ?? []).map((r) => r.stop()));
    await receiver?.close();
    inspect?.disconnect();
    await Promise.all([redis?.stop(), otherRedis?.stop()]);
  });

  beforeEach(async () => {
    for (const schedule of await client().schedules.list())
      await client().schedules.delete(schedule.scheduleId);
    receiver.deliveries.length = 0;
  });

  const deliveriesOf = (scheduleId: string) =>
    receiver.deliveries.filter((d) => d.headers['upstash-schedule-id'] === scheduleId);

  /** Makes the schedule's next tick come now, as the clock reaching it would. */
  const makeTickDue = (scheduleId: string, ago = 1_000) =>
    inspect.zadd(keys.scheduleTicks, 'XX', Date.now() - ago, scheduleId);

  /** Long enough for both replicas' tickers (25 ms) and the deliveries to have run several times. */
  const settle = () => new Promise((resolve) => setTimeout(resolve, 500));

  it('when a schedule is created, then get and list answer it as QStash does, with its next tick on the coming minute', async () => {
    const destination = `${receiver.baseUrl}/reports?kind=daily`;
    const { scheduleId } = await client().schedules.create({
      destination,
      cron: 'CRON_TZ=Europe/Berlin */5 * * * *',
      body: JSON.stringify({ report: 'daily' }),
      headers: { 'X-Report': 'daily' },
      method: 'PUT',
      retries: 2,
      timeout: 1,
    });
    expect(scheduleId).toMatch(/^scd_/);
    const schedule = await client(target.token, 1).schedules.get(scheduleId);
    expect(schedule).toEqual({
      scheduleId,
      cron: 'CRON_TZ=Europe/Berlin */5 * * * *',
      createdAt: expect.any(Number),
      destination,
      method: 'PUT',
      header: { 'content-type': ['application/json'], 'x-report': ['daily'] },
      body: '{"report":"daily"}',
      retries: 2,
      timeout: 1,
      // The creator's address: the SDK talks to the gateway directly, over loopback.
      callerIP: '127.0.0.1',
      callerIp: '127.0.0.1',
      isPaused: false,
      nextScheduleTime: expect.any(Number),
    });
    expect(schedule.nextScheduleTime! % 300_000).toBe(0);
    expect(schedule.nextScheduleTime! - Date.now()).toBeLessThanOrEqual(300_000);
    expect((await client().schedules.list()).map((s) => s.scheduleId)).toEqual([scheduleId]);
  });

  it('when a tick comes, then exactly one signed message is delivered across both replicas, carrying Upstash-Schedule-Id', async () => {
    const destination = `${receiver.baseUrl}/tick`;
    // Created and read well before a minute: the minute coming in between would fire the tick
    // `before` names, and get would already answer the one after it.
    await clearOfMinute(5_000);
    const { scheduleId } = await client().schedules.create({ destination, cron: '* * * * *', body: 'tick' });
    const before = await client().schedules.get(scheduleId);
    // The one test that waits for the real minute: no help from the test.
    const delivery = await waitFor('the first real tick', async () => deliveriesOf(scheduleId)[0], {
      timeoutMs: 65_000,
      intervalMs: 50,
    });
    expect(delivery.at - before.nextScheduleTime!).toBeLessThan(5_000);
    expect(delivery.body.toString()).toBe('tick');
    await expect(
      new Receiver({ currentSigningKey: target.signingKey, nextSigningKey: randomSigningKey() }).verify({
        signature: String(delivery.headers['upstash-signature']),
        body: 'tick',
        url: destination,
      }),
    ).resolves.toBe(true);
    await settle();
    expect(deliveriesOf(scheduleId)).toHaveLength(1);
    const after = await client().schedules.get(scheduleId);
    expect(after.lastScheduleTime).toBe(before.nextScheduleTime);
    expect(after.nextScheduleTime).toBe(before.nextScheduleTime! + 60_000);
  }, 80_000);

  it("when a schedule has labels and its tick was delivered, then get answers the SDK's labels and lastScheduleStates (the tick's message delivered)", async () => {
    const { scheduleId } = await client().schedules.create({
      destination: `${receiver.baseUrl}/labelled`,
      cron: '0 0 1 1 *',
      body: 'labelled',
      label: ['nightly', 'billing'],
    });
    expect(await client().schedules.get(scheduleId)).toMatchObject({
      label: 'nightly',
      labels: ['nightly', 'billing'],
    });
    expect(await client().schedules.get(scheduleId)).not.toHaveProperty('lastScheduleStates');
    await makeTickDue(scheduleId);
    const delivery = await waitFor('the tick delivered', async () => deliveriesOf(scheduleId)[0], {
      timeoutMs: 15_000,
      intervalMs: 20,
    });
    const messageId = String(delivery.headers['upstash-message-id']);
    const schedule = await waitFor(
      'the DELIVERED event',
      async () => {
        const answer = await client(target.token, 1).schedules.get(scheduleId);
        return answer.lastScheduleStates?.[messageId] === 'SUCCESS' ? answer : undefined;
      },
      { timeoutMs: 10_000 },
    );
    expect(schedule.lastScheduleStates).toEqual({ [messageId]: 'SUCCESS' });
    expect((await client().schedules.list())[0]).toMatchObject({
      scheduleId,
      labels: ['nightly', 'billing'],
    });
  });

  it('when both replicas race to create schedules past the binding quota, then exactly the quota is created (412 for the rest), and each tick of each fires exactly once', async () => {
    const created = await Promise.allSettled(
      Array.from({ length: 23 }, (_, i) =>
        quietly(() =>
          client(target.token, i % 2).schedules.create({
            destination: `${receiver.baseUrl}/many/${i}`,
            cron: '0 0 1 1 *',
          }),
        ),
      ),
    );
    const ids = created.flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value] : []));
    expect(ids).toHaveLength(20);
    for (const outcome of created.filter((o) => o.status === 'rejected'))
      expect((outcome as PromiseRejectedResult).reason).toMatchObject({
        status: 412,
        message: expect.stringMatching(
          /schedule limit reached: the binding has its most active schedules \(20, QueueBinding spec.limits.maxSchedules\)/,
        ),
      });
    expect(await inspect.hlen(keys.schedules)).toBe(20);
    // At the quota, an existing schedule is still replaced in place by its id.
    await client().schedules.create({
      destination: `${receiver.baseUrl}/many/replaced`,
      cron: '0 0 1 1 *',
      scheduleId: ids[0]!.scheduleId,
    });
    expect(await inspect.hlen(keys.schedules)).toBe(20);
    // Ticks are counted by message id: delivery is at least once, and a delivery whose answer a
    // starved gateway saw only after its timeout is delivered again under the same id (Upstash-Retried).
    const ticksFiredOf = (scheduleId: string) =>
      new Set(deliveriesOf(scheduleId).map((d) => d.headers['upstash-message-id'])).size;
    for (let round = 0; round < 5; round += 1) {
      await Promise.all(ids.map(({ scheduleId }) => makeTickDue(scheduleId)));
      // Every schedule's tick has fired before the next round makes it due again: made due while
      // still claimed, it would fire once for both rounds.
      await waitFor(
        `round ${round} of ticks`,
        async () => ids.every(({ scheduleId }) => ticksFiredOf(scheduleId) > round) || undefined,
        { timeoutMs: 10_000, intervalMs: 20 },
      );
    }
    await settle();
    for (const { scheduleId } of ids) expect(ticksFiredOf(scheduleId)).toBe(5);
    expect(new Set(receiver.deliveries.map((d) => d.headers['upstash-message-id'])).size).toBe(100);
  });

  it('when schedules are paused, then they do not count toward the quota; resuming one past it is a 412 naming the quota, and updating it keeps it paused', async () => {
    const create = (i: number | string, scheduleId?: string) =>
      client(target.token, Number(i) % 2 || 0).schedules.create({
        destination: `${receiver.baseUrl}/active/${i}`,
        cron: '0 0 1 1 *',
        ...(scheduleId === undefined ? {} : { scheduleId }),
      });
    const ids: string[] = [];
    for (let i = 0; i < 20; i += 1) ids.push((await create(i)).scheduleId);
    await client().schedules.pause({ schedule: ids[0]! });
    // Paused, the first no longer counts: one more fits, and then the quota is reached again.
    const extra = await create('extra');
    await expect(quietly(() => create('over'))).rejects.toMatchObject({ status: 412 });
    await expect(
      quietly(() => client(target.token, 1).schedules.resume({ schedule: ids[0]! })),
    ).rejects.toMatchObject({
      status: 412,
      message: expect.stringContaining(
        'schedule limit reached: the binding has its most active schedules (20, QueueBinding spec.limits.maxSchedules); pause or delete one first',
      ),
    });
    expect((await client().schedules.get(ids[0]!)).isPaused).toBe(true);
    // Updated by its id, the paused schedule takes the new settings and stays paused.
    await create('updated', ids[0]);
    const updated = await client().schedules.get(ids[0]!);
    expect(updated).toMatchObject({ destination: `${receiver.baseUrl}/active/updated`, isPaused: true });
    expect(updated.nextScheduleTime).toBeUndefined();
    expect(await inspect.zcard(keys.scheduleTicks)).toBe(20);
    // Deleting an active one makes room to resume it.
    await client().schedules.delete(extra.scheduleId);
    await client(target.token, 1).schedules.resume({ schedule: ids[0]! });
    expect((await client().schedules.get(ids[0]!)).isPaused).toBe(false);
    expect(await inspect.zcard(keys.scheduleTicks)).toBe(20);
    expect(await inspect.hlen(keys.schedules)).toBe(20);
  });

  it('when ticks were missed while no gateway ran, then the schedule fires once on restart and ticks on from now', async () => {
    // The test takes about a second; 15 s leaves a loaded machine room.
    await clearOfMinute(15_000);
    const { scheduleId } = await client().schedules.create({
      destination: `${receiver.baseUrl}/missed`,
      cron: '* * * * *',
    });
    await Promise.all(replicas.map((r) => r.stopWorkers()));
    await makeTickDue(scheduleId, 10 * 60_000);
    for (const replica of replicas) replica.startWorkers();
    await waitFor('the catch-up tick', async () => deliveriesOf(scheduleId)[0], { timeoutMs: 10_000 });
    await settle();
    expect(deliveriesOf(scheduleId)).toHaveLength(1);
    expect((await client().schedules.get(scheduleId)).nextScheduleTime).toBeGreaterThan(Date.now());
  });

  it('when a schedule is paused (PATCH, as the SDK sends) it does not tick; resumed (POST, as the docs say) it ticks again', async () => {
    // A real minute coming between the create and the pause would fire a right tick.
    await clearOfMinute(5_000);
    const { scheduleId } = await client().schedules.create({
      destination: `${receiver.baseUrl}/paused`,
      cron: '* * * * *',
    });
    await client().schedules.pause({ schedule: scheduleId });
    const paused = await client().schedules.get(scheduleId);
    expect(paused.isPaused).toBe(true);
    expect(paused.nextScheduleTime).toBeUndefined();
    expect(await inspect.zscore(keys.scheduleTicks, scheduleId)).toBeNull();
    await settle();
    expect(deliveriesOf(scheduleId)).toHaveLength(0);

    const resumed = await fetch(`${replicas[1]!.queueUrl(target)}/v2/schedules/${scheduleId}/resume`, {
      method: 'POST',
      headers: { authorization: `Bearer ${target.token}` },
    });
    expect(resumed.status).toBe(200);
    expect((await client().schedules.get(scheduleId)).isPaused).toBe(false);
    await makeTickDue(scheduleId);
    await waitFor('a tick after resume', async () => deliveriesOf(scheduleId)[0], { timeoutMs: 10_000 });
    await client().schedules.resume({ schedule: scheduleId });
    await expect(quietly(() => client().schedules.pause({ schedule: 'scd_missing' }))).rejects.toThrow(
      /not found/,
    );
  });

  it('when a schedule is created again with its Upstash-Schedule-Id, then it is replaced in place; deleted, it is gone', async () => {
    await client().schedules.create({
      destination: `${receiver.baseUrl}/v1`,
      cron: '0 * * * *',
      scheduleId: 'nightly',
    });
    const first = await client().schedules.get('nightly');
    await client().schedules.create({
      destination: `${receiver.baseUrl}/v2`,
      cron: '30 2 * * *',
      scheduleId: 'nightly',
      body: 'second',
    });
    const second = await client().schedules.get('nightly');
    expect(second).toMatchObject({
      cron: '30 2 * * *',
      destination: `${receiver.baseUrl}/v2`,
      body: 'second',
    });
    expect(second.createdAt).toBe(first.createdAt);
    expect(await client().schedules.list()).toHaveLength(1);
    await makeTickDue('nightly');
    const delivery = await waitFor('the replaced schedule to tick', async () => deliveriesOf('nightly')[0], {
      timeoutMs: 10_000,
    });
    expect(delivery.url).toBe(`${receiver.baseUrl}/v2`);

    await client().schedules.delete('nightly');
    await expect(quietly(() => client().schedules.get('nightly'))).rejects.toThrow(/not found/);
    await expect(quietly(() => client().schedules.delete('nightly'))).rejects.toThrow(/not found/);
    expect(await inspect.exists(keys.schedules, keys.scheduleMessages, keys.scheduleTicks)).toBe(0);
  });

  it('when a schedule targets a URL group, then each tick fans out to its endpoints with both headers', async () => {
    await client().urlGroups.addEndpoints({
      name: 'nightly-jobs',
      endpoints: [{ url: `${receiver.baseUrl}/jobs/a` }, { url: `${receiver.baseUrl}/jobs/b` }],
    });
    const { scheduleId } = await client().schedules.create({
      destination: 'nightly-jobs',
      cron: '0 3 * * *',
      delay: '2s',
    });
    expect((await client().schedules.get(scheduleId)).delay).toBe(2);
    await makeTickDue(scheduleId);
    // Upstash-Delay holds each tick's messages back, findable by schedule and group meanwhile.
    const waiting = await waitFor(
      'the delayed tick messages',
      async () => {
        const ids = await inspect.hkeys(keys.scheduledMessages);
        return ids.length === 2 ? ids : undefined;
      },
      { timeoutMs: 10_000 },
    );
    const pending = await client().messages.get(waiting[0]!);
    expect(pending).toMatchObject({ scheduleId, urlGroup: 'nightly-jobs', topicName: 'nightly-jobs' });
    expect(pending.notBefore! - Date.now()).toBeGreaterThan(500);
    expect(deliveriesOf(scheduleId)).toHaveLength(0);
    await waitFor('both endpoints', async () => (deliveriesOf(scheduleId).length === 2 ? true : undefined), {
      timeoutMs: 10_000,
    });
    expect(
      deliveriesOf(scheduleId)
        .map((d) => d.url)
        .sort(),
    ).toEqual([`${receiver.baseUrl}/jobs/a`, `${receiver.baseUrl}/jobs/b`]);
    expect(deliveriesOf(scheduleId).every((d) => d.headers['upstash-topic-name'] === 'nightly-jobs')).toBe(
      true,
    );
    await client().urlGroups.delete('nightly-jobs');
  });

  it('when the cron, its time zone, the id, the destination or a header is bad, then it is a 400 naming it and nothing is stored', async () => {
    const snapshot = await snapshotDatabase(inspect);
    const create = (destination: string, headers: Record<string, string>) =>
      fetch(`${replicas[0]!.queueUrl(target)}/v2/schedules/${destination}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${target.token}`, ...headers },
        body: 'x',
      });
    const url = `${receiver.baseUrl}/bad`;
    const cases: [Promise<Response>, number, RegExp][] = [
      [create(url, {}), 400, /Upstash-Cron is missing/],
      [create(url, { 'Upstash-Cron': '* * * *' }), 400, /Upstash-Cron "\* \* \* \*" must have five fields/],
      [create(url, { 'Upstash-Cron': '*/10 * * * * *' }), 400, /five fields/],
      [create(url, { 'Upstash-Cron': '99 * * * *' }), 400, /Upstash-Cron "99 \* \* \* \*": Constraint error/],
      [
        create(url, { 'Upstash-Cron': 'CRON_TZ=Nowhere/City 0 * * * *' }),
        400,
        /CRON_TZ=Nowhere\/City is not a known time zone/,
      ],
      [
        create(url, { 'Upstash-Cron': '* * * * *', 'Upstash-Schedule-Id': 'has space' }),
        400,
        /Upstash-Schedule-Id "has space"/,
      ],
      [create(url, { 'Upstash-Cron': '* * * * *', 'Upstash-Retries': 'many' }), 400, /Upstash-Retries/],
      [
        create(url, { 'Upstash-Cron': '* * * * *', 'Upstash-Queue-Name': 'a/b' }),
        400,
        /Upstash-Queue-Name "a\/b" may contain only/,
      ],
      [
        create(url, { 'Upstash-Cron': '* * * * *', 'Upstash-Queue-Name': 'q', 'Upstash-Delay': '8d' }),
        400,
        /Upstash-Delay 8d is longer than the queue's maximum delay of 7d/,
      ],
      [create('http://169.254.169.254/latest', { 'Upstash-Cron': '* * * * *' }), 400, /linkLocal/],
      [create('ftp://files.example/x', { 'Upstash-Cron': '* * * * *' }), 400, /only http and https/],
      [create('no-such-group', { 'Upstash-Cron': '* * * * *' }), 404, /url group no-such-group not found/],
      [
        fetch(`${replicas[0]!.queueUrl(target)}/v2/schedules/scd_x`, {
          method: 'PUT',
          headers: { authorization: `Bearer ${target.token}` },
        }),
        405,
        /method not allowed: this route takes GET, DELETE, POST/,
      ],
    ];
    for (const [response, status, error] of cases) {
      const answered = await response;
      expect({
        status: answered.status,
        error: ((await answered.json()) as { error: string }).error,
      }).toEqual({
        status,
        error: expect.stringMatching(error),
      });
    }
    expect(await snapshotDatabase(inspect)).toEqual(snapshot);
  });

  it("when another tenant's token is used, then the schedule API answers 401; its own binding shows none of these", async () => {
    const { scheduleId } = await client().schedules.create({
      destination: `${receiver.baseUrl}/mine`,
      cron: '0 0 * * *',
    });
    await expect(quietly(() => client(otherTarget.token).schedules.get(scheduleId))).rejects.toThrow(
      /invalid token/,
    );
    await expect(quietly(() => client(otherTarget.token).schedules.delete(scheduleId))).rejects.toThrow(
      /invalid token/,
    );
    const other = queueSdkClient(replicas[0]!, otherTarget);
    expect(await other.schedules.list()).toEqual([]);
    await expect(quietly(() => other.schedules.get(scheduleId))).rejects.toThrow(/not found/);
    expect((await client().schedules.get(scheduleId)).scheduleId).toBe(scheduleId);
  });

  it('when the schedule example runs twice, then there is one schedule to its group, and a tick reaches both endpoints', async () => {
    const endpoints = {
      billing: `${receiver.baseUrl}/billing/report`,
      archive: `${receiver.baseUrl}/archive/report`,
    };
    expect(await scheduleNightlyReport(client(), endpoints)).toBe('nightly-report');
    expect(await scheduleNightlyReport(client(), endpoints)).toBe('nightly-report');
    const [schedule] = await client().schedules.list();
    expect(schedule).toMatchObject({
      scheduleId: 'nightly-report',
      cron: 'CRON_TZ=Europe/Berlin 30 2 * * *',
    });
    await makeTickDue('nightly-report');
    await waitFor(
      'the report at both endpoints',
      async () => (deliveriesOf('nightly-report').length === 2 ? true : undefined),
      {
        timeoutMs: 10_000,
      },
    );
    await client().urlGroups.delete('nightly-report');
  });
});
