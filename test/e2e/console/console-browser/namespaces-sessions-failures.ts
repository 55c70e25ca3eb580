import { PatchStrategy, RbacAuthorizationV1Api, setHeaderOptions } from '@kubernetes/client-node';
import { SETTEE_GROUP, SETTEE_VERSION } from '../../../../api/contract.js';
import { provisionTenant } from '../../../../local/tenant-access.js';
import {
  HOSTILE,
  LAPTOP,
  PHONE,
  type ConsoleBrowserFixture,
  type Tenant,
} from '../../../helpers/console/browser-fixture.js';
import { startTestConsole } from '../../../helpers/console/console-harness.js';
import { createCouchInstance, INSTANCE_REF } from '../../../helpers/console/console-tenants.js';
import { TcpForwarder } from '../../../helpers/tcp-forwarder.js';

/**
 * The console-browser tests that follow the instance pages (console-browser.test.ts registers
 * them in its describe block, so they run in its one browser and platform, signed in as tenant A
 * with the instances alpha and demo): another namespace from the header (tenantC, which that file
 * deletes after), phone width, hostile tenant text, the API server going away, sign-out and an
 * expired session.
 */
export function namespaceSessionAndFailureTests(fixture: () => ConsoleBrowserFixture, tenantC: Tenant): void {
  it('when tenant A opens another namespace from the header, then one A is bound in shows its instances, one A is not bound in is refused with the reason, and A can switch back', async () => {
    const { admin, customObjects, page, tenantA, tenantB, expectAccessible } = fixture();
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
    await createCouchInstance(customObjects, { namespace: tenantC.namespace, name: 'charlie' });
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

  it('when the list is read at phone width, then nothing overflows sideways and the page stays accessible', async () => {
    const { server, page, expectAccessible, screenshot } = fixture();
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
    const { suffix, customObjects, core, server, page, tenantA } = fixture();
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
        ...INSTANCE_REF,
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

  it('when the API server becomes unreachable, then the list shows a banner and keeps its rows, a create says nothing was changed and creates nothing, and the banner goes when it is back', async () => {
    const { admin, browser, consoleToken, readInstance } = fixture();
    const cluster = admin.getCurrentCluster();
    if (!cluster) throw new Error('no cluster');
    const relay = await TcpForwarder.start(cluster.server);
    const away = await startTestConsole({
      admin,
      consoleToken,
      server: `https://127.0.0.1:${relay.port}`,
      stream: { retryMs: 300 },
    });
    const other = await browser.context.newPage();
    try {
      // Signed in already: cookies ignore the port, and the two consoles share the session key as
      // replicas do, so A's session opens this one too.
      await other.goto(`${away.url}/instances`);
      await other.locator('tr[data-instance="alpha"]').waitFor();
      const shown = await other.locator('tr[data-instance]').count();
      await relay.cut();
      await other
        .getByRole('status')
        .getByText(/cannot be reached|interrupted/)
        .waitFor({ timeout: 20_000 });
      expect(await other.locator('tr[data-instance]').count()).toBe(shown);
      await other.getByRole('link', { name: 'Create instance' }).click();
      await other.getByLabel('Name', { exact: true }).fill('while-away');
      await other.getByRole('button', { name: 'Create instance' }).click();
      await other
        .getByRole('alert')
        .getByText(/cannot be reached right now; nothing was changed/)
        .waitFor();
      await expect(readInstance('while-away')).rejects.toMatchObject({ code: 404 });
      await relay.restore();
      await other.getByRole('link', { name: 'Instances', exact: true }).first().click();
      await other.locator('tr[data-instance="alpha"]').waitFor();
      expect(await other.getByText(/cannot be reached|interrupted/).count()).toBe(0);
    } finally {
      await other.close();
      await away.stop();
      await relay.cut();
    }
  }, 60_000);

  it('when the user signs out, then the sign-in page says so and the API refuses the old page', async () => {
    const { page } = fixture();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByText('You have signed out.').waitFor();
    expect(await page.evaluate(async () => (await fetch('/api/session')).status)).toBe(401);
  });

  it('when a session expires while the page is open, then the next action lands on the sign-in page with the reason', async () => {
    const { admin, browser, tokenA, consoleToken } = fixture();
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
}
