import { mkdir, writeFile } from 'node:fs/promises';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { closeContexts, offlineContext, SCREENSHOTS, sharedChromium } from '../support/browser.js';
import { startTestServer, type TestServer } from '../support/server.js';

// A first visit as a new user makes it (issue 36, items 2 and 3): from `/` to GraphiQL and
// the console and back, and what GraphiQL costs on the wire, first and second time.

let t: TestServer;
let browser: Browser;

beforeAll(async () => {
  [t, browser] = await Promise.all([
    startTestServer(),
    sharedChromium(),
    mkdir(SCREENSHOTS, { recursive: true }),
  ]);
});

afterAll(async () => {
  await closeContexts(browser);
  await t?.stop();
});

const editorShown = (page: Page) => page.locator('.graphiql-query-editor .view-lines').waitFor();

describe('finding your way (item 3)', () => {
  test('/ links GraphiQL and the console; GraphiQL links the console; the console GraphiQL', async () => {
    const { context } = await offlineContext(browser, { width: 1280, height: 800 });
    const page = await context.newPage();
    await page.goto(`${t.url}/`);
    await page.screenshot({ path: `${SCREENSHOTS}/home.png` });
    await page.getByRole('link', { name: /GraphiQL/ }).click();
    await page.waitForURL(`${t.url}/graphql`);
    await editorShown(page);
    await page.screenshot({ path: `${SCREENSHOTS}/graphiql-bar.png` });
    await page.getByRole('link', { name: "Operators' console" }).click();
    await page.waitForURL(`${t.url}/console`);
    await page.getByRole('link', { name: 'GraphiQL' }).click();
    await page.waitForURL(`${t.url}/graphql`);
    await editorShown(page);
    await page.getByRole('link', { name: 'Home' }).click();
    await page.waitForURL(`${t.url}/`);
    await page.getByRole('link', { name: /Operators' console/ }).click();
    await page.waitForURL(`${t.url}/console`);
    await context.close();
  });
});

describe('GraphiQL on the wire (item 2)', () => {
  let context: BrowserContext;
  let elsewhere: string[] = [];
  beforeAll(async () => {
    // The second visit is about the HTTP cache, which an offline context keeps (it routes no
    // request: test/support/browser.ts).
    ({ context, offLoopback: elsewhere } = await offlineContext(browser, {
      width: 1400,
      height: 900,
    }));
  });
  afterAll(() => context?.close());

  /**
   * Opens GraphiQL: the bytes received (headers and bodies, as sent) until the network is
   * idle, and the time until the editor shows.
   */
  async function open(): Promise<{ bytes: number; ms: number; files: number }> {
    const page = await context.newPage();
    const cdp = await context.newCDPSession(page);
    await cdp.send('Network.enable');
    let bytes = 0;
    let files = 0;
    const urls = new Map<string, string>();
    cdp.on('Network.requestWillBeSent', (event) => urls.set(event.requestId, event.request.url));
    cdp.on('Network.loadingFinished', (event) => {
      // Fonts inlined in the style sheet as data: URLs are decoded, not received.
      if (urls.get(event.requestId)?.startsWith('data:')) return;
      bytes += event.encodedDataLength;
      if (event.encodedDataLength > 0) files++;
    });
    const started = performance.now();
    await page.goto(`${t.url}/graphql`);
    await editorShown(page);
    const ms = Math.round(performance.now() - started);
    // The editor's workers start once it shows: counted too.
    await page.waitForLoadState('networkidle');
    await page.close();
    return { bytes, ms, files };
  }

  test('first open at most 3 MB, compressed; the next at most 50 KB; nothing off loopback', async () => {
    const html = await fetch(`${t.url}/graphql`, { headers: { accept: 'text/html' } });
    const page = await html.text();
    expect(page.length).toBeLessThan(10_000);
    const script = /<script src="(\/graphiql\/graphiql-[\w-]+\.js)">/.exec(page)?.[1] ?? '';
    const bundle = await fetch(`${t.url}${script}`, { headers: { 'accept-encoding': 'br' } });
    expect(bundle.headers.get('content-encoding')).toBe('br');
    expect(bundle.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    await bundle.arrayBuffer();

    const first = await open();
    const second = await open();
    await mkdir('test-results', { recursive: true });
    await writeFile(
      'test-results/graphiql-open.json',
      `${JSON.stringify({ first, second }, null, 2)}\n`,
    );
    expect(first.bytes).toBeLessThanOrEqual(3_000_000);
    expect(second.bytes).toBeLessThanOrEqual(50_000);
    expect(second.files).toBeLessThanOrEqual(2);
    expect(elsewhere).toEqual([]);
  });
});
