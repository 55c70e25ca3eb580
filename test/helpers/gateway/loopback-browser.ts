import fs from 'node:fs';
import { chromium, type Browser, type BrowserContext } from 'playwright-core';

/** Debian's Chromium; playwright-core downloads no browser of its own here. */
export const CHROMIUM_PATH = '/usr/bin/chromium';

/**
 * Chromium phones home at start (component updates, safe browsing lists, translation, sync, media
 * router discovery): these switches turn that off, and the resolver rule makes every host name but
 * 127.0.0.1 fail to resolve, so whatever is left cannot leave the machine either.
 */
const QUIET_ARGS = [
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
  '--disable-sync',
  '--disable-default-apps',
  '--disable-features=Translate,OptimizationHints,MediaRouter',
];

export class ChromiumMissingError extends Error {
  readonly code = 'CHROMIUM_MISSING';

  constructor(readonly executablePath: string) {
    super(
      `Chromium is not installed at ${executablePath}: the browser tests need Debian's chromium package (apt-get install chromium)`,
    );
    this.name = 'ChromiumMissingError';
  }
}

/** A headless Chromium kept on loopback, and the page requests it refused because they were not. */
export interface LoopbackBrowser {
  browser: Browser;
  context: BrowserContext;
  /** URLs a page tried to load off 127.0.0.1; each was aborted before any connection. */
  refusedRequests: string[];
  close(): Promise<void>;
}

/** Headless Chromium for which every host name but 127.0.0.1 fails to resolve. */
export async function launchLoopbackChromium(): Promise<LoopbackBrowser> {
  if (!fs.existsSync(CHROMIUM_PATH)) throw new ChromiumMissingError(CHROMIUM_PATH);
  const args = [...QUIET_ARGS, '--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1'];
  // Chromium's sandbox refuses to run as root without it.
  if (process.getuid?.() === 0) args.unshift('--no-sandbox');
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args });
  const refusedRequests: string[] = [];
  try {
    const context = await browser.newContext();
    // The resolver rule already stops host names; this also stops IP literals and makes any attempt visible.
    await context.route(
      (url) => url.hostname !== '127.0.0.1',
      (route) => {
        refusedRequests.push(route.request().url());
        return route.abort('addressunreachable');
      },
    );
    return { browser, context, refusedRequests, close: () => browser.close() };
  } catch (err) {
    await browser.close();
    throw err;
  }
}
