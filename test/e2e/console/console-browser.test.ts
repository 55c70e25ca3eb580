import type { CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import type { Page } from 'playwright-core';
import type { ConsoleServer } from '../../../console/console-server.js';
import { waitFor } from '../../../local/wait.js';
import {
  startConsoleBrowserFixture,
  type ConsoleBrowserFixture,
  type Tenant,
} from '../../helpers/console/browser-fixture.js';
import { createCouchInstance, INSTANCE_REF } from '../../helpers/console/console-tenants.js';
import type { LoopbackBrowser } from '../../helpers/gateway/loopback-browser.js';
import { readAdminCredentials } from '../../helpers/gateway/platform-harness.js';
import { namespaceSessionAndFailureTests } from './console-browser/namespaces-sessions-failures.js';

/**
 * The console in real Chromium against the real control plane, operator, gateway, kubelet stand-in
 * and Redis (test/helpers/console/browser-fixture.ts): tenant A signs in with a ServiceAccount token
 * and works only through the page; tenant B's objects live in the same cluster. Instances,
 * credentials and Keep alive here; namespaces, sessions and failures in
 * console-browser/namespaces-sessions-failures.ts, run after them in the same browser and
 * platform (one start for the file); the queue pages in console-queue-browser.test.ts. Every page
 * is checked with axe-core.
 */
describe('the tenant console in a real browser', () => {
  let f: ConsoleBrowserFixture;
  let admin: KubeConfig;
  let customObjects: CustomObjectsApi;
  let browser: LoopbackBrowser;
  let server: ConsoleServer;
  let page: Page;
  let tokenA: string;
  let tenantA: Tenant;
  let tenantB: Tenant;
  const tenantC = { namespace: '', serviceAccount: 'carol' };
  const readInstance = (name: string) => f.readInstance(name);
  const expectAccessible = (what: string) => f.expectAccessible(what);
  const screenshot = (name: string) => f.screenshot(name);
  const instanceRef = INSTANCE_REF;

  beforeAll(async () => {
    f = await startConsoleBrowserFixture({ prefix: 'e2e-console' });
    ({ admin, customObjects, browser, server, page, tokenA, tenantA, tenantB } = f);
    tenantC.namespace = `e2e-console-c-${f.suffix}`;
  }, 90_000);

  afterAll(() => f?.stop([tenantC.namespace]));

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
    await createCouchInstance(customObjects, { namespace: tenantA.namespace, name: 'alpha' });
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
    // Its first start (an engine run by the kubelet stand-in), 10 s idle, then its pod deleted.
    await page.getByTestId('detail-phase').getByText('Hibernated').waitFor({ timeout: 60_000 });
    const before = await phases();
    expect(before).toContain('Running');
    expect(before.indexOf('Running')).toBeLessThan(before.lastIndexOf('Hibernated'));
    await screenshot('instance-hibernated');

    const endpoint = (await readInstance('demo')).status?.endpoint ?? '';
    const request = fetch(`${endpoint}/`).then((r) => r.status);
    // The wake starts its engine again.
    await page.getByTestId('detail-phase').getByText('Running').waitFor({ timeout: 60_000 });
    expect(await request).toBe(200);
    const after = (await phases()).slice(before.length);
    expect(after).toEqual(expect.arrayContaining(['Waking', 'Running']));
    expect(after.indexOf('Waking')).toBeLessThan(after.lastIndexOf('Running'));
    // The list shows the same, live, with the last cold start filled in.
    await page.getByRole('link', { name: 'Instances', exact: true }).first().click();
    const row = page.locator('tr[data-instance="demo"]');
    await row.getByText('Running').waitFor();
    expect(await row.locator('td').last().textContent()).not.toBe('—');
  }, 180_000);

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
    await createCouchInstance(customObjects, {
      namespace: tenantA.namespace,
      name: 'steady',
      // Long enough for a loaded machine to show it Running and switch Keep alive on before it idles out.
      spec: { plan: 'paid', hibernation: { idleAfter: '8s' } },
    });
    await page.goto(`${server.url}/instances/steady`);
    // Its first start: an engine run by the kubelet stand-in.
    await page.getByTestId('detail-phase').getByText('Running').waitFor({ timeout: 60_000 });
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
  }, 120_000);

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

  it('when a paid instance is created with add-ons in the page, then a bad backup schedule is refused beside its field and marked invalid, and the accepted add-ons are in the spec', async () => {
    await page.goto(`${server.url}/instances`);
    await page.getByRole('link', { name: 'Create instance' }).click();
    await page.getByRole('heading', { name: 'Create a CouchDB instance' }).waitFor();
    await page.getByLabel('Name', { exact: true }).fill('extras');
    await page.getByRole('radio', { name: /Paid/ }).check();
    await page.getByLabel('Larger storage', { exact: true }).fill('2Gi');
    await page.getByLabel('Backup schedule', { exact: true }).fill('nightly');
    await page.getByLabel('Region pinning', { exact: true }).fill('eu-west');
    await page.getByRole('button', { name: 'Create instance' }).click();
    await page
      .getByTestId('backups-error')
      .getByText(/cron expression with five fields/)
      .waitFor();
    expect(await page.getByLabel('Backup schedule', { exact: true }).getAttribute('aria-invalid')).toBe(
      'true',
    );
    expect(await page.getByLabel('Larger storage', { exact: true }).getAttribute('aria-invalid')).toBeNull();
    await expect(readInstance('extras')).rejects.toMatchObject({ code: 404 });

    await page.getByLabel('Backup schedule', { exact: true }).fill('0 3 * * *');
    await page.getByRole('button', { name: 'Create instance' }).click();
    await page.getByRole('heading', { name: 'extras' }).waitFor();
    expect((await readInstance('extras')).spec).toMatchObject({
      plan: 'paid',
      addons: {
        largerStorage: { size: '2Gi' },
        backups: { schedule: '0 3 * * *' },
        regionPinning: { region: 'eu-west' },
      },
    });
    await customObjects.deleteNamespacedCustomObject({
      ...instanceRef,
      namespace: tenantA.namespace,
      name: 'extras',
    });
  }, 40_000);

  namespaceSessionAndFailureTests(() => f, tenantC);

  it('when the run is over, then no page script failed, no CSP violation happened and the browser stayed on loopback', () => {
    expect(f.pageErrors).toEqual([]);
    expect(f.cspViolations).toEqual([]);
    expect(browser.refusedRequests).toEqual([]);
  });
});
