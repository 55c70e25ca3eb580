import type {
  AddonSeconds,
  CouchInstancePhase,
  CouchInstanceSpec,
  CouchInstanceUsage,
} from '../../../api/couch-instance.js';

/** The metered figures of status.usage (measured ones, storageBytes and databases, are the meter's). */
export type MeteredUsage = Pick<
  CouchInstanceUsage,
  'awakeSeconds' | 'hibernatedSeconds' | 'wakes' | 'storageByteHours' | 'addonSeconds' | 'meteredAt'
>;

export interface MeteringInput {
  /** What status says: the figures up to its meteredAt, the phase and storage until now. */
  previous: { usage?: CouchInstanceUsage | undefined; phase?: CouchInstancePhase | undefined };
  /** The add-ons on; read from the spec at each accrual. */
  spec: CouchInstanceSpec;
  /** Epoch ms. */
  now: number;
  /** This reconcile scales a hibernated instance up. */
  woke: boolean;
  /** This reconcile changes the phase: the time so far is booked to the old one at once. */
  phaseChanges: boolean;
  /** SETTEE_USAGE_METER_INTERVAL: between transitions, figures move at most this often. */
  intervalMs: number;
}

/** Phases with a CouchDB pod running (or starting): the time the instance costs compute. */
const AWAKE_PHASES: ReadonlySet<CouchInstancePhase | undefined> = new Set([
  'Starting',
  'Running',
  'Waking',
  'Hibernating',
]);

const ADDONS = ['keepAlive', 'largerStorage', 'backups', 'regionPinning'] as const;

function addonsOn(spec: CouchInstanceSpec): Array<(typeof ADDONS)[number]> {
  return ADDONS.filter((addon) =>
    addon === 'keepAlive' ? spec.keepAlive === true : spec.addons?.[addon] !== undefined,
  );
}

/** Seconds with millisecond precision: figures stay exact however often they accrue. */
const seconds = (ms: number): number => Math.round(ms) / 1000;
const add = (a: number | undefined, b: number): number => Math.round(((a ?? 0) + b) * 1000) / 1000;

/**
 * The metered figures after this reconcile, pure. The time since meteredAt is booked to the state
 * status held over it (the previous phase, the last measured storage), so figures are cumulative
 * and exact to a reconcile: the operator's leader is their one writer and status their store, so a
 * restart or a new leader continues from meteredAt, neither losing nor counting twice. Undefined
 * when nothing is due (no transition, less than the interval since meteredAt): status is not
 * rewritten for it.
 */
export function accrueUsage(input: MeteringInput): MeteredUsage | undefined {
  const { previous, now } = input;
  const usage = previous.usage ?? {};
  const since = usage.meteredAt === undefined ? Number.NaN : Date.parse(usage.meteredAt);
  if (Number.isNaN(since)) {
    // First accrual: the meter starts now, with the wake if this reconcile is one.
    return {
      awakeSeconds: 0,
      hibernatedSeconds: 0,
      wakes: input.woke ? 1 : 0,
      storageByteHours: 0,
      addonSeconds: {},
      meteredAt: new Date(now).toISOString(),
    };
  }
  const elapsedMs = Math.max(0, now - since);
  if (!input.woke && !input.phaseChanges && elapsedMs < input.intervalMs) return undefined;
  const elapsed = seconds(elapsedMs);
  const awake = AWAKE_PHASES.has(previous.phase);
  const hibernated = previous.phase === 'Hibernated';
  const addonSeconds: AddonSeconds = { ...usage.addonSeconds };
  for (const addon of addonsOn(input.spec)) addonSeconds[addon] = add(addonSeconds[addon], elapsed);
  return {
    awakeSeconds: add(usage.awakeSeconds, awake ? elapsed : 0),
    hibernatedSeconds: add(usage.hibernatedSeconds, hibernated ? elapsed : 0),
    wakes: (usage.wakes ?? 0) + (input.woke ? 1 : 0),
    storageByteHours: add(usage.storageByteHours, ((usage.storageBytes ?? 0) * elapsedMs) / 3_600_000),
    addonSeconds,
    // Never back: a new leader whose clock is behind must not book the same moments twice.
    meteredAt: new Date(Math.max(now, since)).toISOString(),
  };
}

/** How long until the figures are due again (for the requeue): the interval from meteredAt. */
export function meteringDueInMs(
  usage: CouchInstanceUsage | undefined,
  now: number,
  intervalMs: number,
): number {
  const since = usage?.meteredAt === undefined ? Number.NaN : Date.parse(usage.meteredAt);
  return Number.isNaN(since) ? 0 : Math.max(0, since + intervalMs - now);
}
