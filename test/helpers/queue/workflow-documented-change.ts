import type { QueueKeys } from '../../../gateway/queue/core/keys.js';
import type { FuzzRequest } from '../fuzz/http-fuzz.js';
import type { RecordsDiff, RecordsSnapshot, RunRecord } from './workflow-run-records.js';

/**
 * What a 2xx of a workflow route may change, as docs/workflow.md documents it, checked on the
 * records read before and after (workflow-run-records.ts). Each check answers the ways the change
 * differs from the documented one (none: it is exactly that).
 */
interface Change {
  request: FuzzRequest;
  /** The path's segments after `/v2/`, decoded where they decode. */
  segments: string[];
  query: URLSearchParams;
  answer: unknown;
  before: RecordsSnapshot;
  after: RecordsSnapshot;
  diff: RecordsDiff;
  keys: QueueKeys;
}

type Check = (change: Change) => string[];

const stateOf = (record: RunRecord | undefined) => record?.hash.state;
const configOf = (record: RunRecord) =>
  JSON.parse(record.hash.config ?? '{}') as { url?: string; label?: string };
const header = (request: FuzzRequest, name: string): string | undefined => {
  const value = Object.entries(request.headers).find(([key]) => key.toLowerCase() === name)?.[1];
  return Array.isArray(value) ? value.join(', ') : value;
};
const decoded = (segment: string) => {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
};
const sameSet = (a: readonly string[], b: readonly string[]) =>
  JSON.stringify([...new Set(a)].sort()) === JSON.stringify([...new Set(b)].sort());

/** The run's dead letters that left the DLQ between the snapshots. */
function lettersGone(change: Change): string[] {
  return Object.entries(change.before.runs).flatMap(([runId, record]) =>
    Object.keys(record.deadLetters).filter(
      (dlqId) => !(dlqId in (change.after.runs[runId]?.deadLetters ?? {})),
    ),
  );
}

/** Fails unless the changed runs are among `allowed` (ids), and nothing else moved. */
function onlyRuns(change: Change, allowed: readonly string[], what: string): string[] {
  const others = change.diff.changed.filter((runId) => !allowed.includes(runId));
  return [
    ...others.map(
      (runId) => `${what} changed another run, ${runId}: ${change.diff.parts[runId]!.join(', ')}`,
    ),
    ...(change.diff.removed.length > 0 ? [`runs removed: ${change.diff.removed.join(', ')}`] : []),
  ];
}

const noNewRuns = (change: Change) =>
  change.diff.added.length > 0 ? [`runs started: ${change.diff.added.join(', ')}`] : [];

/** A finished run changes only in these parts (its DLQ entries and what the API says of them). */
function finishedRunsKept(change: Change, parts: readonly string[]): string[] {
  return change.diff.changed.flatMap((runId) => {
    if (stateOf(change.before.runs[runId]) === 'RUN_STARTED') return [];
    const moved = (change.diff.parts[runId] ?? []).filter((part) => !parts.includes(part));
    return moved.length > 0 ? [`finished run ${runId} changed: ${moved.join(', ')}`] : [];
  });
}

const readOnly: Check = (change) =>
  [...change.diff.changed, ...change.diff.added, ...change.diff.removed].length > 0 ||
  change.diff.databaseChanged.length > 0
    ? [`a read changed ${JSON.stringify(change.diff)}`]
    : [];

/** GET /v2/workflows/runs/{runId}: a running run's steps; any other is a 404. */
const getRun: Check = (change) => {
  const runId = change.segments[2]!;
  return [
    ...readOnly(change),
    ...(stateOf(change.before.runs[runId]) === 'RUN_STARTED'
      ? []
      : [`steps of ${runId} answered, not running`]),
  ];
};

/** DELETE /v2/workflows/runs/{runId}: a running run ends, cancelled or succeeded. */
const endRun: Check = (change) => {
  const runId = change.segments[2]!;
  const wanted = change.query.get('cancel') === 'true' ? 'RUN_CANCELED' : 'RUN_SUCCESS';
  return [
    ...onlyRuns(change, [runId], 'ending a run'),
    ...noNewRuns(change),
    ...(stateOf(change.before.runs[runId]) === 'RUN_STARTED'
      ? []
      : [`ended ${runId}, which was not running`]),
    ...(stateOf(change.after.runs[runId]) === wanted ? [] : [`${runId} is not ${wanted}`]),
  ];
};

/** DELETE /v2/workflows/runs: running runs named or matched become RUN_CANCELED, `{cancelled}` of them. */
const cancelRuns: Check = (change) => {
  const { before, after, diff, query } = change;
  const cancelled = (change.answer as { cancelled?: number }).cancelled;
  const problems = [...noNewRuns(change), ...onlyRuns(change, diff.changed, 'a cancel')];
  if (cancelled !== diff.changed.length)
    problems.push(`answered cancelled ${String(cancelled)}, ${diff.changed.length} runs changed`);
  for (const runId of diff.changed) {
    if (stateOf(before.runs[runId]) !== 'RUN_STARTED') problems.push(`cancelled ${runId}, not running`);
    if (stateOf(after.runs[runId]) !== 'RUN_CANCELED') problems.push(`${runId} changed but not cancelled`);
    const { url = '', label = '' } = configOf(before.runs[runId]!);
    const labels = query.getAll('label');
    if (labels.length > 0 && !label.split(',').some((l) => labels.includes(l)))
      problems.push(`${runId}'s label is not the filter's`);
    const prefix = query.getAll('workflowUrl').at(-1);
    const exact = query.getAll('workflowUrlExactMatch').at(-1) === 'true';
    if (prefix !== undefined && !(exact ? url === prefix : url.startsWith(prefix)))
      problems.push(`${runId}'s URL ${url} does not match ${prefix}`);
  }
  if (query.has('workflowRunIds')) {
    const named = query.getAll('workflowRunIds');
    const running = named.filter((runId) => stateOf(before.runs[runId]) === 'RUN_STARTED');
    if (!sameSet(running, diff.changed))
      problems.push(`named running ${running.join(',')}, cancelled ${diff.changed.join(',')}`);
  }
  return problems;
};

/** POST /v2/wait/{eventId}: the run its header names, running, waits. */
const wait: Check = (change) => {
  const runId = header(change.request, 'upstash-workflow-runid') ?? '';
  return [
    ...onlyRuns(change, [runId], 'a wait'),
    ...noNewRuns(change),
    ...(stateOf(change.before.runs[runId]) === 'RUN_STARTED' ? [] : [`${runId} waits, not running`]),
  ];
};

/** POST /v2/notify/{eventId}: every run waiting for the event resumes, and only those. */
const notifyAll: Check = (change) => {
  const waiterKey = `${change.keys.workflowWaiters(change.segments[1]!)} `;
  const waiting = Object.entries(change.before.runs)
    .filter(([, record]) => Object.keys(record.waiters).some((key) => key.startsWith(waiterKey)))
    .map(([runId]) => runId);
  const resumed = Array.isArray(change.answer)
    ? (change.answer as { workflowRunId?: string }[]).map((n) => n.workflowRunId ?? '')
    : ['(not a list)'];
  return [
    ...onlyRuns(change, resumed, 'a notify'),
    ...noNewRuns(change),
    ...(sameSet(waiting, resumed) ? [] : [`waiting ${waiting.join(',')}, answered ${resumed.join(',')}`]),
  ];
};

/** POST /v2/notify/{runId}/{eventId} and a run's webhook: that running run resumes or keeps the event. */
const notifyRun =
  (runIndex: number): Check =>
  (change) => {
    const runId = change.segments[runIndex]!;
    return [
      ...onlyRuns(change, [runId], 'a notify of one run'),
      ...noNewRuns(change),
      ...(stateOf(change.before.runs[runId]) === 'RUN_STARTED' ? [] : [`notified ${runId}, not running`]),
    ];
  };

/** The parts of a failed run a DLQ action may change: its entries, and what the API says of them. */
const DLQ_PARTS = ['deadLetters', 'dlqEntries', 'log'];

/** DELETE /v2/workflows/dlq and /v2/workflows/dlq/{dlqId}: the entries leave the DLQ, their runs stay. */
const deleteEntries =
  (single: boolean): Check =>
  (change) => {
    const gone = lettersGone(change);
    const deleted = (change.answer as { deleted?: number }).deleted;
    const named = single ? [change.segments[2]!] : change.query.getAll('dlqIds');
    return [
      ...noNewRuns(change),
      ...onlyRuns(change, change.diff.changed, 'a delete'),
      ...finishedRunsKept(change, DLQ_PARTS),
      ...change.diff.changed
        .filter((id) => stateOf(change.before.runs[id]) === 'RUN_STARTED')
        .map((id) => `running ${id} changed`),
      ...(deleted === gone.length
        ? []
        : [`answered deleted ${String(deleted)}, ${gone.length} entries gone`]),
      ...(named.length === 0 || sameSet(named, gone)
        ? []
        : [`named ${named.join(',')}, gone ${gone.join(',')}`]),
    ];
  };

/** Resume and restart: each entry acted on leaves the DLQ and starts one new run; the failed run stays. */
const newRuns =
  (single: boolean): Check =>
  (change) => {
    const answer = change.answer as { workflowRunId?: string; workflowRuns?: { workflowRunId: string }[] };
    const started = single
      ? [answer.workflowRunId ?? '']
      : (answer.workflowRuns ?? []).map((r) => r.workflowRunId);
    const gone = lettersGone(change);
    const named = single ? [change.segments[3]!] : change.query.getAll('dlqIds');
    return [
      ...finishedRunsKept(change, DLQ_PARTS),
      ...change.diff.changed
        .filter((id) => stateOf(change.before.runs[id]) === 'RUN_STARTED')
        .map((id) => `running ${id} changed`),
      ...change.diff.changed
        .filter((id) => stateOf(change.after.runs[id]) !== stateOf(change.before.runs[id]))
        .map((id) => `${id}'s state changed`),
      ...(sameSet(started, change.diff.added)
        ? []
        : [`answered ${started.join(',')}, started ${change.diff.added.join(',')}`]),
      ...(gone.length === started.length ? [] : [`${gone.length} entries gone for ${started.length} runs`]),
      ...(named.length === 0 || sameSet(named, gone)
        ? []
        : [`named ${named.join(',')}, gone ${gone.join(',')}`]),
    ];
  };

/** The run hash's fields of its failure callback (workflow-run-store.ts). */
const CALLBACK_FIELDS = ['hash.callbackState', 'hash.callbackDlqId', 'hash.callbackMessageId'];

/** POST / DELETE /v2/workflows/dlq/callback/{dlqId}: only that run's failure callback moves. */
const callback =
  (from: string): Check =>
  (change) => {
    const dlqId = change.segments[3]!;
    const runId = Object.entries(change.before.runs).find(([, r]) => dlqId in r.deadLetters)?.[0] ?? '';
    const state = change.before.runs[runId]?.hash.callbackState;
    return [
      ...noNewRuns(change),
      ...onlyRuns(change, [runId], 'a failure callback action'),
      ...finishedRunsKept(change, [...DLQ_PARTS, ...CALLBACK_FIELDS, 'pending']),
      ...(state === from ? [] : [`callback of ${runId} acted on in ${String(state)}`]),
    ];
  };

/** A trigger or step publish: new runs may start; a step joins only a running run it names. */
const publish: Check = (change) => {
  const runIds = [header(change.request, 'upstash-workflow-runid') ?? ''];
  try {
    const items = JSON.parse(change.request.body?.toString() ?? '') as { headers?: Record<string, string> }[];
    if (Array.isArray(items))
      for (const item of items)
        for (const [name, value] of Object.entries(item?.headers ?? {}))
          if (name.toLowerCase() === 'upstash-workflow-runid') runIds.push(String(value));
  } catch {
    // Not a batch: the headers name the run.
  }
  return [
    ...onlyRuns(change, runIds, 'a publish'),
    ...change.diff.changed
      .filter((id) => stateOf(change.before.runs[id]) !== 'RUN_STARTED')
      .map((id) => `finished ${id} changed`),
  ];
};

const ANY = '*';
/** Checked in order: the first route whose method and path match the request's. */
const ROUTES: [string, RegExp, Check][] = [
  ['DELETE', /^workflows\/runs$/, cancelRuns],
  ['GET', /^workflows\/runs\/[^/]+$/, getRun],
  ['DELETE', /^workflows\/runs\/[^/]+$/, endRun],
  ['POST', /^wait\/[^/]+$/, wait],
  ['POST', /^notify\/[^/]+$/, notifyAll],
  ['POST', /^notify\/[^/]+\/[^/]+$/, notifyRun(1)],
  [ANY, /^workflows\/hooks\/[^/]+\/[^/]+\/[^/]+$/, notifyRun(3)],
  ['DELETE', /^workflows\/dlq$/, deleteEntries(false)],
  ['POST', /^workflows\/dlq\/(resume|restart)$/, newRuns(false)],
  ['POST', /^workflows\/dlq\/(resume|restart)\/[^/]+$/, newRuns(true)],
  ['POST', /^workflows\/dlq\/callback\/[^/]+$/, callback('CALLBACK_FAIL')],
  ['DELETE', /^workflows\/dlq\/callback\/[^/]+$/, callback('CALLBACK_INPROGRESS')],
  ['DELETE', /^workflows\/dlq\/[^/]+$/, deleteEntries(true)],
  ['POST', /^(publish\/.+|batch)$/, publish],
];

/**
 * The ways a 2xx answer's change differs from the documented one: a read (GET, HEAD, and any
 * route not listed) changes nothing at all.
 */
export function undocumentedChanges(input: Omit<Change, 'segments' | 'query'>): string[] {
  const [path = '', search = ''] = input.request.path.split('?');
  // The router resolves dot segments (`/v2/notify/./e` is `/v2/notify/e`), as WHATWG URLs do.
  const rest = new URL(path, 'http://gateway').pathname.replace(/^\/v2\//, '');
  const match = ROUTES.find(
    ([method, pattern]) => (method === ANY || method === input.request.method) && pattern.test(rest),
  );
  const check = match?.[2] ?? readOnly;
  return check({ ...input, segments: rest.split('/').map(decoded), query: new URLSearchParams(search) });
}
