import type { Redis } from 'ioredis';
import { queueKeys, type QueueKeys } from '../../../../gateway/queue/core/keys.js';
import { createMessage, type QueueMessage } from '../../../../gateway/queue/core/message.js';
import { decodeMessage } from '../../../../gateway/queue/core/message-codec.js';
import { buildRawStep, type WorkflowRunConfig } from '../../../../gateway/queue/core/workflow-message.js';
import { MessageStore } from '../../../../gateway/queue/stores/message-store.js';
import { prepareWorkflowMessages } from '../../../../gateway/queue/stores/workflow-publish.js';
import { WorkflowRunStore } from '../../../../gateway/queue/stores/workflow-run-store.js';
import { useGatewayRedis } from '../../../helpers/queue/gateway-redis.js';

const URL = 'http://127.0.0.1:9/wf';
const LIMITS = { maxSteps: 100, maxContextBytes: 1_000_000 };
const EVENT_CAP = 1000;
/** A run with every setting a delivery takes from it: headers, retries, label, failure callback. */
const CONFIG: WorkflowRunConfig = {
  url: URL,
  headers: { 'x-tenant': 'a' },
  retries: 2,
  retryDelay: '1000',
  label: 'nightly',
  failureCallback: { url: `${URL}/failed`, method: 'POST', headers: {}, retries: 1 },
};

/** A step publish of run `runId` as the SDK sends it. */
function stepPublish(runId: string, stepId: number, url = URL): QueueMessage {
  return createMessage({
    destination: url,
    method: 'POST',
    headers: { 'x-step': 'sent with the step' },
    body: Buffer.from(JSON.stringify({ stepId, stepName: `s${stepId}`, stepType: 'Run', out: '1' })),
    retries: 0,
    workflowPublish: { runId, init: false, url },
  });
}

/** The messages on the stream by id, decoded. */
async function streamed(inspect: Redis, keys: QueueKeys): Promise<Map<string, QueueMessage>> {
  const entries = await inspect.xrangeBuffer(keys.stream, '-', '+');
  // Each entry holds one field, the message (keys.ts MESSAGE_FIELD).
  const messages = entries.map(([, fields]) => decodeMessage(fields[1]!));
  return new Map(messages.map((message) => [message.id, message]));
}

/** A delivery without what differs from one step to the next: its id, creation time and body (the steps so far). */
const settingsOf = ({ id: _, createdAt: __, body: ___, ...rest }: QueueMessage) => rest;

/**
 * A step of a run this replica started or appended to is stored with its append, in one script
 * (the run's settings are fixed by its trigger, so the replica builds the delivery): the stored
 * delivery is the one the two-script path builds, and a replica whose settings are not the run's
 * (its id started again since) never stores a delivery from them.
 */
describe('workflow step deliveries stored with their append on a real Redis', () => {
  const gateway = useGatewayRedis();
  let replicas: Redis[];

  beforeAll(() => {
    replicas = [gateway.redis, gateway.connect()];
  });

  /**
   * Run `runId` started through replica a, then dropped (as a trim drops a finished run) and its id
   * started again through replica b with `again`: a still holds the first run's settings.
   */
  async function startedAgain(runId: string, again: { config: WorkflowRunConfig; createdAt: number }) {
    const keys = queueKeys(`{${runId}}:`);
    const [a, b] = replicas.map((redis) => new WorkflowRunStore(redis, keys, LIMITS));
    const firstStep = buildRawStep('msg_payload', Buffer.from('{}'), 1);
    await a!.start({ runId, config: CONFIG, createdAt: 1, firstStep });
    await gateway.inspect.del(keys.workflowRun(runId), keys.workflowSteps(runId));
    await b!.start({ runId, ...again, firstStep });
    return { keys, a: a!, storeA: new MessageStore(replicas[0]!, keys, EVENT_CAP) };
  }

  it('when a step of a run the replica knows is published, then its delivery is stored in the append with the settings, steps and CREATED event the other path gives', async () => {
    const keys = queueKeys('{known}:');
    const [a, b] = replicas.map((redis) => new WorkflowRunStore(redis, keys, LIMITS));
    const [storeA, storeB] = replicas.map((redis) => new MessageStore(redis, keys, EVENT_CAP));
    const firstStep = buildRawStep('msg_payload', Buffer.from('{"order":1}'), 1000);
    await a!.start({ runId: 'wfr_known', config: CONFIG, createdAt: 1000, firstStep });
    // Replica b never saw the run: its step comes back as a delivery for the caller to store.
    const [fromB] = await prepareWorkflowMessages(b!, [stepPublish('wfr_known', 1)], storeB);
    expect(fromB).toHaveProperty('body');
    // Replica a started it: its step is stored in the append, answered as stored.
    const step2 = stepPublish('wfr_known', 2);
    const [fromA] = await prepareWorkflowMessages(a!, [step2], storeA);
    expect(fromA).toEqual({ messageId: step2.id, deduplicated: false });

    const stored = (await streamed(gateway.inspect, keys)).get(step2.id)!;
    expect(settingsOf(stored)).toEqual(settingsOf(fromB as QueueMessage));
    expect(stored.workflow).toEqual({ runId: 'wfr_known', createdAt: 1000, initialBody: firstStep.body });
    const steps = (JSON.parse(stored.body.toString()) as { messageId: string }[]).map((s) => s.messageId);
    expect(steps).toEqual(['msg_payload', (fromB as QueueMessage).id, step2.id]);
    const events = await gateway.inspect.xrange(keys.events, '-', '+');
    const created = events.map(([, [, json]]) => JSON.parse(json!) as { messageId: string; state: string });
    expect(created).toContainEqual(expect.objectContaining({ messageId: step2.id, state: 'CREATED' }));
    // b learnt the run from its answer: its next step is stored with its append too.
    const step3 = stepPublish('wfr_known', 3);
    await expect(prepareWorkflowMessages(b!, [step3], storeB)).resolves.toEqual([
      { messageId: step3.id, deduplicated: false },
    ]);
    expect(settingsOf((await streamed(gateway.inspect, keys)).get(step3.id)!)).toEqual(settingsOf(stored));
  });

  it('when a step of a run the replica knows comes in a request with another message, then its delivery comes back to be stored with that message, not in the append', async () => {
    // The request's other messages are stored by later scripts: had the step's delivery been
    // stored in the append, a later script's failure (a 5xx the client retries the whole request
    // on) would leave it stored and the retry would store it again.
    const keys = queueKeys('{mixed}:');
    const runs = new WorkflowRunStore(gateway.redis, keys, LIMITS);
    const store = new MessageStore(gateway.redis, keys, EVENT_CAP);
    const firstStep = buildRawStep('msg_payload', Buffer.from('{}'), 1);
    await runs.start({ runId: 'wfr_mixed', config: CONFIG, createdAt: 1, firstStep });
    const plain = createMessage({
      destination: URL,
      method: 'POST',
      headers: {},
      body: Buffer.from('x'),
      retries: 0,
    });

    const [step, other] = await prepareWorkflowMessages(runs, [stepPublish('wfr_mixed', 1), plain], store);
    expect(step).toMatchObject({ workflow: { runId: 'wfr_mixed', createdAt: 1 } });
    expect(other).toBe(plain);
    expect(await gateway.inspect.xlen(keys.stream)).toBe(0);
  });

  it('when a run id was started again with other settings since the replica learnt it, then its step is delivered with the new run settings, not stored from the old', async () => {
    const other = `${URL}/v2`;
    const { keys, a, storeA } = await startedAgain('wfr_again', {
      config: { url: other, headers: {}, retries: 0 },
      createdAt: 2,
    });

    const [prepared] = await prepareWorkflowMessages(a, [stepPublish('wfr_again', 1, other)], storeA);
    expect(prepared).toMatchObject({
      destination: other,
      retries: 0,
      workflow: { runId: 'wfr_again', createdAt: 2 },
    });
    expect(await gateway.inspect.xlen(keys.stream)).toBe(0);
    // a learnt the new run from the answer: its next step is stored, with the new settings.
    const step2 = stepPublish('wfr_again', 2, other);
    await expect(prepareWorkflowMessages(a, [step2], storeA)).resolves.toEqual([
      { messageId: step2.id, deduplicated: false },
    ]);
    expect((await streamed(gateway.inspect, keys)).get(step2.id)).toMatchObject({
      destination: other,
      workflow: { runId: 'wfr_again', createdAt: 2 },
    });
  });

  it('when a run id was started again with the same settings since the replica learnt it, then its step is delivered with the new run creation time', async () => {
    // The SDK triggers the same run id again with the same settings after its run was dropped:
    // only the creation time differs, which the SDK sends back on every step (Upstash-Workflow-CreatedAt).
    const { keys, a, storeA } = await startedAgain('wfr_same', { config: CONFIG, createdAt: 2 });

    const [prepared] = await prepareWorkflowMessages(a, [stepPublish('wfr_same', 1)], storeA);
    expect(prepared).toMatchObject({ workflow: { runId: 'wfr_same', createdAt: 2 } });
    expect(await gateway.inspect.xlen(keys.stream)).toBe(0);
    const step2 = stepPublish('wfr_same', 2);
    await prepareWorkflowMessages(a, [step2], storeA);
    expect((await streamed(gateway.inspect, keys)).get(step2.id)).toMatchObject({
      workflow: { runId: 'wfr_same', createdAt: 2 },
    });
  });
});
