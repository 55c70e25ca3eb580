import { buildMessageDetail, buildMessageRows, type QueueEvent } from '../../../console/api/message-view.js';

const NOW = 1_800_000_000_000;
const URL_A = 'http://127.0.0.1:9/a';

/** Events as the API gives them: newest first. Written here oldest first, for reading. */
const newestFirst = (...events: QueueEvent[]): QueueEvent[] => [...events].reverse();
const event = (
  messageId: string,
  state: string,
  time: number,
  extra: Partial<QueueEvent> = {},
): QueueEvent => ({
  messageId,
  state,
  time,
  url: URL_A,
  ...extra,
});

describe('the messages view', () => {
  it('when a message was delivered on its second attempt, then it reads Delivered, 2 attempts, status 200, and each attempt has its answer', () => {
    const history = newestFirst(
      event('m1', 'CREATED', 1),
      event('m1', 'ACTIVE', 2),
      event('m1', 'ERROR', 3, { responseStatus: 503, error: 'status 503' }),
      event('m1', 'RETRY', 4, { nextDeliveryTime: 10 }),
      event('m1', 'ACTIVE', 10),
      event('m1', 'DELIVERED', 11, { responseStatus: 200 }),
    );
    const [row] = buildMessageRows(history, { now: NOW });
    expect(row).toMatchObject({
      messageId: 'm1',
      state: 'Delivered',
      group: 'delivered',
      attempts: 2,
      historyComplete: true,
      lastResponseStatus: 200,
      lastError: null,
      nextDeliveryAt: null,
      createdAt: 1,
      updatedAt: 11,
    });
    expect(buildMessageDetail(history, { now: NOW, messageId: 'm1' })?.attemptLog).toEqual([
      { startedAt: 2, outcome: 'failed', responseStatus: 503, error: 'status 503', responseBody: null },
      { startedAt: 10, outcome: 'delivered', responseStatus: 200, error: null, responseBody: null },
    ]);
  });

  it('when the last attempt failed and retries are left, then it is Retrying, in flight, with the next attempt time and the failed status', () => {
    const [row] = buildMessageRows(
      newestFirst(
        event('m1', 'CREATED', 1),
        event('m1', 'ACTIVE', 2),
        event('m1', 'ERROR', 3, { responseStatus: 500, error: 'status 500' }),
        event('m1', 'RETRY', 4, { nextDeliveryTime: NOW + 60_000 }),
      ),
      { now: NOW },
    );
    expect(row).toMatchObject({
      state: 'Retrying',
      group: 'in-flight',
      attempts: 1,
      lastResponseStatus: 500,
      nextDeliveryAt: NOW + 60_000,
    });
  });

  it('when retries ran out, then it is Failed with the last error, and FAILED does not count as another attempt', () => {
    const row = buildMessageDetail(
      newestFirst(
        event('m1', 'CREATED', 1),
        event('m1', 'ACTIVE', 2),
        event('m1', 'ERROR', 3, { error: 'connect ECONNREFUSED' }),
        event('m1', 'FAILED', 4, { error: 'connect ECONNREFUSED' }),
      ),
      { now: NOW, messageId: 'm1' },
    );
    expect(row).toMatchObject({
      state: 'Failed',
      group: 'failed',
      attempts: 1,
      lastResponseStatus: null,
      lastError: 'connect ECONNREFUSED',
    });
    expect(row?.attemptLog[0]).toMatchObject({ outcome: 'failed', error: 'connect ECONNREFUSED' });
  });

  it('when a message is only stored, then it is Delayed while its due time is ahead and Queued once it has passed', () => {
    const events = newestFirst(
      event('m1', 'CREATED', 1, { nextDeliveryTime: NOW + 1 }),
      event('m2', 'CREATED', 2),
    );
    const rows = buildMessageRows(events, { now: NOW });
    expect(rows.map((r) => [r.messageId, r.state, r.nextDeliveryAt])).toEqual([
      ['m2', 'Queued', null],
      ['m1', 'Delayed', NOW + 1],
    ]);
    expect(buildMessageRows(events, { now: NOW + 2 }).find((r) => r.messageId === 'm1')?.state).toBe(
      'Queued',
    );
  });

  it('when messages interleave, then each gets its own row, the most recently changed first, and a group keeps only its own', () => {
    const events = newestFirst(
      event('a', 'CREATED', 1),
      event('b', 'CREATED', 2),
      event('a', 'ACTIVE', 3),
      event('b', 'CANCEL_REQUESTED', 4),
      event('b', 'CANCELLED', 4),
      event('c', 'CREATED', 5),
      event('a', 'DELIVERED', 6, { responseStatus: 204 }),
    );
    const rows = buildMessageRows(events, { now: NOW });
    expect(rows.map((r) => [r.messageId, r.state])).toEqual([
      ['a', 'Delivered'],
      ['c', 'Queued'],
      ['b', 'Cancelled'],
    ]);
    expect(buildMessageRows(events, { now: NOW, group: 'in-flight' }).map((r) => r.messageId)).toEqual(['c']);
    expect(buildMessageRows(events, { now: NOW, group: 'cancelled' }).map((r) => r.messageId)).toEqual(['b']);
  });

  it('when a message was created before the events read, then its history is marked incomplete and an attempt under way reads Delivering', () => {
    const [row] = buildMessageRows([event('old', 'ACTIVE', 9)], { now: NOW });
    expect(row).toMatchObject({ state: 'Delivering', attempts: 1, historyComplete: false, createdAt: null });
  });

  it('when there are no events, then there are no rows and no detail', () => {
    expect(buildMessageRows([], { now: NOW })).toEqual([]);
    expect(buildMessageDetail([], { now: NOW, messageId: 'm1' })).toBeUndefined();
  });

  it("when events carry the request and a failed answer, then the detail has the method, each header value, the body and the answer's body as text, and the list none of them", () => {
    const request = {
      method: 'POST',
      header: { 'Content-Type': ['application/json'], 'X-Tag': ['a', 'b'] },
      body: Buffer.from('{"n":1}').toString('base64'),
    };
    const history = newestFirst(
      event('m1', 'CREATED', 1, request),
      event('m1', 'ACTIVE', 2, request),
      event('m1', 'ERROR', 3, {
        ...request,
        responseStatus: 500,
        responseBody: Buffer.from('<b>down</b>').toString('base64'),
      }),
      event('m2', 'CREATED', 4, { body: 'REDACTED:abc' }),
    );
    expect(buildMessageDetail(history, { now: NOW, messageId: 'm1' })).toMatchObject({
      method: 'POST',
      headers: [
        ['Content-Type', 'application/json'],
        ['X-Tag', 'a'],
        ['X-Tag', 'b'],
      ],
      body: '{"n":1}',
      attemptLog: [{ outcome: 'failed', responseStatus: 500, responseBody: '<b>down</b>' }],
    });
    expect(buildMessageDetail(history, { now: NOW, messageId: 'm2' })?.body).toBe('REDACTED:abc');
    for (const row of buildMessageRows(history, { now: NOW }))
      for (const key of ['method', 'headers', 'body', 'attemptLog']) expect(row).not.toHaveProperty(key);
  });
});
