import type { Page, Request } from 'playwright-core';
import { waitFor } from '../../../local/wait.js';
import { basicAuth, request } from '../../helpers/gateway/http-request.js';
import { launchLoopbackChromium, type LoopbackBrowser } from '../../helpers/gateway/loopback-browser.js';
import {
  createServingInstance,
  startTestPlatform,
  type TestPlatform,
} from '../../helpers/gateway/platform-harness.js';
import { testControlPlane, useTestNamespace } from '../../helpers/kube.js';

/** Fauxton hides its header buttons (Create Database) on narrow screens. */
const VIEWPORT = { width: 1600, height: 1000 };

/**
 * Fauxton, CouchDB's web UI at /_utils, driven in headless Chromium through the gateway's path form
 * (`http://127.0.0.1:<port>/db/<namespace>/<name>/`, the instance's status.endpoint on one machine),
 * against a real instance that the operator created and the kubelet stand-in runs with the
 * pouchdb-server stand-in for CouchDB, which serves the Fauxton release CouchDB 3.x ships (the
 * `fauxton` npm package, fetched by local/tools/fetch-fauxton.ts).
 *
 * Verified, through Fauxton's own UI only: /_utils redirects to /_utils/ under the instance prefix
 * and the app loads with all its assets; the admin logs in with Fauxton's login form; a database
 * and a document are created with its Create Database tray and document editor, and both are then
 * read back over plain HTTP through the gateway; the Config page lists the configuration, and the
 * Replication page a completed replication document. Every request the app makes stays under the
 * instance prefix (Fauxton 1.1.16+ addresses CouchDB relative to its page), the AuthSession cookie
 * is scoped to that prefix and is not sent to another instance's path, and the browser never tries
 * to leave loopback. The host form is left out: it adds no Fauxton behaviour the path form does not
 * already exercise, and the gateway's host routing has its own tests.
 */
describe('Fauxton works through the gateway path form in a real browser', () => {
  const namespace = useTestNamespace('e2e-fauxton');
  const ref = { namespace: '', name: 'ui' };
  let browser: LoopbackBrowser;
  let platform: TestPlatform;
  let admin: { username: string; password: string };
  /** `http://127.0.0.1:<port>/db/<namespace>/ui`, the instance's status.endpoint. */
  let base: string;
  let basePath: string;
  /** Everything the Fauxton page asked for, in order. */
  const requested: Request[] = [];
  /** The one request sent on purpose to another instance's path. */
  let otherInstanceProbe: Request | undefined;
  let fauxton: Page;

  beforeAll(async () => {
    // First, so that a missing Chromium fails the suite at once, with its own message.
    browser = await launchLoopbackChromium();
    // Fauxton's bundle through the gateway from the engine, in a Chromium on a loaded CI machine.
    browser.context.setDefaultTimeout(30_000);
    const { kubeConfig } = testControlPlane();
    ref.namespace = namespace.name;
    platform = await startTestPlatform({ kubeConfig, namespace: namespace.name });
    ({ endpoint: base, admin } = await createServingInstance(kubeConfig, ref, { plan: 'free' }));
    basePath = new URL(base).pathname;
    fauxton = await browser.context.newPage();
    await fauxton.setViewportSize(VIEWPORT);
    fauxton.on('request', (req) => requested.push(req));
  }, 120_000);

  afterAll(async () => {
    try {
      await browser?.close();
    } finally {
      await platform?.stop();
    }
  });

  it('when /_utils is opened in the path form, then it redirects under the instance prefix and Fauxton loads with every asset', async () => {
    const assets = new Map<string, number>();
    const recordAsset = (response: { url(): string; status(): number }): void => {
      if (new URL(response.url()).pathname.includes('/_utils/'))
        assets.set(response.url(), response.status());
    };
    fauxton.on('response', recordAsset);
    const page = await fauxton.goto(`${base}/_utils`, { waitUntil: 'load' });
    // Not logged in, so Fauxton sends the visitor to its login form, which needs the whole bundle.
    await fauxton.getByRole('button', { name: 'Log In' }).waitFor();
    fauxton.off('response', recordAsset);

    expect(page?.request().redirectedFrom()?.url()).toBe(`${base}/_utils`);
    expect(new URL(fauxton.url()).pathname).toBe(`${basePath}/_utils/`);
    const paths = [...assets.keys()].map((url) => new URL(url).pathname);
    expect(paths.some((path) => path.endsWith('.js'))).toBe(true);
    expect(paths.some((path) => path.endsWith('.css'))).toBe(true);
    expect(paths.filter((path) => !path.startsWith(`${basePath}/_utils/`))).toEqual([]);
    expect([...assets].filter(([, status]) => status !== 200)).toEqual([]);
    // The official release (its build stamp), not pouchdb-fauxton's, which has none.
    expect(await fauxton.content()).toContain('Fauxton Release');
  });

  it("when the admin logs in with Fauxton's form, then Fauxton lists the databases and the session cookie is scoped to the instance prefix only", async () => {
    await fauxton.getByPlaceholder('Username').fill(admin.username);
    await fauxton.getByPlaceholder('Password').fill(admin.password);
    const [login] = await Promise.all([
      fauxton.waitForResponse((r) => r.url() === `${base}/_session` && r.request().method() === 'POST'),
      fauxton.getByRole('button', { name: 'Log In' }).click(),
    ]);
    expect(login.status()).toBe(200);
    await dismissToast(fauxton, 'You have been logged in.');
    // The database list is admin-only (GET /_all_dbs), so seeing it proves the session works.
    await fauxton.getByRole('link', { name: '_replicator', exact: true }).waitFor();
    await fauxton.getByRole('link', { name: 'Log Out' }).waitFor();

    const cookies = (await browser.context.cookies(base)).filter((c) => c.name === 'AuthSession');
    expect(cookies).toEqual([
      expect.objectContaining({ domain: '127.0.0.1', path: basePath, httpOnly: true }),
    ]);
    // Fauxton's own requests under the prefix carry it (so the check below is not vacuous)...
    const listing = requested.find((req) => req.url() === `${base}/_all_dbs`);
    expect((await listing?.allHeaders())?.cookie).toMatch(/(^|; )AuthSession=/);
    // ...and another instance on the same gateway (one that does not exist is enough) never sees it.
    const [probe] = await Promise.all([
      fauxton.waitForRequest((req) => req.url().endsWith(`/db/${ref.namespace}/other/_up`)),
      fauxton.evaluate((url) => fetch(url).then((r) => r.status), `/db/${ref.namespace}/other/_up`),
    ]);
    otherInstanceProbe = probe;
    expect((await probe.allHeaders()).cookie).toBeUndefined();
  });

  it("when a database and a document are created with Fauxton's UI, then both exist when read through the gateway over plain HTTP", async () => {
    await fauxton.getByRole('button', { name: 'Create Database' }).click();
    await fauxton.getByPlaceholder('database-name').fill('notes');
    // The stand-in reports CouchDB 3.3's features, partitioned among them, so Fauxton asks.
    await fauxton.getByLabel('Non-partitioned').check();
    const [createdDb] = await Promise.all([
      fauxton.waitForResponse((r) => r.url() === `${base}/notes` && r.request().method() === 'PUT'),
      // The tray's Create is an <a> without href, so it has no link role to find it by.
      fauxton.getByText('Create', { exact: true }).click(),
    ]);
    expect(createdDb.status()).toBe(201);
    await fauxton.waitForURL(/#database\/notes\/_all_docs$/);
    await dismissToast(fauxton, 'Database created successfully');

    await fauxton.getByRole('link', { name: 'Create Document' }).click();
    await fauxton.waitForURL(/#database\/notes\/_new$/);
    const editor = fauxton.locator('.ace_editor');
    await editor.getByText('_id').waitFor(); // Fauxton has filled in a fresh _id from /_uuids
    await editor.click();
    await fauxton.keyboard.press('ControlOrMeta+A');
    // insertText goes in as one input, past the editor's bracket and quote auto-closing.
    await fauxton.keyboard.insertText(JSON.stringify({ _id: 'first', text: 'written in Fauxton' }));
    const [createdDoc] = await Promise.all([
      fauxton.waitForResponse((r) => r.url() === `${base}/notes/first` && r.request().method() === 'PUT'),
      fauxton.getByRole('button', { name: 'Create Document' }).click(),
    ]);
    expect(createdDoc.status()).toBe(201);

    const auth = basicAuth(admin.username, admin.password);
    const db = await request(`${base}/notes`, { headers: { Authorization: auth } });
    expect(db.status).toBe(200);
    expect(JSON.parse(db.body)).toMatchObject({ db_name: 'notes', doc_count: 1 });
    const doc = await request(`${base}/notes/first`, { headers: { Authorization: auth } });
    expect(doc.status).toBe(200);
    expect(JSON.parse(doc.body)).toMatchObject({ _id: 'first', text: 'written in Fauxton' });
  });

  it("when Fauxton's Config page is opened, then it lists the instance's configuration sections", async () => {
    const [config] = await Promise.all([
      fauxton.waitForResponse((r) => /\/_node\/[^/]+\/_config$/.test(new URL(r.url()).pathname)),
      fauxton.goto(`${base}/_utils/#_config`),
    ]);
    expect(config.status()).toBe(200);
    await fauxton.getByText('couch_httpd_auth', { exact: true }).first().waitFor();
  });

  it("when a replication document has run, then Fauxton's Replication page lists it with its state", async () => {
    const auth = basicAuth(admin.username, admin.password);
    const userinfo = `${encodeURIComponent(admin.username)}:${encodeURIComponent(admin.password)}@`;
    const withCredentials = (db: string): string => `${base.replace('://', `://${userinfo}`)}/${db}`;
    const created = await request(`${base}/_replicator/copy-notes`, {
      method: 'PUT',
      headers: { Authorization: auth, 'Content-Type': 'application/json' },
      body: JSON.stringify({
        source: withCredentials('notes'),
        target: withCredentials('notes-copy'),
        create_target: true,
      }),
    });
    expect(created.status).toBe(201);
    await waitFor(
      'the replication to complete',
      async () => {
        const doc = await request(`${base}/_replicator/copy-notes`, { headers: { Authorization: auth } });
        return (JSON.parse(doc.body) as { _replication_state?: string })._replication_state === 'completed'
          ? true
          : undefined;
      },
      { timeoutMs: 20_000 },
    );
    const [docs] = await Promise.all([
      fauxton.waitForResponse((r) => new URL(r.url()).pathname === `${basePath}/_scheduler/docs`),
      fauxton.goto(`${base}/_utils/#/replication`),
    ]);
    expect(docs.status()).toBe(200);
    // The document's row (it links to the document) shows the URLs without credentials, and the
    // state Fauxton read from /_scheduler/docs.
    const row = fauxton
      .getByRole('row')
      .filter({ has: fauxton.locator('a[href="#/database/_replicator/copy-notes"]') });
    await row.getByText(/^completed$/i).waitFor();
    expect(await row.innerText()).toContain(`${basePath}/notes-copy`);
    expect(await row.innerText()).not.toContain(admin.password);
  });

  it('when all of that is done, then every request Fauxton made stayed under the instance prefix and on loopback', () => {
    const fromFauxton = requested.filter((req) => req !== otherInstanceProbe);
    // Its API calls were among them, not only its assets.
    const paths = fromFauxton.map((req) => new URL(req.url()).pathname);
    expect(paths).toEqual(
      expect.arrayContaining([`${basePath}/_session`, `${basePath}/_all_dbs`, `${basePath}/_uuids`]),
    );
    const origin = new URL(base).origin;
    expect(
      fromFauxton.map((req) => req.url()).filter((url) => !url.startsWith(`${origin}${basePath}/`)),
    ).toEqual([]);
    expect(browser.refusedRequests).toEqual([]);
  });
});

/**
 * Fauxton's toast covers the page header's buttons until it fades out, some seconds later; a click
 * on a toast closes it at once.
 */
async function dismissToast(page: Page, text: string): Promise<void> {
  const toast = page.getByRole('alert').filter({ hasText: text });
  await toast.click();
  await toast.waitFor({ state: 'detached' });
}
