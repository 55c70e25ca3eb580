import { Registry } from 'prom-client';
import type { RequestCounts } from '../../../../api/request-usage.js';
import { RequestMeter } from '../../../../gateway/envelope/request-meter.js';
import {
  buildRequestUsageLease,
  type RequestUsageReport,
} from '../../../../gateway/envelope/request-usage-lease.js';
import { RequestUsageReporter } from '../../../../gateway/envelope/request-usage-reporter.js';
import { createSilentLogger } from '../../../../observability/logger.js';

const ref = { namespace: 'tenant-a', name: 'db1' };
const KEY = 'tenant-a/db1';

function setUp(start: string) {
  let now = Date.parse(start);
  const meter = new RequestMeter(new Registry());
  const writes: RequestUsageReport[] = [];
  let failNext = false;
  const reporter = new RequestUsageReporter({
    meter,
    writerId: 'gw-0.abc123',
    intervalMs: 30_000,
    logger: createSilentLogger(),
    now: () => now,
    write: async (report) => {
      if (failNext) {
        failNext = false;
        throw new Error('API server unavailable');
      }
      writes.push({ ...report, days: new Map(report.days) });
    },
  });
  const send = (n: number, cls: 'read' | 'write' | 'query' = 'read', bytes?: number) => {
    for (let i = 0; i < n; i++)
      meter.count(KEY, ref, 'uid-1', cls, bytes === undefined ? undefined : String(bytes));
  };
  return {
    meter,
    reporter,
    writes,
    send,
    advance: (ms: number) => (now += ms),
    failOnce: () => (failNext = true),
    lastDays: () => Object.fromEntries(writes.at(-1)?.days ?? []) as Record<string, RequestCounts>,
  };
}

describe('RequestUsageReporter', () => {
  it('when requests were counted, then one write carries the day’s cumulative counts, and nothing is written again until they move', async () => {
    const t = setUp('2026-11-24T10:00:00Z');
    t.send(3, 'read');
    t.send(2, 'write', 100);
    await t.reporter.flush();
    expect(t.lastDays()).toEqual({
      '2026-11-24': { read: 3, write: 2, query: 0, bytesIn: 200, bytesOut: 0 },
    });
    await t.reporter.flush();
    expect(t.writes).toHaveLength(1);
    t.send(1, 'query');
    await t.reporter.flush();
    expect(t.writes).toHaveLength(2);
    expect(t.lastDays()['2026-11-24']?.query).toBe(1);
  });

  it('when UTC midnight passes, then yesterday keeps its final counts and today starts from zero; the day after, yesterday is no longer written', async () => {
    const t = setUp('2026-11-24T23:59:50Z');
    t.send(4);
    await t.reporter.flush();
    t.send(1); // before midnight, written after it
    t.advance(20_000);
    await t.reporter.flush();
    expect(t.lastDays()).toEqual({ '2026-11-24': { read: 5, write: 0, query: 0, bytesIn: 0, bytesOut: 0 } });
    t.send(2);
    await t.reporter.flush();
    expect(t.lastDays()).toEqual({
      '2026-11-24': { read: 5, write: 0, query: 0, bytesIn: 0, bytesOut: 0 },
      '2026-11-25': { read: 2, write: 0, query: 0, bytesIn: 0, bytesOut: 0 },
    });
    t.advance(86_400_000);
    await t.reporter.flush();
    // Only the day before today is written: 11-24 is dropped (the API server removes it) and
    // 11-25 becomes "yesterday" with its final counts.
    expect(Object.keys(t.lastDays())).toEqual(['2026-11-25']);
  });

  it('when a write fails, then the next flush writes the counts again, including what came meanwhile', async () => {
    const t = setUp('2026-11-24T10:00:00Z');
    t.send(2);
    t.failOnce();
    await t.reporter.flush();
    expect(t.writes).toHaveLength(0);
    t.send(1);
    await t.reporter.flush();
    expect(t.lastDays()['2026-11-24']?.read).toBe(3);
  });

  it('when it stops, then the last counts are written (a graceful restart loses nothing)', async () => {
    const t = setUp('2026-11-24T10:00:00Z');
    t.reporter.start();
    t.send(7);
    await t.reporter.stop();
    expect(t.lastDays()['2026-11-24']?.read).toBe(7);
  });

  it('when the report is built, then the Lease body holds the identity, the owner and one annotation per day, nothing else', () => {
    const lease = buildRequestUsageLease({
      instance: { ...ref, uid: 'uid-1' },
      writerId: 'gw-0.abc123',
      days: new Map([['2026-11-24', { read: 1, write: 2, query: 3, bytesIn: 4, bytesOut: 5 }]]),
    });
    expect(lease).toEqual({
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: {
        name: 'db1-activity',
        namespace: 'tenant-a',
        labels: { 'settee.dev/instance': 'db1' },
        ownerReferences: [
          { apiVersion: 'settee.dev/v1alpha1', kind: 'CouchInstance', name: 'db1', uid: 'uid-1' },
        ],
        annotations: {
          'usage.settee.dev/2026-11-24.gw-0.abc123':
            '{"read":1,"write":2,"query":3,"bytesIn":4,"bytesOut":5}',
        },
      },
    });
  });
});
