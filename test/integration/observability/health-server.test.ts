import { Counter } from 'prom-client';
import { startHealthServer, type HealthServer } from '../../../observability/health-server.js';
import { createSilentLogger } from '../../../observability/logger.js';
import { createOperatorMetrics } from '../../../observability/metrics.js';

describe('health and metrics server', () => {
  let server: HealthServer;
  let ready = false;
  const metrics = createOperatorMetrics();

  beforeAll(async () => {
    server = await startHealthServer({
      host: '127.0.0.1',
      port: 0,
      registry: metrics.registry,
      readiness: [{ name: 'informers-synced', isReady: () => ready }],
      logger: createSilentLogger(),
    });
  });

  afterAll(() => server.close());

  const get = (path: string, init?: RequestInit) => fetch(`http://127.0.0.1:${server.port}${path}`, init);

  it('when /healthz is asked, then it answers ok', async () => {
    const response = await get('/healthz');
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('ok');
  });

  it('when a readiness check fails, then /readyz answers 503 naming it, and 200 once it passes', async () => {
    ready = false;
    const notReady = await get('/readyz');
    expect(notReady.status).toBe(503);
    expect(await notReady.json()).toEqual({ ready: false, failing: ['informers-synced'] });
    ready = true;
    const isReady = await get('/readyz');
    expect(isReady.status).toBe(200);
    expect(await isReady.json()).toEqual({ ready: true, failing: [] });
  });

  it("when /metrics is scraped, then reconcile metrics by controller, leadership, queue depth, process metrics and controllers' own metrics appear", async () => {
    metrics.observeReconcile('couch-instance', 'success', 0.02);
    metrics.observeReconcile('couch-instance', 'error', 0.5);
    metrics.setLeader(true);
    metrics.trackQueueDepth('couch-instance', () => 7);
    new Counter({
      name: 'settee_wakes_total',
      help: 'added by a controller',
      registers: [metrics.registry],
    }).inc(2);
    const response = await get('/metrics');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await response.text();
    expect(text).toMatch(/settee_reconcile_total\{controller="couch-instance",outcome="success"\} 1/);
    expect(text).toMatch(/settee_reconcile_errors_total\{controller="couch-instance"\} 1/);
    expect(text).toMatch(/settee_reconcile_duration_seconds_count\{controller="couch-instance"\} 2/);
    expect(text).toMatch(/settee_workqueue_depth\{controller="couch-instance"\} 7/);
    expect(text).toMatch(/settee_leader 1/);
    expect(text).toMatch(/settee_process_resident_memory_bytes \d+/);
    expect(text).toMatch(/settee_wakes_total 2/);
  });

  it('when an unknown path or method is used, then it answers 404 or 405', async () => {
    expect((await get('/nope')).status).toBe(404);
    expect((await get('/metrics', { method: 'POST' })).status).toBe(405);
  });
});
