import type { ApiHandler } from '../../../../gateway/queue/http/api-request.js';
import { createApiRouter } from '../../../../gateway/queue/http/api-router.js';
import { InvalidRequestError, MethodNotAllowedError } from '../../../../gateway/queue/core/errors.js';

const get: ApiHandler = async () => undefined;
const post: ApiHandler = async () => undefined;
const match = createApiRouter([
  { path: 'keys', methods: { GET: get } },
  { path: 'topics/:name/endpoints', methods: { POST: post, DELETE: get } },
]);

describe('the management API router', () => {
  it('when a path matches a pattern, then the binding, handler, decoded params and query are returned', () => {
    const found = match('POST', '/tenant%2Da/db/v2/topics/my%20group/endpoints/?x=1');
    expect(found).toMatchObject({
      namespace: 'tenant-a',
      name: 'db',
      handler: post,
      params: { name: 'my group' },
    });
    expect(found?.query.get('x')).toBe('1');
    expect(match('GET', '/ns/db/v2/keys')?.handler).toBe(get);
  });

  it('when the path is known but the method is not, then it is a 405 naming the allowed ones', () => {
    expect(() => match('PUT', '/ns/db/v2/topics/g/endpoints')).toThrow(MethodNotAllowedError);
    expect(() => match('PUT', '/ns/db/v2/topics/g/endpoints')).toThrow(/this route takes POST, DELETE/);
  });

  it('when nothing matches, or a param is empty, then there is no match', () => {
    expect(match('GET', '/ns/db/v2/nothing')).toBeUndefined();
    expect(match('GET', '/ns/db/v2/keys/extra')).toBeUndefined();
    expect(match('POST', '/ns/db/v2/topics//endpoints')).toBeUndefined();
    expect(match('GET', '/ns/v2/keys')).toBeUndefined();
  });

  it('when a param is not percent-encoded text, then it is a 400 naming it', () => {
    expect(() => match('POST', '/ns/db/v2/topics/%E0%A4%A/endpoints')).toThrow(InvalidRequestError);
    expect(() => match('POST', '/ns/db/v2/topics/%E0%A4%A/endpoints')).toThrow(/name/);
  });
});

describe('the management API router with a rest-of-path route', () => {
  const create: ApiHandler = async () => undefined;
  const pause: ApiHandler = async () => undefined;
  const read: ApiHandler = async () => undefined;
  const route = createApiRouter([
    { path: 'schedules/:id/pause', methods: { PATCH: pause, POST: pause } },
    { path: 'schedules/:id', methods: { GET: read } },
    { path: 'schedules/*destination', methods: { POST: create } },
  ]);

  it('when a destination URL follows, then it is taken raw with its slashes and query string', () => {
    const found = route('POST', '/ns/db/v2/schedules/https://a.example/x/pause?token=a%2Fb');
    expect(found?.handler).toBe(create);
    expect(found?.params).toEqual({ destination: 'https://a.example/x/pause?token=a%2Fb' });
  });

  it('when a shorter route matches the path but not the method, then a later route with the method is used', () => {
    expect(route('POST', '/ns/db/v2/schedules/my-group')?.params).toEqual({ destination: 'my-group' });
    expect(route('POST', '/ns/db/v2/schedules/scd_1/pause')?.handler).toBe(pause);
    expect(() => route('DELETE', '/ns/db/v2/schedules/scd_1/pause')).toThrow(/this route takes PATCH, POST/);
  });
});
