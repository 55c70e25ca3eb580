import { startRedis, type RedisServer } from '../../../local/redis-server.js';
import { waitFor } from '../../../local/wait.js';
import type { QueueTarget } from '../../../gateway/queue/core/binding-registry.js';
import { startTestQueueGateway, type TestQueueGateway } from '../../helpers/queue/queue-gateway.js';
import { testQueueConfig } from '../../helpers/queue/queue-config.js';
import {
  startRecordingDestination,
  type RecordingDestination,
} from '../../helpers/queue/recording-destination.js';
import { testQueueTarget } from '../../helpers/queue/test-queue-target.js';
import { runPythonSdkChecks, type PythonSdkResults } from '../../helpers/queue/python-sdk.js';

/**
 * QStash's Python SDK (`qstash` 3.4 from PyPI, test/python/requirements.txt) against the gateway:
 * one Python process runs every check of test/python/sdk_checks.py (issue 24, item 8), and each
 * test below asserts on one check's result.
 */
describe('the queue through the Python SDK (qstash from PyPI)', () => {
  let redis: RedisServer;
  let gateway: TestQueueGateway;
  let destination: RecordingDestination;
  let target: QueueTarget;
  let results: PythonSdkResults;

  const valueOf = (check: string): Record<string, unknown> => {
    const result = results[check];
    if (!result || 'error' in result) throw new Error(`check ${check} failed: ${result?.error ?? 'not run'}`);
    return result.value as Record<string, unknown>;
  };

  beforeAll(async () => {
    redis = await startRedis();
    destination = await startRecordingDestination();
    destination.answer = (request) =>
      request.path === '/hanging' ? 'hang' : { status: request.path === '/failing' ? 500 : 200 };
    target = testQueueTarget(redis, { namespace: 'tenant-py', name: 'cache' });
    gateway = await startTestQueueGateway({ config: testQueueConfig(), targets: [target] });
    results = await runPythonSdkChecks({
      baseUrl: gateway.queueUrl(target),
      token: target.token,
      destination: destination.baseUrl,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await destination?.close();
    await redis?.stop();
  });

  const delivered = (what: string, done: () => boolean) =>
    waitFor(what, async () => done() || undefined, { timeoutMs: 10_000, intervalMs: 20 });
  const deliveredBodies = () =>
    destination.requests.filter((r) => r.path === '/ok').map((r) => JSON.parse(r.body.toString()));

  it('when the SDK publishes JSON, then the destination gets it', async () => {
    const { messageId } = valueOf('publish');
    expect(messageId).toMatch(/^msg_/);
    await delivered('the published message', () => destination.attemptsOf(messageId as string).length === 1);
  });

  it('when a batch item names no queue ("queue": null), then it is published without one', async () => {
    const { messageIds } = valueOf('batchWithoutQueue');
    expect(messageIds).toHaveLength(2);
    await delivered(
      'both batch items',
      () => deliveredBodies().filter((b) => b.check === 'batch').length === 2,
    );
  });

  it('when a pending message is read, then it carries notBefore: its due time if delayed, else its createdAt', () => {
    const { delayed, inFlight } = valueOf('pendingMessages') as Record<string, Record<string, number>>;
    expect(delayed!.notBefore).toBeGreaterThanOrEqual(delayed!.createdAt! + 59_000);
    expect(inFlight!.notBefore).toBe(inFlight!.createdAt);
  });

  it('when dead letters are listed, then each carries notBefore and the failed response status', () => {
    const { letters } = valueOf('deadLetters') as { letters: Record<string, unknown>[] };
    expect(letters).toHaveLength(3);
    for (const letter of letters) {
      expect(letter.notBefore).toEqual(expect.any(Number));
      expect(letter.responseStatus).toBe(500);
      expect(letter.retryDelayExpression).toBe('1000');
    }
  });

  it('when dlq.delete_many names one dead letter, then exactly that one is deleted', () => {
    const { messageIds, deleted, deletedMessageId, left, got } = valueOf('deadLetters') as {
      messageIds: string[];
      deleted: number;
      deletedMessageId: string;
      left: string[];
      got: { messageId: string; notBefore: number };
    };
    expect(deleted).toBe(1);
    expect([...left].sort()).toEqual(messageIds.filter((id) => id !== deletedMessageId).sort());
    expect(got.notBefore).toEqual(expect.any(Number));
  });

  it("when a schedule's flow control has only a parallelism, then it answers period 1", () => {
    expect(valueOf('scheduleFlowControl')).toEqual({
      key: 'python-sdk',
      parallelism: 2,
      rate: null,
      period: 1,
    });
  });

  it('when a URL group that does not exist is deleted, then the SDK sees success', () => {
    expect(valueOf('deleteMissingUrlGroup')).toBe('deleted');
  });

  it("when events are listed, then they carry QStash's documented names: retryDelayExpression and CANCELLED", async () => {
    const { failed, cancelledMessageId, cancelledEvents } = valueOf('events') as {
      failed: { state: string; retryDelayExpression: string | null }[];
      cancelledMessageId: string;
      cancelledEvents: string;
    };
    expect(failed.map((e) => e.state)).toContain('FAILED');
    // The SDK reads `retryDelayExpr`, which QStash does not document: it sees none.
    expect(failed.every((e) => e.retryDelayExpression === null)).toBe(true);
    // Its LogState enum spells CANCELED, so a cancelled message's events fail its parser.
    expect(cancelledEvents).toBe("ValueError: 'CANCELLED' is not a valid LogState");
    const raw = await fetch(`${gateway.queueUrl(target)}/v2/events?messageId=${cancelledMessageId}`, {
      headers: { authorization: `Bearer ${target.token}` },
    });
    const { events } = (await raw.json()) as { events: { state: string }[] };
    expect(events.map((e) => e.state)).toContain('CANCELLED');
  });

  it("when the SDK's queue, flow-control, schedule-list, signing-key and cancel-all calls are made, then each answers what the gateway holds, and each change reads back", () => {
    const answers = valueOf('otherCalls');
    const errors = Object.entries(answers).filter(([, answer]) => 'error' in (answer as object));
    expect(errors).toEqual([]);
    const value = (call: string) => (answers[call] as { value: unknown }).value;
    const queue = { name: 'python-sdk', parallelism: 2 };
    expect(value('queue.upsert')).toBeNull();
    expect(value('queue.get')).toEqual({ ...queue, paused: false });
    expect(value('queue.list')).toContain('python-sdk');
    expect(value('queue.get (paused)')).toEqual({ ...queue, paused: true });
    expect(value('message.enqueue_json')).toMatch(/^msg_/);
    expect(value('queue.get (resumed)')).toEqual({ ...queue, paused: false });
    expect(value('queue.list (deleted)')).not.toContain('python-sdk');
    expect(value('message.publish_json(flow_control)')).toMatch(/^msg_/);
    const key = { key: 'python-sdk-fc' };
    expect(value('flow_control.get')).toEqual({
      ...key,
      isPaused: true,
      isPinnedParallelism: false,
      parallelismMax: 1,
    });
    expect(value('flow_control.get_global_parallelism')).toEqual({
      max: expect.any(Number),
      count: expect.any(Number),
    });
    expect(value('flow_control.get (pinned)')).toEqual({
      ...key,
      isPaused: true,
      isPinnedParallelism: true,
      parallelismMax: 2,
    });
    expect(value('flow_control.get (resumed)')).toEqual({
      ...key,
      isPaused: false,
      isPinnedParallelism: true,
      parallelismMax: 2,
    });
    for (const call of ['queue.pause', 'queue.resume', 'queue.delete', 'flow_control.pause'])
      expect([call, value(call)]).toEqual([call, null]);
    for (const call of [
      'flow_control.pin',
      'flow_control.resume',
      'flow_control.reset_rate',
      'flow_control.unpin',
    ])
      expect([call, value(call)]).toEqual([call, null]);
    // The scheduleFlowControl check deleted the one schedule it made.
    expect(value('schedule.list')).toEqual([]);
    expect(value('signing_key.get')).toEqual({ current: target.signingKey, next: target.nextSigningKey });
    expect(value('message.cancel_all')).toEqual({ cancelled: expect.any(Number), delayedGone: true });
    expect((value('message.cancel_all') as { cancelled: number }).cancelled).toBeGreaterThanOrEqual(1);
    expect(Object.keys(answers)).toHaveLength(23);
  });
});
