import {
  EVENT_BODY_BYTES,
  eventJson,
  type MessageEvent,
} from '../../../../gateway/queue/core/message-event.js';
import { createMessage, type QueueMessage } from '../../../../gateway/queue/core/message.js';

const STEPS = Buffer.from(JSON.stringify([{ messageId: 'msg_1', body: 'e30=', callType: 'step' }]));

function message(extra: Partial<QueueMessage> = {}): QueueMessage {
  return createMessage({
    destination: 'http://127.0.0.1:9/wf',
    method: 'POST',
    headers: { 'upstash-workflow-runid': 'wfr_1' },
    body: STEPS,
    retries: 3,
    ...extra,
  });
}

const eventOf = (m: QueueMessage): MessageEvent => JSON.parse(eventJson(m, 'DELIVERED', 1)) as MessageEvent;

describe('the events of a message', () => {
  it('when a plain message is recorded, then its event carries the start of its body', () => {
    const long = message({ body: Buffer.alloc(EVENT_BODY_BYTES + 10, 'a') });
    expect(eventOf(message()).body).toBe(STEPS.toString('base64'));
    expect(Buffer.from(eventOf(long).body!, 'base64')).toHaveLength(EVENT_BODY_BYTES);
  });

  it("when a workflow run's delivery is recorded, then its event names the run and carries no copy of its steps", () => {
    const event = eventOf(message({ workflow: { runId: 'wfr_1', createdAt: 1 } }));
    expect(event.body).toBeUndefined();
    expect(event.header).toEqual({ 'upstash-workflow-runid': ['wfr_1'] });
    expect(event.messageId).toMatch(/^msg_/);
  });

  it("when a run's failure callback is recorded, then its event carries its body, which is its own", () => {
    expect(eventOf(message({ workflowFailureOf: { runId: 'wfr_1' } })).body).toBe(STEPS.toString('base64'));
  });
});
