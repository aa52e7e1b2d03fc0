import { mkdir } from 'node:fs/promises';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import type { EmbeddedPg } from '../../src/db/embedded/database.js';
import { MAX_PROMPT_BYTES, promptBytes } from '../../src/db/sql/run-team.js';
import { REPORT, waitingRun } from '../hitl/support.js';
import { embeddedPg, metric, runsIn } from '../live/support.js';
import {
  blankTab,
  closeContexts,
  offlineContext,
  SCREENSHOTS,
  sharedChromium,
} from '../support/browser.js';
import { startTestServer, type TestServer } from '../support/server.js';

// The console as the operators' home (issue 36): acting where they look, limits shown before
// they bite. Debian's chromium, offline.
let t: TestServer;
let pg: EmbeddedPg;
let browser: Browser;
/** The file's tab, each test's page opened in it (blankTab says why). */
let tab: Page;
/** The errors the test's page threw: none, checked after each test. */
let errors: string[] = [];

beforeAll(async () => {
  [t, browser] = await Promise.all([
    startTestServer({ POLL_INTERVAL_MS: '200' }),
    sharedChromium(),
    mkdir(SCREENSHOTS, { recursive: true }),
  ]);
  pg = embeddedPg(t.server);
  const { context } = await offlineContext(browser, { width: 1280, height: 900 });
  tab = await context.newPage();
});

afterEach(async () => {
  const thrown = errors;
  errors = [];
  await blankTab(tab);
  expect(thrown).toEqual([]);
});

afterAll(async () => {
  await closeContexts(browser);
  await t?.stop();
});

async function open(url: string): Promise<Page> {
  tab.on('pageerror', (error) => errors.push(error.message));
  await tab.goto(url);
  return tab;
}

const card = (page: Page, execId: string) => page.locator(`li[data-exec-id="${execId}"]`);
const top = async (page: Page, execId: string) =>
  (await card(page, execId).boundingBox())?.y ?? Number.NaN;

describe('answering where the operator looks', () => {
  test('a new wait does not move the card being typed in; the box counts bytes as the server does; the confirmation stays', async () => {
    const first = await waitingRun(pg);
    const page = await open(`${t.url}/console`);
    const box = card(page, first).getByLabel(/Your answer to/);
    await box.waitFor();
    await box.click();
    await page.keyboard.insertText('approve, the customer’s name is “Zoë”');
    const before = await top(page, first);

    // A wait that begins now is listed first, above the card: the card stays where it is on
    // the screen, with the focus and the text typed in it.
    const second = await waitingRun(pg);
    await card(page, second).waitFor();
    expect(
      await page.evaluate(
        ([a, b]) =>
          (document
            .querySelector(`li[data-exec-id="${a}"]`)
            ?.compareDocumentPosition(document.querySelector(`li[data-exec-id="${b}"]`) as Node) ??
            0) & Node.DOCUMENT_POSITION_PRECEDING,
        [first, second],
      ),
    ).toBeTruthy();
    expect(Math.abs((await top(page, first)) - before)).toBeLessThan(1);
    expect(await box.evaluate((e) => e === document.activeElement)).toBe(true);
    expect(await box.inputValue()).toBe('approve, the customer’s name is “Zoë”');
    await page.screenshot({ path: `${SCREENSHOTS}/console-36-typing-stays.png` });

    // Counted as the server counts: UTF-8 bytes, a quote twice. 1,500 "é" are 3,000 bytes
    // (1,500 characters); one quote more is over.
    const counter = card(page, first).locator('.count');
    expect(await counter.textContent()).toBe(
      `${promptBytes('approve, the customer’s name is “Zoë”')} of 3,000 bytes`,
    );
    const atLimit = 'é'.repeat(1500);
    expect(promptBytes(atLimit)).toBe(MAX_PROMPT_BYTES);
    await box.fill(atLimit);
    expect(await counter.textContent()).toBe('3,000 of 3,000 bytes');
    await box.fill(`${atLimit}'`);
    expect(await counter.textContent()).toBe('3,002 of 3,000 bytes: 2 too many');
    expect(await counter.evaluate((e) => getComputedStyle(e).color)).not.toBe(
      await card(page, first)
        .locator('label')
        .evaluate((e) => getComputedStyle(e).color),
    );
    await card(page, first).getByRole('button', { name: 'Send answer' }).click();
    expect(await box.evaluate((e) => (e as HTMLTextAreaElement).validationMessage)).toContain(
      'at most 3,000',
    );
    await page.screenshot({ path: `${SCREENSHOTS}/console-36-answer-over-limit.png` });
    // Spaces alone are refused before they are sent, as the server refuses them.
    await box.fill('   ');
    await card(page, first).getByRole('button', { name: 'Send answer' }).click();
    expect(await box.evaluate((e) => (e as HTMLTextAreaElement).validationMessage)).toContain(
      'only spaces',
    );
    expect((await runsIn(pg, 'WAITING_FOR_HUMAN')).map((run) => run.execId)).toContain(first);

    await box.fill("approve: it's fine");
    await card(page, first).getByRole('button', { name: 'Send answer' }).click();
    const sent = card(page, first).locator('.sent');
    await sent.waitFor();
    expect(await sent.textContent()).toContain('Answer sent');
    expect(await sent.locator('q').textContent()).toBe("approve: it's fine");
    // The run resumes and leaves the waiting list; the confirmation is still there.
    await card(page, first).locator('.waited', { hasText: 'no longer waiting' }).waitFor();
    expect(await sent.isVisible()).toBe(true);
    await page.screenshot({ path: `${SCREENSHOTS}/console-36-answer-confirmed.png` });
    await sent.getByRole('button', { name: 'Dismiss' }).click();
    await card(page, first).waitFor({ state: 'detached' });
  });

  test('a waiting run’s own page has the answer box; its confirmation outlives a reload of the run', async () => {
    const execId = await waitingRun(pg);
    const page = await open(`${t.url}/console#/run/${execId}`);
    const section = page.getByRole('region', { name: 'Answer the run' });
    await section.getByLabel(/Your answer to/).fill('approve');
    await section.getByRole('button', { name: 'Send answer' }).click();
    const sent = page.locator('.sent');
    await sent.waitFor();
    await page.locator('.changed').getByText('RESUMING').waitFor();
    await page.getByRole('button', { name: 'Show the latest' }).click();
    const humanCallTook = page
      .locator('section.task tr', { hasText: 'HUMAN_REVIEW' })
      .locator('td')
      .nth(2);
    await expect.poll(() => humanCallTook.textContent()).not.toBe('open');
    expect(await sent.locator('q').textContent()).toBe('approve');
    expect(await section.count()).toBe(0);
    await page.screenshot({ path: `${SCREENSHOTS}/console-36-run-answered.png`, fullPage: true });
  });

  test('a filter matching no waiting run says so, and lives in the address', async () => {
    const execId = await waitingRun(pg);
    const page = await open(`${t.url}/console`);
    await card(page, execId).waitFor();
    await page.getByLabel('Filter').fill('no such team');
    const none = page.locator('p.empty');
    await none.waitFor();
    expect(await none.textContent()).toBe(
      'No waiting run matches “no such team”. Clear the filter',
    );
    expect(await page.locator('main p[aria-live]').first().textContent()).toMatch(
      /^0 of \d+ runs? waiting match “no such team”\.$/,
    );
    expect(new URL(page.url()).hash).toBe('#/waiting?q=no+such+team');
    await page.screenshot({ path: `${SCREENSHOTS}/console-36-waiting-none-match.png` });
    await page.reload();
    expect(await page.getByLabel('Filter').inputValue()).toBe('no such team');
    await none.waitFor();
    await none.getByRole('button', { name: 'Clear the filter' }).click();
    await card(page, execId).waitFor();
    expect(await none.isHidden()).toBe(true);
    expect(new URL(page.url()).hash).toBe('#/waiting');
  });
});

describe('starting a run from a team page', () => {
  test('the request is sent with runTeam and the console lands on the run it started', async () => {
    const page = await open(`${t.url}/console#/team/${REPORT}`);
    const form = page.getByRole('form', { name: `Start a run of ${REPORT}` });
    const request = `Summarize the Q3 report for ${Date.now()}`;
    await form.getByLabel(`Request for ${REPORT}`).fill(request);
    expect(await form.locator('.count').textContent()).toBe(
      `${Buffer.byteLength(request)} of 3,000 bytes`,
    );
    await page.screenshot({ path: `${SCREENSHOTS}/console-36-start-run.png` });
    await form.getByRole('button', { name: 'Start a run' }).click();
    await page.waitForURL(/#\/run\/[^/]+$/);
    const execId = decodeURIComponent(new URL(page.url()).hash.slice('#/run/'.length));
    await page.getByRole('heading', { name: `Run ${execId}` }).waitFor();
    const { rows } = await pg.query<{ team_name: string; input: string }>(
      `SELECT t.team_name, k.input FROM dba_ai_agent_team_history t
       JOIN dba_ai_agent_task_history k ON k.team_exec_id = t.team_exec_id
       WHERE t.team_exec_id = $1 ORDER BY k.task_order`,
      [execId],
    );
    expect(rows[0]).toEqual({ team_name: REPORT, input: request });
    await page.locator('section.task').first().waitFor();
    await page.screenshot({ path: `${SCREENSHOTS}/console-36-started-run.png`, fullPage: true });
  });
});

describe('the agent page shows its limits before they bite', () => {
  test('spaces alone and inputs over 32,000 bytes are refused unsent; the two durations are named', async () => {
    const executions = () => metric(t.server, 'agentgraph_agent_executions_total');
    const page = await open(`${t.url}/console#/agent/REFUND_CHECKER`);
    const form = page.getByRole('form', { name: 'Execute REFUND_CHECKER' });
    const limits = form.locator('p.limits');
    await limits.waitFor();
    expect(await limits.textContent()).toBe(
      'Inputs: 2 of 32,000 bytes as JSON · a request is at most 1 MiB',
    );
    const before = await executions();
    await form.getByLabel('order_id').fill('   ');
    await form.getByLabel('amount').fill('12');
    await form.getByLabel('reason').fill('late');
    await form.getByRole('button', { name: 'Execute' }).click();
    expect(
      await form.getByLabel('order_id').evaluate((e) => (e as HTMLInputElement).validationMessage),
    ).toBe('order_id is only spaces: enter a value.');

    // Counted as the server counts: the inputs array as JSON, in bytes of UTF-8.
    await form.getByLabel('order_id').fill('A-1');
    const reason = 'ü'.repeat(16_000);
    await form.getByLabel('reason').fill(reason);
    const bytes = Buffer.byteLength(
      JSON.stringify([
        { name: 'order_id', value: 'A-1' },
        { name: 'amount', value: 12 },
        { name: 'reason', value: reason },
      ]),
    );
    expect(await limits.textContent()).toBe(
      `Inputs: ${bytes.toLocaleString('en-US')} of 32,000 bytes as JSON, ${(bytes - 32_000).toLocaleString('en-US')} too many · a request is at most 1 MiB`,
    );
    await form.getByRole('button', { name: 'Execute' }).click();
    await page
      .getByRole('alert')
      .getByText(/^Not executed: the inputs are/)
      .waitFor();
    await page.screenshot({ path: `${SCREENSHOTS}/console-36-agent-limits.png` });
    expect(await executions()).toBe(before);

    await form.getByLabel('reason').fill('arrived broken');
    await form.getByRole('button', { name: 'Execute' }).click();
    const call = page.locator('dd[data-duration="call"]');
    await call.waitFor();
    expect(await call.textContent()).toMatch(
      /^[\d.]+ m?s — how long agent-graph waited for EXECUTE_AGENT/,
    );
    expect(await page.locator('dd[data-duration="trace"]').textContent()).toMatch(
      /^[\d.]+ m?s — what the trace records for its top component \(Flow REFUND_CHECKER\)/,
    );
    expect(await page.locator('dl.durations dt').allTextContents()).toEqual([
      'Call',
      'Agent’s own time',
      'Why they differ',
    ]);
    await page.screenshot({
      path: `${SCREENSHOTS}/console-36-agent-durations.png`,
      fullPage: true,
    });
    expect(await executions()).toBe(before + 1);
  });
});

describe('run lists', () => {
  const total = async (filter: Record<string, unknown>) => {
    const { data } = await t.post<{ teamRuns: { totalCount: number } }>(
      'query($filter: TeamRunFilter) { teamRuns(filter: $filter) { totalCount } }',
      { filter },
    );
    return data?.teamRuns.totalCount ?? Number.NaN;
  };

  test('page by page, filtered by team, state, owner and time, searched by id; all of it in the address', async () => {
    const execId = await waitingRun(pg);
    const page = await open(`${t.url}/console#/runs`);
    const summary = page.locator('section.run-list > p[aria-live]');
    await expect.poll(() => summary.textContent()).toMatch(/^Runs 1–25 of [\d,]+; newest first\.$/);
    const all = Number(
      (await summary.textContent())?.match(/of ([\d,]+)/)?.[1]?.replaceAll(',', ''),
    );
    expect(all).toBeGreaterThanOrEqual((await total({})) - 1);
    const rows = page.locator('section.run-list tbody tr');
    expect(await rows.count()).toBe(25);
    const firstPage = await rows.locator('td:first-child').allTextContents();
    await page.getByRole('button', { name: 'Older →' }).click();
    await expect.poll(() => summary.textContent()).toMatch(/^Runs 26–50 of /);
    expect(new URL(page.url()).hash).toMatch(/^#\/runs\?after=[\w-]+&page=2$/);
    const secondPage = await rows.locator('td:first-child').allTextContents();
    expect(secondPage.filter((id) => firstPage.includes(id))).toEqual([]);
    // Back is the page before.
    await page.goBack();
    await expect.poll(() => summary.textContent()).toMatch(/^Runs 1–25 of /);

    // Team and state: the rows are those, as many as the server counts.
    await page.getByLabel('Team').selectOption(REPORT);
    await page.locator('label.chip', { hasText: 'WAITING_FOR_HUMAN' }).click();
    const waiting = await total({ teamName: REPORT, states: ['WAITING_FOR_HUMAN'] });
    await expect
      .poll(() => summary.textContent())
      .toBe(
        `Runs 1–${Math.min(25, waiting)} of ${waiting}, team ${REPORT} · state WAITING_FOR_HUMAN; newest first.`,
      );
    expect(new Set(await rows.locator('td:nth-child(2)').allTextContents())).toEqual(
      new Set([REPORT]),
    );
    expect(new Set(await rows.locator('td:nth-child(4)').allTextContents())).toEqual(
      new Set(['WAITING_FOR_HUMAN']),
    );
    expect(new URL(page.url()).hash).toBe(`#/runs?team=${REPORT}&state=WAITING_FOR_HUMAN`);
    await page.screenshot({ path: `${SCREENSHOTS}/console-36-runs-filtered.png`, fullPage: true });

    // A search by the run's id finds it; a reload shows the same list.
    await page.getByLabel('Search').fill(execId);
    await expect.poll(() => rows.locator('td:first-child').allTextContents()).toEqual([execId]);
    await page.getByLabel('Started').selectOption('1h');
    await expect.poll(() => summary.textContent()).toContain('started in the last hour');
    await page.reload();
    await expect.poll(() => rows.locator('td:first-child').allTextContents()).toEqual([execId]);
    expect(await page.getByLabel('Search').inputValue()).toBe(execId);
    expect(await page.getByLabel('Started').inputValue()).toBe('1h');

    // Nothing matches: said in words, with the way back.
    await page.getByLabel('Owner').fill('nobody');
    const none = page.locator('section.run-list p.empty');
    await none.waitFor();
    expect(await none.textContent()).toBe(
      `No run matches team ${REPORT} · state WAITING_FOR_HUMAN · owner NOBODY · started in the last hour · id “${execId}”. Clear the filters`,
    );
    expect(await summary.textContent()).toBe('');
    await page.screenshot({
      path: `${SCREENSHOTS}/console-36-runs-none-match.png`,
      fullPage: true,
    });
    await none.getByRole('button', { name: 'Clear the filters' }).click();
    await expect.poll(() => summary.textContent()).toMatch(/^Runs 1–25 of [\d,]+; newest first\.$/);
    expect(new URL(page.url()).hash).toBe('#/runs');
  });

  test('a team page lists its runs with the same paging and filters, in its own address', async () => {
    const page = await open(`${t.url}/console#/team/${REPORT}?state=FAILED`);
    const summary = page.locator('section.run-list > p[aria-live]');
    const failed = await total({ teamName: REPORT, states: ['FAILED'] });
    await expect
      .poll(() => summary.textContent())
      .toBe(`Runs 1–${Math.min(25, failed)} of ${failed}, state FAILED; newest first.`);
    expect(await page.locator('section.run-list').getByLabel('Team').count()).toBe(0);
    expect(
      await page.locator('label.chip', { hasText: 'FAILED' }).locator('input').isChecked(),
    ).toBe(true);
  });
});

/** The texts of the page's charts that reach past their picture's edge (and are cut there). */
const cutTexts = (page: Page) =>
  page.evaluate(() =>
    [...document.querySelectorAll('svg')].flatMap((svg) => {
      const box = svg.viewBox.baseVal;
      if (!box?.width) return [];
      return [...svg.querySelectorAll('text')]
        .filter((text) => {
          const b = text.getBBox();
          return (
            b.width > 0 &&
            (b.x < box.x - 0.5 ||
              b.y < box.y - 0.5 ||
              b.x + b.width > box.x + box.width + 0.5 ||
              b.y + b.height > box.y + box.height + 0.5)
          );
        })
        .map((text) => text.textContent);
    }),
  );

describe('pictures that fit and tell', () => {
  test('statistics: no label cut, figures that differ read differently, the chosen period pressed, the duration chart on a time axis', async () => {
    const page = await open(`${t.url}/console#/stats`);
    const timeChart = page.getByRole('img', { name: /^Execution time:/ });
    await timeChart.waitFor();
    await page.locator('svg.activity-trend').waitFor();
    expect(await cutTexts(page)).toEqual([]);

    const { data } = await t.post<{ execStatSummary: Record<string, number> }>(
      '{ execStatSummary { totalTimeAvgMs totalTimeP50Ms totalTimeP95Ms totalTimeP99Ms totalTimeMaxMs } }',
    );
    const values = Object.values(data?.execStatSummary ?? {});
    const texts = (await timeChart.locator('text').allTextContents()).filter((_, i) => i % 2 === 1);
    expect(texts).toHaveLength(5);
    values.forEach((a, i) => {
      values.forEach((b, j) => {
        if (a !== b) expect(texts[i], `${a} and ${b} ms`).not.toBe(texts[j]);
      });
    });

    const day = page.getByRole('button', { name: 'Last 24 hours' });
    const month = page.getByRole('button', { name: 'Last 30 days' });
    const background = (button: typeof day) =>
      button.evaluate((e) => getComputedStyle(e).backgroundColor);
    expect(await day.getAttribute('aria-pressed')).toBe('true');
    expect(await background(day)).not.toBe(await background(month));
    // The duration chart has the bars' time axis: the same labels, under the same buckets.
    const axis = (chart: string) =>
      page
        .locator(`svg.${chart} text.axis-label`)
        .evaluateAll((labels) =>
          labels
            .filter((label) => label.getAttribute('text-anchor') === 'middle')
            .map((label) => `${label.textContent}@${Math.round(Number(label.getAttribute('x')))}`),
        );
    expect((await axis('activity-trend')).length).toBeGreaterThanOrEqual(6);
    expect(await axis('activity-trend')).toEqual(await axis('activity-bars'));
    await page.screenshot({ path: `${SCREENSHOTS}/console-36-stats.png`, fullPage: true });

    const pressed = await background(day);
    await month.click();
    await page.locator('svg.activity-bars[aria-label^="Runs started per day"]').waitFor();
    expect(await background(month)).toBe(pressed);
    expect(await cutTexts(page)).toEqual([]);
    await page.screenshot({ path: `${SCREENSHOTS}/console-36-stats-30-days.png`, fullPage: true });
  });

  test('a run’s timeline: labels whole at the edge, zoomed by dragging across it and back', async () => {
    const execId = await waitingRun(pg);
    const page = await open(`${t.url}/console#/run/${execId}`);
    const timeline = page.locator('svg.timeline');
    await timeline.waitFor();
    // The waiting task is open up to now, the right edge: its label is whole all the same.
    await timeline.locator('text.state-label', { hasText: 'WAITING_FOR_HUMAN (open)' }).waitFor();
    expect(await cutTexts(page)).toEqual([]);
    const ticks = timeline.locator('text.tick');
    expect(await ticks.first().textContent()).toBe('start');
    await page.locator('figure.timeline-figure').screenshot({
      path: `${SCREENSHOTS}/console-36-timeline.png`,
    });

    const box = await timeline.boundingBox();
    if (!box) throw new Error('no timeline on screen');
    const y = box.y + box.height - 4;
    await page.mouse.move(box.x + box.width * 0.55, y);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width * 0.7, y, { steps: 4 });
    await page.mouse.up();
    const state = page.locator('.zoom-state');
    await expect.poll(() => state.textContent()).toMatch(/^Showing \+\S.* to \+\S.* of /);
    expect(await ticks.first().textContent()).toMatch(/^\+/);
    expect(await cutTexts(page)).toEqual([]);
    await page.locator('figure.timeline-figure').screenshot({
      path: `${SCREENSHOTS}/console-36-timeline-zoomed.png`,
    });
    await page.getByRole('button', { name: 'Zoom out' }).click();
    await page.getByRole('button', { name: 'Show the whole run' }).click();
    expect(await state.textContent()).toMatch(/^The whole run: /);
    expect(await ticks.first().textContent()).toBe('start');
    // A click on a bar still opens it.
    await timeline.locator('g.bar-button').first().click();
    await page.locator('.timeline-details h4').waitFor();
  });

  test('a team page: no chart label cut', async () => {
    const page = await open(`${t.url}/console#/team/${REPORT}`);
    await page.locator('svg.activity-trend').waitFor();
    expect(await cutTexts(page)).toEqual([]);
  });
});
