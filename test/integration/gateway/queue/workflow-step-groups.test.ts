import type { Redis } from 'ioredis';
import { startRedis, type RedisServer } from '../../../../local/redis-server.js';
import { QuotaExceededError } from '../../../../gateway/queue/core/errors.js';
import { queueKeys } from '../../../../gateway/queue/core/keys.js';
import { createMessage } from '../../../../gateway/queue/core/message.js';
import { buildRawStep } from '../../../../gateway/queue/core/workflow-message.js';
import { prepareWorkflowMessages } from '../../../../gateway/queue/stores/workflow-publish.js';
import { WorkflowRunStore } from '../../../../gateway/queue/stores/workflow-run-store.js';
import { connectAsGateway, connectTestRedis } from '../../../helpers/queue/redis-snapshot.js';

const URL = 'http://127.0.0.1:9/wf';
/** The most steps a run takes here: the group below fits exactly, one step more does not. */
const LIMITS = { maxSteps: 6, maxContextBytes: 1_000_000 };

/** A step publish of run `runId` as the SDK sends it: its body the step JSON with `stepId`. */
function stepPublish(runId: string, stepId: number) {
  return createMessage({
    destination: URL,
    method: 'POST',
    headers: {},
    body: Buffer.from(JSON.stringify({ stepId, stepName: `s${stepId}`, stepType: 'Run', out: '1' })),
    retries: 0,
    workflowPublish: { runId, init: false, url: URL },
  });
}

/**
 * A parallel group's steps come in one request, and the run's step limit must take all of them or
 * none, even while another replica appends a step of the same run at the same moment: the check and
 * the appends are one script, so no replica sees a group half stored.
 */
describe('a parallel group of workflow steps on a real Redis', () => {
  let server: RedisServer;
  let replicas: Redis[];
  let inspect: Redis;

  beforeAll(async () => {
    server = await startRedis();
    replicas = [0, 1].map(() => connectAsGateway(server, { blocking: false }));
    inspect = connectTestRedis(server);
  });
  afterAll(async () => {
    for (const redis of replicas ?? []) redis.disconnect();
    inspect?.disconnect();
    await server?.stop();
  });

  it('when a group races a single step of its run past the step limit, then the group is stored whole or not at all, in every round', async () => {
    const keys = queueKeys('{groups}:');
    const [a, b] = replicas.map((redis) => new WorkflowRunStore(redis, keys, LIMITS));
    for (let round = 0; round < 25; round += 1) {
      const runId = `wfr_race${round}`;
      const firstStep = buildRawStep('msg_payload', Buffer.from('{}'), 1);
      await a!.start({ runId, config: { url: URL, headers: {}, retries: 0 }, createdAt: 1, firstStep });
      // Room for the group of six, or for the single step and then not the group.
      const group = [1, 2, 3, 4, 5, 6].map((stepId) => stepPublish(runId, stepId));
      const single = stepPublish(runId, 7);
      const [grouped, alone] = await Promise.allSettled([
        prepareWorkflowMessages(a!, group),
        prepareWorkflowMessages(b!, [single]),
      ]);
      const stored = (await inspect.lrange(keys.workflowSteps(runId), 1, -1)).map(
        (step) => (JSON.parse(step) as { messageId: string }).messageId,
      );
      const groupStored = group.filter(({ id }) => stored.includes(id)).length;
      expect([round, groupStored]).toEqual([round, grouped.status === 'fulfilled' ? 6 : 0]);
      if (grouped.status === 'rejected') expect(grouped.reason).toBeInstanceOf(QuotaExceededError);
      // Exactly one of them fits.
      expect([round, stored.length]).toEqual([round, alone.status === 'fulfilled' ? 1 : 6]);
    }
  });

  it('when a group is appended, then each of its deliveries carries the steps up to and including its own', async () => {
    const keys = queueKeys('{group-bodies}:');
    const runs = new WorkflowRunStore(replicas[0]!, keys, LIMITS);
    const firstStep = buildRawStep('msg_payload', Buffer.from('{}'), 1);
    await runs.start({
      runId: 'wfr_bodies',
      config: { url: URL, headers: {}, retries: 0 },
      createdAt: 1,
      firstStep,
    });
    const group = [1, 2, 3].map((stepId) => stepPublish('wfr_bodies', stepId));
    const prepared = await prepareWorkflowMessages(runs, group);
    const carried = prepared.map((message) =>
      (JSON.parse((message as { body: Buffer }).body.toString()) as { messageId: string }[]).map(
        ({ messageId }) => messageId,
      ),
    );
    const ids = group.map(({ id }) => id);
    expect(carried).toEqual([
      ['msg_payload', ids[0]],
      ['msg_payload', ids[0], ids[1]],
      ['msg_payload', ...ids],
    ]);
  });
});
