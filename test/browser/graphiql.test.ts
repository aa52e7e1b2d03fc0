import { mkdir } from 'node:fs/promises';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { mintToken } from '../../src/auth/token.js';
import { setRunState } from '../../src/db/embedded/simulator.js';
import { EXAMPLE_QUERY } from '../../src/yoga.js';
import { embeddedPg, runsIn, settled } from '../live/support.js';
import {
  blankTab,
  closeContexts,
  offlineContext,
  SCREENSHOTS,
  sharedChromium,
} from '../support/browser.js';
import { startTestServer, type TestServer } from '../support/server.js';

// GraphiQL as a user meets it: Debian's chromium on a machine without internet access.
// Every request that does not go to the server under test is failed, as it would be offline.

let t: TestServer;
let authenticated: TestServer;
let browser: Browser;
let context: BrowserContext;
let offline: string[];
/** The file's tab, each test's GraphiQL opened in it (blankTab says why). */
let tab: Page;

beforeAll(async () => {
  [t, authenticated, browser] = await Promise.all([
    startTestServer({ POLL_INTERVAL_MS: '200' }),
    startTestServer({ AUTH_JWT_SECRET: 'a-development-secret-of-at-least-32-characters' }),
    sharedChromium(),
    mkdir(SCREENSHOTS, { recursive: true }),
  ]);
  ({ context, offLoopback: offline } = await offlineContext(browser, { width: 1400, height: 900 }));
  tab = await context.newPage();
});

afterEach(() => blankTab(tab));

afterAll(async () => {
  await closeContexts(browser);
  await Promise.all([t?.stop(), authenticated?.stop()]);
});

async function openGraphiQL(path: string, server = t): Promise<Page> {
  await tab.goto(`${server.url}${path}`);
  // The editor's text is only there once the bundle has loaded and rendered.
  await tab.locator('.graphiql-query-editor .view-lines').waitFor();
  return tab;
}

/** The text of the response pane once `expected` appears in it (Monaco shows spaces as U+00A0). */
async function responseShowing(page: Page, expected: string): Promise<string> {
  const response = page.locator('.graphiql-response');
  await response.getByText(expected, { exact: false }).first().waitFor();
  return ((await response.textContent()) ?? '').replace(/\u00a0/g, ' ');
}

describe('GraphiQL with no internet access', () => {
  test('loads from the server alone, opens on the example query and runs it', async () => {
    const page = await openGraphiQL('/graphql');
    expect(await page.title()).toBe('agent-graph');
    const editor = (
      (await page.locator('.graphiql-query-editor .view-lines').textContent()) ?? ''
    ).replace(/\u00a0/g, ' ');
    expect(editor).toContain(EXAMPLE_QUERY.split('\n')[0]);
    expect(editor).toContain('query Overview');

    const answered = page.waitForResponse(
      (response) => response.request().postDataJSON()?.operationName === 'Overview',
    );
    await page.locator('.graphiql-execute-button').click();
    const body = (await (await answered).json()) as { data?: object; errors?: unknown };
    expect(body.errors).toBeUndefined();
    expect(Object.keys(body.data ?? {})).toEqual([
      'agents',
      'teams',
      'slowExecutions',
      'execStatSummary',
    ]);
    // The pane shows the top of the answer (its editor renders only the visible lines).
    const shown = await responseShowing(page, '"agents"');
    expect(shown).toContain('"totalCount": 7');
    await page.screenshot({ path: `${SCREENSHOTS}/graphiql-example-query.png` });
    expect(offline).toEqual([]);
  });

  test('Prettify lays out the query and the variables (formatters loaded on first use)', async () => {
    const page = await openGraphiQL(
      `/graphql?query=${encodeURIComponent('{agents(first:1){totalCount}}')}`,
    );
    await page.getByText('Variables', { exact: true }).click();
    await page.locator('.graphiql-editor-tool .monaco-editor').first().click();
    await page.keyboard.insertText('{"first":1}');
    await page.getByRole('button', { name: /^Prettify/ }).click();
    // Monaco shows spaces as U+00A0, which \s matches.
    await page
      .locator('.graphiql-query-editor .view-line', { hasText: /^\s*agents\(first:\s1\)\s\{$/ })
      .waitFor();
    await page
      .locator('.graphiql-editor-tool .view-line', { hasText: /^\s*"first":\s1$/ })
      .waitFor();
    expect(offline).toEqual([]);
  });

  test('a subscription receives the current set, then an event when a run starts waiting', async () => {
    const pg = embeddedPg(t.server);
    const [running] = await runsIn(pg, 'RUNNING');
    if (!running) throw new Error('the demo data has no RUNNING run');
    const waiting = `subscription {
  teamsWaitingForHuman(teamName: "${running.teamName}") { execId teamName waitingSince }
}`;
    const page = await openGraphiQL(`/graphql?query=${encodeURIComponent(waiting)}`);
    await page.locator('.graphiql-execute-button').click();
    const initial = await responseShowing(page, '"teamsWaitingForHuman"');
    expect(initial).not.toContain(running.execId);
    expect(initial).not.toContain('"errors"');

    await settled(t.server, 1);
    await setRunState(pg, running.execId, 'WAITING_FOR_HUMAN');
    const event = await responseShowing(page, running.execId);
    expect(event).toContain(running.teamName);
    await page.screenshot({ path: `${SCREENSHOTS}/graphiql-subscription.png` });
    expect(offline).toEqual([]);
  });

  test('with AUTH_JWT_SECRET, a development token in the Headers tab opens the data', async () => {
    const token = await mintToken(authenticated.server.config.auth, {
      user: 'APP_USER',
      roles: [],
      expiresIn: '1h',
    });
    const waiting = 'subscription { teamsWaitingForHuman { execId teamName } }';
    const page = await openGraphiQL(`/graphql?query=${encodeURIComponent(waiting)}`, authenticated);
    await page.getByText('Headers', { exact: true }).click();
    await page.locator('.graphiql-editor-tool .monaco-editor').last().click();
    // Typed keys would meet the editor's auto-closing brackets and quotes.
    await page.keyboard.insertText(JSON.stringify({ authorization: `Bearer ${token}` }));
    const subscribed = page.waitForRequest((request) => request.url().includes('subscription'));
    await page.locator('.graphiql-execute-button').click();
    expect((await subscribed).headers().authorization).toBe(`Bearer ${token}`);
    const shown = await responseShowing(page, '"teamsWaitingForHuman"');
    expect(shown).toContain('"execId"');
    expect(shown).not.toContain('"errors"');
    await page.screenshot({ path: `${SCREENSHOTS}/graphiql-authenticated.png` });
    expect(offline).toEqual([]);
  });
});
