import type { ApiHandler } from './api-request.js';
import type { ApiRoute } from './api-router.js';
import { resourceNameError } from '../core/resource-name.js';

/**
 * The route that answers a name holding `/` in a path with the name's 400 instead of a bare 404.
 * The SDK puts names in paths unencoded (`[baseUrl, ...path].join("/")`), so
 * `urlGroups.addEndpoints({name: 'https://x.example/y'})` asks for
 * `/v2/topics/https://x.example/y/endpoints`, which no route of single-segment names matches.
 * `suffixes` are, per method, the route endings after the name (`endpoints`, `pause`) to take off
 * before naming it; a method not listed is not answered here. It is a fallback (api-router.ts),
 * so a known path asked with another method stays a 405.
 */
export function slashedNameRoute(
  family: string,
  field: string,
  suffixes: Readonly<Record<string, readonly string[]>>,
): ApiRoute {
  const methods: Record<string, ApiHandler> = {};
  for (const [method, endings] of Object.entries(suffixes))
    methods[method] = ({ params }) => {
      const path = params.rest!.replace(/[?#].*$/s, '').replace(/\/+$/, '');
      const ending = endings.find((suffix) => path.toLowerCase().endsWith(`/${suffix}`));
      const name = ending === undefined ? path : path.slice(0, -ending.length - 1);
      return Promise.reject(resourceNameError(name, field));
    };
  return { path: `${family}/*rest`, methods, fallback: true };
}
