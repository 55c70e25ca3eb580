import { waitFor } from '../../../local/wait.js';
import type { QueueTarget } from '../../../gateway/queue/core/binding-registry.js';
import { useWorkflowSuite, type WorkflowSuite } from './workflow-suite.js';

interface Plan {
  key: string;
}

/** A run that failed at its 'maybe' step: its id, and its DLQ id once its failure function ran. */
export interface FailedRun {
  runId: string;
  dlqId: string;
}

/** What the workflow DLQ suites share; see {@link useWorkflowDlqSuite}. */
export interface WorkflowDlqSuite extends WorkflowSuite {
  /** Keys whose 'maybe' step throws; keys whose failure function throws. */
  readonly broken: Set<string>;
  readonly brokenCallback: Set<string>;
  /** How often each key's steps ran (`key/before`, `key/maybe`), and its failure function ran (`key`). */
  readonly ran: Map<string, number>;
  readonly failures: Map<string, number>;
  /** The run id each key's 'maybe' step last ran in, as the SDK's context saw it. */
  readonly ranIn: Map<string, string>;
  /** Polls `check` until it holds (60 s). */
  until(what: string, check: () => Promise<boolean>): Promise<true>;
  /** Waits until the run's state is `state`. */
  stateIs(runId: string, state: string): Promise<true>;
  /** A run of `key` that fails at 'maybe' (retries 0), once its failure function ran. */
  failedRun(key: string, label: string): Promise<FailedRun>;
  /** A request to replica-a; its status and JSON body. */
  ask(
    path: string,
    method: string,
    token?: string,
    headers?: Record<string, string>,
    target?: QueueTarget,
  ): Promise<readonly [number, unknown]>;
}

/**
 * Registers the hooks of a workflow DLQ suite: {@link useWorkflowSuite} serving one workflow,
 * 'flaky' (steps 'before' then 'maybe', which throws for a key in `broken`; its failure function
 * throws for a key in `brokenCallback`). Runs fail on replica-b (the endpoints' client); the DLQ is
 * managed through replica-a.
 */
export function useWorkflowDlqSuite(): WorkflowDlqSuite {
  const broken = new Set<string>();
  const brokenCallback = new Set<string>();
  const ran = new Map<string, number>();
  const failures = new Map<string, number>();
  const ranIn = new Map<string, string>();
  const count = (map: Map<string, number>, key: string) => map.set(key, (map.get(key) ?? 0) + 1);

  const workflow = useWorkflowSuite(() => ({
    workflows: {
      flaky: {
        route: async (context) => {
          const { key } = context.requestPayload as Plan;
          await context.run('before', () => count(ran, `${key}/before`));
          await context.run('maybe', () => {
            if (broken.has(key)) throw new Error(`broken ${key}`);
            count(ran, `${key}/maybe`);
            ranIn.set(key, context.workflowRunId);
          });
        },
        options: {
          failureFunction: async ({ context }) => {
            const { key } = context.requestPayload as Plan;
            count(failures, key);
            if (brokenCallback.has(key)) throw new Error(`failure function broken for ${key}`);
          },
        },
      },
    },
  }));
  const suite = workflow.queue;
  const { client, runs } = workflow;
  const until = (what: string, check: () => Promise<boolean>) =>
    waitFor(what, async () => ((await check()) ? true : undefined), { timeoutMs: 60_000, intervalMs: 25 });
  const stateIs = (runId: string, state: string) =>
    until(`run ${runId} ${state}`, async () => (await runs().get(runId))?.state === state);

  const failedRun = async (key: string, label: string) => {
    broken.add(key);
    const { workflowRunId } = await client().trigger({
      url: workflow.endpoints.expressUrl('flaky'),
      body: { key },
      retries: 0,
      label,
    });
    await stateIs(workflowRunId, 'RUN_FAILED');
    const expected = brokenCallback.has(key) ? 'CALLBACK_FAIL' : 'CALLBACK_SUCCESS';
    await until(`${key}'s failure callback ${expected}`, async () => {
      return (await runs().get(workflowRunId))?.callback?.state === expected;
    });
    const { dlqId } = JSON.parse((await runs().get(workflowRunId))!.failure!) as { dlqId: string };
    return { runId: workflowRunId, dlqId };
  };
  const ask = async (
    path: string,
    method: string,
    token = suite.target.token,
    headers: Record<string, string> = {},
    target = suite.target,
  ) => {
    const response = await fetch(`${suite.replicas[0]!.queueUrl(target)}${path}`, {
      method,
      headers: { ...headers, authorization: `Bearer ${token}` },
    });
    return [response.status, await response.json().catch(() => undefined)] as const;
  };

  return Object.assign(workflow, {
    broken,
    brokenCallback,
    ran,
    failures,
    ranIn,
    until,
    stateIs,
    failedRun,
    ask,
  });
}
