import { queueKeys } from '../../../../gateway/queue/core/keys.js';
import { buildDeadLetter } from '../../../../gateway/queue/core/dead-letter.js';
import { createMessage } from '../../../../gateway/queue/core/message.js';
import { buildRawStep } from '../../../../gateway/queue/core/workflow-message.js';
import {
  restartAsNewRun,
  resumeAsNewRun,
  type WorkflowLetter,
} from '../../../../gateway/queue/http/workflow-dlq-actions.js';
import { BindingStores } from '../../../../gateway/queue/stores/binding-stores.js';
import { testQueueConfig } from '../../../helpers/queue/queue-config.js';
import { testQueueTarget } from '../../../helpers/queue/test-queue-target.js';
import { useGatewayRedis } from '../../../helpers/queue/gateway-redis.js';
import { snapshotDatabase } from '../../../helpers/queue/redis-snapshot.js';

/**
 * A workflow DLQ entry's resume and restart on a real Redis: the entry leaves the DLQ only once
 * the new run and its first delivery are stored, so a refusal on the way (or a replica dying) never
 * loses it.
 */
describe('resuming or restarting a workflow dead letter', () => {
  const db = useGatewayRedis();

  /** A binding's stores with run `wfr_failed` failed on its step, whose letter is in the DLQ. */
  async function failedRun(prefix: string) {
    const stores = {
      redis: db.redis,
      keys: queueKeys(prefix),
      config: testQueueConfig(),
      target: testQueueTarget(db.server),
    };
    const runs = new BindingStores(stores).workflowRuns();
    const config = { url: 'http://127.0.0.1:9/wf', headers: {}, retries: 0 };
    const firstStep = buildRawStep('msg_p', Buffer.from('{"order":1}'), 1);
    await runs.start({ runId: 'wfr_failed', config, createdAt: 1, firstStep });
    const step = createMessage(
      { destination: config.url, method: 'POST', headers: {}, body: Buffer.from('s'), retries: 0 },
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
});
