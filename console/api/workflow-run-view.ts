/**
 * The Workflow runs view of a binding (issue 28 item 6): its runs as the gateway's client.logs()
 * route answers them (GET /v2/workflows/events, QStash's WorkflowRunLog shape), folded into rows
 * the page shows as they are, a waiting run's waits (the logs' `next` group) beside its steps; and
 * one run's waiters with what client.getWaiters answers for each event (GET /v2/waiters/{eventId}).
 * Pure: the queue's answers in, the rows out. The console reaches the gateway over HTTP only, so
 * the input shapes are the QStash API's, not imports from gateway/.
 */

/** The longest output or error text a row carries; the rest is cut with an ellipsis. */
export const WORKFLOW_TEXT_LIMIT = 500;

export const WORKFLOW_RUN_STATES = ['RUN_STARTED', 'RUN_SUCCESS', 'RUN_FAILED', 'RUN_CANCELED'] as const;
export type WorkflowRunState = (typeof WORKFLOW_RUN_STATES)[number];

/** A run as the logs route answers it, the fields the view reads. */
export interface WorkflowRunLogInput {
  workflowRunId: string;
  workflowUrl: string;
  workflowState: string;
  workflowRunCreatedAt: number;
  workflowRunCompletedAt?: number;
  workflowRunResponse?: string;
  label?: string;
  dlqId?: string;
  steps?: { type: string; steps?: StepLogInput[] }[];
}

/** A waiter as client.getWaiters answers it (QStash's Waiter), the fields the view reads. */
export interface WaiterInput {
  url?: string;
  headers?: Record<string, string[]>;
  /** Epoch seconds. */
  deadline?: number;
  timeoutUrl?: string;
}

interface StepLogInput {
  stepName?: string;
  stepType?: string;
  state?: string;
  out?: unknown;
  createdAt?: number;
  errors?: { error?: string; status?: number; body?: string }[];
  waitEventId?: string;
  waitTimeoutDeadline?: number;
}

/** A wait in progress of a running run: the event it waits for and when it times out. */
export interface WorkflowWaitView {
  eventId: string;
  /** The wait step's name. */
  step: string;
  /** When the wait times out, epoch ms. */
  deadline: number;
  /** When it began, epoch ms, when the queue knows. */
  since?: number;
}

export interface WorkflowStepView {
  name: string;
  type: string;
  state: string;
  /** Parallel steps are shown as one group: its index among the run's groups. */
  group: number;
  parallel: boolean;
  /** The step's output as text (JSON for anything else), cut to WORKFLOW_TEXT_LIMIT. */
  output: string;
  errors: string[];
  at?: number;
}

export interface WorkflowRunRow {
  runId: string;
  url: string;
  state: WorkflowRunState;
  startedAt: number;
  finishedAt?: number;
  label?: string;
  /** What the run returned, as text. */
  result?: string;
  dlqId?: string;
  steps: WorkflowStepView[];
  /** What a running run waits for now (none once notified or timed out). */
  waits: WorkflowWaitView[];
}

/** One run of the binding waiting for an event, as client.getWaiters lists it. */
export interface WaiterView {
  runId: string;
  url: string;
  /** Epoch ms (the queue answers whole seconds). */
  deadline: number;
  /** Where the wait's timeout is delivered; null when the queue names none. */
  timeoutUrl: string | null;
}

/** GET .../workflow-runs/:runId/waiters: the run's waits, each with every waiter of its event. */
export interface WorkflowRunWaiters {
  runId: string;
  state: WorkflowRunState;
  waits: (WorkflowWaitView & {
    /** This run's own waiter for the event: null when it was taken between the two reads. */
    waiter: WaiterView | null;
    /** Every run of the binding waiting for the event, this one included (client.getWaiters). */
    waiters: WaiterView[];
  })[];
}

export interface WorkflowRunPage {
  runs: WorkflowRunRow[];
  /** Older runs exist past this page. */
  more: boolean;
}

function cut(text: string): string {
  return text.length > WORKFLOW_TEXT_LIMIT ? `${text.slice(0, WORKFLOW_TEXT_LIMIT)}…` : text;
}

function asText(value: unknown): string {
  if (value === undefined) return '';
  return cut(typeof value === 'string' ? value : JSON.stringify(value));
}

function stateOf(state: string): WorkflowRunState {
  return (WORKFLOW_RUN_STATES as readonly string[]).includes(state)
    ? (state as WorkflowRunState)
    : 'RUN_STARTED';
}

/** The waits of a run's `next` group: what it waits for while it runs. */
function waitsOf(run: WorkflowRunLogInput): WorkflowWaitView[] {
  if (stateOf(run.workflowState) !== 'RUN_STARTED') return [];
  return (run.steps ?? [])
    .filter((group) => group.type === 'next')
    .flatMap((group) => group.steps ?? [])
    .flatMap((step) =>
      step.waitEventId === undefined || step.waitTimeoutDeadline === undefined
        ? []
        : [
            {
              eventId: step.waitEventId,
              step: step.stepName ?? '',
              deadline: step.waitTimeoutDeadline,
              ...(step.createdAt !== undefined && { since: step.createdAt }),
            },
          ],
    );
}

/** A getWaiters entry as the view shows it; its run id is the header the queue gives it. */
export function buildWaiterView(waiter: WaiterInput): WaiterView {
  const timeoutUrl = waiter.timeoutUrl ?? '';
  return {
    runId: waiter.headers?.['Upstash-Workflow-Runid']?.[0] ?? '',
    url: waiter.url ?? '',
    deadline: (waiter.deadline ?? 0) * 1000,
    timeoutUrl: timeoutUrl === '' ? null : timeoutUrl,
  };
}

/** One row's waits, each with its event's waiters (`waitersOf(eventId)`, getWaiters' answer). */
export function buildWorkflowRunWaiters(
  row: WorkflowRunRow,
  waitersOf: ReadonlyMap<string, readonly WaiterInput[]>,
): WorkflowRunWaiters {
  return {
    runId: row.runId,
    state: row.state,
    waits: row.waits.map((wait) => {
      const waiters = (waitersOf.get(wait.eventId) ?? []).map(buildWaiterView);
      return { ...wait, waiter: waiters.find((w) => w.runId === row.runId) ?? null, waiters };
    }),
  };
}

export function buildWorkflowRunRows(runs: readonly WorkflowRunLogInput[]): WorkflowRunRow[] {
  return runs.map((run) => {
    const groups = (run.steps ?? []).filter((group) => group.type !== 'next');
    const steps = groups.flatMap((group, index) =>
      (group.steps ?? []).map((step): WorkflowStepView => ({
        name: step.stepName ?? '',
        type: step.stepType ?? '',
        state: step.state ?? '',
        group: index,
        parallel: group.type === 'parallel',
        output: asText(step.out),
        errors: (step.errors ?? []).map((e) =>
          cut([e.status, e.error ?? e.body].filter((part) => part !== undefined).join(' ')),
        ),
        ...(step.createdAt !== undefined && { at: step.createdAt }),
      })),
    );
    return {
      runId: run.workflowRunId,
      url: run.workflowUrl,
      state: stateOf(run.workflowState),
      startedAt: run.workflowRunCreatedAt,
      ...(run.workflowRunCompletedAt !== undefined && { finishedAt: run.workflowRunCompletedAt }),
      ...(run.label !== undefined && { label: run.label }),
      ...(run.workflowRunResponse !== undefined && { result: asText(run.workflowRunResponse) }),
      ...(run.dlqId !== undefined && { dlqId: run.dlqId }),
      steps,
      waits: waitsOf(run),
    };
  });
}
