import { createMessage, newMessageId } from '../../../../gateway/queue/core/message.js';

describe('messages', () => {
  it('when ids are made past the size of their random pool, then each is new and has the msg_ form', () => {
    const ids = Array.from({ length: 5_000 }, () => newMessageId());
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^msg_[A-Za-z0-9_-]{24}$/);
  });

  it('when a message is created, then it has an id, no retries made yet and its publish time', () => {
    const message = createMessage(
      { destination: 'https://a.example/', method: 'POST', headers: {}, body: Buffer.from('x'), retries: 3 },
      1_700_000_000_000,
    );
    expect(message).toMatchObject({ retried: 0, createdAt: 1_700_000_000_000, retries: 3 });
    expect(message.id).toMatch(/^msg_/);
  });
});
