/**
 * The Workflow runs view of a binding (issue 28 item 6): its runs as the gateway's client.logs()
 * route answers them (GET /v2/workflows/events, QStash's WorkflowRunLog shape), folded into rows
 * the page shows as they are. Pure: the logs page in, the rows out. The console reaches the
 * gateway over HTTP only, so the input shape is the QStash API's, not an import from gateway/.
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

interface StepLogInput {
  stepName?: string;
  stepType?: string;
  state?: string;
  out?: unknown;
  createdAt?: number;
  errors?: { error?: string; status?: number; body?: string }[];
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

export function buildWorkflowRunRows(runs: readonly WorkflowRunLogInput[]): WorkflowRunRow[] {
  return runs.map((run) => {
    const steps = (run.steps ?? []).flatMap((group, index) =>
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
    };
  });
}
