import type { Page, Response } from 'playwright-core';
import { createCouchInstance } from '../../helpers/gateway/gateway-harness.js';
import { basicAuth, request } from '../../helpers/gateway/http-request.js';
import { launchLoopbackChromium, type LoopbackBrowser } from '../../helpers/gateway/loopback-browser.js';
import {
  readAdminCredentials,
  startTestPlatform,
  waitForInstance,
  type TestPlatform,
} from '../../helpers/gateway/platform-harness.js';
import { testControlPlane, useTestNamespace } from '../../helpers/kube.js';

/** Host-form instances live under it; the browser resolves it to 127.0.0.1 (no DNS involved). */
const DOMAIN = 'settee.test';
/** Fauxton hides its header buttons (Create Database) on narrow screens. */
const VIEWPORT = { width: 1600, height: 1000 };

/**
 * Fauxton, CouchDB's web UI at /_utils, driven in headless Chromium through the gateway, against
 * a real instance that the operator created and the kubelet stand-in runs (the pouchdb-server
 * stand-in for CouchDB, which serves pouchdb-fauxton).
 *
 * The path form (`/db/<namespace>/<name>/_utils/`) serves the app and all its assets, and a browser
 * session there is scoped to the instance's prefix; but the Fauxton build the stand-in ships
 * (pouchdb-fauxton 0.0.6, built 2017) addresses CouchDB at "/_session", at `../..` from the page
 * and at `location.origin`, so it can only work at the root of a host: that is Fauxton's limit
 * (apache/couchdb-fauxton#944, fixed in Fauxton 1.1.16 per #1188), not the gateway's. Logging in and
 * editing through Fauxton are therefore driven in the host form, `<name>.<namespace>.<domain>`.
 */
describe('Fauxton works through the gateway in a real browser', () => {
  const namespace = useTestNamespace('e2e-fauxton');
  const ref = { namespace: '', name: 'ui' };
  let browser: LoopbackBrowser;
  let platform: TestPlatform;
  let admin: { username: string; password: string };
  /** `http://127.0.0.1:<port>/db/<namespace>/ui`, the instance's status.endpoint. */
  let base: string;
  let basePath: string;
  /** `http://ui.<namespace>.settee.test:<port>`. */
  let hostFormOrigin: string;
  let fauxton: Page;

  beforeAll(async () => {
    // First, so that a missing Chromium fails the suite at once, with its own message.
    browser = await launchLoopbackChromium({ loopbackDomains: [DOMAIN] });
    browser.context.setDefaultTimeout(10_000);
    const { kubeConfig } = testControlPlane();
    ref.namespace = namespace.name;
    platform = await startTestPlatform({
      kubeConfig,
      namespace: namespace.name,
      gatewayEnv: { SETTEE_GATEWAY_DOMAIN: DOMAIN },
    });
    await createCouchInstance(kubeConfig, ref, { plan: 'free' });
    const running = await waitForInstance(
      kubeConfig,
      ref,
      (instance) => instance.status?.phase === 'Running',
    );
    base = running.status?.endpoint ?? '';
    basePath = new URL(base).pathname;
    hostFormOrigin = `http://${ref.name}.${ref.namespace}.${DOMAIN}:${new URL(platform.gateway.url).port}`;
    admin = await readAdminCredentials(kubeConfig, ref);
  }, 60_000);

  afterAll(async () => {
    try {
      await browser?.close();
    } finally {
      await platform?.stop();
    }
  });

  it('when Fauxton is opened in the path form, then the redirect, the app and every asset it loads stay under the instance prefix', async () => {
    const page = await browser.context.newPage();
    await page.setViewportSize(VIEWPORT);
    const assets: Response[] = [];
    page.on('response', (response) => {
      if (new URL(response.url()).pathname.includes('/_utils/')) assets.push(response);
    });
    await page.goto(`${base}/_utils`, { waitUntil: 'load' });
    // The bundle ran and rendered the app (its navigation), which needs every script and style.
    await page.getByRole('link', { name: 'Databases' }).waitFor();
    const landedAt = new URL(page.url()).pathname;
    await page.close();

    expect(landedAt).toBe(`${basePath}/_utils/`);
    const paths = assets.map((response) => new URL(response.url()).pathname);
    expect(paths).toEqual(expect.arrayContaining([`${basePath}/_utils/`]));
    expect(paths.some((path) => path.endsWith('.js'))).toBe(true);
    expect(paths.some((path) => path.endsWith('.css'))).toBe(true);
    expect(paths.filter((path) => !path.startsWith(`${basePath}/_utils/`))).toEqual([]);
    expect(assets.filter((response) => response.status() !== 200).map((r) => r.url())).toEqual([]);
  });

  it('when the browser logs in at the path form, then its session cookie is scoped to the instance prefix and sent only there', async () => {
    const page = await browser.context.newPage();
    await page.goto(`${base}/_utils/`, { waitUntil: 'load' });
    // Relative to the Fauxton page, as a prefix-aware client addresses it: /db/<ns>/ui/_session.
    const loginStatus = await page.evaluate(
      async ({ name, password }) =>
        (
          await fetch('../_session', {
            method: 'POST',
            headers: { 'Content-Type': 'application/json' },
            body: JSON.stringify({ name, password }),
          })
        ).status,
      { name: admin.username, password: admin.password },
    );
    expect(loginStatus).toBe(200);
    const cookie = (await browser.context.cookies(base)).find((c) => c.name === 'AuthSession');
    expect(cookie).toMatchObject({ domain: '127.0.0.1', path: basePath, httpOnly: true });

    const session = await page.evaluate(async () => (await fetch('../_session')).json());
    expect(session).toMatchObject({ userCtx: { name: admin.username, roles: ['_admin'] } });
    // Another instance on the same gateway (one that does not exist is enough) never sees it.
    const [elsewhere] = await Promise.all([
      page.waitForRequest((req) => req.url().endsWith(`/db/${ref.namespace}/other/_up`)),
      page.evaluate((url) => fetch(url).then((r) => r.status), `/db/${ref.namespace}/other/_up`),
    ]);
    expect((await elsewhere.allHeaders()).cookie).toBeUndefined();
    await page.close();
  });

  it('when the admin logs in through Fauxton in the host form, then Fauxton shows them logged in with a session cookie for that host only', async () => {
    fauxton = await browser.context.newPage();
    await fauxton.setViewportSize(VIEWPORT);
    await fauxton.goto(`${hostFormOrigin}/_utils/#login`, { waitUntil: 'load' });
    await fauxton.getByPlaceholder('Username').fill(admin.username);
    await fauxton.getByPlaceholder('Password').fill(admin.password);
    const [login] = await Promise.all([
      fauxton.waitForResponse(
        (r) => r.url() === `${hostFormOrigin}/_session` && r.request().method() === 'POST',
      ),
      fauxton.getByRole('button', { name: 'Log In' }).click(),
    ]);
    expect(login.status()).toBe(200);
    // The navigation's Login entry becomes the user's name once Fauxton has re-read its session.
    await fauxton.getByRole('link', { name: admin.username }).waitFor();
    await dismissNotification(fauxton, 'You have been logged in.');

    const cookies = await browser.context.cookies(hostFormOrigin);
    expect(cookies.filter((c) => c.name === 'AuthSession')).toEqual([
      expect.objectContaining({ domain: new URL(hostFormOrigin).hostname, path: '/', httpOnly: true }),
    ]);
  });

  it('when a database and a document are created in Fauxton, then both exist when read through the gateway over plain HTTP', async () => {
    const page = fauxton;
    await page.getByRole('link', { name: 'Databases' }).click();
    await page.getByRole('button', { name: 'Create Database' }).click();
    await page.getByPlaceholder('Name of database').fill('notes');
    const [createdDb] = await Promise.all([
      page.waitForResponse((r) => r.url() === `${hostFormOrigin}/notes` && r.request().method() === 'PUT'),
      // The tray's Create is an <a> without href, so it has no link role to find it by.
      page.getByText('Create', { exact: true }).click(),
    ]);
    expect(createdDb.status()).toBe(201);
    await page.waitForURL(/#database\/notes\/_all_docs/);
    await dismissNotification(page, 'Database created successfully');

    // "+" beside All Documents opens the Add New menu.
    const addNew = page.locator('#new-all-docs-button');
    await addNew.getByRole('link').first().click();
    await addNew.getByRole('link', { name: 'New Doc' }).click();
    await page.waitForURL(/#\/database\/notes\/new$/);
    const editor = page.locator('.ace_editor');
    await editor.getByText('_id').waitFor(); // Fauxton has filled in a fresh _id from /_uuids
    await editor.click();
    await page.keyboard.press('ControlOrMeta+A');
    // insertText goes in as one input, past the editor's bracket and quote auto-closing.
    await page.keyboard.insertText(JSON.stringify({ _id: 'first', text: 'written in Fauxton' }));
    const [createdDoc] = await Promise.all([
      page.waitForResponse(
        (r) =>
          new URL(r.url()).pathname.startsWith('/notes') && ['PUT', 'POST'].includes(r.request().method()),
      ),
      page.getByRole('button', { name: 'Create Document' }).click(),
    ]);
    expect(createdDoc.status()).toBe(201);
    await page.close();

    const auth = basicAuth(admin.username, admin.password);
    const db = await request(`${base}/notes`, { headers: { Authorization: auth } });
    expect(db.status).toBe(200);
    expect(JSON.parse(db.body)).toMatchObject({ db_name: 'notes', doc_count: 1 });
    const doc = await request(`${base}/notes/first`, { headers: { Authorization: auth } });
    expect(doc.status).toBe(200);
    expect(JSON.parse(doc.body)).toMatchObject({ _id: 'first', text: 'written in Fauxton' });
  });

  it('when all of that is done, then the browser never tried to reach anything off loopback', () => {
    expect(browser.refusedRequests).toEqual([]);
  });
});

/**
 * Fauxton's banner covers the page header until it times out (some seconds): closing it keeps the
 * header's buttons clickable at once. Its close control is an empty link whose icon floats out of
 * it, so the icon is what takes the click.
 */
async function dismissNotification(page: Page, text: string): Promise<void> {
  const banner = page.locator('.global-notification', { hasText: text });
  await banner.locator('.fonticon-cancel').click();
  await banner.waitFor({ state: 'detached' });
}
