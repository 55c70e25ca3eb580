import type { Redis } from 'ioredis';
import { flowLimitsJson } from '../core/flow-control.js';
import { MESSAGE_FIELD, type QueueKeys } from '../core/keys.js';
import type { QueueMessage } from '../core/message.js';
import { encodeMessage } from '../core/message-codec.js';
import { eventJson } from '../core/message-event.js';
import type { RawStep, WorkflowRunConfig } from '../core/workflow-message.js';
import {
  actOnWorkflowLetter,
  actOnWorkflowLetterWithFlowControl,
} from '../scripts/act-on-workflow-letter.js';
import { flowControlScriptKeys } from './flow-control-store.js';
import { WORKFLOW_INLINE_STEPS_BYTES } from './workflow-run-store.js';

/** What a workflow DLQ entry becomes: a new run, and its first delivery. */
export interface LetterAction {
  dlqId: string;
  /** The entry's run, RUN_FAILED. */
  failedRunId: string;
  /** The new run. */
  run: { runId: string; config: WorkflowRunConfig; createdAt: number };
  /** Its first delivery: the failed step sent again (resume), or the trigger with its body (restart). */
  delivery: QueueMessage;
  /** Restart only: the new run's first step, its payload. */
  firstStep?: RawStep;
}

/** 'entry-gone': another request acted on the entry (or deleted it) first; 'not-failed': its run is not failed or no longer kept. */
export type LetterOutcome = 'started' | 'entry-gone' | 'not-failed' | 'id-taken';

const OUTCOMES: Record<number, LetterOutcome> = {
  1: 'started',
  0: 'entry-gone',
  [-1]: 'id-taken',
  [-2]: 'not-failed',
};

/**
 * A binding's workflow DLQ entries resumed or restarted as new runs, each in one script
 * (act-on-workflow-letter): the new run, its first delivery and the entry's removal together.
 */
export class WorkflowLetterStore {
  constructor(
    private readonly redis: Redis,
    private readonly keys: QueueKeys,
    private readonly eventCap: number,
  ) {}

  async resume(action: LetterAction, now = Date.now()): Promise<LetterOutcome> {
    return this.act('resume', action, now);
  }

  async restart(action: LetterAction & { firstStep: RawStep }, now = Date.now()): Promise<LetterOutcome> {
    return this.act('restart', action, now);
  }

  private async act(kind: 'resume' | 'restart', action: LetterAction, now: number): Promise<LetterOutcome> {
    const { dlqId, failedRunId, run, delivery, firstStep } = action;
    const k = this.keys;
    const due = delivery.notBefore !== undefined && delivery.notBefore > now ? delivery.notBefore : 0;
    const created =
      this.eventCap > 0 ? eventJson(delivery, 'CREATED', now, due > 0 ? { nextDeliveryTime: due } : {}) : '';
    const keys = [
      k.deadLetters,
      k.deadLetterOrder,
      k.workflowRun(failedRunId),
      k.workflowSteps(failedRunId),
      k.workflowStepIds(failedRunId),
      k.workflowRun(run.runId),
      k.workflowSteps(run.runId),
      k.workflowStepIds(run.runId),
      k.workflowRunOrder,
      k.events,
    ];
    const args: (string | number | Buffer)[] = [
      kind,
      dlqId,
      run.runId,
      JSON.stringify(run.config),
      run.createdAt,
      delivery.id,
      due,
      encodeMessage(delivery),
      created,
      MESSAGE_FIELD,
      this.eventCap,
      firstStep === undefined ? '' : JSON.stringify(firstStep),
      WORKFLOW_INLINE_STEPS_BYTES,
      firstStep === undefined ? 0 : Buffer.byteLength(firstStep.body, 'base64'),
    ];
    const { flowControl } = delivery;
    const outcome =
      flowControl === undefined
        ? await actOnWorkflowLetter.run(
            this.redis,
            [...keys, k.stream, k.streamIndex, k.schedule, k.scheduledMessages],
            args,
          )
        : await actOnWorkflowLetterWithFlowControl.run(
            this.redis,
            [...keys, ...flowControlScriptKeys(k, flowControl.key)],
            [...args, flowControl.key, flowLimitsJson(flowControl)],
          );
    return OUTCOMES[outcome as number]!;
  }
}
