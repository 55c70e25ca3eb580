import { Receiver } from '@upstash/qstash';
import { queueKeys } from '../../../gateway/queue/core/keys.js';
import { waitFor } from '../../../local/wait.js';
import { randomSigningKey } from '../../helpers/queue/signing-keys.js';
import { scheduleNightlyReport } from '../../../examples/schedules/nightly-report.js';
import { quietly } from '../../helpers/queue/quietly.js';
import { clearOfMinute } from '../../helpers/clock-boundary.js';
import { useScheduleTicks } from '../../helpers/queue/schedule-ticks.js';
import { useSdkQueueSuite } from '../../helpers/queue/sdk-queue-suite.js';

/**
 * Cron schedules (`client.schedules.*`) through the unchanged SDK, with two gateway replicas on
 * one database: each tick fires exactly once. Ticks come each minute; all but one test make a
 * tick come now by moving the schedule's next tick into the past in Redis, as the clock would.
 * The quota and the API's refusals: sdk-schedule-limits.test.ts.
 */
describe('schedules with the @upstash/qstash SDK, two gateway replicas', () => {
  const suite = useSdkQueueSuite();
  const { deliveriesOf, ticksOf, makeTickDue, settle } = useScheduleTicks(suite);
  const keys = queueKeys(suite.config.keyPrefix);

  it('when a schedule is created, then get and list answer it as QStash does, with its next tick on the coming minute', async () => {
    const destination = `${suite.receiver.baseUrl}/reports?kind=daily`;
    const { scheduleId } = await suite.client().schedules.create({
      destination,
      cron: 'CRON_TZ=Europe/Berlin */5 * * * *',
      body: JSON.stringify({ report: 'daily' }),
      headers: { 'X-Report': 'daily' },
      method: 'PUT',
      retries: 2,
      timeout: 1,
    });
    expect(scheduleId).toMatch(/^scd_/);
    const schedule = await suite.client(1).schedules.get(scheduleId);
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
    expect((await suite.client().schedules.list()).map((s) => s.scheduleId)).toEqual([scheduleId]);
  });

  it('when a tick comes, then exactly one signed message is delivered across both replicas, carrying Upstash-Schedule-Id', async () => {
    const destination = `${suite.receiver.baseUrl}/tick`;
    // Created and read well before a minute: the minute coming in between would fire the tick
    // `before` names, and get would already answer the one after it.
    await clearOfMinute(5_000);
    const { scheduleId } = await suite
      .client()
      .schedules.create({ destination, cron: '* * * * *', body: 'tick' });
    const before = await suite.client().schedules.get(scheduleId);
    // The one test that waits for the real minute: no help from the test.
    const delivery = await waitFor('the first real tick', async () => deliveriesOf(scheduleId)[0], {
      timeoutMs: 65_000,
      intervalMs: 50,
    });
    expect(delivery.at - before.nextScheduleTime!).toBeLessThan(5_000);
    expect(delivery.body.toString()).toBe('tick');
    await expect(
      new Receiver({ currentSigningKey: suite.target.signingKey, nextSigningKey: randomSigningKey() }).verify(
        {
          signature: String(delivery.headers['upstash-signature']),
          body: 'tick',
          url: destination,
        },
      ),
    ).resolves.toBe(true);
    await settle();
    expect(ticksOf(scheduleId)).toBe(1);
    const after = await suite.client().schedules.get(scheduleId);
    expect(after.lastScheduleTime).toBe(before.nextScheduleTime);
    expect(after.nextScheduleTime).toBe(before.nextScheduleTime! + 60_000);
  }, 80_000);

  it("when a schedule has labels and its tick was delivered, then get answers the SDK's labels and lastScheduleStates (the tick's message delivered)", async () => {
    const { scheduleId } = await suite.client().schedules.create({
      destination: `${suite.receiver.baseUrl}/labelled`,
      cron: '0 0 1 1 *',
      body: 'labelled',
      label: ['nightly', 'billing'],
    });
    expect(await suite.client().schedules.get(scheduleId)).toMatchObject({
      label: 'nightly',
      labels: ['nightly', 'billing'],
    });
    expect(await suite.client().schedules.get(scheduleId)).not.toHaveProperty('lastScheduleStates');
    await makeTickDue(scheduleId);
    const delivery = await waitFor('the tick delivered', async () => deliveriesOf(scheduleId)[0], {
      timeoutMs: 15_000,
      intervalMs: 20,
    });
    const messageId = String(delivery.headers['upstash-message-id']);
    const schedule = await waitFor(
      'the DELIVERED event',
      async () => {
        const answer = await suite.client(1).schedules.get(scheduleId);
        return answer.lastScheduleStates?.[messageId] === 'SUCCESS' ? answer : undefined;
      },
      { timeoutMs: 10_000 },
    );
    expect(schedule.lastScheduleStates).toEqual({ [messageId]: 'SUCCESS' });
    expect((await suite.client().schedules.list())[0]).toMatchObject({
      scheduleId,
      labels: ['nightly', 'billing'],
    });
  });

  it('when ticks were missed while no gateway ran, then the schedule fires once on restart and ticks on from now', async () => {
    // The test takes about a second; 15 s leaves a loaded machine room.
    await clearOfMinute(15_000);
    const { scheduleId } = await suite.client().schedules.create({
      destination: `${suite.receiver.baseUrl}/missed`,
      cron: '* * * * *',
    });
    await Promise.all(suite.replicas.map((r) => r.stopWorkers()));
    await makeTickDue(scheduleId, 10 * 60_000);
    for (const replica of suite.replicas) replica.startWorkers();
    await waitFor('the catch-up tick', async () => deliveriesOf(scheduleId)[0], { timeoutMs: 10_000 });
    await settle();
    expect(ticksOf(scheduleId)).toBe(1);
    expect((await suite.client().schedules.get(scheduleId)).nextScheduleTime).toBeGreaterThan(Date.now());
  });

  it('when a schedule is paused (PATCH, as the SDK sends) it does not tick; resumed (POST, as the docs say) it ticks again', async () => {
    // A real minute coming between the create and the pause would fire a right tick.
    await clearOfMinute(5_000);
    const { scheduleId } = await suite.client().schedules.create({
      destination: `${suite.receiver.baseUrl}/paused`,
      cron: '* * * * *',
    });
    await suite.client().schedules.pause({ schedule: scheduleId });
    const paused = await suite.client().schedules.get(scheduleId);
    expect(paused.isPaused).toBe(true);
    expect(paused.nextScheduleTime).toBeUndefined();
    expect(await suite.inspect.zscore(keys.scheduleTicks, scheduleId)).toBeNull();

    const resumed = await fetch(
      `${suite.replicas[1]!.queueUrl(suite.target)}/v2/schedules/${scheduleId}/resume`,
      {
        method: 'POST',
        headers: { authorization: `Bearer ${suite.target.token}` },
      },
    );
    expect(resumed.status).toBe(200);
    expect((await suite.client().schedules.get(scheduleId)).isPaused).toBe(false);
    await makeTickDue(scheduleId);
    await waitFor('a tick after resume', async () => deliveriesOf(scheduleId)[0], { timeoutMs: 10_000 });
    await suite.client().schedules.resume({ schedule: scheduleId });
    await expect(quietly(() => suite.client().schedules.pause({ schedule: 'scd_missing' }))).rejects.toThrow(
      /not found/,
    );
  });

  it('when a schedule is created again with its Upstash-Schedule-Id, then it is replaced in place; deleted, it is gone', async () => {
    await suite.client().schedules.create({
      destination: `${suite.receiver.baseUrl}/v1`,
      cron: '0 * * * *',
      scheduleId: 'nightly',
    });
    const first = await suite.client().schedules.get('nightly');
    await suite.client().schedules.create({
      destination: `${suite.receiver.baseUrl}/v2`,
      cron: '30 2 * * *',
      scheduleId: 'nightly',
      body: 'second',
    });
    const second = await suite.client().schedules.get('nightly');
    expect(second).toMatchObject({
      cron: '30 2 * * *',
      destination: `${suite.receiver.baseUrl}/v2`,
      body: 'second',
    });
    expect(second.createdAt).toBe(first.createdAt);
    expect(await suite.client().schedules.list()).toHaveLength(1);
    await makeTickDue('nightly');
    const delivery = await waitFor('the replaced schedule to tick', async () => deliveriesOf('nightly')[0], {
      timeoutMs: 10_000,
    });
    expect(delivery.url).toBe(`${suite.receiver.baseUrl}/v2`);

    await suite.client().schedules.delete('nightly');
    await expect(quietly(() => suite.client().schedules.get('nightly'))).rejects.toThrow(/not found/);
    await expect(quietly(() => suite.client().schedules.delete('nightly'))).rejects.toThrow(/not found/);
    expect(await suite.inspect.exists(keys.schedules, keys.scheduleMessages, keys.scheduleTicks)).toBe(0);
  });

  it('when a schedule targets a URL group, then each tick fans out to its endpoints with both headers', async () => {
    await suite.client().urlGroups.addEndpoints({
      name: 'nightly-jobs',
      endpoints: [{ url: `${suite.receiver.baseUrl}/jobs/a` }, { url: `${suite.receiver.baseUrl}/jobs/b` }],
    });
    const { scheduleId } = await suite.client().schedules.create({
      destination: 'nightly-jobs',
      cron: '0 3 * * *',
      delay: '2s',
    });
    expect((await suite.client().schedules.get(scheduleId)).delay).toBe(2);
    await makeTickDue(scheduleId);
    // Upstash-Delay holds each tick's messages back, findable by schedule and group meanwhile.
    const waiting = await waitFor(
      'the delayed tick messages',
      async () => {
        const ids = await suite.inspect.hkeys(keys.scheduledMessages);
        return ids.length === 2 ? ids : undefined;
      },
      { timeoutMs: 10_000 },
    );
    const pending = await suite.client().messages.get(waiting[0]!);
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
    ).toEqual([`${suite.receiver.baseUrl}/jobs/a`, `${suite.receiver.baseUrl}/jobs/b`]);
    expect(deliveriesOf(scheduleId).every((d) => d.headers['upstash-topic-name'] === 'nightly-jobs')).toBe(
      true,
    );
    await suite.client().urlGroups.delete('nightly-jobs');
  });

  it('when the schedule example runs twice, then there is one schedule to its group, and a tick reaches both endpoints', async () => {
    const endpoints = {
      billing: `${suite.receiver.baseUrl}/billing/report`,
      archive: `${suite.receiver.baseUrl}/archive/report`,
    };
    expect(await scheduleNightlyReport(suite.client(), endpoints)).toBe('nightly-report');
    expect(await scheduleNightlyReport(suite.client(), endpoints)).toBe('nightly-report');
    const [schedule] = await suite.client().schedules.list();
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
    await suite.client().urlGroups.delete('nightly-report');
  });
});
