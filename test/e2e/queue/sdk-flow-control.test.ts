import type { Client } from '@upstash/qstash';
import { waitFor } from '../../../local/wait.js';
import { DELIVERY_GROUP, queueKeys } from '../../../gateway/queue/core/keys.js';
import type { QueueGatewayProcess } from '../../helpers/queue/spawn-queue-gateway.js';
import { useFlowControlReplicas } from '../../helpers/queue/flow-control-replicas.js';
import { snapshotDatabase } from '../../helpers/queue/redis-snapshot.js';
import { quietly } from '../../helpers/queue/quietly.js';
import { InFlightGauge } from '../../helpers/queue/in-flight-gauge.js';

const KEY_PREFIX = '{flow-control-test}:';
const keys = queueKeys(KEY_PREFIX);
const WORKER_CONCURRENCY = 8;

/**
 * Flow control (`Upstash-Flow-Control-Key`, `client.flowControl.*`) through the unchanged SDK
 * against two gateway processes on one database: a key's parallelism and rate hold across both
 * replicas, its messages wait rather than fail, the management calls answer QStash's shapes, bad
 * values are 400s naming the field, another tenant's token sees and changes nothing, and a token
 * held by a replica that is SIGKILLed comes back once the survivor has delivered its message.
 */
describe('flow control with the @upstash/qstash SDK across two gateway replicas', () => {
  const replicas = useFlowControlReplicas(KEY_PREFIX, {
    SETTEE_QUEUE_CONSUMER_LEASE_MS: '1500',
    SETTEE_QUEUE_WORKER_CONCURRENCY: String(WORKER_CONCURRENCY),
  });
  const gateways = new Map<string, QueueGatewayProcess>();
  let clients: Client[];
  const inFlight = new InFlightGauge();

  const url = (path: string) => `${replicas.destination.baseUrl}/${path}`;
  const bodies = () => replicas.destination.requests.map((r) => r.body.toString());
  const { delivered, forgotten } = replicas;
  /** A raw request to one replica's binding, for what the SDK cannot send. */
  const ask = (path: string, init: RequestInit = {}, token = replicas.target.token) =>
    fetch(`${gateways.get('fc-a')!.baseUrl}/queue/ns/db${path}`, {
      ...init,
      headers: { authorization: `Bearer ${token}`, ...init.headers },
    });

  /** Answers each delivery after `holdMs`, counting how many are held at once. */
  function holdDeliveries(holdMs: number): void {
    replicas.destination.answer = () => {
      void inFlight.heldFor(holdMs);
      return { status: 200, delayMs: holdMs };
    };
  }

  beforeAll(async () => {
    for (const name of ['fc-a', 'fc-b']) gateways.set(name, await replicas.startReplica(name));
    clients = [...gateways.values()].map((gateway) => replicas.sdkClient(gateway));
  });

  beforeEach(async () => {
    await waitFor('no delivery held', async () => inFlight.current === 0 || undefined, { timeoutMs: 5_000 });
    replicas.destination.requests.length = 0;
    replicas.destination.answer = () => ({ status: 200 });
    inFlight.reset();
  });

  it('when messages of a key with parallelism 2 are published through both replicas, then at most 2 are delivered at once and the rest wait', async () => {
    holdDeliveries(150);
    const ids = await Promise.all(
      Array.from({ length: 10 }, async (_, i) => {
        const answer = await clients[i % 2]!.publishJSON({
          url: url(`parallel/${i}`),
          body: { i },
          flowControl: { key: 'parallel', parallelism: 2 },
        });
        return answer.messageId;
      }),
    );
    expect(new Set(ids).size).toBe(10);
    const info = await clients[1]!.flowControl.get('parallel');
    expect(info).toEqual({
      flowControlKey: 'parallel',
      waitListSize: expect.any(Number),
      parallelismMax: 2,
      parallelismCount: expect.any(Number),
      rateMax: 0,
      rateCount: 0,
      ratePeriod: 1,
      ratePeriodStart: 0,
      isPaused: false,
      isPinnedParallelism: false,
      isPinnedRate: false,
    });
    expect(info.parallelismCount).toBeLessThanOrEqual(2);
    await delivered(10);
    expect(inFlight.most).toBe(2);
    // Every token is back: the key is forgotten only with none in flight.
    await forgotten('parallel');
    expect(await replicas.inspect.exists(keys.flowControlActive('parallel'))).toBe(0);
  });

  it('when messages of parallelism 1, 3 and 1 again wait on one key, then flowControl.get answers the highest, 3, until the parallelism-3 ones are delivered', async () => {
    const [a, b] = clients as [Client, Client];
    await a.flowControl.pause('mixed');
    const publish = (client: Client, i: number, parallelism: number) =>
      client.publishJSON({ url: url(`mixed/${i}`), body: { i }, flowControl: { key: 'mixed', parallelism } });
    await publish(a, 0, 1);
    await publish(b, 1, 3);
    await publish(b, 2, 3);
    await publish(a, 3, 1);
    // The newest message asks for 1; the older ones of 3 are not finished, so the key allows 3.
    expect(await b.flowControl.get('mixed')).toMatchObject({ parallelismMax: 3, waitListSize: 4 });
    holdDeliveries(150);
    await a.flowControl.resume('mixed');
    await delivered(4);
    expect(inFlight.most).toBe(3);
    await forgotten('mixed');
  });

  it('when a batch for a key with a rate of 2 per second arrives through both replicas, then no more than 2 start in each second and none is refused', async () => {
    const start = Date.now();
    const batch = (from: number) =>
      Array.from({ length: 3 }, (_, i) => ({
        url: url(`rated/${from + i}`),
        body: { i: from + i },
        flowControl: { key: 'rated', rate: 2, period: '1s' as const },
      }));
    const answers = (
      await Promise.all([clients[0]!.batchJSON(batch(0)), clients[1]!.batchJSON(batch(3))])
    ).flat();
    expect(answers).toHaveLength(6);
    for (const answer of answers) expect(answer).toEqual({ messageId: expect.stringMatching(/^msg_/) });
    await delivered(6, 10_000);
    const times = replicas.destination.requests.map((r) => r.at);
    // The first window opens at the first publish: each later one lets 2 more go.
    expect(times.filter((at) => at < start + 1_000).length).toBeLessThanOrEqual(2);
    expect(times.filter((at) => at < start + 2_000).length).toBeLessThanOrEqual(4);
    expect(Math.max(...times) - start).toBeGreaterThanOrEqual(2_000);
    expect(await clients[0]!.flowControl.get('rated')).toMatchObject({ rateMax: 2, ratePeriod: 1 });
    await forgotten('rated');
  });

  it('when a key is paused, pinned, resumed, unpinned and its rate reset through the SDK, then each call takes effect on both replicas', async () => {
    const [a, b] = clients as [Client, Client];
    await a.flowControl.pause('held');
    const { messageId } = await a.publishJSON({
      url: url('held/0'),
      body: 'first',
      flowControl: { key: 'held', parallelism: 1, rate: 3, period: 60 },
    });
    await b.publishJSON({ url: url('held/1'), body: 'second', flowControl: { key: 'held', parallelism: 1 } });
    await replicas.deliveredPastThis(clients);
    expect(replicas.destination.requests).toHaveLength(0);
    expect(await b.flowControl.get('held')).toMatchObject({
      isPaused: true,
      waitListSize: 2,
      parallelismMax: 1,
    });
    expect(await b.messages.get(messageId)).toMatchObject({
      messageId,
      flowControlKey: 'held',
      parallelism: 1,
      rate: 3,
      period: 60,
    });
    const listed = (await (await ask('/v2/flowControl')).json()) as { flowControlKey: string }[];
    expect(listed.map((key) => key.flowControlKey)).toContain('held');

    await a.flowControl.pin('held', { parallelism: 2, rate: 5, period: 10 });
    expect(await b.flowControl.get('held')).toMatchObject({
      isPinnedParallelism: true,
      isPinnedRate: true,
      parallelismMax: 2,
      rateMax: 5,
      ratePeriod: 10,
    });
    await b.flowControl.resume('held');
    await delivered(2);
    expect(bodies().sort()).toEqual(['"first"', '"second"']);
    // Its events carry the key, and the flowControlKey filter finds them and nothing else.
    const { logs } = await a.logs({ filter: { flowControlKey: 'held' } });
    expect(logs.map((log) => log.messageId)).toContain(messageId);
    expect(new Set(logs.map((log) => (log as { flowControlKey?: string }).flowControlKey))).toEqual(
      new Set(['held']),
    );
    expect((await a.flowControl.get('held')).rateCount).toBe(2);
    await a.flowControl.resetRate('held');
    expect(await b.flowControl.get('held')).toMatchObject({ rateCount: 0, isPaused: false });
    await b.flowControl.unpin('held', { parallelism: true, rate: true });
    expect(await a.flowControl.get('held')).toMatchObject({
      isPinnedParallelism: false,
      isPinnedRate: false,
    });

    // Messages of a key are found and cancelled by the flowControlKey filter.
    await a.flowControl.pause('held');
    await a.publishJSON({ url: url('held/2'), body: 'never', flowControl: { key: 'held', parallelism: 1 } });
    expect(await b.messages.cancel({ filter: { flowControlKey: 'held' } })).toEqual({ cancelled: 1 });

    expect(await a.flowControl.getGlobalParallelism()).toEqual({
      parallelismMax: 2 * WORKER_CONCURRENCY,
      parallelismCount: expect.any(Number),
    });
  });

  it("when a publish to a URL group carries a flow-control key, then each endpoint's message waits on that key", async () => {
    const [a, b] = clients as [Client, Client];
    await a.urlGroups.addEndpoints({
      name: 'fan',
      endpoints: [{ url: url('fan/one') }, { url: url('fan/two') }],
    });
    await a.flowControl.pause('fan-key');
    const answers = await a.publishJSON({
      urlGroup: 'fan',
      body: 'fanned',
      flowControl: { key: 'fan-key', parallelism: 1 },
    });
    expect(answers).toHaveLength(2);
    await replicas.deliveredPastThis(clients);
    expect(replicas.destination.requests).toHaveLength(0);
    expect(await b.flowControl.get('fan-key')).toMatchObject({ waitListSize: 2, parallelismMax: 1 });
    await b.flowControl.resume('fan-key');
    await delivered(2);
    expect(replicas.destination.requests.map((r) => r.path).sort()).toEqual(['/fan/one', '/fan/two']);
    await forgotten('fan-key');
    await expect(quietly(() => b.flowControl.get('fan-key'))).rejects.toThrow(/not found/);
  });

  it('when a flow-control value or call is bad, then it is a 400 naming the field, and nothing is stored', async () => {
    const snapshot = await snapshotDatabase(replicas.inspect);
    const publish = (value: string, key = 'bad') =>
      ask(`/v2/publish/${url('bad')}`, {
        method: 'POST',
        headers: { 'upstash-flow-control-key': key, 'upstash-flow-control-value': value },
        body: 'x',
      });
    const cases: [Promise<Response>, number, RegExp][] = [
      [
        publish('parallelism=0'),
        400,
        /Upstash-Flow-Control-Value parallelism "0" is not a whole number of at least 1/,
      ],
      [publish('rate=fast'), 400, /Upstash-Flow-Control-Value rate "fast" is not a whole number/],
      [publish('burst=3'), 400, /"burst=3" is not parallelism=N, rate=N or period/],
      [publish('rate=1, period=1.5s'), 400, /Upstash-Flow-Control-Value period "1.5s"/],
      [publish('rate=1', 'a b'), 400, /Upstash-Flow-Control-Key "a b" may contain only/],
      [ask('/v2/flowControl/missing'), 404, /flow-control key missing not found/],
      [ask('/v2/flowControl/missing/resume', { method: 'POST' }), 404, /flow-control key missing not found/],
      [
        ask('/v2/flowControl/bad/pin?parallelism=0', { method: 'POST' }),
        400,
        /parallelism "0" is not a whole number/,
      ],
      [ask('/v2/flowControl/bad/pin', { method: 'POST' }), 400, /pin needs parallelism, rate or period/],
      [
        ask('/v2/flowControl/bad/unpin?rate=yes', { method: 'POST' }),
        400,
        /query parameter rate must be true or false/,
      ],
      [ask('/v2/flowControl?colour=red'), 400, /unknown query parameter "colour"/],
    ];
    for (const [response, status, message] of cases) {
      const answer = await response;
      const body = (await answer.json()) as { error: string };
      expect({ status: answer.status, error: body.error }).toEqual({
        status,
        error: expect.stringMatching(message),
      });
    }
    // A queue's message is checked as a publish's is.
    const enqueue = await ask(`/v2/enqueue/orders/${url('q')}`, {
      method: 'POST',
      headers: { 'upstash-flow-control-key': 'k', 'upstash-flow-control-value': 'rate=0' },
      body: 'x',
    });
    expect(enqueue.status).toBe(400);
    expect(((await enqueue.json()) as { error: string }).error).toMatch(
      /Upstash-Flow-Control-Value rate "0"/,
    );
    const [a] = clients as [Client];
    const batch = await a.batchJSON([
      { url: url('q'), body: 'x', queueName: 'orders', flowControl: { key: 'a b', rate: 1 } },
    ]);
    expect(batch).toEqual([
      { error: expect.stringMatching(/Upstash-Flow-Control-Key "a b" may contain only/) },
    ]);
    expect(await snapshotDatabase(replicas.inspect)).toEqual(snapshot);
  });

  it("when another tenant's token is used on this binding's flow-control keys, then every call is a 401, and its own binding does not see them", async () => {
    const [a] = clients as [Client];
    await a.flowControl.pin('private', { parallelism: 3 });
    const snapshot = await snapshotDatabase(replicas.inspect);
    const otherToken = replicas.otherTarget!.token;
    const intruder = replicas.sdkClient(gateways.get('fc-a')!, { token: otherToken });
    const calls: [string, () => Promise<unknown>][] = [
      ['get', () => intruder.flowControl.get('private')],
      ['getGlobalParallelism', () => intruder.flowControl.getGlobalParallelism()],
      ['pause', () => intruder.flowControl.pause('private')],
      ['resume', () => intruder.flowControl.resume('private')],
      ['pin', () => intruder.flowControl.pin('private', { parallelism: 50 })],
      ['unpin', () => intruder.flowControl.unpin('private', { parallelism: true })],
      ['resetRate', () => intruder.flowControl.resetRate('private')],
      [
        'publish',
        () =>
          intruder.publishJSON({ url: url('x'), body: {}, flowControl: { key: 'private', parallelism: 50 } }),
      ],
    ];
    for (const [name, call] of calls) {
      const outcome = await quietly(call).then(
        () => 'resolved',
        (err: Error) => err.message,
      );
      expect({ name, outcome }).toEqual({ name, outcome: expect.stringMatching(/401|Unauthorized|token/i) });
    }
    expect((await ask('/v2/flowControl', {}, otherToken)).status).toBe(401);
    expect(await snapshotDatabase(replicas.inspect)).toEqual(snapshot);
    // With its own URL and token, the other tenant has no such key.
    const own = replicas.sdkClient(gateways.get('fc-b')!, { target: replicas.otherTarget! });
    await expect(quietly(() => own.flowControl.get('private'))).rejects.toThrow(/not found/);
  });

  it('when the replica delivering the only message a key of parallelism 1 may run is SIGKILLed, then the survivor delivers it, then the next, and the token count ends at zero', async () => {
    replicas.destination.answer = () => 'hang';
    const ids: string[] = [];
    for (let i = 0; i < 2; i++)
      ids.push(
        (
          await clients[i]!.publishJSON({
            url: url(`survive/${i}`),
            body: { i },
            flowControl: { key: 'survive', parallelism: 1 },
          })
        ).messageId,
      );
    await delivered(1);
    const [pending] = (await replicas.inspect.xpending(keys.stream, DELIVERY_GROUP, '-', '+', 10)) as [
      string,
      string,
    ][];
    const holder = gateways.get(pending![1])!;
    replicas.destination.answer = () => ({ status: 200 });
    process.kill(holder.proc.pid, 'SIGKILL');
    expect(await holder.proc.exited).toBe('SIGKILL');
    await delivered(3, 20_000);
    expect(replicas.destination.requests.map((r) => r.headers['upstash-message-id'])).toEqual([
      ids[0],
      ids[0],
      ids[1],
    ]);
    await waitFor(
      'the token count back to zero',
      async () => (await replicas.inspect.scard(keys.flowControlActive('survive'))) === 0 || undefined,
      { timeoutMs: 5_000, intervalMs: 20 },
    );
  }, 40_000);
});
