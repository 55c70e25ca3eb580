import type { Redis } from 'ioredis';
import { queueKeys } from '../../../../gateway/queue/core/keys.js';
import { buildDeadLetter } from '../../../../gateway/queue/core/dead-letter.js';
import { createMessage } from '../../../../gateway/queue/core/message.js';
import type { FlowControl } from '../../../../gateway/queue/core/flow-control.js';
import { buildRawStep } from '../../../../gateway/queue/core/workflow-message.js';
import {
  cancelResentCallback,
  restartAsNewRun,
  resumeAsNewRun,
  type WorkflowLetter,
} from '../../../../gateway/queue/http/workflow-dlq-actions.js';
import { BindingStores } from '../../../../gateway/queue/stores/binding-stores.js';
import { testQueueConfig } from '../../../helpers/queue/queue-config.js';
import { testQueueTarget } from '../../../helpers/queue/test-queue-target.js';
import { useGatewayRedis } from '../../../helpers/queue/gateway-redis.js';
import { connectAsGateway, snapshotDatabase } from '../../../helpers/queue/redis-snapshot.js';

/**
 * A workflow DLQ entry's resume and restart on a real Redis: the entry leaves the DLQ only once
 * the new run and its first delivery are stored, so a refusal on the way (or a replica dying) never
 * loses it.
 */
describe('resuming or restarting a workflow dead letter', () => {
  const db = useGatewayRedis();

  /**
   * A binding's stores with run `wfr_failed` failed on its step, whose letter is in the DLQ; the
   * run's settings and the step with `flowControl` when given. `through`: the replica's connection.
   */
  async function failedRun(prefix: string, options: { flowControl?: FlowControl; through?: Redis } = {}) {
    const { flowControl } = options;
    const stores = {
      redis: options.through ?? db.redis,
      keys: queueKeys(prefix),
      config: testQueueConfig(),
      target: testQueueTarget(db.server),
    };
    const runs = new BindingStores(stores).workflowRuns();
    const config = {
      url: 'http://127.0.0.1:9/wf',
      headers: {},
      retries: 0,
      ...(flowControl && { flowControl }),
    };
    const firstStep = buildRawStep('msg_p', Buffer.from('{"order":1}'), 1);
    await runs.start({ runId: 'wfr_failed', config, createdAt: 1, firstStep });
    const step = createMessage(
      {
        destination: config.url,
        method: 'POST',
        headers: {},
        body: Buffer.from('s'),
        retries: 0,
        ...(flowControl && { flowControl }),
      },
      2,
    );
    const letter = {
      ...buildDeadLetter({ message: step, reason: 'retries-exhausted', failedAt: 3 }),
      workflow: { runId: 'wfr_failed', createdAt: 1 },
    } satisfies WorkflowLetter;
    await db.inspect.hset(stores.keys.deadLetters, letter.dlqId, JSON.stringify(letter));
    await db.inspect.zadd(stores.keys.deadLetterOrder, 0, letter.dlqId);
    await runs.finish('wfr_failed', {
      state: 'RUN_FAILED',
      at: 3,
      failure: JSON.stringify({ dlqId: letter.dlqId }),
    });
    await runs.start({ runId: 'wfr_taken', config, createdAt: 4, firstStep });
    return { stores, letter, run: (await runs.get('wfr_failed'))! };
  }

  it('when the new run id is taken, then resume and restart are a 400 and change nothing: the entry stays in the DLQ', async () => {
    const { stores, letter, run } = await failedRun('{dlq-taken}:');
    const before = await snapshotDatabase(db.inspect);
    const action = { letter, run, overrides: {}, runId: 'wfr_taken' };
    await expect(resumeAsNewRun(stores, action)).rejects.toThrow('workflow run wfr_taken exists');
    await expect(restartAsNewRun(stores, action)).rejects.toThrow('workflow run wfr_taken exists');
    expect(await snapshotDatabase(db.inspect)).toEqual(before);
  });

  it('when an entry resumes or restarts, then the new run and its first delivery are stored and the entry is gone', async () => {
    for (const [act, prefix] of [
      [resumeAsNewRun, '{dlq-resume}:'],
      [restartAsNewRun, '{dlq-restart}:'],
    ] as const) {
      const { stores, letter, run } = await failedRun(prefix);
      const started = await act(stores, { letter, run, overrides: {}, runId: 'wfr_new' });
      expect(started).toEqual({ workflowRunId: 'wfr_new', workflowCreatedAt: expect.any(Number) });
      const dlq = new BindingStores(stores).deadLetters();
      expect(await dlq.get([letter.dlqId])).toEqual([undefined]);
      expect((await new BindingStores(stores).workflowRuns().get('wfr_new'))?.state).toBe('RUN_STARTED');
      expect(await db.inspect.xlen(stores.keys.stream)).toBe(1);
    }
  });

  it('when two replicas resume or restart one entry at once, with or without flow control, then exactly one run starts with one delivery and the entry is gone', async () => {
    const other = connectAsGateway(db.server, { blocking: false });
    try {
      const flowControl = { key: 'wf-letters', parallelism: 1 };
      for (const [act, prefix, options] of [
        [resumeAsNewRun, '{dlq-race-resume}:', {}],
        [restartAsNewRun, '{dlq-race-restart}:', {}],
        [resumeAsNewRun, '{dlq-race-resume-fc}:', { flowControl }],
        [restartAsNewRun, '{dlq-race-restart-fc}:', { flowControl }],
      ] as const) {
        const { stores, letter, run } = await failedRun(prefix, options);
        const replicas = [stores, { ...stores, redis: other }];
        const answers = await Promise.all(
          replicas.map((through, i) => act(through, { letter, run, overrides: {}, runId: `wfr_new${i}` })),
        );
        const started = answers.filter((answer) => answer !== undefined);
        expect([prefix, started.length]).toEqual([prefix, 1]);
        const k = stores.keys;
        // Runs by creation time: the failed one, the taken one and one new run.
        expect([prefix, await db.inspect.zcard(k.workflowRunOrder)]).toEqual([prefix, 3]);
        const deliveries =
          (await db.inspect.xlen(k.stream)) +
          (await db.inspect.llen(k.flowControlWaiting(flowControl.key))) +
          (await db.inspect.zcard(k.flowControlDue(flowControl.key)));
        expect([prefix, deliveries]).toEqual([prefix, 1]);
        // With flow control the delivery went through its key.
        expect([prefix, await db.inspect.hexists(k.flowControls, flowControl.key)]).toEqual([
          prefix,
          'flowControl' in options ? 1 : 0,
        ]);
        expect(await new BindingStores(stores).deadLetters().get([letter.dlqId])).toEqual([undefined]);
      }
    } finally {
      other.disconnect();
    }
  });

  it('when the failure callback sent again is pending, then a cancel takes its message and marks it CALLBACK_CANCELED; a second cancel, or one whose message is gone, is a 400 and changes nothing', async () => {
    const { stores } = await failedRun('{dlq-callback-cancel}:');
    const bound = new BindingStores(stores);
    const runs = bound.workflowRuns();
    const callback = createMessage({
      destination: 'http://127.0.0.1:9/failed',
      method: 'POST',
      headers: {},
      body: Buffer.from('{}'),
      retries: 0,
      workflowFailureOf: { runId: 'wfr_failed' },
    });
    await runs.setCallbackState('wfr_failed', 'CALLBACK_INPROGRESS', { messageId: callback.id });
    await bound.enqueueOne(callback);
    const cancel = async () =>
      cancelResentCallback(stores, {
        runId: 'wfr_failed',
        callback: (await runs.get('wfr_failed'))?.callback,
      });

    await cancel();
    expect((await runs.get('wfr_failed'))?.callback).toEqual({ state: 'CALLBACK_CANCELED' });
    expect(await bound.pending().cancel([callback.id])).toBe(0);
    let before = await snapshotDatabase(db.inspect);
    await expect(cancel()).rejects.toThrow(
      /has no failure callback in progress that was sent again \(CALLBACK_CANCELED\)/,
    );
    expect(await snapshotDatabase(db.inspect)).toEqual(before);

    // Sent again, and delivered before the cancel came: no longer pending, its state kept.
    await runs.setCallbackState('wfr_failed', 'CALLBACK_INPROGRESS', { messageId: 'msg_delivered' });
    before = await snapshotDatabase(db.inspect);
    await expect(cancel()).rejects.toThrow(/is no longer pending/);
    expect(await snapshotDatabase(db.inspect)).toEqual(before);
  });
});
