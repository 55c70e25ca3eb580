import type { Redis } from 'ioredis';
import { waitFor } from '../../../local/wait.js';
import { DELIVERY_GROUP, type QueueKeys } from '../../../gateway/queue/core/keys.js';
import { snapshotDatabase } from './redis-snapshot.js';

/**
 * What one workflow run is, read back whole: its own keys in Redis (hash, steps, counted steps,
 * events kept for it), its messages still pending (a sleep, a call, a wait's timer: each pending
 * message whose stored form names the run), its waiters and its dead letters, and what the API says
 * of it (its logs entry, its workflow DLQ entries).
 */
export interface RunRecord {
  hash: Record<string, string>;
  steps: string[];
  stepIds: string[];
  notices: Record<string, string>;
  pending: string[];
  waiters: Record<string, string>;
  deadLetters: Record<string, string>;
  log: unknown;
  dlqEntries: unknown[];
}

/** Every run of the binding by id, the waiters' API answers, and the whole database's shape. */
export interface RecordsSnapshot {
  runs: Record<string, RunRecord>;
  waiters: Record<string, unknown>;
  database: Record<string, string>;
}

/** A request to the binding's API as the test itself sends it: status and parsed JSON. */
export type AskApi = (path: string) => Promise<unknown>;

/**
 * The database's shape but for the mover's lease, which the replicas take and renew on their own
 * clock (a loaded machine lets it lapse now and then): not a request's write.
 */
async function databaseShape(redis: Redis, keys: QueueKeys): Promise<Record<string, string>> {
  const { [keys.moverLease]: lease, ...shape } = await snapshotDatabase(redis);
  if (lease !== undefined) shape.dbsize = String(Number(shape.dbsize) - 1);
  return shape;
}

/**
 * A hash's fields in name order. HGETALL's order is no state: a hash past listpack size is a
 * hashtable, and while one is rehashed (after it grew) each lookup, a read-only HGET too, moves a
 * bucket, so a read can reorder the fields (a 400 of DELETE /v2/workflows/runs/:runId, which only
 * reads the run, did so under FUZZ_SEED=13).
 */
const byField = (hash: Record<string, string>) =>
  Object.fromEntries(Object.entries(hash).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));

/** The waiter hashes' fields are `<runId>/<timer id>` (keys.ts workflowWaiters). */
const waiterRunId = (field: string) => field.slice(0, field.indexOf('/'));

/**
 * Reads every run's record (see {@link RunRecord}) and the database's shape. `events` are the
 * event ids whose waiters the API is asked for (the test's own events).
 */
export async function snapshotRecords(
  redis: Redis,
  keys: QueueKeys,
  ask: AskApi,
  events: readonly string[],
): Promise<RecordsSnapshot> {
  const runIds = await redis.zrange(keys.workflowRunOrder, '0', '-1');
  const [scheduled, streamed, letters, waiterKeys, logs, dlq, waiters] = await Promise.all([
    redis.hgetallBuffer(keys.scheduledMessages),
    redis.xrange(keys.stream, '-', '+'),
    redis.hgetall(keys.deadLetters),
    redis.keys(keys.workflowWaiters('*')),
    ask('/v2/workflows/events?count=1000'),
    ask('/v2/workflows/dlq?count=100'),
    Promise.all(events.map((eventId) => ask(`/v2/waiters/${encodeURIComponent(eventId)}`))),
  ]);
  const waiterHashes = await Promise.all(waiterKeys.map((key) => redis.hgetall(key)));
  const pendingTexts = [
    ...Object.entries(scheduled).map(([id, message]) => [id, message.toString('latin1')] as const),
    ...streamed.map(([id, fields]) => [id, fields.join('\n')] as const),
  ];
  const logsById = new Map(
    ((logs as { runs?: { workflowRunId: string }[] }).runs ?? []).map((log) => [log.workflowRunId, log]),
  );
  const dlqMessages = (dlq as { messages?: { workflowRunId: string }[] }).messages ?? [];
  const runs: Record<string, RunRecord> = {};
  await Promise.all(
    runIds.map(async (runId) => {
      const [hash, steps, stepIds, notices] = await Promise.all([
        redis.hgetall(keys.workflowRun(runId)),
        redis.lrange(keys.workflowSteps(runId), 0, -1),
        redis.smembers(keys.workflowStepIds(runId)),
        redis.hgetall(keys.workflowNotices(runId)),
      ]);
      // Stored as JSON strings: quoted, so one id is never found inside a longer one.
      const quoted = JSON.stringify(runId);
      const runWaiters: Record<string, string> = {};
      waiterKeys.forEach((key, i) => {
        for (const [field, value] of Object.entries(waiterHashes[i]!))
          if (waiterRunId(field) === runId) runWaiters[`${key} ${field}`] = value;
      });
      runs[runId] = {
        hash: byField(hash),
        steps,
        stepIds: stepIds.sort(),
        notices: byField(notices),
        pending: pendingTexts
          .filter(([, text]) => text.includes(quoted))
          .map(([id]) => id)
          .sort(),
        waiters: byField(runWaiters),
        deadLetters: byField(
          Object.fromEntries(Object.entries(letters).filter(([, letter]) => letter.includes(quoted))),
        ),
        log: logsById.get(runId) ?? null,
        dlqEntries: dlqMessages.filter((entry) => entry.workflowRunId === runId),
      };
    }),
  );
  return {
    runs,
    waiters: Object.fromEntries(events.map((eventId, i) => [eventId, waiters[i]])),
    database: await databaseShape(redis, keys),
  };
}

/** What differs between two snapshots: runs changed, new and gone, and the database's shape. */
export interface RecordsDiff {
  changed: string[];
  added: string[];
  removed: string[];
  /** The parts of each changed run that differ (hash fields, steps, pending, ...). */
  parts: Record<string, string[]>;
  waitersChanged: boolean;
  databaseChanged: string[];
}

export function diffRecords(before: RecordsSnapshot, after: RecordsSnapshot): RecordsDiff {
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
  const changed: string[] = [];
  const parts: Record<string, string[]> = {};
  for (const [runId, record] of Object.entries(before.runs)) {
    const now = after.runs[runId];
    if (!now || same(record, now)) continue;
    changed.push(runId);
    parts[runId] = (Object.keys(record) as (keyof RunRecord)[])
      .filter((part) => !same(record[part], now[part]))
      .flatMap((part) =>
        part === 'hash'
          ? [...new Set([...Object.keys(record.hash), ...Object.keys(now.hash)])]
              .filter((field) => record.hash[field] !== now.hash[field])
              .map((field) => `hash.${field}`)
          : [part],
      );
  }
  const keys = new Set([...Object.keys(before.database), ...Object.keys(after.database)]);
  return {
    changed,
    added: Object.keys(after.runs).filter((runId) => !(runId in before.runs)),
    removed: Object.keys(before.runs).filter((runId) => !(runId in after.runs)),
    parts,
    waitersChanged: !same(before.waiters, after.waiters),
    databaseChanged: [...keys].filter((key) => before.database[key] !== after.database[key]).sort(),
  };
}

/** True when nothing at all differs. */
export function unchanged(diff: RecordsDiff): boolean {
  return (
    diff.changed.length + diff.added.length + diff.removed.length + diff.databaseChanged.length === 0 &&
    !diff.waitersChanged
  );
}

/**
 * Waits until the binding is at rest: no delivery on the stream or in flight (the SDK answers a
 * delivery only after publishing its next step, so an answered stream means no step on its way),
 * nothing due in the next seconds, and the database's shape the same twice in a row.
 */
export async function quiesce(redis: Redis, keys: QueueKeys, timeoutMs = 30_000): Promise<void> {
  let last = '';
  await waitFor(
    'the binding at rest',
    async () => {
      const [length, pending, due] = await Promise.all([
        redis.xlen(keys.stream),
        redis.xpending(keys.stream, DELIVERY_GROUP) as Promise<[number, ...unknown[]]>,
        redis.zcount(keys.schedule, '-inf', Date.now() + 5_000),
      ]);
      if (length + pending[0] + due > 0) {
        last = '';
        return undefined;
      }
      const shape = JSON.stringify(await databaseShape(redis, keys));
      const atRest = shape === last;
      last = shape;
      return atRest || undefined;
    },
    { timeoutMs, intervalMs: 100 },
  );
}
