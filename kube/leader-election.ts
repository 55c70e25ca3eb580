import type { CustomObjectsApi } from '@kubernetes/client-node';
import type { Logger } from 'winston';
import { errorMessage } from '../observability/logger.js';
import { callKube, isAlreadyExists, isConflict, isNotFound } from './errors.js';
import { InterruptibleSleep } from './controller-runtime/interruptible-sleep.js';
import { formatMicroTime } from './micro-time.js';

/** A coordination.k8s.io/v1 Lease as JSON: read and written raw so renewTime keeps its microseconds. */
interface LeaseJson {
  apiVersion: 'coordination.k8s.io/v1';
  kind: 'Lease';
  metadata: { name: string; namespace: string; resourceVersion?: string };
  spec?: {
    holderIdentity?: string;
    leaseDurationSeconds?: number;
    acquireTime?: string;
    renewTime?: string;
    leaseTransitions?: number;
  };
}

export interface LeaderElectionOptions {
  /** The Lease goes through CustomObjectsApi because it passes JSON through untouched. */
  customObjects: CustomObjectsApi;
  namespace: string;
  leaseName: string;
  identity: string;
  /** A standby takes over this long after it last saw the Lease change (whole seconds). */
  leaseDurationMs: number;
  /**
   * How long a renewal round (begun a retry period after the last renewal) may try before the
   * leader stops leading, as client-go's RenewDeadline; shorter than leaseDurationMs.
   */
  renewDeadlineMs: number;
  /** Interval between renewals and between acquisition attempts. */
  retryPeriodMs: number;
  logger: Logger;
  /** Start reconciling. */
  onStartedLeading: () => void;
  /**
   * Stop reconciling. On stop() it is awaited before the Lease is released, so two leaders never
   * overlap; once the Lease is lost, it is given lostLeadershipGraceMs at most.
   */
  onStoppedLeading: () => Promise<void>;
  /**
   * The Lease was lost (not given up through stop()): called once onStoppedLeading settled or the
   * grace ran out. Reconciles may still be running then, and a new leader may start as soon as the
   * lease duration has passed, so the process should exit now, as controller-runtime's does: its
   * Deployment starts it again as a standby. The elector never stands again after this.
   */
  onLostLeadership: () => void;
}

/** Upper bound of lostLeadershipGraceMs. */
const MAX_LOST_LEADERSHIP_GRACE_MS = 1_000;

/**
 * How long a leader that lost its Lease waits for its reconciles before onLostLeadership. A
 * standby takes over no sooner than leaseDuration after the last renewal; the old leader notices
 * its loss by renewDeadline plus one retry period after it: half the time between is the grace.
 */
export function lostLeadershipGraceMs(
  timing: Pick<LeaderElectionOptions, 'leaseDurationMs' | 'renewDeadlineMs' | 'retryPeriodMs'>,
): number {
  const gapMs = timing.leaseDurationMs - timing.renewDeadlineMs - timing.retryPeriodMs;
  return Math.max(0, Math.min(MAX_LOST_LEADERSHIP_GRACE_MS, Math.floor(gapMs / 2)));
}

/**
 * When a renewal round gives up: a renew deadline after its start, as client-go's renew(), but
 * with the start counted no later than a retry period after the last renewal. The round begins
 * when a timer fires, and a late timer (GC pauses of up to 648 ms were recorded) would otherwise
 * add its lateness to how long a leader that can no longer renew keeps leading, while a standby
 * may take over a lease duration after the last write whatever this process's timers do. When
 * timers are on time this is client-go's deadline; it never grows with their lag.
 */
export function renewalRoundDeadline(round: {
  lastRenewalAt: number;
  startedAt: number;
  retryPeriodMs: number;
  renewDeadlineMs: number;
}): number {
  return Math.min(round.startedAt, round.lastRenewalAt + round.retryPeriodMs) + round.renewDeadlineMs;
}

const LEASE_API = { group: 'coordination.k8s.io', version: 'v1', plural: 'leases' } as const;

class AttemptTimeoutError extends Error {
  readonly code = 'LEASE_ATTEMPT_TIMEOUT';
}

/**
 * Leader election on a Lease, after client-go's leaderelection: a candidate takes the Lease when
 * it is free or its holder has not renewed it for a lease duration (measured on the candidate's
 * own clock from when it saw the Lease change, so clock skew between replicas does not matter);
 * the leader renews every retry period and stops leading when it cannot renew within the renew
 * deadline; on stop it stops reconciling first, then releases the Lease so a standby takes over at
 * once. A leader that lost the Lease stops reconciling within a short grace and reports it through
 * onLostLeadership, never to stand again (the process exits and restarts as a standby).
 */
export class LeaderElector {
  private leading = false;
  private stopped = false;
  private loop: Promise<void> | undefined;
  private readonly waits = new InterruptibleSleep();
  /** `at`: when this process saw the Lease change, on the monotonic clock. */
  private observed: { holder: string; renewTime: string; at: number } | undefined;
  private readonly logger: Logger;

  constructor(private readonly options: LeaderElectionOptions) {
    this.logger = options.logger.child({
      lease: `${options.namespace}/${options.leaseName}`,
      identity: options.identity,
    });
  }

  get isLeader(): boolean {
    return this.leading;
  }

  start(): void {
    this.loop ??= this.run();
  }

  /** Stops reconciling (if leading), releases the Lease, and ends the loop. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.waits.interrupt();
    await this.loop;
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      const acquiredAt = await this.attempt(this.options.renewDeadlineMs);
      if (acquiredAt !== undefined) {
        await this.lead(acquiredAt);
      } else {
        await this.waits.sleep(this.options.retryPeriodMs);
      }
    }
  }

  /**
   * Leads from the Lease write whose renewTime was taken at `acquiredAt` (monotonic), renewing
   * until a round fails. The last renewal is always when the leader took the renewTime it wrote,
   * before the write was sent, never the moment its answer arrived. Why: the write is committed at some moment C after it was
   * sent and before it answered. A standby sees it only in a read that answers after C and takes
   * over no sooner than a lease duration after that answer (tryAcquireOrRenew), so not before
   * renewTime + leaseDuration. The leader gives up a retry period plus the renew deadline after
   * its renewTime (renewalRoundDeadline) and stops within lostLeadershipGraceMs, which the options
   * keep inside the lease duration (the operator refuses leaseDuration < renewDeadline + retry +
   * 1 s): it has stopped before any standby may start. Counted from the answer, a renewal
   * answered late (7.8 s after it was sent, recorded at load 30) would push the leader's end
   * later by that delay while the standbys' lease duration already runs from the commit: two
   * leaders for up to that delay. Each side compares only its own clock's readings, so clock
   * skew between replicas does not enter. The next round begins a retry period after the
   * renewTime, or at once when the answer came later, so a slow answer does not also cost the
   * next round a retry period of its deadline. Every local deadline (last renewal, round deadline,
   * a standby's expiry) is on the monotonic clock (monotonicNow): were it wall time, NTP stepping
   * the clock back by X would keep the leader leading X longer, while the standbys' clocks run on.
   * Wall time is only written into the Lease (renewTime, acquireTime), for people reading it.
   * What remains assumed: timers fire roughly on time. A late timer does not lengthen the round
   * (renewalRoundDeadline), but the grace and the in-flight attempt's timeout may run late; the
   * slack for that is leaseDuration - renewDeadline - retryPeriod - grace: 2 s with the chart's
   * defaults, 0.5 s at the narrowest timing the operator accepts. Stalls of up to 848 ms were
   * recorded (docs/limits.md).
   */
  private async lead(acquiredAt: number): Promise<void> {
    this.leading = true;
    this.logger.info('became leader');
    this.options.onStartedLeading();
    let lost = false;
    let lastRenewalAt = acquiredAt;
    while (!this.stopped) {
      await this.waits.sleep(Math.max(0, lastRenewalAt + this.options.retryPeriodMs - monotonicNow()));
      if (this.stopped) break;
      const renewedAt = await this.renew(lastRenewalAt);
      if (renewedAt === undefined) {
        lost = !this.stopped;
        break;
      }
      lastRenewalAt = renewedAt;
    }
    this.leading = false;
    if (lost) return this.onLost();
    this.logger.info('stepping down');
    await this.options.onStoppedLeading();
    await this.release();
  }

  /**
   * One renewal round, as client-go's renew() runs one (wait.PollUntilContextTimeout): tries at
   * once and every retry period after a failure until one succeeds (the renewTime it wrote), the
   * renew deadline has passed since the round began (undefined), or another holds the Lease
   * (undefined). The deadline runs from the round's start, a retry period after the last
   * renewal, not from the renewal: so a renewal the API server answers slowly has the whole renew
   * deadline, as with controller-runtime (see renewalRoundDeadline for a round that starts late).
   */
  private async renew(lastRenewalAt: number): Promise<number | undefined> {
    const deadline = renewalRoundDeadline({ ...this.options, lastRenewalAt, startedAt: monotonicNow() });
    for (;;) {
      const renewedAt = await this.attempt(deadline - monotonicNow());
      if (renewedAt !== undefined) return renewedAt;
      if (this.stopped || this.heldByAnother()) return undefined;
      await this.waits.sleep(Math.max(0, Math.min(this.options.retryPeriodMs, deadline - monotonicNow())));
      if (this.stopped || monotonicNow() >= deadline) return undefined;
    }
  }

  private async onLost(): Promise<void> {
    const graceMs = lostLeadershipGraceMs(this.options);
    this.logger.error('lost leadership: could not renew the Lease in time; stopping', { graceMs });
    this.stopped = true;
    const stopping = this.options.onStoppedLeading().then(
      () => true,
      (err: unknown) => {
        this.logger.error('stopping after the lost Lease failed', { error: errorMessage(err) });
        return true;
      },
    );
    const stoppedInTime = await Promise.race([stopping, this.waits.sleep(graceMs).then(() => false)]);
    if (!stoppedInTime) this.logger.warn('reconciles still running at the end of the grace', { graceMs });
    this.options.onLostLeadership();
  }

  private heldByAnother(): boolean {
    return (
      this.observed !== undefined &&
      this.observed.holder !== '' &&
      this.observed.holder !== this.options.identity
    );
  }

  /**
   * One acquire-or-renew: when the renewTime written was taken (monotonic ms), or undefined when
   * another holds the Lease, or on any failure.
   */
  private async attempt(timeoutMs: number): Promise<number | undefined> {
    try {
      return await withTimeout(this.tryAcquireOrRenew(), timeoutMs);
    } catch (err) {
      this.logger.warn('lease attempt failed', { error: errorMessage(err) });
      return undefined;
    }
  }

  /**
   * The renewTime is taken before the read, so it is no later than the commit of the write that
   * carries it; a holder's expiry is judged when the read answered, so no earlier than the commit
   * of the Lease version it returned (the safety argument is at lead()).
   */
  private async tryAcquireOrRenew(): Promise<number | undefined> {
    const now = new Date();
    const takenAt = monotonicNow();
    const existing = await this.read();
    if (!existing) {
      try {
        await callKube(() =>
          this.options.customObjects.createNamespacedCustomObject({
            ...this.ref(),
            body: this.desired(undefined, now),
          }),
        );
        return takenAt;
      } catch (err) {
        if (isAlreadyExists(err) || isConflict(err)) return undefined;
        throw err;
      }
    }
    const readAt = monotonicNow();
    this.observe(existing, readAt);
    const holder = existing.spec?.holderIdentity ?? '';
    if (holder !== '' && holder !== this.options.identity && !this.isExpired(existing, readAt))
      return undefined;
    try {
      await callKube(() =>
        this.options.customObjects.replaceNamespacedCustomObject({
          ...this.ref(),
          name: this.options.leaseName,
          body: this.desired(existing, now),
        }),
      );
      return takenAt;
    } catch (err) {
      // Another candidate wrote first; it holds the Lease now.
      if (isConflict(err)) return undefined;
      throw err;
    }
  }

  private async read(): Promise<LeaseJson | undefined> {
    try {
      return (await callKube(() =>
        this.options.customObjects.getNamespacedCustomObject({ ...this.ref(), name: this.options.leaseName }),
      )) as LeaseJson;
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  private observe(lease: LeaseJson, now: number): void {
    const holder = lease.spec?.holderIdentity ?? '';
    const renewTime = lease.spec?.renewTime ?? '';
    if (!this.observed || this.observed.holder !== holder || this.observed.renewTime !== renewTime) {
      this.observed = { holder, renewTime, at: now };
    }
  }

  private isExpired(lease: LeaseJson, now: number): boolean {
    const durationMs = (lease.spec?.leaseDurationSeconds ?? this.options.leaseDurationMs / 1000) * 1000;
    return (this.observed?.at ?? now) + durationMs <= now;
  }

  private desired(existing: LeaseJson | undefined, now: Date): LeaseJson {
    const spec = existing?.spec ?? {};
    const renewing = spec.holderIdentity === this.options.identity;
    return {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: {
        name: this.options.leaseName,
        namespace: this.options.namespace,
        resourceVersion: existing?.metadata.resourceVersion,
      },
      spec: {
        holderIdentity: this.options.identity,
        leaseDurationSeconds: Math.ceil(this.options.leaseDurationMs / 1000),
        acquireTime: renewing && spec.acquireTime ? spec.acquireTime : formatMicroTime(now),
        renewTime: formatMicroTime(now),
        leaseTransitions: (spec.leaseTransitions ?? 0) + (renewing || !existing ? 0 : 1),
      },
    };
  }

  /** Clears the holder, so a standby need not wait out the lease duration. */
  private async release(): Promise<void> {
    try {
      const existing = await this.read();
      if (!existing || existing.spec?.holderIdentity !== this.options.identity) return;
      const now = formatMicroTime(new Date());
      const body: LeaseJson = {
        ...existing,
        spec: {
          ...existing.spec,
          holderIdentity: undefined,
          leaseDurationSeconds: 1,
          acquireTime: now,
          renewTime: now,
        },
      };
      await callKube(() =>
        this.options.customObjects.replaceNamespacedCustomObject({
          ...this.ref(),
          name: this.options.leaseName,
          body,
        }),
      );
      this.logger.info('released the Lease');
    } catch (err) {
      // The standby takes over after the lease duration instead; nothing else to do on the way out.
      this.logger.warn('could not release the Lease', { error: errorMessage(err) });
    }
  }

  private ref() {
    return { ...LEASE_API, namespace: this.options.namespace };
  }
}

/** The clock of every local deadline: unlike Date.now(), never stepped by NTP or by hand. */
function monotonicNow(): number {
  return performance.now();
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new AttemptTimeoutError(`lease API call took longer than ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
