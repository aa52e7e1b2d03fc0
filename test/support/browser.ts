import { existsSync } from 'node:fs';
import { type Browser, type BrowserContext, chromium } from 'playwright-core';

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
 * A context in which every request that does not go to 127.0.0.1 is failed, as it would be
 * offline, and recorded in `offLoopback`.
 */
export async function offlineContext(
  browser: Browser,
  viewport: { width: number; height: number },
): Promise<{ context: BrowserContext; offLoopback: string[] }> {
  const context = await browser.newContext({ viewport });
  const offLoopback: string[] = [];
  await context.route('**/*', (route) => {
    const url = new URL(route.request().url());
    if (url.hostname === '127.0.0.1') return route.continue();
    offLoopback.push(url.href);
    return route.abort('internetdisconnected');
  });
  return { context, offLoopback };
}
