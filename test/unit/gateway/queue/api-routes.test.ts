import { createApiRouter } from '../../../../gateway/queue/http/api-router.js';
import type { BindingRegistry } from '../../../../gateway/queue/core/binding-registry.js';
import { loadQueueConfig } from '../../../../gateway/queue/core/config.js';
import type { DatabaseConnections } from '../../../../gateway/queue/stores/database-connections.js';
import { InvalidRequestError, MethodNotAllowedError } from '../../../../gateway/queue/core/errors.js';
import { queueKeys } from '../../../../gateway/queue/core/keys.js';
import { isQueuePath } from '../../../../gateway/queue-url/queue-path.js';
import { apiRoutes } from '../../../../gateway/queue/http/api-routes.js';
import { compileAddressPolicy } from '../../../../gateway/queue/core/address-policy.js';

const config = loadQueueConfig({});
// Building the table touches neither the registry nor a database: handlers reach them per request.
const match = createApiRouter(
  apiRoutes({
    registry: {} as BindingRegistry,
    connections: {} as DatabaseConnections,
    keys: queueKeys(config.keyPrefix),
    config,
    policy: compileAddressPolicy(config.ssrfAllowlist),
  }),
);

function wrongMethod(method: string, url: string): readonly string[] {
  try {
    match(method, url);
  } catch (err) {
    if (err instanceof MethodNotAllowedError) return err.allow;
    throw err;
  }
  throw new Error(`${method} ${url} matched`);
}

describe('the queue route table', () => {
  it('when a URL is under /queue, then the queue answers it; otherwise it does not', () => {
    for (const url of ['/queue', '/queue/', '/queue?x=1', '/queue/ns/db/v2/batch', '/QUEUE/ns/db/v2/batch'])
      expect(isQueuePath(url)).toBe(true);
    for (const url of ['/', '/queues/ns', '/queuex', '/healthz', '/db/ns/queue'])
      expect(isQueuePath(url)).toBe(false);
  });

  it('when a POST publishes, then its binding and whole destination are taken from the path', () => {
    expect(match('POST', '/ns/db/v2/publish/https://a.example/hook?x=1&y=2')).toMatchObject({
      path: 'publish/*destination',
      namespace: 'ns',
      name: 'db',
      params: { destination: 'https://a.example/hook?x=1&y=2' },
    });
    for (const url of ['/ns/db/v2/publish', '/ns/db/v2/publish/', '/ns/db/v2/publish?x=1'])
      expect(match('POST', url)).toMatchObject({ path: 'publish', params: {} });
    expect(match('POST', '/ns/db/V2/PUBLISH/https://a.example/')?.params).toEqual({
      destination: 'https://a.example/',
    });
  });

  it('when a POST sends a batch, then its binding is taken from the path, with or without a trailing slash or query', () => {
    for (const url of ['/ns/db/v2/batch', '/ns/db/v2/batch/', '/ns/db/v2/batch?x=1', '/ns/db/v2/Batch'])
      expect(match('POST', url)).toMatchObject({ path: 'batch', namespace: 'ns', name: 'db' });
  });

  it('when the path names no endpoint, then there is no route', () => {
    for (const url of [
      '/',
      '/ns/db',
      '/ns/db/v2/batches',
      '/ns/db/v1/publish/https://a.example/',
      '/ns/v2/batch',
      '/ns/db/v2/messages/a/b',
    ])
      expect(match('POST', url)).toBeUndefined();
  });

  it('when a name holding "/" reaches a topics, queues or schedules path, then it is a 400 naming the field, and a known path with another method stays a 405', async () => {
    // The fallback's handler reads only the params the router matched.
    const call = async (method: string, url: string): Promise<string> => {
      const found = match(method, url);
      if (!found) return 'no route';
      return found.handler({ params: found.params } as Parameters<typeof found.handler>[0]).then(
        () => 'answered',
        (err: Error) => `${err.constructor.name}: ${err.message}`,
      );
    };
    expect(match('POST', '/ns/db/v2/topics/https://x.example/y/endpoints')?.path).toBe('topics/*rest');
    const cases: [string, string, string][] = [
      ['POST', 'topics/https://x.example/y/endpoints', 'url group name "https://x.example/y"'],
      ['DELETE', 'topics/https://x.example/y/endpoints', 'url group name "https://x.example/y"'],
      ['GET', 'topics/https://x.example/y', 'url group name "https://x.example/y"'],
      ['DELETE', 'topics/https://x.example/y', 'url group name "https://x.example/y"'],
      ['GET', 'queues/a/b', 'queue name "a/b"'],
      ['POST', 'queues/a/b/pause', 'queue name "a/b"'],
      ['GET', 'schedules/a/b', 'schedule id "a/b"'],
      ['PATCH', 'schedules/a/b/resume', 'schedule id "a/b"'],
    ];
    for (const [method, path, name] of cases)
      expect(await call(method, `/ns/db/v2/${path}`)).toBe(
        `InvalidRequestError: ${name} may contain only letters, digits, '-', '_' and '.'`,
      );
    expect(wrongMethod('GET', '/ns/db/v2/topics/ok/endpoints')).toEqual(['POST', 'DELETE']);
    expect(wrongMethod('GET', '/ns/db/v2/queues/ok/pause')).toEqual(['POST']);
    expect(wrongMethod('GET', '/ns/db/v2/schedules/ok/pause')).toEqual(['PATCH', 'POST']);
    // A POST under schedules/ is still a create, whatever its destination.
    expect(match('POST', '/ns/db/v2/schedules/https://a.example/x/pause')?.path).toBe(
      'schedules/*destination',
    );
  });

  it('when a known path is asked with another method, then it is a wrong method listing the allowed ones', () => {
    expect(wrongMethod('GET', '/ns/db/v2/batch')).toEqual(['POST']);
    expect(wrongMethod('PUT', '/ns/db/v2/publish/https://a.example/')).toEqual(['POST']);
    expect(wrongMethod('POST', '/ns/db/v2/messages/msg_1')).toEqual(['GET', 'DELETE']);
    // dlq/retry is a path of literals: it is not read as the dead letter "retry".
    expect(wrongMethod('GET', '/ns/db/v2/dlq/retry')).toEqual(['POST']);
    expect(wrongMethod('PUT', '/ns/db/v2/schedules/scd_1')).toEqual(['GET', 'DELETE', 'POST']);
  });

  it('when a management route is asked, then its route, id and query are taken from the path', () => {
    expect(match('GET', '/ns/db/v2/messages/msg_%41b')).toMatchObject({
      path: 'messages/:id',
      namespace: 'ns',
      name: 'db',
      params: { id: 'msg_Ab' },
    });
    expect(match('DELETE', '/ns/db/v2/messages/msg_1')?.path).toBe('messages/:id');
    const bulk = match('DELETE', '/ns/db/v2/messages?messageIds=a&messageIds=b');
    expect(bulk?.path).toBe('messages');
    expect(bulk?.query.getAll('messageIds')).toEqual(['a', 'b']);
    expect(match('GET', '/ns/db/v2/dlq?count=5')?.path).toBe('dlq');
    expect(match('GET', '/ns/db/v2/dlq/1700-abc')).toMatchObject({
      path: 'dlq/:id',
      params: { id: '1700-abc' },
    });
    expect(match('DELETE', '/ns/db/v2/dlq')?.path).toBe('dlq');
    expect(match('POST', '/ns/db/v2/dlq/retry/1700-abc')).toMatchObject({
      path: 'dlq/retry/:id',
      params: { id: '1700-abc' },
    });
    expect(match('POST', '/ns/db/v2/dlq/retry?dlqIds=x')?.path).toBe('dlq/retry');
    expect(match('GET', '/ns/db/v2/events')?.path).toBe('events');
    expect(match('GET', '/ns/db/v2/logs/')?.path).toBe('logs');
    expect(match('GET', '/ns/db/v2/topics/g')?.path).toBe('topics/:name');
    expect(match('POST', '/ns/db/v2/schedules/https://a.example/x')?.path).toBe('schedules/*destination');
    expect(match('PATCH', '/ns/db/v2/schedules/scd_1/pause')?.path).toBe('schedules/:id/pause');
  });

  it('when a binding segment is percent-encoded, then it is decoded, and bad encoding is bad input', () => {
    expect(match('POST', '/n%73/db/v2/batch')).toMatchObject({ namespace: 'ns' });
    expect(() => match('POST', '/%E0%A4%A/db/v2/batch')).toThrow(InvalidRequestError);
  });
});
