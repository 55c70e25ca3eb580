import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import {
  CoreV1Api,
  CustomObjectsApi,
  RbacAuthorizationV1Api,
  type KubeConfig,
} from '@kubernetes/client-node';
import type { Page } from 'playwright-core';
import type { CouchInstance } from '../../../api/couch-instance.js';
import type { ConsoleServer } from '../../../console/console-server.js';
import { createQueueService, type QueueService } from '../../../gateway/queue/index.js';
import { startRedis, type RedisServer } from '../../../local/redis-server.js';
import { provisionConsoleIdentity, provisionTenant } from '../../../local/tenant-access.js';
import { createSilentLogger } from '../../../observability/logger.js';
import { launchLoopbackChromium, type LoopbackBrowser } from '../gateway/loopback-browser.js';
import { startTestPlatform, type TestPlatform } from '../gateway/platform-harness.js';
import { testControlPlane } from '../kube.js';
import { createBinding, createPasswordSecret, TEST_MASTER_SECRET } from '../queue/queue-binding-harness.js';
import { testQueueConfig } from '../queue/queue-config.js';
import { startRecordingDestination, type RecordingDestination } from '../queue/recording-destination.js';
import { seriousAxeViolations } from './axe.js';
import { startTestConsole } from './console-harness.js';
import { createCouchInstance, INSTANCE_REF } from './console-tenants.js';

/**
 * Screenshots of the main pages. Each run writes them under .settee/ (ignored by git);
 * SETTEE_SCREENSHOTS_DIR=docs/images/console refreshes the committed ones that README.md and
 * docs/console.md show, so an ordinary test run leaves the working tree clean.
 */
const SCREENSHOTS = path.resolve(process.env.SETTEE_SCREENSHOTS_DIR ?? '.settee/screenshots/console');
export const LAPTOP = { width: 1280, height: 860 };
export const PHONE = { width: 390, height: 844 };
export const HOSTILE = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>';

export interface Tenant {
  namespace: string;
  serviceAccount: string;
}

/**
 * What the console's browser tests run against: the real control plane, operator, gateway (with
 * the queue), kubelet stand-in and Redis; tenant A (with a Redis QueueBinding `cache`) and tenant
 * B (with an instance `bravo-private` A must never see); the console as its own ServiceAccount that
 * may create TokenReviews and nothing else; a loopback-only Chromium with one laptop-sized page
 * whose script errors and CSP violations are collected.
 */
export interface ConsoleBrowserFixture {
  suffix: string;
  tenantA: Tenant;
  tenantB: Tenant;
  admin: KubeConfig;
  customObjects: CustomObjectsApi;
  core: CoreV1Api;
  browser: LoopbackBrowser;
  platform: TestPlatform;
  queue: QueueService;
  redis: RedisServer;
  destination: RecordingDestination;
  server: ConsoleServer;
  consoleToken: string;
  tokenA: string;
  page: Page;
  pageErrors: string[];
  cspViolations: string[];
  readInstance(name: string): Promise<CouchInstance>;
  expectAccessible(what: string): Promise<void>;
  screenshot(name: string): Promise<void>;
  /** Also deletes these namespaces (ones a test made). */
  stop(extraNamespaces?: string[]): Promise<void>;
}

export async function startConsoleBrowserFixture(options: {
  prefix: string;
}): Promise<ConsoleBrowserFixture> {
  const suffix = crypto.randomBytes(3).toString('hex');
  const tenantA = { namespace: `${options.prefix}-a-${suffix}`, serviceAccount: 'alice' };
  const tenantB = { namespace: `${options.prefix}-b-${suffix}`, serviceAccount: 'bob' };
  const consoleRef = { namespace: tenantA.namespace, serviceAccount: 'settee-console' };
  const { kubeConfig: admin } = testControlPlane();
  const customObjects = admin.makeApiClient(CustomObjectsApi);
  const core = admin.makeApiClient(CoreV1Api);
  const pageErrors: string[] = [];
  const cspViolations: string[] = [];
  const parts: Partial<ConsoleBrowserFixture> = {};

  const stop = async (extraNamespaces: string[] = []): Promise<void> => {
    try {
      await parts.browser?.close();
    } finally {
      await parts.server?.stop();
      await parts.platform?.stop();
      await parts.queue?.stop();
      await parts.destination?.close();
      await parts.redis?.stop();
      for (const name of [tenantA.namespace, tenantB.namespace, ...extraNamespaces])
        await core.deleteNamespace({ name }).catch(() => undefined);
      const rbac = admin.makeApiClient(RbacAuthorizationV1Api);
      const role = `settee-console-${consoleRef.namespace}-${consoleRef.serviceAccount}`;
      await rbac.deleteClusterRoleBinding({ name: role }).catch(() => undefined);
      await rbac.deleteClusterRole({ name: role }).catch(() => undefined);
    }
  };

  try {
    const browser = (parts.browser = await launchLoopbackChromium());
    // Page loads and live updates in a Chromium on a loaded CI machine.
    browser.context.setDefaultTimeout(30_000);
    const tokenA = (await provisionTenant(admin, tenantA)).token;
    await provisionTenant(admin, tenantB);
    const consoleToken = await provisionConsoleIdentity(admin, consoleRef);
    const redis = (parts.redis = await startRedis());
    const destination = (parts.destination = await startRecordingDestination());
    const queue = (parts.queue = createQueueService({
      kubeConfig: admin,
      config: testQueueConfig(),
      logger: createSilentLogger(),
      namespace: tenantA.namespace,
    }));
    const platform = (parts.platform = await startTestPlatform({
      kubeConfig: admin,
      namespace: tenantA.namespace,
      queue,
      operatorEnv: { SETTEE_SIGNING_MASTER_SECRET: TEST_MASTER_SECRET },
    }));
    await createCouchInstance(customObjects, { namespace: tenantB.namespace, name: 'bravo-private' });
    await createPasswordSecret(tenantA.namespace, 'cache-auth', redis.password);
    await createBinding(tenantA.namespace, 'cache', {
      engine: 'redis',
      connection: {
        host: redis.host,
        port: redis.port,
        passwordSecretRef: { name: 'cache-auth', key: 'password' },
      },
    });
    const server = (parts.server = await startTestConsole({
      admin,
      consoleToken,
      config: { queueBaseUrl: platform.gateway.url },
    }));
    await browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
    const page = await browser.context.newPage();
    await page.setViewportSize(LAPTOP);
    page.on('pageerror', (err) => pageErrors.push(err.message));
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) cspViolations.push(message.text());
    });
    return {
      suffix,
      tenantA,
      tenantB,
      admin,
      customObjects,
      core,
      browser,
      platform,
      queue,
      redis,
      destination,
      server,
      consoleToken,
      tokenA,
      page,
      pageErrors,
      cspViolations,
      readInstance: async (name) =>
        (await customObjects.getNamespacedCustomObject({
          ...INSTANCE_REF,
          namespace: tenantA.namespace,
          name,
        })) as CouchInstance,
      expectAccessible: async (what) => {
        expect({ what, violations: await seriousAxeViolations(page) }).toEqual({ what, violations: [] });
      },
      screenshot: async (name) => {
        await fs.mkdir(SCREENSHOTS, { recursive: true });
        await page.screenshot({
          path: path.join(SCREENSHOTS, `${name}.png`),
          fullPage: true,
          animations: 'disabled',
        });
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
