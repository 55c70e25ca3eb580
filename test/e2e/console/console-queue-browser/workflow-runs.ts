import { Client as WorkflowClient } from '@upstash/workflow';
import { waitFor } from '../../../../local/wait.js';
import type { ConsoleBrowserFixture } from '../../../helpers/console/browser-fixture.js';
import { startWorkflowEndpoints } from '../../../helpers/queue/workflow-endpoints.js';

/**
 * The Workflow runs view, registered by console-queue-browser.test.ts in its describe block after
 * the messages view, so it runs in that file's one browser and platform, signed in as tenant A on
 * the page of its binding cache; `queueEnv` holds the values of the .env that file downloaded.
 */
export function workflowRunsTest(
  fixture: () => ConsoleBrowserFixture,
  queueEnv: Readonly<Record<string, string>>,
): void {
  it("when workflow runs finish and wait, then the Workflow runs view shows each run's state, times and steps with their outputs, cancels a running one from its row, and refuses tenant B's runs", async () => {
    const { page, tenantA, tenantB, queue, expectAccessible, screenshot } = fixture();
    const target = queue.registry.get(tenantA.namespace, 'cache');
    if (!target) throw new Error('the gateway serves no binding cache');
    const endpoints = await startWorkflowEndpoints({
      target,
      queueUrl: queueEnv.QSTASH_URL ?? '',
      workflows: {
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
}
