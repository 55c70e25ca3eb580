import type { Redis } from 'ioredis';
import { InvalidRequestError, QuotaExceededError } from '../../../../gateway/queue/core/errors.js';
import { queueKeys } from '../../../../gateway/queue/core/keys.js';
import { createMessage } from '../../../../gateway/queue/core/message.js';
import { buildRawStep } from '../../../../gateway/queue/core/workflow-message.js';
import { prepareWorkflowMessages } from '../../../../gateway/queue/stores/workflow-publish.js';
import { WorkflowRunStore } from '../../../../gateway/queue/stores/workflow-run-store.js';
import { useGatewayRedis } from '../../../helpers/queue/gateway-redis.js';

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

/** Starts run `runId` (its payload the first step) through `runs`. */
async function start(runs: WorkflowRunStore, runId: string): Promise<void> {
  const firstStep = buildRawStep('msg_payload', Buffer.from('{}'), 1);
  await runs.start({ runId, config: { url: URL, headers: {}, retries: 0 }, createdAt: 1, firstStep });
}

/**
 * A parallel group's steps come in one request, and the run's step limit must take all of them or
 * none, even while another replica appends a step of the same run at the same moment: the check and
 * the appends are one script, so no replica sees a group half stored. Steps of two runs in one
 * request are refused whole; steps already stored take no room.
 */
describe('a parallel group of workflow steps on a real Redis', () => {
  const gateway = useGatewayRedis();
  let replicas: Redis[];
  let inspect: Redis;

  beforeAll(() => {
    replicas = [gateway.redis, gateway.connect()];
    inspect = gateway.inspect;
  });

  it('when a group races a single step of its run past the step limit, then the group is stored whole or not at all, in every round', async () => {
    const keys = queueKeys('{groups}:');
    const [a, b] = replicas.map((redis) => new WorkflowRunStore(redis, keys, LIMITS));
    for (let round = 0; round < 25; round += 1) {
      const runId = `wfr_race${round}`;
      await start(a!, runId);
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
    await start(runs, 'wfr_bodies');
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

  it('when a request holds steps of two runs, the second one full, then it is a 400 naming both and no step of it is stored', async () => {
    const keys = queueKeys('{two-runs}:');
    const runs = new WorkflowRunStore(replicas[0]!, keys, LIMITS);
    await start(runs, 'wfr_roomy');
    await start(runs, 'wfr_full');
    await prepareWorkflowMessages(
      runs,
      [1, 2, 3, 4, 5, 6].map((stepId) => stepPublish('wfr_full', stepId)),
    );
    const mixed = [stepPublish('wfr_roomy', 1), stepPublish('wfr_full', 7)];
    const refused = prepareWorkflowMessages(runs, mixed);
    await expect(refused).rejects.toBeInstanceOf(InvalidRequestError);
    await expect(refused).rejects.toThrow(/wfr_roomy, wfr_full/);
    expect(await inspect.llen(keys.workflowSteps('wfr_roomy'))).toBe(1);
    expect(await inspect.llen(keys.workflowSteps('wfr_full'))).toBe(7);
  });

  it('when a retried delivery publishes again only steps already stored, then a run over a step limit lowered since still takes them', async () => {
    const keys = queueKeys('{repeats}:');
    await start(new WorkflowRunStore(replicas[0]!, keys, LIMITS), 'wfr_lowered');
    const group = [1, 2, 3].map((stepId) => stepPublish('wfr_lowered', stepId));
    await prepareWorkflowMessages(new WorkflowRunStore(replicas[0]!, keys, LIMITS), group);
    // The binding's spec now allows two steps; the run has three.
    const lowered = new WorkflowRunStore(replicas[1]!, keys, { ...LIMITS, maxSteps: 2 });
    // A retried delivery publishes the same steps again, as new messages.
    const again = [1, 2, 3].map((stepId) => stepPublish('wfr_lowered', stepId));
    await expect(prepareWorkflowMessages(lowered, again)).resolves.toHaveLength(3);
    // A new step is still checked against the lowered limit.
    await expect(prepareWorkflowMessages(lowered, [stepPublish('wfr_lowered', 4)])).rejects.toBeInstanceOf(
      QuotaExceededError,
    );
  });
});
