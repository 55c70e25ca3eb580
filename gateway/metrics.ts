import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { GatewayErrorCode } from './http/errors.js';

export interface GatewayMetrics {
  readonly registry: Registry;
  /** One wake, from the first request held to the instance answering /_up. */
  observeWake(seconds: number): void;
  countWakeRequest(): void;
  countRenewal(outcome: 'success' | 'error'): void;
  /** A write of an instance's request usage to its activity Lease (request-usage-reporter.ts). */
  countUsageWrite(outcome: 'success' | 'error'): void;
  /** An instance request answered by the gateway itself with an error. */
  countError(code: GatewayErrorCode | 'INTERNAL'): void;
  /** An instance request forwarded; counted when its response starts. */
  countForwarded(heldForWake: boolean): void;
  /** An instance request forwarded by the fast path's splice (a subset of the forwarded ones). */
  countSpliced(): void;
}

/**
 * A registry of its own (not prom-client's global one), so two gateways in one test process don't
 * share counters. Metric names are prefixed `settee_gateway_`. No per-instance labels: there may be
 * thousands of instances, and the histogram of wakes is the figure that matters across them.
 */
export function createGatewayMetrics(options: { defaultMetrics?: boolean } = {}): GatewayMetrics {
  const registry = new Registry();
  if (options.defaultMetrics ?? true)
    collectDefaultMetrics({ register: registry, prefix: 'settee_gateway_' });
  const wakeDuration = new Histogram({
    name: 'settee_gateway_wake_duration_seconds',
    help: 'Time from the first request held for a hibernated or starting instance until its CouchDB answered /_up.',
    buckets: [0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1, 2, 5, 10, 30],
    registers: [registry],
  });
  const wakeRequests = new Counter({
    name: 'settee_gateway_wake_requests_total',
    help: 'Wake requests written to CouchInstances (one per hibernation episode per gateway replica).',
    registers: [registry],
  });
  const renewals = new Counter({
    name: 'settee_gateway_activity_renewals_total',
    help: 'Activity Lease renewals, by outcome.',
    labelNames: ['outcome'],
    registers: [registry],
  });
  const usageWrites = new Counter({
    name: 'settee_gateway_usage_writes_total',
    help: 'Writes of instances’ request usage (requests and bytes of the UTC day) to their activity Leases, by outcome.',
    labelNames: ['outcome'],
    registers: [registry],
  });
  const errors = new Counter({
    name: 'settee_gateway_errors_total',
    help: 'Instance requests the gateway answered with an error of its own, by error code.',
    labelNames: ['code'],
    registers: [registry],
  });
  // Counted in plain numbers and handed to prom-client at scrape time: a labelled inc() hashes and
  // validates its labels on every call, a cost the forwarding path would pay per request.
  const pendingForwarded = { direct: 0, held: 0 };
  new Counter({
    name: 'settee_gateway_forwarded_requests_total',
    help: 'Instance requests forwarded to CouchDB, by whether they were held for a wake.',
    labelNames: ['held'],
    registers: [registry],
    collect() {
      if (pendingForwarded.direct > 0) this.inc({ held: 'false' }, pendingForwarded.direct);
      if (pendingForwarded.held > 0) this.inc({ held: 'true' }, pendingForwarded.held);
      pendingForwarded.direct = 0;
      pendingForwarded.held = 0;
    },
  });
  // A plain number too, for the same reason: it is counted per request on the fast path.
  let pendingSpliced = 0;
  new Counter({
    name: 'settee_gateway_spliced_requests_total',
    help: 'Instance requests forwarded by the raw-socket fast path (SETTEE_GATEWAY_FAST_PATH), also counted in settee_gateway_forwarded_requests_total.',
    registers: [registry],
    collect() {
      if (pendingSpliced > 0) this.inc(pendingSpliced);
      pendingSpliced = 0;
    },
  });
  return {
    registry,
    observeWake: (seconds) => wakeDuration.observe(seconds),
    countWakeRequest: () => wakeRequests.inc(),
    countRenewal: (outcome) => renewals.inc({ outcome }),
    countUsageWrite: (outcome) => usageWrites.inc({ outcome }),
    countError: (code) => errors.inc({ code }),
    countForwarded: (heldForWake) => {
      if (heldForWake) pendingForwarded.held += 1;
      else pendingForwarded.direct += 1;
    },
    countSpliced: () => {
      pendingSpliced += 1;
    },
  };
}
