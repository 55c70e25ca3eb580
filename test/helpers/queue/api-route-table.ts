import type { ApiRoute } from '../../../gateway/queue/http/api-router.js';
import { apiRoutes } from '../../../gateway/queue/http/api-routes.js';
import type { BindingRegistry } from '../../../gateway/queue/core/binding-registry.js';
import type { DatabaseConnections } from '../../../gateway/queue/stores/database-connections.js';
import { loadQueueConfig } from '../../../gateway/queue/core/config.js';
import { queueKeys } from '../../../gateway/queue/core/keys.js';
import type { RotationRequestWriter } from '../../../gateway/queue/bindings/signing-key-rotation.js';
import { compileAddressPolicy } from '../../../gateway/queue/core/address-policy.js';

/**
 * The gateway's own route table (api-routes.ts), every optional route included, for tests that
 * must cover each route: building it touches neither the registry nor a database. The fallbacks
 * (a name holding `/`, slashed-name-route.ts) only with `withFallbacks`: they answer a 400 to
 * every request, so only the fuzz suite asks them.
 */
export function queueApiRouteTable(options: { withFallbacks?: boolean } = {}): ApiRoute[] {
  const config = loadQueueConfig({});
  return apiRoutes({
    registry: {} as BindingRegistry,
    connections: {} as DatabaseConnections,
    keys: queueKeys(config.keyPrefix),
    config,
    policy: compileAddressPolicy(config.ssrfAllowlist),
    rotationWriter: (() => Promise.reject(new Error('not served here'))) as RotationRequestWriter,
  }).filter((route) => options.withFallbacks === true || !route.fallback);
}

/** One value per path param name, so each route's path can be asked as a concrete URL. */
const SAMPLE_PARAMS: Readonly<Record<string, string>> = {
  id: 'x1',
  name: 'orders',
  key: 'fc-key',
  queue: 'orders',
  destination: 'https://a.example/x',
  runId: 'wfr_x1',
  userId: 'ns.db',
  eventId: 'evt_x1',
  // A fallback's name with a `/` in it.
  rest: 'a.example/x',
};

/** `/v2/<path>` with each `:param` and `*param` of the route replaced by a sample value. */
export function concretePath(routePath: string): string {
  const segments = routePath.split('/').map((segment) => {
    if (!/^[:*]/.test(segment)) return segment;
    const value = SAMPLE_PARAMS[segment.slice(1)];
    if (value === undefined) throw new Error(`no sample value for ${segment} in ${routePath}`);
    return value;
  });
  return `/v2/${segments.join('/')}`;
}
