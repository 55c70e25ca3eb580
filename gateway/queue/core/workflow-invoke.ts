import { InvalidRequestError } from './errors.js';
import type { WorkflowInvoker, WorkflowRunRecord } from './workflow-message.js';

/**
 * context.invoke (SDK src/context/steps.ts LazyInvokeStep): the invoking run publishes a trigger
 * of the invoked workflow with `Upstash-Workflow-Invoke: true` and, as its body, the invoked run's
 * payload wrapped with who invoked it. The invoked run starts with the payload alone; when it ends,
 * the invoker resumes with the invoke step's result `{body, isFailed, isCanceled}` (what
 * LazyInvokeStep parses). Nothing here touches Redis.
 */

const FORWARD_PREFIX = 'upstash-forward-';

/** The headers the invoker's steps are delivered with, from the invoke body's `headers` (name -> values). */
function invokerHeaders(headers: unknown): Record<string, string> {
  const delivered: Record<string, string> = {};
  if (typeof headers !== 'object' || headers === null) return delivered;
  for (const [name, values] of Object.entries(headers)) {
    const value = Array.isArray(values) ? values[0] : values;
    if (typeof value !== 'string') continue;
    const lower = name.toLowerCase();
    // Only what a step publish would deliver: never the invoker client's Authorization.
    if (lower.startsWith(FORWARD_PREFIX)) delivered[lower.slice(FORWARD_PREFIX.length)] = value;
    else if (lower === 'content-type') delivered[lower] = value;
  }
  return delivered;
}

/** The invoke trigger's body: the invoked run's payload and its invoker. A bad field is a 400 naming it. */
export function parseInvokeRequest(body: Buffer): { payload: Buffer; invoker: WorkflowInvoker } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    throw new InvalidRequestError('an invoke (Upstash-Workflow-Invoke: true) body must be JSON');
  }
  const request = (typeof parsed === 'object' && parsed !== null ? parsed : {}) as Record<string, unknown>;
  const { workflowRunId, workflowUrl, step } = request;
  if (typeof workflowRunId !== 'string' || !workflowRunId.startsWith('wfr_'))
    throw new InvalidRequestError('the invoke body workflowRunId must be the invoking run id');
  if (typeof workflowUrl !== 'string' || workflowUrl === '')
    throw new InvalidRequestError('the invoke body workflowUrl must be the invoking workflow URL');
  if (typeof step !== 'object' || step === null || typeof (step as { stepId?: unknown }).stepId !== 'number')
    throw new InvalidRequestError('the invoke body step must be the invoke step with its stepId');
  const payload = typeof request.body === 'string' ? Buffer.from(request.body, 'utf8') : Buffer.alloc(0);
  return {
    payload,
    invoker: {
      runId: workflowRunId,
      url: workflowUrl,
      headers: invokerHeaders(request.headers),
      step: step as Record<string, unknown>,
    },
  };
}

/**
 * The step the invoker resumes with once `invoked` ended: `out` is the invoked run's result (its
 * returned value as the SDK sent it; its failure for a failed run), and whether it failed or was
 * cancelled.
 */
export function invokeResultStep(invoker: WorkflowInvoker, invoked: WorkflowRunRecord): Buffer {
  const out = {
    body: invoked.state === 'RUN_FAILED' ? invoked.failure : invoked.response,
    isFailed: invoked.state === 'RUN_FAILED',
    isCanceled: invoked.state === 'RUN_CANCELED',
  };
  return Buffer.from(JSON.stringify({ ...invoker.step, out: JSON.stringify(out) }), 'utf8');
}
