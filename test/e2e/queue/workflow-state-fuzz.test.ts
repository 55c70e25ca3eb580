import fc from 'fast-check';
import { buildQStashFormatToken, workflowUserIdOf } from '../../../api/qstash-token.js';
import { request as plainRequest } from '../../helpers/gateway/http-request.js';
import {
  FUZZ_ANSWER_TIMEOUT_MS,
  FuzzCaseCounter,
  isQStashError,
  sendableRequest,
  sendFuzzRequest,
  type FuzzRequest,
} from '../../helpers/fuzz/http-fuzz.js';
import { undocumentedChanges } from '../../helpers/queue/workflow-documented-change.js';
import {
  methodFor,
  WORKFLOW_FUZZ_ROUTES,
  type WorkflowFuzzRoute,
} from '../../helpers/queue/workflow-fuzz-requests.js';
import type { FuzzTargets } from '../../helpers/queue/workflow-fuzz-values.js';
import {
  diffRecords,
  quiesce,
  snapshotRecords,
  unchanged,
  type RecordsSnapshot,
  type RunRecord,
} from '../../helpers/queue/workflow-run-records.js';
import {
  RUN_KINDS,
  useWorkflowStateFixture,
  type RunKind,
} from '../../helpers/queue/workflow-state-fixture.js';

const SEED = Number(process.env.FUZZ_SEED ?? 29);
/** Cases per route: ~22 routes x this, each case two snapshots and a request, stays near a minute loaded. */
const RUNS_PER_ROUTE = Number(process.env.WORKFLOW_FUZZ_RUNS ?? 12);
/** No shrinking in make test: a failure reports the case as generated (replay it with FUZZ_SEED). */
const BOUNDED = { seed: SEED, endOnFailure: true } as const;
/** The runs kept in each state: a test's 2xx that moves one on has it replaced before the next test. */
const POOL: Record<RunKind, number> = {
  event: 2,
  sleep: 1,
  call: 1,
  cancelled: 1,
  success: 1,
  failed: 1,
  failedCallback: 1,
};

/** This binding's own token, to this binding. */
const ownCaller = (token: string): Caller => ({ token: `Bearer ${token}`, ours: true, otherBase: false });

/** A request's token, whether it is this binding's, and whether it goes to the other binding. */
interface Caller {
  token: string | undefined;
  ours: boolean;
  otherBase: boolean;
}

/** Whether a run is still in the state its kind was set up in (and so worth aiming at). */
function inState(kind: RunKind, record: RunRecord | undefined): boolean {
  if (!record) return false;
  const { state } = record.hash;
  switch (kind) {
    case 'event':
      return state === 'RUN_STARTED' && Object.keys(record.waiters).length > 0;
    case 'sleep':
    case 'call':
      return state === 'RUN_STARTED' && record.pending.length > 0 && Object.keys(record.notices).length === 0;
    case 'cancelled':
      return state === 'RUN_CANCELED';
    case 'success':
      return state === 'RUN_SUCCESS';
    case 'failed':
    case 'failedCallback':
      return (
        state === 'RUN_FAILED' &&
        record.dlqEntries.length > 0 &&
        record.hash.callbackState === (kind === 'failed' ? 'CALLBACK_SUCCESS' : 'CALLBACK_FAIL')
      );
  }
}

/**
 * Our values a response may carry only when the request named them (or an earlier request told the
 * other binding them, which it may have stored as its own): through another binding, or without
 * this binding's token, none of this binding's run ids, dlqIds or payload markers, nor their
 * base64 (step bodies are).
 */
function leaked(body: string, asked: string, told: readonly string[], secrets: readonly string[]): string[] {
  const texts = [
    body,
    ...[...body.matchAll(/"([A-Za-z0-9+/=]{12,})"/g)].map((m) =>
      Buffer.from(m[1]!, 'base64').toString('latin1'),
    ),
  ];
  return secrets.filter(
    (secret) =>
      !asked.includes(secret) &&
      !told.some((t) => t.includes(secret)) &&
      texts.some((text) => text.includes(secret)),
  );
}

/** What a request says, decoded: the path, headers and body. */
function askedText(request: FuzzRequest): string {
  let path = request.path;
  try {
    path = decodeURIComponent(path);
  } catch {
    // As sent.
  }
  return `${path} ${JSON.stringify(request.headers)} ${request.body?.toString('latin1') ?? ''}`;
}

/**
 * The workflow routes, fuzzed against runs in every state, set up through the unchanged
 * @upstash/workflow SDK: waiting for an event, a sleep or a call's answer, cancelled, succeeded,
 * failed in the DLQ (failure callback delivered, or failed too). Requests aim at those runs: their
 * ids, dlqIds, events, URLs and labels, as they are or mangled, with adversarial methods, headers,
 * queries and bodies, this binding's token or another's (a second binding on its own Redis), through
 * either replica. Whatever comes in: never a 5xx, an answer within the timeout, `{"error"}` on every
 * error; after a 4xx, or any request without this binding's token, every run's record (its keys,
 * pending messages, waiters, dead letters, logs and DLQ entries) and the database read back
 * unchanged, and nothing of this binding's runs is in the answer; after a 2xx the change is the
 * documented one (workflow-documented-change.ts). A 2xx that set a run going again is undone (the
 * run cancelled) before the next case, and each test begins with runs in every state.
 */
describe('the workflow routes under fuzzed requests against runs in every state', () => {
  const fixture = useWorkflowStateFixture();
  const { workflow, keys } = fixture;
  const suite = workflow.queue;
  const counter = new FuzzCaseCounter();
  const kept = new Map<RunKind, string[]>();

  const ask = async (path: string): Promise<unknown> => {
    const { status, body } = await plainRequest(`${suite.replicas[0]!.queueUrl(suite.target)}${path}`, {
      headers: { authorization: `Bearer ${suite.target.token}` },
      timeoutMs: FUZZ_ANSWER_TIMEOUT_MS,
    });
    if (status !== 200) throw new Error(`${path}: ${status} ${body}`);
    return JSON.parse(body);
  };
  const snapshot = () => snapshotRecords(suite.inspect, keys, ask, [...fixture.events]);

  /** Tops each state up to its pool: a run moved on by an earlier 2xx is replaced. */
  async function topUp(): Promise<RecordsSnapshot> {
    const now = await snapshot();
    await Promise.all(
      RUN_KINDS.map(async (kind) => {
        const still = (kept.get(kind) ?? []).filter((runId) => inState(kind, now.runs[runId]));
        const added = still.length < POOL[kind] ? await fixture.runs(kind, POOL[kind] - still.length) : [];
        kept.set(kind, [...still, ...added]);
      }),
    );
    await quiesce(suite.inspect, keys);
    return snapshot();
  }

  async function targetsOf(now: RecordsSnapshot): Promise<Omit<FuzzTargets, 'calm'>> {
    // The runs kept in each state, so each state is aimed at as often (not the many runs ended by then).
    const runIds = RUN_KINDS.flatMap((kind) => kept.get(kind) ?? []);
    const runs = runIds.map((runId) => now.runs[runId]!);
    const logs = (await ask('/v2/workflows/events?count=2')) as { cursor?: string };
    const dlq = (await ask('/v2/workflows/dlq?count=1')) as { cursor?: string };
    return {
      runIds,
      dlqIds: runs.flatMap((run) => Object.keys(run.deadLetters)),
      events: [...fixture.events],
      urls: [...new Set(['waiter', 'sleeper', 'caller', 'quick', 'flaky', 'nowhere'].map(fixture.url))],
      labels: RUN_KINDS.map((kind) => `fz-${kind}`),
      createdAts: runs.map((run) => run.hash.createdAt ?? '0'),
      cursors: [logs.cursor ?? '', dlq.cursor ?? ''].filter((c) => c !== ''),
      userId: workflowUserIdOf(suite.target),
    };
  }

  /** Cancels the runs a 2xx set going (started, resumed, or given a step or a wait), and waits for rest. */
  async function undo(before: RecordsSnapshot, after: RecordsSnapshot): Promise<void> {
    const diff = diffRecords(before, after);
    const going = [...diff.changed, ...diff.added].filter(
      (runId) => after.runs[runId]?.hash.state === 'RUN_STARTED',
    );
    if (going.length > 0) await workflow.client().cancel({ ids: going });
    await quiesce(suite.inspect, keys);
  }

  beforeAll(async () => {
    await topUp();
  }, 180_000);

  afterAll(() => {
    process.stdout.write(`${counter.report('workflow state fuzz')}\n`);
  });

  /** Everything sent through the other binding: its answers may name what it was told. */
  const toldOther: string[] = [];

  /** Who asks: this binding's token (as it is or in QStash's format), another's, or a broken one. */
  const callers = (): fc.Arbitrary<Caller> => {
    const own = suite.target.token;
    const other = suite.otherTarget.token;
    return fc.oneof(
      { arbitrary: fc.constant(ownCaller(own)), weight: 10 },
      fc.constant({
        token: `Bearer ${buildQStashFormatToken(workflowUserIdOf(suite.target), own)}`,
        ours: true,
        otherBase: false,
      }),
      fc.constant({ token: `Bearer ${other}`, ours: false, otherBase: false }),
      fc.constant({ token: `Bearer ${other}`, ours: false, otherBase: true }),
      fc.constant({ token: `Bearer ${other}`, ours: false, otherBase: true }),
      fc
        .constantFrom(undefined, 'Bearer', `Bearer ${own}x`, `Basic ${own}`, `Bearer ${own}, Bearer ${other}`)
        .map((token) => ({ token, ours: false, otherBase: false })),
    );
  };

  async function fuzzCase(
    route: WorkflowFuzzRoute,
    secrets: readonly string[],
    [method, shape, caller, replica]: [string, Omit<FuzzRequest, 'method'>, Caller, number],
  ): Promise<void> {
    counter.count(route.name);
    const request = sendableRequest({
      method,
      ...shape,
      headers: { ...shape.headers, ...(caller.token !== undefined && { authorization: caller.token }) },
    });
    const base = suite.replicas[replica]!.queueUrl(caller.otherBase ? suite.otherTarget : suite.target);
    const before = await snapshot();
    const asked = askedText(request);
    const response = await sendFuzzRequest(base, request);
    if (caller.otherBase) toldOther.push(asked);
    counter.answered(response.status);
    const seen = { route: route.name, method, path: request.path.slice(0, 300), status: response.status };
    expect({ ...seen, fiveHundred: response.status >= 500 }).toEqual({ ...seen, fiveHundred: false });
    if (response.status >= 400 && method !== 'HEAD')
      expect({ ...seen, body: response.body.slice(0, 300), shape: isQStashError(response.body) }).toEqual({
        ...seen,
        body: response.body.slice(0, 300),
        shape: true,
      });
    const ours = (caller.ours || route.tokenless === true) && !caller.otherBase;
    if (!ours)
      expect({ ...seen, leaked: leaked(response.body, asked, toldOther, secrets) }).toEqual({
        ...seen,
        leaked: [],
      });
    if (response.status >= 400 || !ours) {
      const diff = diffRecords(before, await snapshot());
      expect({ ...seen, diff: unchanged(diff) ? 'unchanged' : diff }).toEqual({ ...seen, diff: 'unchanged' });
      return;
    }
    await quiesce(suite.inspect, keys);
    const after = await snapshot();
    const problems = undocumentedChanges({
      request,
      answer: JSON.parse(response.body || 'null') as unknown,
      before,
      after,
      diff: diffRecords(before, after),
      keys,
    });
    expect({ ...seen, problems }).toEqual({ ...seen, problems: [] });
    await undo(before, after);
  }

  it.each(WORKFLOW_FUZZ_ROUTES.map((route) => [route.name, route] as const))(
    'when %s is asked with fuzzed input aimed at runs in every state, then no 5xx, {"error"}, and only the documented change',
    async (_name, route) => {
      const now = await topUp();
      const targets = await targetsOf(now);
      // Every run of this binding and its dead letters, not only those aimed at.
      const secrets = [
        ...fixture.markers,
        ...Object.keys(now.runs),
        ...Object.values(now.runs).flatMap((run) => Object.keys(run.deadLetters)),
      ];
      // A third of the cases calm (the route's method, this binding's token, exact values), so the
      // state changes are reached as often as the refusals.
      const calm = fc.tuple(
        fc.constant(route.method),
        route.request({ ...targets, calm: true }),
        fc.constant(ownCaller(suite.target.token)),
        fc.constantFrom(0, 1),
      );
      const adversarial = fc.tuple(
        methodFor(route),
        route.request({ ...targets, calm: false }),
        callers(),
        fc.constantFrom(0, 1),
      );
      await fc.assert(
        fc.asyncProperty(
          fc.oneof({ arbitrary: adversarial, weight: 2 }, { arbitrary: calm, weight: 1 }),
          (input) => fuzzCase(route, secrets, input),
        ),
        { numRuns: RUNS_PER_ROUTE, ...BOUNDED },
      );
    },
    180_000,
  );
});
