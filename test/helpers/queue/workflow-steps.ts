import type { WorkflowRunStore } from '../../../gateway/queue/stores/workflow-run-store.js';

/** A step result the SDK published, as the run's step list keeps it. */
export interface RecordedStep {
  stepId: number;
  stepName: string;
  stepType: string;
  /** The step function's result as the SDK serialized it (JSON text for a context.run). */
  out?: unknown;
}

/**
 * The results a run recorded, in publish order: its step list without the payload and without a
 * parallel group's plan steps (stepId 0, the SDK's "run these" markers, not results).
 */
export async function recordedSteps(runs: WorkflowRunStore, runId: string): Promise<RecordedStep[]> {
  return (await runs.steps(runId))
    .slice(1)
    .map((step) => JSON.parse(Buffer.from(step.body, 'base64').toString('utf8')) as RecordedStep)
    .filter((step) => step.stepId !== 0);
}
