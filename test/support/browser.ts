import { existsSync } from 'node:fs';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
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
  // Offline but for loopback: every other host name (an address written as one too) resolves
  // to nothing, as on a machine without internet access. Done here rather than by routing
  // each request through Playwright, which turns the context's HTTP cache off and adds a
  // round trip to the browser per request (offlineContext records what was asked instead).
  '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1',
];

export async function launchChromium(args: readonly string[] = []): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `The browser tests need Debian's chromium at ${CHROMIUM}: apt-get install -y chromium (.ci/run does this)`,
    );
  }
  return chromium.launch({ executablePath: CHROMIUM, args: [...CHROMIUM_ARGS, ...args] });
}

/**
 * The test files' browser tiers V8 up to Maglev, not TurboFan: a test's page lives for
 * seconds, too short for TurboFan's compiles (on background threads, beside the other test
 * lane on the 2-core machine) to pay back, and the pages run the same. The browser files beside
 * TurboFan, alternating (load 14-25): Chromium's CPU 54.8 -> 51.5 s, everything's 80.7 ->
 * 78.5 s, wall 101 -> 92 s. Only here: bench/graphiql-open.ts measures the browser as users
 * have it.
 */
const TEST_ARGS = ['--js-flags=--max-opt=2'];

// Kept on globalThis, so every file a worker runs finds it even if this module were evaluated
// again for a file.
const SHARED = Symbol.for('agent-graph.test.chromium');
const held = globalThis as { [SHARED]?: Promise<Browser> };

/**
 * The worker process's chromium, launched by the first file that asks and shared by the files
 * the worker runs after it (they run one at a time, `isolate: false` in vitest.config.ts): a
 * launch costs about a second of CPU and 2-4 s of wall time. A file opens contexts of its own
 * and closes them with `closeContexts`, never the browser. The browser ends with the process:
 * playwright kills it and removes its profile when the process exits, and chromium, driven
 * through a pipe, exits when that pipe closes.
 */
export function sharedChromium(): Promise<Browser> {
  const launched = held[SHARED];
  if (launched) return launched;
  // vitest stops a worker with SIGTERM and kills it 500 ms later, before playwright's graceful
  // close on SIGTERM is done, which left chromium's profile in the temporary directory: exiting
  // at once runs playwright's exit handler, which kills chromium and removes its profile.
  if (!process.listeners('SIGTERM').includes(exitOnSigterm)) process.once('SIGTERM', exitOnSigterm);
  const launching = launchChromium(TEST_ARGS).then((browser) => {
    // A crashed browser is launched again by the next file that asks.
    browser.on('disconnected', () => {
      if (held[SHARED] === launching) delete held[SHARED];
    });
    return browser;
  });
  launching.catch(() => {
    if (held[SHARED] === launching) delete held[SHARED];
  });
  held[SHARED] = launching;
  return launching;
}

function exitOnSigterm(): void {
  process.exit(143);
}

/**
 * Closes every context of the shared browser, for a file's `afterAll`: the files of a worker
 * run one after another, so what is open then is the file's own (a page a failed test left
 * open included), and the next file finds the browser as this one did.
 */
export async function closeContexts(browser: Browser | undefined): Promise<void> {
  await Promise.all(browser?.contexts().map((context) => context.close()) ?? []);
}

/**
 * How long a page step (a navigation, a click, a locator's wait) may take: GraphiQL's first
 * open alone takes 10-18 s on a loaded 2-core machine (`npm run bench:graphiql`), so a step
 * gets three times an event's wait. A step that never happens still fails with its own
 * locator, well before the test's limit.
 */
export const PAGE_STEP_MS = 3 * WAIT_MS;

/**
 * A context whose page steps are bounded by PAGE_STEP_MS, with every request that does not go
 * to 127.0.0.1 recorded in `offLoopback`: the browser fails those, as it would offline
 * (CHROMIUM_ARGS' host resolver rules).
 */
export async function offlineContext(
  browser: Browser,
  viewport: { width: number; height: number },
): Promise<{ context: BrowserContext; offLoopback: string[] }> {
  const context = await browser.newContext({ viewport });
  context.setDefaultTimeout(PAGE_STEP_MS);
  const offLoopback: string[] = [];
  context.on('request', (request) => {
    const url = new URL(request.url());
    if (url.hostname !== '127.0.0.1') offLoopback.push(url.href);
  });
  return { context, offLoopback };
}

/**
 * Leaves a file's tab as closing it would leave the next test, for the tests of a file that
 * navigate one tab instead of opening a page each (a file's afterEach): its document
 * unloaded (its sockets closed), the session storage of the origin it was on emptied, and
 * the test's listeners and routes gone. A new tab costs a renderer's start and a compile of
 * every script of the page again, where a navigation in the same tab finds both: 0.55 s of
 * the browser's CPU per console page and 1.2 s per GraphiQL page on the loaded 2-core
 * machine (one tab navigated again and again beside a new tab each time).
 */
export async function blankTab(page: Page): Promise<void> {
  page.removeAllListeners();
  await page.unrouteAll({ behavior: 'ignoreErrors' });
  if (page.url().startsWith('http')) await page.evaluate(() => sessionStorage.clear());
  await page.goto('about:blank');
}
