import fs from 'node:fs/promises';
import { Client, Receiver } from '@upstash/qstash';
import type { CustomObjectsApi } from '@kubernetes/client-node';
import type { Page } from 'playwright-core';
import { SETTEE_GROUP, SETTEE_VERSION } from '../../../api/contract.js';
import type { ConsoleServer } from '../../../console/console-server.js';
import type { QueueService } from '../../../gateway/queue/index.js';
import type { RedisServer } from '../../../local/redis-server.js';
import { waitFor } from '../../../local/wait.js';
import {
  HOSTILE,
  startConsoleBrowserFixture,
  type ConsoleBrowserFixture,
  type Tenant,
} from '../../helpers/console/browser-fixture.js';
import type { LoopbackBrowser } from '../../helpers/gateway/loopback-browser.js';
import { conditionOf, waitForBinding } from '../../helpers/queue/queue-binding-harness.js';
import type { RecordingDestination } from '../../helpers/queue/recording-destination.js';
import { workflowRunsTest } from './console-queue-browser/workflow-runs.js';

/**
 * The console's queue pages in real Chromium against the real control plane, operator, gateway with
 * the queue, and Redis (test/helpers/console/browser-fixture.ts): tenant A's Redis QueueBinding, its
 * values and .env used with the real QStash SDK, the messages view, the dead-letter queue, signing-key
 * rotation, the workflow runs view (console-queue-browser/workflow-runs.ts, registered here so it
 * runs in this file's one browser and platform), and the database going away. Every page is
 * checked with axe-core.
 */
describe("the tenant console's queue pages in a real browser", () => {
  let f: ConsoleBrowserFixture;
  let customObjects: CustomObjectsApi;
  let browser: LoopbackBrowser;
  let server: ConsoleServer;
  let page: Page;
  let tokenA: string;
  let tenantA: Tenant;
  let tenantB: Tenant;
  let queue: QueueService;
  let redis: RedisServer;
  let destination: RecordingDestination;
  /** The values of the downloaded .env. */
  const queueEnv: Record<string, string> = {};
  const expectAccessible = (what: string) => f.expectAccessible(what);
  const screenshot = (name: string) => f.screenshot(name);

  beforeAll(async () => {
    f = await startConsoleBrowserFixture({ prefix: 'e2e-console-queue' });
    ({ customObjects, browser, server, page, tokenA, tenantA, tenantB } = f);
    ({ queue, redis, destination } = f);
  }, 90_000);

  afterAll(() => f?.stop());

  it('when tenant A signs in, then the queue list shows the Redis binding', async () => {
    await page.goto(server.url);
    await page.getByLabel('Token', { exact: true }).fill(tokenA);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'CouchDB instances' }).waitFor();
    await page.getByRole('link', { name: 'Queues' }).click();
    await page.getByRole('link', { name: 'cache' }).waitFor();
    await expectAccessible('queue list page');
  });

  it('when the queue page opens the Redis binding, then the four VQUEUE values show, and the downloaded .env publishes through the real QStash SDK with a verified signature', async () => {
    await waitForBinding(
      tenantA.namespace,
      'cache',
      'Ready',
      (b) => conditionOf(b, 'Ready')?.status === 'True',
    );
    await waitFor(
      'the gateway to serve the binding',
      async () => queue.registry.get(tenantA.namespace, 'cache'),
      // The gateway's informer hears of the Ready binding through the API server.
      { timeoutMs: 20_000 },
    );
    await page.getByRole('link', { name: 'Queues' }).click();
    await page.getByRole('link', { name: 'cache' }).click();
    const block = page.getByTestId('queue-block');
    await block.getByTestId('VQUEUE_NEXT_SIGNING_KEY').waitFor();
    for (const key of ['VQUEUE_URL', 'VQUEUE_TOKEN', 'VQUEUE_CURRENT_SIGNING_KEY', 'VQUEUE_NEXT_SIGNING_KEY'])
      expect(await block.getByTestId(key).count()).toBe(1);
    // The server the operator found behind the binding (INFO server), beside the declared engine.
    expect(await page.getByTestId('server').textContent()).toMatch(/^redis \d+\.\d+\.\d+$/);
    await expectAccessible('queue detail page');
    await screenshot('queue-detail');

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      block.getByRole('link', { name: 'Download .env' }).click(),
    ]);
    expect(download.suggestedFilename()).toBe('cache.env');
    const text = await fs.readFile((await download.path()) ?? '', 'utf8');
    const env = Object.fromEntries(
      text
        .split('\n')
        .filter((line) => /^[A-Z_]+=/.test(line))
        .map((line) => [
          line.slice(0, line.indexOf('=')),
          JSON.parse(line.slice(line.indexOf('=') + 1)) as string,
        ]),
    );
    Object.assign(queueEnv, env);
    expect(env.VQUEUE_URL).toBe(env.QSTASH_URL);
    expect(await block.getByTestId('VQUEUE_URL').textContent()).toBe(env.VQUEUE_URL);

    const client = new Client({
      baseUrl: env.QSTASH_URL,
      token: env.QSTASH_TOKEN,
      retry: false,
      enableTelemetry: false,
    });
    const { messageId } = await client.publishJSON({
      url: `${destination.baseUrl}/hook`,
      body: { from: 'console .env' },
    });
    const delivery = await waitFor('the delivery', async () => destination.attemptsOf(messageId)[0], {
      timeoutMs: 10_000,
      intervalMs: 20,
    });
    const receiver = new Receiver({
      currentSigningKey: env.QSTASH_CURRENT_SIGNING_KEY ?? '',
      nextSigningKey: env.QSTASH_NEXT_SIGNING_KEY ?? '',
    });
    await expect(
      receiver.verify({
        signature: String(delivery.headers['upstash-signature']),
        body: delivery.body.toString('utf8'),
        url: `${destination.baseUrl}/hook`,
      }),
    ).resolves.toBe(true);
  });

  it('when a message fails into the dead-letter queue, then the queue page lists it and Retry delivers it; Delete removes another, and a pending message can be cancelled', async () => {
    const client = new Client({
      baseUrl: queueEnv.QSTASH_URL,
      token: queueEnv.QSTASH_TOKEN ?? '',
      retry: false,
      enableTelemetry: false,
    });
    destination.answer = (request) => (request.path.startsWith('/fail') ? { status: 500 } : { status: 200 });
    const failed = await client.publishJSON({
      url: `${destination.baseUrl}/fail-1`,
      body: { n: 1 },
      retries: 0,
    });
    const doomed = await client.publishJSON({
      url: `${destination.baseUrl}/fail-2`,
      body: { n: 2 },
      retries: 0,
    });
    const letters = page.getByTestId('dead-letters');
    const rowOf = (messageId: string) => letters.locator('tr', { hasText: messageId });
    await waitFor(
      'both messages in the dead-letter list',
      async () => {
        await letters.getByRole('button', { name: 'Refresh' }).click();
        await page.waitForTimeout(300);
        return (await rowOf(failed.messageId).count()) === 1 && (await rowOf(doomed.messageId).count()) === 1
          ? true
          : undefined;
      },
      { timeoutMs: 20_000, intervalMs: 200 },
    );
    expect(await rowOf(failed.messageId).getByTestId('dlq-answer').textContent()).toMatch(/^500/);
    await expectAccessible('queue page with dead letters');
    await screenshot('queue-dead-letters');

    // The receiver recovers; Retry sends the message again and it is delivered.
    destination.answer = () => ({ status: 200 });
    await letters.getByRole('button', { name: `Retry ${failed.messageId}` }).click();
    await letters.getByText(`Message ${failed.messageId} sent again.`).waitFor();
    await waitFor(
      'the retried delivery',
      // QStash gives the retried message an id of its own: count the requests to its path instead.
      async () => (destination.requests.filter((r) => r.path === '/fail-1').length >= 2 ? true : undefined),
      {
        timeoutMs: 10_000,
      },
    );
    await rowOf(failed.messageId).waitFor({ state: 'detached' });

    await letters.getByRole('button', { name: `Delete ${doomed.messageId}` }).click();
    await letters.getByText(`Dead letter ${doomed.messageId} deleted.`).waitFor();
    await rowOf(doomed.messageId).waitFor({ state: 'detached' });
    expect(destination.attemptsOf(doomed.messageId)).toHaveLength(1);

    // A message delayed for an hour is cancelled from the page and never delivered.
    const delayed = await client.publishJSON({ url: `${destination.baseUrl}/later`, body: {}, delay: 3600 });
    await letters.getByLabel('Cancel a pending message by id').fill(delayed.messageId);
    await letters.getByRole('button', { name: 'Cancel message' }).click();
    await letters.getByText(`Message ${delayed.messageId} cancelled.`).waitFor();
    const gone = await fetch(`${queueEnv.QSTASH_URL}/v2/messages/${delayed.messageId}`, {
      headers: { authorization: `Bearer ${queueEnv.QSTASH_TOKEN}` },
    });
    expect(gone.status).toBe(404);
  }, 60_000);

  it("when messages are retried, delivered and delayed, then the messages view shows each one's state, attempts and last status, lists its attempts, cancels a delayed one from its row, and refuses tenant B's queue", async () => {
    const client = new Client({
      baseUrl: queueEnv.QSTASH_URL,
      token: queueEnv.QSTASH_TOKEN ?? '',
      retry: false,
      enableTelemetry: false,
    });
    let flakyCalls = 0;
    // Everything the tenant (or their receiver) writes is hostile here: the label, a forwarded
    // header, the body, and the failed answer's body.
    destination.answer = (request) =>
      request.path === '/flaky' && ++flakyCalls === 1 ? { status: 503, body: HOSTILE } : { status: 200 };
    const flaky = await client.publish({
      url: `${destination.baseUrl}/flaky`,
      body: HOSTILE,
      headers: { 'X-Hostile': HOSTILE },
      retries: 2,
      retryDelay: '100',
      label: HOSTILE,
    });
    const delayed = await client.publishJSON({
      url: `${destination.baseUrl}/much-later`,
      body: {},
      delay: 3600,
    });
    const messages = page.getByTestId('messages');
    const rowOf = (messageId: string) => messages.locator(`tr[data-message-id="${messageId}"]`);
    const stateOf = async (messageId: string): Promise<string | null> =>
      (await rowOf(messageId).count()) === 1
        ? rowOf(messageId).getByTestId('message-state').textContent()
        : null;
    await waitFor(
      'the retried message delivered and the delayed one listed',
      async () => {
        await messages.getByRole('button', { name: 'Refresh' }).click();
        await page.waitForTimeout(300);
        return (await stateOf(flaky.messageId)) === 'Delivered' &&
          (await stateOf(delayed.messageId)) === 'Delayed'
          ? true
          : undefined;
      },
      { timeoutMs: 20_000, intervalMs: 200 },
    );
    const flakyRow = rowOf(flaky.messageId);
    expect(await flakyRow.getByTestId('message-attempts').textContent()).toBe('2');
    expect(await flakyRow.getByTestId('message-status').textContent()).toBe('200');
    // The label is the tenant's own text: shown as text, nothing runs.
    expect(await flakyRow.getByText(HOSTILE).count()).toBe(1);
    expect(await page.evaluate('window.__pwned')).toBeUndefined();
    await messages.getByRole('button', { name: `Details of ${flaky.messageId}` }).click();
    const detail = messages.getByTestId('message-detail');
    const attempts = detail.getByTestId('attempt-summary');
    await attempts.nth(1).waitFor();
    expect(await attempts.allTextContents()).toEqual([
      expect.stringMatching(/: failed, status 503$/),
      expect.stringMatching(/: delivered, status 200$/),
    ]);
    expect(await detail.getByTestId('attempt-answer').allTextContents()).toEqual([HOSTILE]);
    expect(await detail.getByTestId('message-body').textContent()).toBe(HOSTILE);
    const headers = await detail.getByTestId('message-headers').textContent();
    expect(headers).toMatch(/x-hostile/i);
    expect(headers).toContain(HOSTILE);
    expect(await page.locator('main img, main script').count()).toBe(0);
    expect(await page.evaluate('window.__pwned')).toBeUndefined();
    await expectAccessible('queue page with a message opened');
    await screenshot('queue-message-detail');
    // The dead-lettered message of the previous case is under Failed with the receiver's 500.
    await messages.getByRole('button', { name: 'Failed', exact: true }).click();
    await waitFor(
      'only failed messages listed',
      async () => {
        const states = await messages.getByTestId('message-state').allTextContents();
        return states.length > 0 && states.every((state) => state === 'Failed') ? true : undefined;
      },
      { timeoutMs: 10_000, intervalMs: 100 },
    );
    expect(await messages.getByTestId('message-status').allTextContents()).toContain('500');
    await expectAccessible('queue page with messages');
    await screenshot('queue-messages');

    await messages.getByRole('button', { name: 'In flight' }).click();
    await rowOf(delayed.messageId).waitFor();
    await messages.getByRole('button', { name: `Cancel ${delayed.messageId}` }).click();
    await messages.getByText(`Message ${delayed.messageId} cancelled.`).waitFor();
    await rowOf(delayed.messageId).waitFor({ state: 'detached' });
    await messages.getByRole('button', { name: 'Cancelled' }).click();
    await rowOf(delayed.messageId).waitFor();
    expect(await stateOf(delayed.messageId)).toBe('Cancelled');
    const gone = await fetch(`${queueEnv.QSTASH_URL}/v2/messages/${delayed.messageId}`, {
      headers: { authorization: `Bearer ${queueEnv.QSTASH_TOKEN}` },
    });
    expect(gone.status).toBe(404);

    // Tenant B's binding of the same name: A's session may not read its token, so neither its
    // messages nor one of them nor a cancel reach any queue.
    const foreign = await page.evaluate(async (namespace) => {
      const base = `/api/namespaces/${namespace}/bindings/cache`;
      return [
        (await fetch(`${base}/messages`)).status,
        (await fetch(`${base}/messages/msg_x`)).status,
        (await fetch(`${base}/dlq`)).status,
      ];
    }, tenantB.namespace);
    expect(foreign).toEqual([403, 403, 403]);
    await messages.getByRole('button', { name: 'All' }).click();
  }, 60_000);

  workflowRunsTest(() => f, queueEnv);

  it('when Rotate signing keys is clicked, then the binding asks the operator for a rotation and the page shows the next key as current', async () => {
    const readBinding = async () =>
      (await customObjects.getNamespacedCustomObject({
        group: SETTEE_GROUP,
        version: SETTEE_VERSION,
        plural: 'queuebindings',
        namespace: tenantA.namespace,
        name: 'cache',
      })) as {
        metadata: { annotations?: Record<string, string> };
        status?: { signingKeys?: { currentGeneration: number; nextGeneration?: number } };
      };
    expect((await readBinding()).status?.signingKeys).toMatchObject({
      currentGeneration: 0,
      nextGeneration: 1,
    });
    const generations = page.getByTestId('signing-key-generations');
    await generations.getByText(/signed with key generation 0; generation 1 is the next key/).waitFor();
    await page.getByTestId('queue-block').getByRole('button', { name: 'Rotate signing keys' }).click();
    await waitFor(
      'the operator to rotate',
      async () => ((await readBinding()).status?.signingKeys?.currentGeneration === 1 ? true : undefined),
      { timeoutMs: 20_000 },
    );
    expect((await readBinding()).status?.signingKeys?.nextGeneration).toBe(2);
    expect((await readBinding()).metadata.annotations?.['settee.dev/rotate-signing-keys']).toBeDefined();
    await page.reload();
    await generations.getByText(/signed with key generation 1; generation 2 is the next key/).waitFor();
  });

  it("when the tenant's Redis stops, then the queue page shows a banner naming it and keeps the messages it showed", async () => {
    await page.goto(`${server.url}/queues/cache`);
    const messages = page.getByTestId('messages');
    await messages.locator('tr[data-message-id]').first().waitFor();
    const shown = await messages.locator('tr[data-message-id]').count();
    await redis.stop();
    await messages.getByRole('button', { name: 'Refresh' }).click();
    await messages
      .getByRole('alert')
      .getByText(/The queue answered 503: the queue's database did not|The queue cannot be reached/)
      .waitFor({ timeout: 20_000 });
    expect(await messages.locator('tr[data-message-id]').count()).toBe(shown);
    await expectAccessible('queue page with its database away');
  }, 40_000);

  it('when the run is over, then no page script failed, no CSP violation happened and the browser stayed on loopback', () => {
    expect(f.pageErrors).toEqual([]);
    expect(f.cspViolations).toEqual([]);
    expect(browser.refusedRequests).toEqual([]);
  });
});
