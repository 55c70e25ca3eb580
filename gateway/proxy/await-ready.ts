import type { Logger } from 'winston';
import { HoldQueueFullError, InstanceUnschedulableError, WakeTimeoutError } from '../http/errors.js';
import type { EndpointCache, UpstreamAddress } from './endpoint-cache.js';
import { objectKey } from '../../kube/controller-runtime/object-key.js';
import type { InstanceRef } from '../instance-ref.js';
import { ProbeSchedule } from './probe-schedule.js';

export interface AwaitReadyOptions {
  endpoints: Pick<EndpointCache, 'addressOf' | 'onChange' | 'unschedulableOf'>;
  /**
   * Resolves true once CouchDB at `origin` answers /_up or, at an instance's first start
   * (`firstStart`), once it serves its system databases too (couchdb/probe-up.ts).
   */
  probe: (origin: string, firstStart: boolean) => Promise<boolean>;
  /**
   * Whether the instance is at its first start now (api/first-start.ts), asked at each probe: there
   * neither the pod's readiness nor /_up is trusted, as both come before CouchDB has made its system
   * databases. A wake never is, so it pays nothing for this.
   */
  isFirstStart?: (instance: InstanceRef) => boolean;
  /** Requests held per instance; the next one is refused with a 503 at once. */
  holdQueueLimit: number;
  /** How long one request may be held before it gets a 503. */
  timeoutMs: number;
  /** Pause between two /_up probes of a starting instance once it may be up any moment. */
  probeIntervalMs: number;
  /** Pause between two probes while the instance's recent boots say it cannot be up yet (probe-schedule.ts). */
  sparseProbeIntervalMs: number;
  /** Called once per wake, with the time from the first held request to the release. */
  onReleased?: (instance: InstanceRef, wakeMs: number) => void;
  logger: Logger;
  now?: () => number;
}

/** Where a held request goes, and how long it waited (the X-Settee-Cold-Start value). */
export interface Released {
  origin: string;
  heldMs: number;
}

interface HeldRequest {
  enqueuedAt: number;
  resolve: (released: Released) => void;
  reject: (err: unknown) => void;
  timer: NodeJS.Timeout;
}

interface Waiting {
  instance: InstanceRef;
  queue: HeldRequest[];
  startedAt: number;
  probing: boolean;
  probeTimer: NodeJS.Timeout | undefined;
  /** When the first probe of this wait went out. */
  probedSince: number | undefined;
  /** Whether a probe found it not up: only then was a boot seen, and its length worth learning. */
  missed: boolean;
}

/**
 * Holds the requests of an instance that is not up yet, in a bounded queue with a deadline each,
 * and releases them in arrival order the moment it is: either the endpoint is ready, or (the
 * short way) it has an address and CouchDB's /_up answers the gateway's own probe, so neither the
 * kubelet's probe period nor readiness propagation is on the wake path.
 */
export class AwaitReady {
  private readonly waiting = new Map<string, Waiting>();
  /** Addresses whose /_up answered although their endpoint is not marked ready yet. */
  private readonly verified = new Map<string, string>();
  /** Addresses that refused a connection although marked ready: probed before they are used again. */
  private readonly distrusted = new Map<string, string>();
  private readonly schedule: ProbeSchedule;
  private readonly now: () => number;
  private readonly unsubscribe: () => void;

  constructor(private readonly options: AwaitReadyOptions) {
    this.now = options.now ?? Date.now;
    this.schedule = new ProbeSchedule({
      intervalMs: options.probeIntervalMs,
      sparseIntervalMs: options.sparseProbeIntervalMs,
    });
    this.unsubscribe = options.endpoints.onChange((key, address) => {
      if (this.verified.get(key) !== address?.origin) this.verified.delete(key);
      // Any news about the endpoint (readiness included) supersedes what a refused connection said.
      this.distrusted.delete(key);
      this.pump(key);
    });
  }

  /**
   * The origin to forward to now, or undefined when the request must be held. Allocates nothing.
   * `firstStart`: the instance is at its first start (see isFirstStart).
   */
  readyOrigin(instanceKey: string, firstStart = false): string | undefined {
    const address = this.options.endpoints.addressOf(instanceKey);
    return address !== undefined && this.isTrusted(instanceKey, address, firstStart)
      ? address.origin
      : undefined;
  }

  /**
   * Holds a request until its instance is up; rejects with a 503 error on overflow or timeout, and
   * at once when the scheduler cannot place its pod.
   */
  hold(instance: InstanceRef, signal?: AbortSignal): Promise<Released> {
    const key = objectKey(instance);
    const unschedulable = this.options.endpoints.unschedulableOf(key);
    if (unschedulable !== undefined)
      return Promise.reject(new InstanceUnschedulableError(instance, unschedulable));
    const now = this.now();
    let waiting = this.waiting.get(key);
    if (waiting && waiting.queue.length >= this.options.holdQueueLimit) {
      return Promise.reject(new HoldQueueFullError(instance, this.options.holdQueueLimit));
    }
    if (!waiting) {
      waiting = {
        instance,
        queue: [],
        startedAt: now,
        probing: false,
        probeTimer: undefined,
        probedSince: undefined,
        missed: false,
      };
      this.waiting.set(key, waiting);
    }
    const entry = waiting;
    const promise = new Promise<Released>((resolve, reject) => {
      const held: HeldRequest = {
        enqueuedAt: now,
        resolve,
        reject,
        timer: setTimeout(() => {
          this.remove(key, held);
          reject(new WakeTimeoutError(instance, this.options.timeoutMs));
        }, this.options.timeoutMs),
      };
      entry.queue.push(held);
      signal?.addEventListener(
        'abort',
        () => {
          this.remove(key, held);
          reject(signal.reason);
        },
        { once: true },
      );
    });
    this.pump(key);
    return promise;
  }

  isHolding(instanceKey: string): boolean {
    return this.waiting.has(instanceKey);
  }

  /** An address refused a connection: requests are held and it is probed until it answers or changes. */
  invalidate(instanceKey: string, origin: string): void {
    if (this.verified.get(instanceKey) === origin) this.verified.delete(instanceKey);
    this.distrusted.set(instanceKey, origin);
  }

  /** Ends every request held for an instance with `err` (it was deleted). */
  fail(instanceKey: string, err: unknown): void {
    this.schedule.forget(instanceKey);
    const waiting = this.waiting.get(instanceKey);
    if (!waiting) return;
    this.finish(instanceKey, waiting);
    for (const held of waiting.queue) {
      clearTimeout(held.timer);
      held.reject(err);
    }
  }

  /** Ends every held request with `err` and stops probing (shutdown). */
  close(err: unknown): void {
    this.unsubscribe();
    for (const key of [...this.waiting.keys()]) this.fail(key, err);
  }

  private pump(key: string): void {
    const waiting = this.waiting.get(key);
    if (!waiting) return;
    const unschedulable = this.options.endpoints.unschedulableOf(key);
    if (unschedulable !== undefined) {
      this.fail(key, new InstanceUnschedulableError(waiting.instance, unschedulable));
      return;
    }
    if (waiting.probing || waiting.probeTimer) return;
    const address = this.options.endpoints.addressOf(key);
    if (!address) return; // the endpoint cache calls pump again when one appears
    const firstStart = this.options.isFirstStart?.(waiting.instance) ?? false;
    if (this.isTrusted(key, address, firstStart)) {
      this.release(key, waiting, address.origin);
      return;
    }
    waiting.probing = true;
    const probedSince = (waiting.probedSince ??= this.now());
    void this.options.probe(address.origin, firstStart).then((up) => {
      waiting.probing = false;
      if (this.waiting.get(key) !== waiting) return;
      if (up && this.options.endpoints.addressOf(key)?.origin === address.origin) {
        // A first start makes the system databases too: not the length of the next boot.
        if (waiting.missed && !firstStart) this.schedule.booted(key, this.now() - probedSince);
        this.verified.set(key, address.origin);
        this.distrusted.delete(key);
        this.release(key, waiting, address.origin);
        return;
      }
      waiting.missed = true;
      const delayMs = firstStart
        ? this.options.probeIntervalMs
        : this.schedule.delayMs(key, this.now() - probedSince);
      waiting.probeTimer = setTimeout(() => {
        waiting.probeTimer = undefined;
        this.pump(key);
      }, delayMs);
    });
  }

  private isTrusted(key: string, address: UpstreamAddress, firstStart: boolean): boolean {
    if (this.verified.get(key) === address.origin) return true;
    return !firstStart && address.ready && this.distrusted.get(key) !== address.origin;
  }

  private release(key: string, waiting: Waiting, origin: string): void {
    this.finish(key, waiting);
    const now = this.now();
    this.options.onReleased?.(waiting.instance, now - waiting.startedAt);
    this.options.logger.info('instance is up; releasing held requests', {
      instance: key,
      origin,
      held: waiting.queue.length,
      wakeMs: now - waiting.startedAt,
    });
    // Resolved in arrival order, so their continuations (and forwards) start in that order.
    for (const held of waiting.queue) {
      clearTimeout(held.timer);
      held.resolve({ origin, heldMs: now - held.enqueuedAt });
    }
  }

  private remove(key: string, held: HeldRequest): void {
    const waiting = this.waiting.get(key);
    if (!waiting) return;
    clearTimeout(held.timer);
    const at = waiting.queue.indexOf(held);
    if (at >= 0) waiting.queue.splice(at, 1);
    if (waiting.queue.length === 0) this.finish(key, waiting);
  }

  private finish(key: string, waiting: Waiting): void {
    clearTimeout(waiting.probeTimer);
    waiting.probeTimer = undefined;
    if (this.waiting.get(key) === waiting) this.waiting.delete(key);
  }
}
