import { mkdir } from 'node:fs/promises';
import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { metric } from '../live/support.js';
import { closeContexts, offlineContext, SCREENSHOTS, sharedChromium } from '../support/browser.js';
import { startTestServer, type TestServer } from '../support/server.js';

// The console's agent page in Debian's chromium, offline: the form its call contract
// generates, an execution with its output, and the trace drawn on a time axis.
let t: TestServer;
let browser: Browser;
let context: BrowserContext;
let offLoopback: string[];

beforeAll(async () => {
  [t, browser] = await Promise.all([
    startTestServer(),
    sharedChromium(),
    mkdir(SCREENSHOTS, { recursive: true }),
  ]);
  ({ context, offLoopback } = await offlineContext(browser, { width: 1280, height: 900 }));
});

afterAll(async () => {
  await closeContexts(browser);
  await t?.stop();
});

const executions = () => metric(t.server, 'agentgraph_agent_executions_total');

describe('the console’s agent page', () => {
  test('a form from the call contract executes the agent and draws its trace', async () => {
    const page = await context.newPage();
    await page.goto(`${t.url}/console#/agents`);
    await page.getByRole('link', { name: 'REFUND_CHECKER' }).click();
    await page.getByRole('heading', { name: 'Agent REFUND_CHECKER' }).waitFor();

    // One field per inputs[].title, typed as the contract declares it.
    const form = page.getByRole('form', { name: 'Execute REFUND_CHECKER' });
    expect(await form.getByLabel('order_id').getAttribute('type')).toBe('text');
    expect(await form.getByLabel('amount').getAttribute('type')).toBe('number');
    expect(await form.getByLabel('reason').getAttribute('type')).toBe('text');

    // A required input left empty: the browser holds the form back, nothing is executed.
    const before = await executions();
    await form.getByLabel('order_id').fill('A-1001');
    await form.getByRole('button', { name: 'Execute' }).click();
    expect(
      await form.getByLabel('amount').evaluate((e) => (e as HTMLInputElement).validity.valid),
    ).toBe(false);
    expect(await executions()).toBe(before);

    await form.getByLabel('amount').fill('25.5');
    await form.getByLabel('reason').fill('arrived broken');
    await form.getByRole('button', { name: 'Execute' }).click();
    await page.getByRole('heading', { name: 'Output' }).waitFor();
    const output = JSON.parse((await page.locator('pre.output').textContent()) ?? '{}');
    expect(Object.keys(output)).toEqual(['approved', 'explanation']);
    expect(output.explanation).toContain('amount=25.5');

    const chart = page.getByRole('img', { name: /^Trace: \d+ components over / });
    await chart.waitFor();
    const spans = chart.locator('g.span');
    const kinds = await spans.locator('text').allTextContents();
    expect(kinds[0]).toBe('Flow REFUND_CHECKER');
    expect(kinds).toContain('StartNode start');
    expect(kinds.some((k) => k.startsWith('LlmNode'))).toBe(true);
    // Every bar lies within the axis, the root's spanning it.
    const bars = await spans.locator('rect.bar').evaluateAll((rects) =>
      rects.map((r) => {
        const box = (r as SVGRectElement).getBBox();
        return [box.x, box.x + box.width];
      }),
    );
    const [root] = bars as [number[]];
    for (const [start, end] of bars) {
      expect(start).toBeGreaterThanOrEqual((root[0] as number) - 0.01);
      expect(end).toBeLessThanOrEqual((root[1] as number) + 0.01);
    }
    expect(await page.locator('dl.totals').textContent()).toContain('calls');
    await page.screenshot({ path: `${SCREENSHOTS}/agent-trace.png`, fullPage: true });
    expect(await executions()).toBe(before + 1);
    expect(offLoopback).toEqual([]);
    await page.close();
  });
});
