import { Client } from '@upstash/workflow';
import { waitFor } from '../../../local/wait.js';
import type { WorkflowRunRecord } from '../../../gateway/queue/core/workflow-message.js';
import { queueKeys } from '../../../gateway/queue/core/keys.js';
import { WorkflowRunStore } from '../../../gateway/queue/stores/workflow-run-store.js';
import { useSdkQueueSuite, type SdkQueueSuite } from './sdk-queue-suite.js';
import { startWorkflowEndpoints, type WorkflowEndpoints } from './workflow-endpoints.js';

/** What a workflow suite serves: its workflows, and those served together with serveMany. */
export type WorkflowSuiteEndpoints = Omit<
  Parameters<typeof startWorkflowEndpoints>[0],
  'target' | 'queueUrl'
>;

/** What the workflow SDK suites share; see {@link useWorkflowSuite}. */
export interface WorkflowSuite {
  /** The two replicas, their Redis, the receiver and the other binding. */
  readonly queue: SdkQueueSuite;
  /** The suite's workflows, served by the unchanged SDK, which talks to replica-b. */
  readonly endpoints: WorkflowEndpoints;
  /** The @upstash/workflow Client of tenant-a's binding against a replica (replica-a unless told). */
  client(replica?: number): Client;
  /** The binding's workflow runs, read from its Redis by the test. */
  runs(): WorkflowRunStore;
  /** Waits until the run is no longer RUN_STARTED; its record then. */
  finished(runId: string, timeoutMs?: number): Promise<WorkflowRunRecord>;
}

/**
 * Registers the hooks of a workflow SDK suite: {@link useSdkQueueSuite}'s two replicas, and the
 * workflows `serve` names started before the tests (the endpoints' SDK client on replica-b, so a
 * trigger through replica-a's client crosses replicas) and closed after them, before the replicas
 * stop. `serve` is called in beforeAll, so workflows may use what the describe block defines after
 * this call.
 */
export function useWorkflowSuite(
  serve: () => WorkflowSuiteEndpoints,
  options: Parameters<typeof useSdkQueueSuite>[0] = {},
): WorkflowSuite {
  let endpoints: WorkflowEndpoints;
  // Declared before the queue suite's hooks because jest runs afterAll hooks in the order they are
  // declared: the endpoints' handlers in flight finish against running replicas (close waits for
  // them), and only then do the replicas stop.
  afterAll(async () => {
    await endpoints?.close();
  });
  const queue = useSdkQueueSuite(options);

  beforeAll(async () => {
    endpoints = await startWorkflowEndpoints({
      ...serve(),
      target: queue.target,
      queueUrl: queue.replicas[1]!.queueUrl(queue.target),
    });
  });

  const runs = () => new WorkflowRunStore(queue.inspect, queueKeys(queue.config.keyPrefix));
  return {
    queue,
    get endpoints() {
      return endpoints;
    },
    client: (replica = 0) =>
      new Client({ baseUrl: queue.replicas[replica]!.queueUrl(queue.target), token: queue.target.token }),
    runs,
    finished: (runId, timeoutMs = 20_000) =>
      waitFor(
        `workflow run ${runId} finished`,
        async () => {
          const run = await runs().get(runId);
          return run && run.state !== 'RUN_STARTED' ? run : undefined;
        },
        { timeoutMs, intervalMs: 25 },
      ),
  };
}
