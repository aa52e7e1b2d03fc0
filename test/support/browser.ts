import { existsSync } from 'node:fs';
import { type Browser, type BrowserContext, chromium } from 'playwright-core';
import { WAIT_MS } from './wait.js';

// Pages the product serves, as a user meets them: Debian's chromium on a machine without
// internet access.
export const CHROMIUM = '/usr/bin/chromium';
export const SCREENSHOTS = 'test-results/screenshots';
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `The browser tests need Debian's chromium at ${CHROMIUM}: apt-get install -y chromium (.ci/run does this)`,
    );
  }
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
}

/**
 * How long a page step (a navigation, a click, a locator's wait) may take: GraphiQL's first
 * open alone takes 10-18 s on a loaded 2-core machine (`npm run bench:graphiql`), so a step
 * gets three times an event's wait. A step that never happens still fails with its own
 * locator, well before the test's limit.
 */
export const PAGE_STEP_MS = 3 * WAIT_MS;

/**
 * A context in which every request that does not go to 127.0.0.1 is failed, as it would be
 * offline, and recorded in `offLoopback`; its page steps are bounded by PAGE_STEP_MS.
 */
export async function offlineContext(
  browser: Browser,
  viewport: { width: number; height: number },
): Promise<{ context: BrowserContext; offLoopback: string[] }> {
  const context = await browser.newContext({ viewport });
  context.setDefaultTimeout(PAGE_STEP_MS);
  const offLoopback: string[] = [];
  await context.route('**/*', (route) => {
    const url = new URL(route.request().url());
    if (url.hostname === '127.0.0.1') return route.continue();
    offLoopback.push(url.href);
    return route.abort('internetdisconnected');
  });
  return { context, offLoopback };
}
