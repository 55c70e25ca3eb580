import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { Client, Receiver } from '@upstash/qstash';
import {
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  RbacAuthorizationV1Api,
  setHeaderOptions,
} from '@kubernetes/client-node';
import type { Page } from 'playwright-core';
import { SETTEE_GROUP, SETTEE_VERSION } from '../../../api/contract.js';
import type { CouchInstance } from '../../../api/couch-instance.js';
import type { ConsoleServer } from '../../../console/console-server.js';
import { createQueueService, type QueueService } from '../../../gateway/queue/index.js';
import { startRedis, type RedisServer } from '../../../local/redis-server.js';
import { provisionConsoleIdentity, provisionTenant } from '../../../local/tenant-access.js';
import { waitFor } from '../../../local/wait.js';
import { createSilentLogger } from '../../../observability/logger.js';
import { seriousAxeViolations } from '../../helpers/console/axe.js';
import { startTestConsole } from '../../helpers/console/console-harness.js';
import { launchLoopbackChromium, type LoopbackBrowser } from '../../helpers/gateway/loopback-browser.js';
import {
  readAdminCredentials,
  startTestPlatform,
  type TestPlatform,
} from '../../helpers/gateway/platform-harness.js';
import { testControlPlane } from '../../helpers/kube.js';
import {
  conditionOf,
  createBinding,
  createPasswordSecret,
  TEST_MASTER_SECRET,
  waitForBinding,
} from '../../helpers/queue/queue-binding-harness.js';
import { testQueueConfig } from '../../helpers/queue/queue-config.js';
import {
  startRecordingDestination,
  type RecordingDestination,
} from '../../helpers/queue/recording-destination.js';

/**
 * Screenshots of the main pages. Each run writes them under .settee/ (ignored by git);
 * SETTEE_SCREENSHOTS_DIR=docs/images/console refreshes the committed ones that README.md and
 * docs/console.md show, so an ordinary test run leaves the working tree clean.
 */
const SCREENSHOTS = path.resolve(process.env.SETTEE_SCREENSHOTS_DIR ?? '.settee/screenshots/console');
const LAPTOP = { width: 1280, height: 860 };
const PHONE = { width: 390, height: 844 };
const HOSTILE = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>';

/**
 * The console in real Chromium against the real control plane, operator, gateway (with the queue),
 * kubelet stand-in and Redis: tenant A signs in with a ServiceAccount token and works only through
 * the page; tenant B's objects live in the same cluster. The console runs as its own ServiceAccount
 * that may create TokenReviews and nothing else. Every page is checked with axe-core.
 */
describe('the tenant console in a real browser', () => {
  const suffix = crypto.randomBytes(3).toString('hex');
  const tenantA = { namespace: `e2e-console-a-${suffix}`, serviceAccount: 'alice' };
  const tenantB = { namespace: `e2e-console-b-${suffix}`, serviceAccount: 'bob' };
  const tenantC = { namespace: `e2e-console-c-${suffix}`, serviceAccount: 'carol' };
  const consoleRef = { namespace: tenantA.namespace, serviceAccount: 'settee-console' };
  const { kubeConfig: admin } = testControlPlane();
  const customObjects = admin.makeApiClient(CustomObjectsApi);
  const core = admin.makeApiClient(CoreV1Api);
  let browser: LoopbackBrowser;
  let platform: TestPlatform;
  let queue: QueueService;
  let redis: RedisServer;
  let destination: RecordingDestination;
  let server: ConsoleServer;
  let consoleToken: string;
  let tokenA: string;
  let page: Page;
  /** The values of the downloaded .env. */
  let queueEnv: Record<string, string> = {};
  const pageErrors: string[] = [];
  const cspViolations: string[] = [];

  const instanceRef = { group: SETTEE_GROUP, version: SETTEE_VERSION, plural: 'couchinstances' };
  const readInstance = async (name: string): Promise<CouchInstance> =>
    (await customObjects.getNamespacedCustomObject({
      ...instanceRef,
      namespace: tenantA.namespace,
      name,
    })) as CouchInstance;

  async function expectAccessible(what: string): Promise<void> {
    expect({ what, violations: await seriousAxeViolations(page) }).toEqual({ what, violations: [] });
  }

  async function screenshot(name: string): Promise<void> {
    await fs.mkdir(SCREENSHOTS, { recursive: true });
    await page.screenshot({
      path: path.join(SCREENSHOTS, `${name}.png`),
      fullPage: true,
      animations: 'disabled',
    });
  }

  beforeAll(async () => {
    browser = await launchLoopbackChromium();
    browser.context.setDefaultTimeout(15_000);
    tokenA = (await provisionTenant(admin, tenantA)).token;
    await provisionTenant(admin, tenantB);
    consoleToken = await provisionConsoleIdentity(admin, consoleRef);
    redis = await startRedis();
    destination = await startRecordingDestination();
    queue = createQueueService({
      kubeConfig: admin,
      config: testQueueConfig(),
      logger: createSilentLogger(),
      namespace: tenantA.namespace,
    });
    platform = await startTestPlatform({
      kubeConfig: admin,
      namespace: tenantA.namespace,
      queue,
      operatorEnv: { SETTEE_SIGNING_MASTER_SECRET: TEST_MASTER_SECRET },
    });
    // Tenant B's instance, which A must never see.
    await customObjects.createNamespacedCustomObject({
      ...instanceRef,
      namespace: tenantB.namespace,
      body: {
        apiVersion: `${SETTEE_GROUP}/${SETTEE_VERSION}`,
        kind: 'CouchInstance',
        metadata: { name: 'bravo-private' },
        spec: { plan: 'free' },
      },
    });
    await createPasswordSecret(tenantA.namespace, 'cache-auth', redis.password);
    await createBinding(tenantA.namespace, 'cache', {
      engine: 'redis',
      connection: {
        host: redis.host,
        port: redis.port,
        passwordSecretRef: { name: 'cache-auth', key: 'password' },
      },
    });
    server = await startTestConsole({ admin, consoleToken, config: { queueBaseUrl: platform.gateway.url } });
    await browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
    page = await browser.context.newPage();
    await page.setViewportSize(LAPTOP);
    page.on('pageerror', (err) => pageErrors.push(err.message));
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) cspViolations.push(message.text());
    });
  }, 90_000);

  afterAll(async () => {
    try {
      await browser?.close();
    } finally {
      await server?.stop();
      await platform?.stop();
      await queue?.stop();
      await destination?.close();
      await redis?.stop();
      for (const name of [tenantA.namespace, tenantB.namespace, tenantC.namespace])
        await core.deleteNamespace({ name }).catch(() => undefined);
      const rbac = admin.makeApiClient(RbacAuthorizationV1Api);
      const role = `settee-console-${consoleRef.namespace}-${consoleRef.serviceAccount}`;
      await rbac.deleteClusterRoleBinding({ name: role }).catch(() => undefined);
      await rbac.deleteClusterRole({ name: role }).catch(() => undefined);
    }
  });

  it("when a wrong token is pasted, then the sign-in page stays with the API server's reason", async () => {
    await page.goto(server.url);
    await page.getByRole('heading', { name: 'Sign in to Settee' }).waitFor();
    await expectAccessible('sign-in page');
    await screenshot('sign-in');
    await page.getByLabel('Token', { exact: true }).fill(`${tokenA.slice(0, -6)}AAAAAA`);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page
      .getByRole('alert')
      .getByText(/refused this token/)
      .waitFor();
    expect(await page.getByRole('heading', { name: 'Sign in to Settee' }).isVisible()).toBe(true);
  });

  it("when tenant A signs in with the keyboard only, then A's instance list shows and B's instance is neither listed nor readable through the console's API", async () => {
    await customObjects.createNamespacedCustomObject({
      ...instanceRef,
      namespace: tenantA.namespace,
      body: {
        apiVersion: `${SETTEE_GROUP}/${SETTEE_VERSION}`,
        kind: 'CouchInstance',
        metadata: { name: 'alpha' },
        spec: { plan: 'free' },
      },
    });
    await page.getByLabel('Token', { exact: true }).fill('');
    await page.getByLabel('Token', { exact: true }).focus();
    await page.keyboard.insertText(tokenA);
    await page.keyboard.press('Tab'); // the help text is not focusable: next is Namespace
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'CouchDB instances' }).waitFor();
    await page.locator('tr[data-instance="alpha"]').waitFor();
    expect(await page.getByTestId('username').textContent()).toBe(
      `system:serviceaccount:${tenantA.namespace}:alice`,
    );
    expect(
      await page
        .locator('tr[data-instance]')
        .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-instance'))),
    ).toEqual(['alpha']);
    expect(await page.content()).not.toContain('bravo-private');
    const direct = await page.evaluate(async (namespace) => {
      const answers = [];
      for (const suffixPath of [
        'instances',
        'instances/bravo-private',
        'instances/bravo-private/credentials',
      ]) {
        const response = await fetch(`/api/namespaces/${namespace}/${suffixPath}`);
        answers.push(response.status);
      }
      return answers;
    }, tenantB.namespace);
    expect(direct).toEqual([403, 403, 403]);
    // The cookie is out of the page's reach.
    expect(await page.evaluate('document.cookie')).toBe('');
    expect(await page.evaluate('JSON.stringify(localStorage) + JSON.stringify(sessionStorage)')).toBe('{}{}');
  });

  it('when a free instance is created with a short idle period, then the page shows it Running, Hibernated, and Waking then Running when its endpoint is requested', async () => {
    await page.getByRole('link', { name: 'Create instance' }).click();
    await page.getByRole('heading', { name: 'Create a CouchDB instance' }).waitFor();
    await expectAccessible('create page');
    // First a value the API server refuses: its CEL message appears beside the field.
    await page.getByLabel('Name', { exact: true }).fill('demo');
    await page.getByLabel('Idle period before hibernating').fill('0s');
    await page.getByLabel('Keep alive (never hibernate)').check();
    await page.getByRole('button', { name: 'Create instance' }).click();
    await page.getByTestId('keepAlive-error').getByText('keepAlive requires plan: paid').waitFor();
    expect(await page.getByTestId('idleAfter-error').textContent()).toMatch(/at least 1s/);
    await screenshot('create-refused');
    await expect(readInstance('demo')).rejects.toMatchObject({ code: 404 });

    await page.getByLabel('Keep alive (never hibernate)').uncheck();
    // The operator's idle clock starts when the instance is created, so the idle period must
    // outlast a slow first start (seconds on a loaded machine) for the page to see Running first.
    await page.getByLabel('Idle period before hibernating').fill('10s');
    await page.getByRole('button', { name: 'Create instance' }).click();
    await page.getByRole('heading', { name: 'demo' }).waitFor();
    // Every phase the badge shows, recorded in the page as it changes.
    // (Page code as strings: the tests' TypeScript has no DOM types.)
    await page.evaluate(`{
      const seen = (window.__phases = []);
      const badge = document.querySelector('[data-testid="detail-phase"]');
      const record = () => {
        const text = badge.textContent;
        if (seen[seen.length - 1] !== text) seen.push(text);
      };
      record();
      new MutationObserver(record).observe(badge, { subtree: true, childList: true, characterData: true });
    }`);
    const phases = (): Promise<string[]> => page.evaluate('window.__phases');
    await page.getByTestId('detail-phase').getByText('Hibernated').waitFor({ timeout: 40_000 });
    const before = await phases();
    expect(before).toContain('Running');
    expect(before.indexOf('Running')).toBeLessThan(before.lastIndexOf('Hibernated'));
    await screenshot('instance-hibernated');

    const endpoint = (await readInstance('demo')).status?.endpoint ?? '';
    const request = fetch(`${endpoint}/`).then((r) => r.status);
    await page.getByTestId('detail-phase').getByText('Running').waitFor({ timeout: 30_000 });
    expect(await request).toBe(200);
    const after = (await phases()).slice(before.length);
    expect(after).toEqual(expect.arrayContaining(['Waking', 'Running']));
    expect(after.indexOf('Waking')).toBeLessThan(after.lastIndexOf('Running'));
    // The list shows the same, live, with the last cold start filled in.
    await page.getByRole('link', { name: 'Instances', exact: true }).first().click();
    const row = page.locator('tr[data-instance="demo"]');
    await row.getByText('Running').waitFor();
    expect(await row.locator('td').last().textContent()).not.toBe('—');
  }, 120_000);

  it('when credentials are revealed, then the password matches the instance Secret and copy puts it on the clipboard; Keep alive is disabled on free with the reason, and no queue block is on the page', async () => {
    await page.getByRole('link', { name: 'demo' }).click();
    await page.getByRole('heading', { name: 'demo' }).waitFor();
    const keepAlive = page.getByRole('switch', { name: 'Keep alive' });
    expect(await keepAlive.isDisabled()).toBe(true);
    expect(await page.locator('#keep-alive-reason').textContent()).toBe('Keep alive needs plan: paid.');
    await page.getByRole('button', { name: 'Reveal credentials' }).click();
    const credentials = await readAdminCredentials(admin, { namespace: tenantA.namespace, name: 'demo' });
    expect(await page.getByTestId('password').textContent()).not.toContain(credentials.password);
    await page.getByRole('button', { name: 'Show Password' }).click();
    expect(await page.getByTestId('password').textContent()).toBe(credentials.password);
    await page.getByRole('button', { name: 'Copy Password' }).click();
    await page.getByRole('button', { name: 'Copied Password' }).waitFor();
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(credentials.password);
    expect(await page.locator('pre').first().textContent()).toContain(`curl -u '${credentials.username}:`);
    // The queue block belongs to Redis/Valkey bindings only.
    expect(await page.getByTestId('queue-block').count()).toBe(0);
    expect(await page.content()).not.toContain('VQUEUE_');
    await page.getByRole('button', { name: 'Hide Password' }).click();
    await expectAccessible('instance detail page');
    await screenshot('instance-detail');
  });

  it('when a paid instance has Keep alive switched on in the page, then its spec says so and it no longer hibernates', async () => {
    await customObjects.createNamespacedCustomObject({
      ...instanceRef,
      namespace: tenantA.namespace,
      body: {
        apiVersion: `${SETTEE_GROUP}/${SETTEE_VERSION}`,
        kind: 'CouchInstance',
        metadata: { name: 'steady' },
        // Long enough for a loaded machine to show it Running and switch Keep alive on before it idles out.
        spec: { plan: 'paid', hibernation: { idleAfter: '8s' } },
      },
    });
    await page.goto(`${server.url}/instances/steady`);
    await page.getByTestId('detail-phase').getByText('Running').waitFor({ timeout: 30_000 });
    const keepAlive = page.getByRole('switch', { name: 'Keep alive' });
    expect(await keepAlive.isEnabled()).toBe(true);
    await keepAlive.click();
    await waitFor(
      'the switch to turn on',
      async () => ((await keepAlive.getAttribute('aria-checked')) === 'true' ? true : undefined),
      { timeoutMs: 10_000 },
    );
    expect((await readInstance('steady')).spec.keepAlive).toBe(true);
    // Well past its idle period it is still Running.
    await new Promise((resolve) => setTimeout(resolve, 12_000));
    const steady = await readInstance('steady');
    expect(steady.status?.phase).toBe('Running');
    expect(steady.status?.hibernatedAt).toBeUndefined();
    expect(await page.getByTestId('detail-phase').textContent()).toBe('Running');
  }, 60_000);

  it('when the instance name is typed to confirm, then Delete is enabled only for the exact name and removes the instance from the cluster and the live list', async () => {
    await page.goto(`${server.url}/instances/steady`);
    const remove = page.getByRole('button', { name: 'Delete steady' });
    await remove.waitFor();
    await page.getByLabel('Instance name').fill('stead');
    expect(await remove.isDisabled()).toBe(true);
    await page.getByLabel('Instance name').fill('steady');
    expect(await remove.isEnabled()).toBe(true);
    await remove.click();
    await page.getByRole('heading', { name: 'CouchDB instances' }).waitFor();
    await page.locator('tr[data-instance="demo"]').waitFor();
    await page.locator('tr[data-instance="steady"]').waitFor({ state: 'detached' });
    await waitFor(
      'the instance to be gone',
      () =>
        readInstance('steady').then(
          () => undefined,
          (err: { code?: number }) => (err.code === 404 ? true : undefined),
        ),
      { timeoutMs: 20_000 },
    );
  }, 40_000);

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
      { timeoutMs: 10_000 },
    );
    await page.getByRole('link', { name: 'Queues' }).click();
    await page.getByRole('link', { name: 'cache' }).click();
    const block = page.getByTestId('queue-block');
    await block.getByTestId('VQUEUE_NEXT_SIGNING_KEY').waitFor();
    for (const key of ['VQUEUE_URL', 'VQUEUE_TOKEN', 'VQUEUE_CURRENT_SIGNING_KEY', 'VQUEUE_NEXT_SIGNING_KEY'])
      expect(await block.getByTestId(key).count()).toBe(1);
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
    queueEnv = env as Record<string, string>;
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
      nextSigningKey: env.QSTASH_NEXT_SIGNING_KEY || env.QSTASH_CURRENT_SIGNING_KEY || '',
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

  it('when Rotate signing keys is clicked, then the binding asks the operator for a rotation and the page shows the next key pending', async () => {
    const readBinding = async () =>
      (await customObjects.getNamespacedCustomObject({
        group: SETTEE_GROUP,
        version: SETTEE_VERSION,
        plural: 'queuebindings',
        namespace: tenantA.namespace,
        name: 'cache',
      })) as {
        metadata: { annotations?: Record<string, string> };
        status?: { signingKeys?: { nextGeneration?: number } };
      };
    expect((await readBinding()).status?.signingKeys?.nextGeneration).toBeUndefined();
    await page.getByTestId('queue-block').getByRole('button', { name: 'Rotate signing keys' }).click();
    await waitFor(
      'the operator to start the rotation',
      async () =>
        (await readBinding()).status?.signingKeys?.nextGeneration !== undefined ? true : undefined,
      { timeoutMs: 20_000 },
    );
    expect((await readBinding()).metadata.annotations?.['settee.dev/rotate-signing-keys']).toBeDefined();
    await page.reload();
    await page.getByText(/A rotation is pending: the next key becomes current at/).waitFor();
  });

  it('when tenant A opens another namespace from the header, then one A is bound in shows its instances, one A is not bound in is refused with the reason, and A can switch back', async () => {
    // A third namespace where A's ServiceAccount is also bound to the tenant Role.
    await provisionTenant(admin, tenantC);
    await admin.makeApiClient(RbacAuthorizationV1Api).createNamespacedRoleBinding({
      namespace: tenantC.namespace,
      body: {
        metadata: { name: 'settee-tenant-alice' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'settee-tenant' },
        subjects: [{ kind: 'ServiceAccount', name: 'alice', namespace: tenantA.namespace }],
      },
    });
    await customObjects.createNamespacedCustomObject({
      ...instanceRef,
      namespace: tenantC.namespace,
      body: {
        apiVersion: `${SETTEE_GROUP}/${SETTEE_VERSION}`,
        kind: 'CouchInstance',
        metadata: { name: 'charlie' },
        spec: { plan: 'free' },
      },
    });
    const switcher = page.getByLabel('Namespace', { exact: true });
    expect(await switcher.inputValue()).toBe(tenantA.namespace);
    await switcher.selectOption({ label: 'Other namespace…' });
    const other = page.getByLabel('Namespace to open');
    await other.fill(tenantB.namespace);
    await page.getByRole('button', { name: 'Open', exact: true }).click();
    await page
      .getByRole('alert')
      .getByText(`list couchinstances in namespace ${tenantB.namespace}`, { exact: false })
      .waitFor();
    expect(await page.content()).not.toContain('bravo-private');

    await other.fill(tenantC.namespace);
    await page.getByRole('button', { name: 'Open', exact: true }).click();
    await page.locator('tr[data-instance="charlie"]').waitFor();
    expect(await switcher.inputValue()).toBe(tenantC.namespace);
    expect(await page.locator('tr[data-instance]').count()).toBe(1);
    await expectAccessible('instance list after switching namespace');
    // A reload keeps the namespace: it is in the session.
    await page.reload();
    await page.locator('tr[data-instance="charlie"]').waitFor();

    await switcher.selectOption(tenantA.namespace);
    await page.locator('tr[data-instance="alpha"]').waitFor();
    expect(await page.locator('tr[data-instance="charlie"]').count()).toBe(0);
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

  it('when the list is read at phone width, then nothing overflows sideways and the page stays accessible', async () => {
    await page.setViewportSize(PHONE);
    await page.goto(`${server.url}/instances`);
    await page.locator('tr[data-instance="demo"]').waitFor();
    expect(
      await page.evaluate('document.documentElement.scrollWidth <= document.documentElement.clientWidth'),
    ).toBe(true);
    await expectAccessible('instance list at phone width');
    await screenshot('instances-phone');
    await page.setViewportSize(LAPTOP);
    await page.reload();
    await page.locator('tr[data-instance="demo"]').waitFor();
    await expectAccessible('instance list page');
    await screenshot('instances');
    await page.getByRole('link', { name: 'Queues' }).click();
    await page.getByRole('link', { name: 'cache' }).waitFor();
    await expectAccessible('queue list page');
  });

  it('when tenant-controlled text is hostile (an Event message, an endpoint), then it shows as text, runs nothing and links nowhere', async () => {
    await core.createNamespacedEvent({
      namespace: tenantA.namespace,
      body: {
        metadata: { name: `alpha.${suffix}` },
        involvedObject: {
          apiVersion: `${SETTEE_GROUP}/${SETTEE_VERSION}`,
          kind: 'CouchInstance',
          name: 'alpha',
          namespace: tenantA.namespace,
        },
        reason: HOSTILE,
        message: HOSTILE,
        type: 'Warning',
        firstTimestamp: new Date(),
        lastTimestamp: new Date(),
        source: { component: 'someone' },
      },
    });
    await customObjects.patchNamespacedCustomObjectStatus(
      {
        ...instanceRef,
        namespace: tenantA.namespace,
        name: 'alpha',
        body: { status: { endpoint: 'javascript:window.__pwned=3' } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    await page.goto(`${server.url}/instances/alpha`);
    await page.getByRole('cell', { name: HOSTILE }).first().waitFor();
    expect(await page.evaluate('window.__pwned')).toBeUndefined();
    expect(await page.locator('main img, main script').count()).toBe(0);
    expect(await page.locator('a[href^="javascript:"]').count()).toBe(0);
    expect(await page.getByTestId('endpoint').textContent()).toBe('javascript:window.__pwned=3');
    expect(await page.getByRole('link', { name: /Fauxton/ }).count()).toBe(0);
  });

  it('when the user signs out, then the sign-in page says so and the API refuses the old page', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByText('You have signed out.').waitFor();
    expect(await page.evaluate(async () => (await fetch('/api/session')).status)).toBe(401);
  });

  it('when a session expires while the page is open, then the next action lands on the sign-in page with the reason', async () => {
    const shortLived = await startTestConsole({ admin, consoleToken, config: { sessionTtlMs: 3_000 } });
    try {
      const other = await browser.context.newPage();
      await other.goto(shortLived.url);
      await other.getByLabel('Token', { exact: true }).fill(tokenA);
      await other.getByRole('button', { name: 'Sign in' }).click();
      await other.getByRole('heading', { name: 'CouchDB instances' }).waitFor();
      await new Promise((resolve) => setTimeout(resolve, 3_500));
      await other.getByRole('link', { name: 'Queues' }).click();
      await other.getByRole('heading', { name: 'Sign in to Settee' }).waitFor();
      await other.getByText(/Your session has expired|Sign in with a Kubernetes token/).waitFor();
      await other.close();
    } finally {
      await shortLived.stop();
    }
  });

  it('when the run is over, then no page script failed, no CSP violation happened and the browser stayed on loopback', () => {
    expect(pageErrors).toEqual([]);
    expect(cspViolations).toEqual([]);
    expect(browser.refusedRequests).toEqual([]);
  });
});
