import { Counter, type Registry } from 'prom-client';
import type { InstanceRef } from '../instance-ref.js';
import type { RequestClass } from './request-class.js';

/** One instance's counts on this replica since it started; the forward adds the bytes out. */
export interface InstanceCounts {
  readonly namespace: string;
  readonly name: string;
  /** The instance's uid when first counted: the owner of the Lease its usage is written to. */
  readonly uid: string | undefined;
  read: number;
  write: number;
  query: number;
  bytesIn: number;
  bytesOut: number;
}

/**
 * Requests by class and body bytes in and out, per instance, for every plan: the gateway's half of
 * metering (docs/metering.md). Plain numbers on the request path, handed to prom-client at scrape
 * time (a labelled inc() per request would hash its labels each time) and read by the
 * RequestUsageReporter, which keeps them in the activity Lease. Each replica counts what it
 * served, so summing the replicas counts every request once; a restart resets its counters, which
 * Prometheus's increase() reads as a reset, not as a drop. A deleted instance's series go.
 */
export class RequestMeter {
  private readonly counts = new Map<string, InstanceCounts>();

  constructor(registry: Registry) {
    const counts = this.counts;
    new Counter({
      name: 'settee_gateway_instance_requests_total',
      help: 'Requests forwarded to (or held for) each instance, by class: read, write, query.',
      labelNames: ['namespace', 'instance', 'class'],
      registers: [registry],
      collect() {
        this.reset();
        for (const c of counts.values()) {
          const labels = { namespace: c.namespace, instance: c.name };
          if (c.read > 0) this.inc({ ...labels, class: 'read' }, c.read);
          if (c.write > 0) this.inc({ ...labels, class: 'write' }, c.write);
          if (c.query > 0) this.inc({ ...labels, class: 'query' }, c.query);
        }
      },
    });
    new Counter({
      name: 'settee_gateway_instance_body_bytes_total',
      help:
        'Body bytes of each instance’s requests (in: their Content-Length, or as a chunked upload ' +
        'streams) and responses (out: as streamed to the client).',
      labelNames: ['namespace', 'instance', 'direction'],
      registers: [registry],
      collect() {
        this.reset();
        for (const c of counts.values()) {
          const labels = { namespace: c.namespace, instance: c.name };
          if (c.bytesIn > 0) this.inc({ ...labels, direction: 'in' }, c.bytesIn);
          if (c.bytesOut > 0) this.inc({ ...labels, direction: 'out' }, c.bytesOut);
        }
      },
    });
  }

  /** Counts one request and returns the instance's counts, for the response's bytes. */
  count(
    key: string,
    ref: InstanceRef,
    uid: string | undefined,
    requestClass: RequestClass,
    contentLength: string | undefined,
  ): InstanceCounts {
    let counts = this.counts.get(key);
    if (counts === undefined) {
      counts = {
        namespace: ref.namespace,
        name: ref.name,
        uid,
        read: 0,
        write: 0,
        query: 0,
        bytesIn: 0,
        bytesOut: 0,
      };
      this.counts.set(key, counts);
    }
    counts[requestClass] += 1;
    if (contentLength !== undefined) {
      const length = Number(contentLength);
      if (length > 0) counts.bytesIn += length;
    }
    return counts;
  }

  /** Every instance counted since this process started, by key. */
  entries(): IterableIterator<[string, InstanceCounts]> {
    return this.counts.entries();
  }

  forget(key: string): void {
    this.counts.delete(key);
  }
}
