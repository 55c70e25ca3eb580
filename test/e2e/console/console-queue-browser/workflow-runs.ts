import { Client as WorkflowClient } from '@upstash/workflow';
import { waitFor } from '../../../../local/wait.js';
import type { ConsoleBrowserFixture } from '../../../helpers/console/browser-fixture.js';
import {
  startWorkflowEndpoints,
  type WorkflowDefinition,
  type WorkflowEndpoints,
} from '../../../helpers/queue/workflow-endpoints.js';

/**
 * The Workflow runs view, registered by console-queue-browser.test.ts in its describe block after
 * the messages view, so it runs in that file's one browser and platform, signed in as tenant A on
 * the page of its binding cache; `queueEnv` holds the values of the .env that file downloaded.
 */
export function workflowRunsTest(
  fixture: () => ConsoleBrowserFixture,
  queueEnv: Readonly<Record<string, string>>,
): void {
  /** Workflow endpoints on loopback that talk to tenant A's binding cache. */
  const startEndpoints = (workflows: Record<string, WorkflowDefinition>): Promise<WorkflowEndpoints> => {
    const { queue, tenantA } = fixture();
    const target = queue.registry.get(tenantA.namespace, 'cache');
    if (!target) throw new Error('the gateway serves no binding cache');
    return startWorkflowEndpoints({ target, queueUrl: queueEnv.QSTASH_URL ?? '', workflows });
  };

  it("when workflow runs finish and wait, then the Workflow runs view shows each run's state, times and steps with their outputs, cancels a running one from its row, and refuses tenant B's runs", async () => {
    const { page, tenantB, expectAccessible, screenshot } = fixture();
    const endpoints = await startEndpoints({
      greet: {
        route: async (context) => {
          const name = await context.run('name', () => 'Ada');
          return context.run('greet', () => `hello ${name}`);
        },
      },
      napping: {
        route: async (context) => {
          await context.run('before-nap', () => 'awake');
          await context.sleep('nap', 3_600);
        },
      },
    });
    try {
      const client = new WorkflowClient({ baseUrl: queueEnv.QSTASH_URL, token: queueEnv.QSTASH_TOKEN ?? '' });
      const { workflowRunId: done } = await client.trigger({ url: endpoints.expressUrl('greet'), body: {} });
      const { workflowRunId: napping } = await client.trigger({
        url: endpoints.expressUrl('napping'),
        body: {},
      });
      await waitFor(
        'one run finished and the other asleep',
        async () => {
          const [finished] = (await client.logs({ workflowRunId: done })).runs;
          const [asleep] = (await client.logs({ workflowRunId: napping })).runs;
          const names = asleep?.steps.flatMap((group) => group.steps.map((step) => step.stepName)) ?? [];
          return finished?.workflowState === 'RUN_SUCCESS' && names.includes('nap') ? true : undefined;
        },
        { timeoutMs: 20_000, intervalMs: 100 },
      );

      const runs = page.getByTestId('workflow-runs');
      await runs.getByRole('button', { name: 'Refresh' }).click();
      const rowOf = (runId: string) => runs.locator(`tr[data-run-id="${runId}"]`);
      await rowOf(done).waitFor();
      expect(await rowOf(done).getByTestId('workflow-state').textContent()).toBe('Succeeded');
      expect(await rowOf(napping).getByTestId('workflow-state').textContent()).toBe('Running');
      await rowOf(done).locator('summary').click();
      const steps = rowOf(done).getByTestId('workflow-steps');
      expect(await steps.locator('li[data-step="name"]').getByTestId('step-output').textContent()).toBe(
        'Ada',
      );
      expect(await steps.locator('li[data-step="greet"]').getByTestId('step-output').textContent()).toBe(
        'hello Ada',
      );
      expect(await rowOf(done).getByTestId('workflow-result').textContent()).toContain('hello Ada');
      // A finished run has no Cancel; a running one has.
      expect(
        await rowOf(done)
          .getByRole('button', { name: /^Cancel/ })
          .count(),
      ).toBe(0);
      await expectAccessible('queue page with workflow runs');
      await screenshot('workflow-runs');

      await rowOf(napping)
        .getByRole('button', { name: `Cancel ${napping}` })
        .click();
      await runs.getByText(`Workflow run ${napping} cancelled.`).waitFor();
      await waitFor(
        'the row to show the cancel',
        async () =>
          (await rowOf(napping).getByTestId('workflow-state').textContent()) === 'Cancelled'
            ? true
            : undefined,
        { timeoutMs: 5_000 },
      );
      expect((await client.logs({ workflowRunId: napping })).runs[0]?.workflowState).toBe('RUN_CANCELED');

      // Tenant B's binding of the same name: A's session may not read its token.
      const foreign = await page.evaluate(
        async (namespace) =>
          (await fetch(`/api/namespaces/${namespace}/bindings/cache/workflow-runs`)).status,
        tenantB.namespace,
      );
      expect(foreign).toBe(403);
    } finally {
      await endpoints.close();
    }
  }, 60_000);

  it('when a run waits for an event, then its row shows the wait and Waiters its event, deadline and timeout URL; once notified the wait is gone and the next step shows; the waiters route refuses strangers, unknown runs and bad ids', async () => {
    const { page, tenantA, tenantB, expectAccessible } = fixture();
    const eventId = 'evt_console-paid';
    const endpoints = await startEndpoints({
      paying: {
        route: async (context) => {
          const { eventData } = await context.waitForEvent('wait for payment', eventId, { timeout: '1h' });
          await context.run('after payment', () => `paid ${String(eventData)}`);
        },
      },
    });
    try {
      const client = new WorkflowClient({ baseUrl: queueEnv.QSTASH_URL, token: queueEnv.QSTASH_TOKEN ?? '' });
      const url = endpoints.expressUrl('paying');
      const { workflowRunId: runId } = await client.trigger({ url, body: {} });
      const [waiter] = await waitFor(
        'the run to wait',
        async () => {
          const waiters = await client.getWaiters({ eventId });
          return waiters.length === 1 ? waiters : undefined;
        },
        { timeoutMs: 20_000, intervalMs: 100 },
      );

      const runs = page.getByTestId('workflow-runs');
      const row = runs.locator(`tr[data-run-id="${runId}"]`);
      await runs.getByRole('button', { name: 'Refresh' }).click();
      await row.getByTestId('workflow-wait').waitFor();
      expect(await row.getByTestId('workflow-wait').textContent()).toContain(
        `Waiting for event ${eventId} (wait for payment) until`,
      );
      await row.getByRole('button', { name: `Waiters of ${runId}` }).click();
      const detail = row.locator(`[data-testid="workflow-waiter"][data-event-id="${eventId}"]`);
      await detail.waitFor();
      expect(await detail.getByTestId('waiter-timeout-url').textContent()).toBe(url);
      expect(await detail.getByTestId('waiter-deadline').textContent()).toBe(
        await page.evaluate((ms) => new Date(ms).toLocaleString(), waiter!.deadline * 1000),
      );
      expect(await detail.getByTestId('event-waiters').textContent()).toContain(runId);
      await expectAccessible('queue page with a waiting workflow run');

      // The waiters route: another tenant's binding (403), no session (401), an unknown run (404),
      // a run id the queue never gives (400 naming it), each a JSON error.
      const answers = await page.evaluate(
        async ({ own, other, run }) => {
          const ask = async (path: string, init?: RequestInit) => {
            const response = await fetch(path, init);
            return [response.status, ((await response.json()) as { error: string }).error];
          };
          return [
            await ask(`/api/namespaces/${other}/bindings/cache/workflow-runs/${run}/waiters`),
            await ask(`/api/namespaces/${own}/bindings/cache/workflow-runs/${run}/waiters`, {
              credentials: 'omit',
            }),
            await ask(`/api/namespaces/${own}/bindings/cache/workflow-runs/wfr_unknown/waiters`),
            await ask(`/api/namespaces/${own}/bindings/cache/workflow-runs/not-a-run/waiters`),
          ];
        },
        { own: tenantA.namespace, other: tenantB.namespace, run: runId },
      );
      expect(answers).toEqual([
        [403, expect.any(String)],
        [401, expect.any(String)],
        [404, 'queue-refused'],
        [400, 'bad-input'],
      ]);

      await client.notify({ eventId, eventData: 'in full' });
      await waitFor(
        'the wait gone and the next step shown',
        async () => {
          await runs.getByRole('button', { name: 'Refresh' }).click();
          await row.locator('summary').waitFor();
          return (await row.getByTestId('workflow-waits').count()) === 0 &&
            (await row.locator('li[data-step="after payment"]').count()) === 1
            ? true
            : undefined;
        },
        { timeoutMs: 20_000, intervalMs: 200 },
      );
      await row.locator('summary').click();
      expect(
        await row.locator('li[data-step="after payment"]').getByTestId('step-output').textContent(),
      ).toBe('paid in full');
    } finally {
      await endpoints.close();
    }
  }, 60_000);
}
