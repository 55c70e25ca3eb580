import { COUCHDB_VERSION_PATTERN, NEWEST_SUPPORTED_COUCHDB_VERSION } from './couchdb-versions.js';
import type { CouchInstanceSpec, ResourceAmounts } from './couch-instance.js';
import { DURATION_PATTERN, isDuration, parseDuration } from './duration.js';
import type { FreeEnvelope } from './free-envelope.js';
import { compareQuantities, isQuantity } from './quantity.js';

/**
 * The rules a CouchInstance spec must follow beyond its types, written twice side by side: as CEL
 * for the API server (the CRD's x-kubernetes-validations, evaluated on `spec`) and as TypeScript for
 * the operator's re-validation. The message is shared, so a person sees the same words from both.
 */
export interface SpecRule {
  /** Where the API server reports a violation, relative to spec (x-kubernetes-validations fieldPath). */
  fieldPath: string;
  /** CEL over `self` (the spec); `oldSelf` makes it a transition rule, checked on updates only. */
  rule: string;
  message: string;
  /** The rule in TypeScript; absent for transition rules, which need the previous spec. */
  holds?: (spec: CouchInstanceSpec, envelope: FreeEnvelope) => boolean;
}

const BACKUP_SCHEDULE_PATTERN = '^(@(hourly|daily|weekly|monthly|yearly)|([^ ]+ +){4}[^ ]+)$';
const MIN_IDLE_AFTER = '1s';

const isPaid = (spec: CouchInstanceSpec): boolean => spec.plan === 'paid';
const celString = (value: string): string => `'${value.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;
/** CEL that is true when the quantity at `path` is at most `limit` (a malformed one fails the schema's pattern). */
const celAtMost = (path: string, limit: string): string =>
  `!isQuantity(${path}) || quantity(${path}).compareTo(quantity(${celString(limit)})) <= 0`;
const atMost = (value: string | undefined, limit: string): boolean =>
  value === undefined || !isQuantity(value) || compareQuantities(value, limit) <= 0;

function requiresPaid(addon: 'largerStorage' | 'backups' | 'regionPinning'): SpecRule {
  return {
    fieldPath: `.addons.${addon}`,
    rule: `!has(self.addons) || !has(self.addons.${addon}) || (has(self.plan) && self.plan == 'paid')`,
    message: `addons.${addon} requires plan: paid`,
    holds: (spec) => spec.addons?.[addon] === undefined || isPaid(spec),
  };
}

function requestWithinLimit(resource: 'cpu' | 'memory'): SpecRule {
  const request = `self.resources.requests.${resource}`;
  const limit = `self.resources.limits.${resource}`;
  return {
    fieldPath: `.resources.requests.${resource}`,
    rule:
      `!has(self.resources) || !has(self.resources.requests) || !has(${request}) || ` +
      `!has(self.resources.limits) || !has(${limit}) || !isQuantity(${request}) || ` +
      `!isQuantity(${limit}) || quantity(${request}).compareTo(quantity(${limit})) <= 0`,
    message: `resources.requests.${resource} must not exceed resources.limits.${resource}`,
    holds: (spec) => {
      const req = spec.resources?.requests?.[resource];
      const lim = spec.resources?.limits?.[resource];
      return (
        req === undefined ||
        lim === undefined ||
        !isQuantity(req) ||
        !isQuantity(lim) ||
        compareQuantities(req, lim) <= 0
      );
    },
  };
}

function freeResourcesWithinEnvelope(envelope: FreeEnvelope): SpecRule {
  const within = (kind: 'requests' | 'limits'): string => {
    const base = `self.resources.${kind}`;
    return (
      `(!has(${base}) || ((!has(${base}.cpu) || ${celAtMost(`${base}.cpu`, envelope.cpu)}) && ` +
      `(!has(${base}.memory) || ${celAtMost(`${base}.memory`, envelope.memory)})))`
    );
  };
  const amountsWithin = (amounts: ResourceAmounts | undefined): boolean =>
    atMost(amounts?.cpu, envelope.cpu) && atMost(amounts?.memory, envelope.memory);
  return {
    fieldPath: '.resources',
    rule: `(has(self.plan) && self.plan == 'paid') || !has(self.resources) || (${within('requests')} && ${within('limits')})`,
    message: `resources on plan: free must stay inside the free envelope (cpu ${envelope.cpu}, memory ${envelope.memory})`,
    holds: (spec) =>
      isPaid(spec) || (amountsWithin(spec.resources?.requests) && amountsWithin(spec.resources?.limits)),
  };
}

export function buildSpecRules(envelope: FreeEnvelope): SpecRule[] {
  return [
    {
      fieldPath: '.version',
      rule: `!has(self.version) || self.version.matches(${celString(COUCHDB_VERSION_PATTERN)})`,
      message: `version must be a CouchDB 3.x release such as ${NEWEST_SUPPORTED_COUCHDB_VERSION}; other major versions are not supported`,
      holds: (spec) => spec.version === undefined || new RegExp(COUCHDB_VERSION_PATTERN).test(spec.version),
    },
    {
      fieldPath: '.keepAlive',
      rule: `!has(self.keepAlive) || !self.keepAlive || (has(self.plan) && self.plan == 'paid')`,
      message: 'keepAlive requires plan: paid',
      holds: (spec) => spec.keepAlive !== true || isPaid(spec),
    },
    {
      fieldPath: '.hibernation.idleAfter',
      rule:
        `!has(self.hibernation) || !has(self.hibernation.idleAfter) || ` +
        `(self.hibernation.idleAfter.matches(${celString(DURATION_PATTERN)}) && ` +
        `duration(self.hibernation.idleAfter) >= duration(${celString(MIN_IDLE_AFTER)}))`,
      message: `hibernation.idleAfter must be a duration of at least ${MIN_IDLE_AFTER}, such as 10s, 15m or 1h`,
      holds: (spec) => {
        const idleAfter = spec.hibernation?.idleAfter;
        return (
          idleAfter === undefined ||
          (isDuration(idleAfter) && parseDuration(idleAfter) >= parseDuration(MIN_IDLE_AFTER))
        );
      },
    },
    {
      fieldPath: '.storage.size',
      rule: `!has(self.storage) || !has(self.storage.size) || ${celAtMost('self.storage.size', envelope.storage)}`,
      message: `storage.size above the free envelope (${envelope.storage}) needs plan: paid with addons.largerStorage`,
      holds: (spec) => atMost(spec.storage?.size, envelope.storage),
    },
    requiresPaid('largerStorage'),
    requiresPaid('backups'),
    requiresPaid('regionPinning'),
    {
      fieldPath: '.addons.backups.schedule',
      rule:
        `!has(self.addons) || !has(self.addons.backups) || ` +
        `self.addons.backups.schedule.matches(${celString(BACKUP_SCHEDULE_PATTERN)})`,
      message: 'addons.backups.schedule must be a cron expression with five fields, such as "0 3 * * *"',
      holds: (spec) =>
        spec.addons?.backups === undefined ||
        new RegExp(BACKUP_SCHEDULE_PATTERN).test(spec.addons.backups.schedule),
    },
    freeResourcesWithinEnvelope(envelope),
    requestWithinLimit('cpu'),
    requestWithinLimit('memory'),
    {
      // The StatefulSet's volume claim template cannot change, so neither can the class it names.
      fieldPath: '.storage.storageClassName',
      rule:
        `(has(self.storage) && has(self.storage.storageClassName) ? self.storage.storageClassName : '') == ` +
        `(has(oldSelf.storage) && has(oldSelf.storage.storageClassName) ? oldSelf.storage.storageClassName : '')`,
      message: 'storage.storageClassName cannot change after the instance is created',
    },
    {
      fieldPath: '.restore',
      rule: `!has(self.restore) || (has(self.restore.backup) != has(self.restore.instance))`,
      message: 'restore needs exactly one of backup (a CouchBackup) or instance (its newest backup)',
      holds: (spec) =>
        spec.restore === undefined ||
        (spec.restore.backup === undefined) !== (spec.restore.instance === undefined),
    },
    {
      fieldPath: '.restore.before',
      rule: `!has(self.restore) || !has(self.restore.before) || has(self.restore.instance)`,
      message: 'restore.before picks among the backups of restore.instance; set instance with it',
      holds: (spec) => spec.restore?.before === undefined || spec.restore.instance !== undefined,
    },
    {
      // A restore fills a new, empty instance; into one that holds data it would overwrite or mix.
      fieldPath: '.restore',
      rule:
        `has(self.restore) == has(oldSelf.restore) && ` +
        `(!has(self.restore) || self.restore == oldSelf.restore)`,
      message: 'restore can only be set when the instance is created; restore into a new CouchInstance',
    },
  ];
}

/** The messages of the rules `spec` breaks (transition rules excluded). */
export function findRuleViolations(spec: CouchInstanceSpec, envelope: FreeEnvelope): string[] {
  return buildSpecRules(envelope)
    .filter((rule) => rule.holds !== undefined && !rule.holds(spec, envelope))
    .map((rule) => rule.message);
}
