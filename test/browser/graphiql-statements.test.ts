import { mkdir } from 'node:fs/promises';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { closeContexts, offlineContext, SCREENSHOTS, sharedChromium } from '../support/browser.js';
import { startTestServer, type TestServer } from '../support/server.js';

// A developer's GraphiQL (NODE_ENV=development, no auth configured: every caller on loopback
// is an administrator) lists the statements each operation ran beside its result.

let t: TestServer;
let browser: Browser;

beforeAll(async () => {
  [t, browser] = await Promise.all([
    startTestServer({ NODE_ENV: 'development' }),
    sharedChromium(),
    mkdir(SCREENSHOTS, { recursive: true }),
  ]);
});

afterAll(async () => {
  await closeContexts(browser);
  await t?.stop();
});

test("GraphiQL shows the operation's statements beside the result, binds not shown", async () => {
  const { context, offLoopback } = await offlineContext(browser, { width: 1400, height: 900 });
  const page = await context.newPage();
  await page.goto(`${t.url}/graphql`);
  await page.locator('.graphiql-query-editor .view-lines').waitFor();
  const panel = page.locator('#ag-statements');
  expect(await panel.isHidden()).toBe(true);

  const answered = page.waitForResponse(
    (response) => response.request().postDataJSON()?.operationName === 'Overview',
  );
  await page.locator('.graphiql-execute-button').click();
  const body = (await (await answered).json()) as {
    extensions?: { statements?: { name: string; text: string }[] };
  };
  const statements = body.extensions?.statements ?? [];
  expect(statements.length).toBeGreaterThan(0);

  await panel.waitFor({ state: 'visible' });
  const summary = (await panel.locator('summary').textContent()) ?? '';
  expect(summary).toMatch(new RegExp(`^${statements.length} statements?, [\\d.]+ ms`));
  expect(summary).toContain('binds not shown');
  await panel.locator('summary').click();
  const first = panel.locator('li').first();
  await first.locator('pre').waitFor();
  expect(await first.locator('p').textContent()).toContain(statements[0]?.name);
  expect(await first.locator('pre').textContent()).toMatch(/\bSELECT\b/i);
  expect(await panel.locator('li').count()).toBe(statements.length);
  await page.screenshot({ path: `${SCREENSHOTS}/graphiql-statements-36.png` });
  expect(offLoopback).toEqual([]);
  await context.close();
});
