import { InvalidRequestError } from '../../../../gateway/queue/errors.js';
import { isQueuePath, matchQueueRoute } from '../../../../gateway/queue/queue-route.js';

describe('queue routes', () => {
  it('when a URL is under /queue, then the queue answers it; otherwise it does not', () => {
    for (const url of ['/queue', '/queue/', '/queue?x=1', '/queue/ns/db/v2/batch', '/QUEUE/ns/db/v2/batch'])
      expect(isQueuePath(url)).toBe(true);
    for (const url of ['/', '/queues/ns', '/queuex', '/healthz', '/db/ns/queue'])
      expect(isQueuePath(url)).toBe(false);
  });

  it('when a POST publishes, then its binding and whole destination are taken from the path', () => {
    expect(matchQueueRoute('POST', '/ns/db/v2/publish/https://a.example/hook?x=1&y=2')).toEqual({
      kind: 'publish',
      namespace: 'ns',
      name: 'db',
      destination: 'https://a.example/hook?x=1&y=2',
    });
    expect(matchQueueRoute('POST', '/ns/db/v2/publish')).toMatchObject({ kind: 'publish', destination: '' });
    expect(matchQueueRoute('POST', '/ns/db/v2/publish?x=1')).toMatchObject({
      kind: 'publish',
      destination: '',
    });
  });

  it('when a POST sends a batch, then its binding is taken from the path, with or without a trailing slash or query', () => {
    for (const url of ['/ns/db/v2/batch', '/ns/db/v2/batch/', '/ns/db/v2/batch?x=1'])
      expect(matchQueueRoute('POST', url)).toEqual({ kind: 'batch', namespace: 'ns', name: 'db' });
  });

  it('when the path names no endpoint, then there is no route', () => {
    for (const url of [
      '/',
      '/ns/db',
      '/ns/db/v2/batches',
      '/ns/db/v1/publish/https://a.example/',
      '/ns/v2/batch',
      '/ns/db/v2/messages/a/b',
      '/ns/db/v2/queues',
    ])
      expect(matchQueueRoute('POST', url)).toBeUndefined();
  });

  it('when a known path is asked with another method, then it is a wrong method listing the allowed ones', () => {
    expect(matchQueueRoute('GET', '/ns/db/v2/batch')).toEqual({ kind: 'wrong-method', allow: ['POST'] });
    expect(matchQueueRoute('PUT', '/ns/db/v2/publish/https://a.example/')).toEqual({
      kind: 'wrong-method',
      allow: ['POST'],
    });
    expect(matchQueueRoute('POST', '/ns/db/v2/messages/msg_1')).toEqual({
      kind: 'wrong-method',
      allow: ['GET', 'DELETE'],
    });
    expect(matchQueueRoute('GET', '/ns/db/v2/dlq/retry')).toEqual({ kind: 'wrong-method', allow: ['POST'] });
  });

  it('when a management route is asked, then its operation, id and query are taken from the path', () => {
    expect(matchQueueRoute('GET', '/ns/db/v2/messages/msg_%41b')).toMatchObject({
      kind: 'message.get',
      namespace: 'ns',
      name: 'db',
      id: 'msg_Ab',
    });
    expect(matchQueueRoute('DELETE', '/ns/db/v2/messages/msg_1')).toMatchObject({ kind: 'message.cancel' });
    const bulk = matchQueueRoute('DELETE', '/ns/db/v2/messages?messageIds=a&messageIds=b');
    expect(bulk).toMatchObject({ kind: 'messages.cancel' });
    expect(bulk && 'query' in bulk && bulk.query.getAll('messageIds')).toEqual(['a', 'b']);
    expect(matchQueueRoute('GET', '/ns/db/v2/dlq?count=5')).toMatchObject({ kind: 'dlq.list' });
    expect(matchQueueRoute('GET', '/ns/db/v2/dlq/1700-abc')).toMatchObject({
      kind: 'dlq.get',
      id: '1700-abc',
    });
    expect(matchQueueRoute('DELETE', '/ns/db/v2/dlq/1700-abc')).toMatchObject({ kind: 'dlq.delete' });
    expect(matchQueueRoute('DELETE', '/ns/db/v2/dlq')).toMatchObject({ kind: 'dlq.deleteMany' });
    expect(matchQueueRoute('POST', '/ns/db/v2/dlq/retry/1700-abc')).toMatchObject({
      kind: 'dlq.retry',
      id: '1700-abc',
    });
    expect(matchQueueRoute('POST', '/ns/db/v2/dlq/retry?dlqIds=x')).toMatchObject({ kind: 'dlq.retryMany' });
    expect(matchQueueRoute('GET', '/ns/db/v2/events')).toMatchObject({ kind: 'events.list' });
    expect(matchQueueRoute('GET', '/ns/db/v2/logs/')).toMatchObject({ kind: 'events.list' });
  });

  it('when a binding segment is percent-encoded, then it is decoded, and bad encoding is bad input', () => {
    expect(matchQueueRoute('POST', '/n%73/db/v2/batch')).toMatchObject({ namespace: 'ns' });
    expect(() => matchQueueRoute('POST', '/%E0%A4%A/db/v2/batch')).toThrow(InvalidRequestError);
  });
});
