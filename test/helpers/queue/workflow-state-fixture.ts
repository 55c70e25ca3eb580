import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { waitFor } from '../../../local/wait.js';
import { queueKeys, type QueueKeys } from '../../../gateway/queue/core/keys.js';
import { quiesce } from './workflow-run-records.js';
import { closeServer } from './test-receiver.js';
import { useWorkflowSuite, type WorkflowSuite } from './workflow-suite.js';

/**
 * The states a run of the workflow state fuzz is set up in: waiting for an event, a sleep or a
 * call's answer, cancelled, succeeded, failed (its failure callback delivered, or failed too).
 */
export const RUN_KINDS = [
  'event',
  'sleep',
  'call',
  'cancelled',
  'success',
  'failed',
  'failedCallback',
] as const;
export type RunKind = (typeof RUN_KINDS)[number];

/** Two runs wait for this event (a notify of it resumes both); each event run waits for its own too. */
export const SHARED_EVENT = 'fz-shared';
/** Long enough that no wait, sleep or call retry comes due while the suite runs. */
const PARKED_SECONDS = 3_600;

interface Payload {
  /** Put in every run's payload: a response through another binding must never carry it. */
  marker: string;
  event?: string;
}

/** The workflow each kind runs, and the state it is left in. */
const WORKFLOW_OF: Record<RunKind, string> = {
  event: 'waiter',
  sleep: 'sleeper',
  call: 'caller',
  cancelled: 'sleeper',
  success: 'quick',
  failed: 'flaky',
  failedCallback: 'flaky',
};

export interface WorkflowStateFixture {
  readonly workflow: WorkflowSuite;
  readonly keys: QueueKeys;
  /** The markers of this binding's runs' payloads. */
  readonly markers: Set<string>;
  /** The events the runs wait for. */
  readonly events: Set<string>;
  /** Every endpoint URL the runs use, by workflow. */
  url(name: string): string;
  /** Starts `count` runs of `kind` and waits until each is in its state and the binding at rest. */
  runs(kind: RunKind, count: number): Promise<string[]>;
}

/**
 * Registers a workflow suite serving the fixture's workflows and a call target that answers 500
 * (a call with one retry an hour away then waits), and returns how to set runs up in each state.
 * A run whose id begins `wfr_fz-failed` or `wfr_fz-failedCallback` fails at its 'maybe' step
 * (retries 0); the second's failure function throws too. A run resumed or restarted from the DLQ
 * gets a new id, so it succeeds.
 */
export function useWorkflowStateFixture(): WorkflowStateFixture {
  let callTarget: http.Server;
  let callUrl = '';
  const markers = new Set<string>();
  const events = new Set<string>([SHARED_EVENT]);
  /** The runs whose call reached the call target. */
  const called = new Set<string>();
  let serial = 0;

  beforeAll(async () => {
    callTarget = http.createServer((req, res) => {
      const runId = req.headers['x-fz-run'];
      if (typeof runId === 'string') called.add(runId);
      req.resume();
      req.on('end', () => res.writeHead(500, { 'content-type': 'text/plain' }).end('down'));
    });
    await new Promise<void>((resolve) => callTarget.listen(0, '127.0.0.1', resolve));
    callUrl = `http://127.0.0.1:${(callTarget.address() as AddressInfo).port}/called`;
  });
  afterAll(async () => {
    if (callTarget) await closeServer(callTarget);
  });

  const payload = (context: { requestPayload: unknown }) => context.requestPayload as Payload;
  const workflow = useWorkflowSuite(() => ({
    workflows: {
      waiter: {
        route: async (context) => {
          await context.run('before', () => payload(context).marker);
          await context.waitForEvent('wait', payload(context).event!, { timeout: PARKED_SECONDS });
          await context.run('after', () => 'woke');
        },
      },
      sleeper: {
        route: async (context) => {
          await context.run('before', () => payload(context).marker);
          await context.sleep('nap', PARKED_SECONDS);
          await context.run('after', () => 'woke');
        },
      },
      caller: {
        route: async (context) => {
          await context.run('before', () => payload(context).marker);
          await context.call('call', {
            url: callUrl,
            method: 'POST',
            body: 'ask',
            headers: { 'x-fz-run': context.workflowRunId },
            retries: 1,
            retryDelay: String(PARKED_SECONDS * 1000),
          });
          await context.run('after', () => 'answered');
        },
      },
      quick: {
        route: async (context) => context.run('echo', () => ({ marker: payload(context).marker })),
      },
      flaky: {
        route: async (context) => {
          await context.run('before', () => payload(context).marker);
          await context.run('maybe', () => {
            if (context.workflowRunId.startsWith('wfr_fz-failed')) throw new Error('broken on purpose');
            return 'fine';
          });
        },
        options: {
          failureFunction: async ({ context }) => {
            if (context.workflowRunId.startsWith('wfr_fz-failedCallback'))
              throw new Error('failure function broken on purpose');
          },
        },
      },
    },
  }));
  const keys = queueKeys(workflow.queue.config.keyPrefix);
  const url = (name: string) => workflow.endpoints.expressUrl(name);

  const settled = (runId: string, kind: RunKind) =>
    waitFor(
      `run ${runId} ${kind}`,
      async () => {
        const run = await workflow.runs().get(runId);
        if (!run) return undefined;
        switch (kind) {
          case 'event':
            return (run.waits?.length ?? 0) > 0 || undefined;
          case 'call':
            return called.has(runId) || undefined;
          case 'sleep':
          case 'cancelled':
            return (await workflow.runs().steps(runId)).length >= 3 || undefined;
          case 'success':
            return run.state === 'RUN_SUCCESS' || undefined;
          case 'failed':
            return run.callback?.state === 'CALLBACK_SUCCESS' || undefined;
          case 'failedCallback':
            return run.callback?.state === 'CALLBACK_FAIL' || undefined;
        }
      },
      { timeoutMs: 60_000, intervalMs: 50 },
    );

  const runs = async (kind: RunKind, count: number): Promise<string[]> => {
    const ids = await Promise.all(
      Array.from({ length: count }, async () => {
        serial += 1;
        // Each value ends in a letter, so none is the beginning of another (`-1-` and `-15-`).
        const marker = `fz-marker-${kind}-${serial}-m`;
        markers.add(marker);
        // Every other event run waits for the shared event, the others for their own.
        const event = serial % 2 === 0 ? SHARED_EVENT : `fz-event-${serial}-e`;
        if (kind === 'event') events.add(event);
        const { workflowRunId } = await workflow.client().trigger({
          url: url(WORKFLOW_OF[kind]),
          body: { marker, event } satisfies Payload,
          workflowRunId: `fz-${kind}-${serial}-r`,
          label: `fz-${kind}`,
          ...(kind.startsWith('failed') && { retries: 0 }),
        });
        await settled(workflowRunId, kind);
        return workflowRunId;
      }),
    );
    // A call is parked once its first attempt failed and its retry waits: the binding at rest.
    await quiesce(workflow.queue.inspect, keys);
    if (kind === 'cancelled') await workflow.client().cancel({ ids });
    return ids;
  };

  return { workflow, keys, markers, events, url, runs };
}
