import type { ApiRoute } from './api-router.js';
import type { BindingRegistry } from '../core/binding-registry.js';
import { sendJson } from './json-response.js';
import {
  rotateSigningKeys,
  signingKeysOf,
  type RotationRequestWriter,
} from '../bindings/signing-key-rotation.js';

/** How long POST /v2/keys/rotate waits for the operator to publish the new keys. */
export const KEY_ROTATION_ANSWER_TIMEOUT_MS = 30_000;

/**
 * GET /v2/keys and POST /v2/keys/rotate, answered `{current, next}` as QStash does: the env
 * Secret's VQUEUE_CURRENT_SIGNING_KEY and VQUEUE_NEXT_SIGNING_KEY. Rotation is served only where the
 * gateway can write to the Kubernetes API (always, in the gateway; not in tests without a cluster).
 */
export function signingKeyRoutes(options: {
  registry: BindingRegistry;
  write?: RotationRequestWriter | undefined;
  timeoutMs?: number;
}): ApiRoute[] {
  const routes: ApiRoute[] = [
    { path: 'keys', methods: { GET: async ({ res, target }) => sendJson(res, 200, signingKeysOf(target)) } },
  ];
  const { write } = options;
  if (write) {
    routes.push({
      path: 'keys/rotate',
      methods: {
        POST: async ({ res, target }) =>
          sendJson(
            res,
            200,
            await rotateSigningKeys({
              registry: options.registry,
              target,
              write,
              timeoutMs: options.timeoutMs ?? KEY_ROTATION_ANSWER_TIMEOUT_MS,
            }),
          ),
      },
    });
  }
  return routes;
}
