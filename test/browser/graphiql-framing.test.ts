import { createServer, type Server } from 'node:http';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { blankTab, closeContexts, offlineContext, sharedChromium } from '../support/browser.js';
import { startTestServer, type TestServer } from '../support/server.js';

// Issue 25, item 2: GraphiQL on an anonymous loopback server (every caller an administrator),
// met by a page of another origin and by a link that carries a mutation.

const REPORT = 'REPORT_SUMMARY_AGENT_TEAM';
const MUTATION = `mutation { runTeam(teamName: "${REPORT}", prompt: "from a link") { conversationId } }`;

let t: TestServer;
let browser: Browser;
/** The file's tab, each test's page opened in it (blankTab says why). */
let tab: Page;
/** The CSP violations of the page the test opened. */
let violations: string[] = [];
let evil: Server;
let evilUrl: string;

beforeAll(async () => {
  [t, browser] = await Promise.all([startTestServer(), sharedChromium()]);
  const { context } = await offlineContext(browser, { width: 1200, height: 800 });
  tab = await context.newPage();
  // Every CSP violation of a page the tab shows is recorded.
  await tab.exposeFunction('reportViolation', (v: string) => violations.push(v));
  await tab.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (event) =>
      (window as unknown as { reportViolation(v: string): void }).reportViolation(
        `${event.violatedDirective} ${event.blockedURI}`,
      ),
    );
  });
  // Another origin (another port) that frames GraphiQL with a mutation in its address.
  evil = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(
      `<!doctype html><iframe id="victim" width="1000" height="700" src="${t.url}/graphql?query=${encodeURIComponent(MUTATION)}"></iframe>`,
    );
  });
  await new Promise<void>((resolve) => evil.listen(0, '127.0.0.1', resolve));
  const address = evil.address();
  evilUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/`;
});

afterEach(() => blankTab(tab));

afterAll(async () => {
  await closeContexts(browser);
  await new Promise((resolve) => evil?.close(resolve));
  await t?.stop();
});

const submitted = () =>
  t.logs.filter((entry) => entry.component === 'audit' && entry.outcome === 'submitted').length;

/** GraphiQL open and rendered, with every CSP violation of the page recorded. */
async function openGraphiQL(path: string): Promise<{ page: Page; violations: string[] }> {
  violations = [];
  await tab.goto(`${t.url}${path}`);
  await tab.locator('.graphiql-query-editor .view-lines').waitFor();
  return { page: tab, violations };
}

describe('GraphiQL refuses to be framed and keeps a linked mutation in sight (issue 25, item 2)', () => {
  test('the page sends a CSP with frame-ancestors none, X-Frame-Options DENY, nosniff and no referrer', async () => {
    const response = await fetch(`${t.url}/graphql`, { headers: { accept: 'text/html' } });
    await response.arrayBuffer();
    const csp = response.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("default-src 'none'");
    expect(csp).not.toMatch(/script-src[^;]*'unsafe-inline'/);
    expect(response.headers.get('x-frame-options')).toBe('DENY');
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.get('referrer-policy')).toBe('no-referrer');
  });

  test('a page of another origin cannot frame it', async () => {
    await tab.goto(evilUrl);
    const frame = tab.frames().find((f) => f !== tab.mainFrame());
    await tab.waitForLoadState('load');
    // Chromium replaces a refused frame by its error page: no GraphiQL, nothing to click.
    expect(await frame?.locator('.graphiql-execute-button').count()).toBe(0);
    expect(frame?.url()).not.toContain('/graphql');
  });

  test('the CSP fits the installed GraphiQL bundle: it loads, runs the example query, and nothing is blocked', async () => {
    const { page, violations } = await openGraphiQL('/graphql');
    const answered = page.waitForResponse(
      (response) => response.request().postDataJSON()?.operationName === 'Overview',
    );
    await page.locator('.graphiql-execute-button').click();
    expect(((await (await answered).json()) as { errors?: unknown }).errors).toBeUndefined();
    await page.locator('.graphiql-response').getByText('"agents"').first().waitFor();
    expect(violations).toEqual([]);
  });

  test('a mutation in the address runs only once the user confirms it, in a dialog that shows it', async () => {
    const before = submitted();
    const { page, violations } = await openGraphiQL(
      `/graphql?query=${encodeURIComponent(MUTATION)}`,
    );
    const dialogs: string[] = [];
    page.once('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    await page.locator('.graphiql-execute-button').click();
    await page.locator('.graphiql-response').getByText('Not run').first().waitFor();
    expect(dialogs).toHaveLength(1);
    expect(dialogs[0]).toContain('This mutation came with the address you opened');
    expect(dialogs[0]).toContain('runTeam');
    expect(submitted()).toBe(before);

    page.once('dialog', (dialog) => void dialog.accept());
    const answered = page.waitForResponse((response) =>
      String(response.request().postDataJSON()?.query).includes('runTeam'),
    );
    await page.locator('.graphiql-execute-button').click();
    await answered;
    await page.locator('.graphiql-response').getByText('"conversationId"').first().waitFor();
    expect(submitted()).toBe(before + 1);
    expect(violations).toEqual([]);
  });
});
