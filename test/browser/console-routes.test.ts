import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { blankTab, closeContexts, offlineContext, sharedChromium } from '../support/browser.js';
import { startTestServer, type TestServer } from '../support/server.js';

let t: TestServer;
let browser: Browser;
/** The file's tab, navigated by each test (blankTab says why). */
let page: Page;

beforeAll(async () => {
  [t, browser] = await Promise.all([startTestServer(), sharedChromium()]);
  const { context } = await offlineContext(browser, { width: 1200, height: 800 });
  page = await context.newPage();
});

afterEach(() => blankTab(page));

afterAll(async () => {
  await closeContexts(browser);
  await t?.stop();
});

describe('console addresses (issue 25, item 10)', () => {
  test.each([
    ['a malformed %-escape', '#/run/%E0%A4%A'],
    ['a page that does not exist', '#/nowhere/at/all'],
  ])(
    '%s shows a "not found" view, not a blank page, and the console still works',
    async (_, hash) => {
      const errors: string[] = [];
      page.on('pageerror', (error) => errors.push(error.message));
      await page.goto(`${t.url}/console${hash}`);
      await page.getByRole('heading', { name: 'Not found' }).waitFor();
      expect(await page.locator('main').textContent()).toContain(hash);
      await page.getByRole('link', { name: 'Go to the runs waiting for a human' }).click();
      await page.getByRole('heading', { name: 'Waiting for a human' }).waitFor();
      expect(errors).toEqual([]);
    },
  );
});

describe('finding GraphiQL (issue 36, item 3)', () => {
  test('the console links to GraphiQL', async () => {
    await page.goto(`${t.url}/console`);
    await page.getByRole('link', { name: 'GraphiQL' }).click();
    // Where the link leads, and the page there (its title): not GraphiQL's load (the `load`
    // waitForURL waits for by default), which runs its 4.6 MB of scripts in a new renderer,
    // about 2 s of the browser's CPU; test/browser/first-visit.test.ts waits for its editor.
    await page.waitForURL(`${t.url}/graphql`, { waitUntil: 'commit' });
    await expect.poll(() => page.title()).toBe('agent-graph');
  });
});
