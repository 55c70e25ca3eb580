import { Router } from 'express';
import type { Registry } from 'prom-client';
import type { ReadinessCheck } from '../../observability/health-server.js';

/**
 * The gateway's own health routes: /healthz (the process answers), /readyz (its caches are filled
 * and it is not shutting down; 503 otherwise, naming what is not ready) and /metrics.
 */
export function createHealthRouter(options: {
  registry: Registry;
  readiness: readonly ReadinessCheck[];
}): Router {
  const router = Router();
  router.get('/healthz', (_req, res) => {
    res.type('text/plain').send('ok');
  });
  router.get('/readyz', (_req, res) => {
    const failing = options.readiness.filter((check) => !check.isReady()).map((check) => check.name);
    res.status(failing.length === 0 ? 200 : 503).json({ ready: failing.length === 0, failing });
  });
  router.get('/metrics', async (_req, res) => {
    res.type(options.registry.contentType).send(await options.registry.metrics());
  });
  return router;
}
