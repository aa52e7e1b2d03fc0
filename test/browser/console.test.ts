import { mkdir } from 'node:fs/promises';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { mintToken } from '../../src/auth/token.js';
import type { EmbeddedPg } from '../../src/db/embedded/database.js';
import { setRunState, startRun } from '../../src/db/embedded/simulator.js';
import { REPORT, stillWaiting, waitingRun } from '../hitl/support.js';
import { embeddedPg, liveQueriesSettled, runsIn, settled } from '../live/support.js';
import {
  blankTab,
  closeContexts,
  offlineContext,
  SCREENSHOTS,
  sharedChromium,
} from '../support/browser.js';
import { startTestServer, type TestServer } from '../support/server.js';

// The operator console as a person meets it: Debian's chromium, no internet access (every
// request that does not go to the server under test is failed and recorded).
const SECRET = 'a-console-test-secret-that-is-long-enough!';
const DESKTOP = { width: 1280, height: 900 };
const PHONE = { width: 390, height: 844 };

let t: TestServer;
let secured: TestServer;
let pg: EmbeddedPg;
let browser: Browser;
let offLoopback: string[];
/** The file's tab, each test's console opened in it (blankTab says why). */
let tab: Page;

beforeAll(async () => {
  [t, secured, browser] = await Promise.all([
    startTestServer({ POLL_INTERVAL_MS: '200' }),
    startTestServer({ POLL_INTERVAL_MS: '200', AUTH_JWT_SECRET: SECRET }),
    sharedChromium(),
    mkdir(SCREENSHOTS, { recursive: true }),
  ]);
  pg = embeddedPg(t.server);
  const offline = await offlineContext(browser, DESKTOP);
  offLoopback = offline.offLoopback;
  tab = await offline.context.newPage();
});

// A page a failed test left on the console would keep its subscriptions and upset the next
// count: every test leaves the tab blank.
afterEach(() => blankTab(tab));

afterAll(async () => {
  await closeContexts(browser);
  await Promise.all([t?.stop(), secured?.stop()]);
});

/** The page's requests to /graphql (queries and mutations over HTTP; not its WebSocket). */
const graphqlPosts = (requested: readonly string[]) =>
  requested.filter((url) => new URL(url).pathname === '/graphql' && url.startsWith('http')).length;

/** Opens the console and records every request and WebSocket it makes. */
async function open(url: string): Promise<{ page: Page; requested: string[] }> {
  const requested: string[] = [];
  tab.on('request', (request) => requested.push(request.url()));
  tab.on('websocket', (socket) => requested.push(socket.url()));
  await tab.goto(url);
  return { page: tab, requested };
}

const RUN_STATES = ['WAITING_FOR_HUMAN', 'RUNNING', 'RESUMING', 'FAILED', 'SUCCEEDED'] as const;

/** The team page's runs by state, as its chart reads them out (its aria-label). */
async function runsByState(page: Page): Promise<Record<(typeof RUN_STATES)[number], number>> {
  const label = await page
    .locator('.team-figures figure', { hasText: 'Runs by state' })
    .locator('svg')
    .getAttribute('aria-label');
  const shown = new Map(
    (label?.replace(/^Runs by state: /, '').split(', ') ?? []).map((entry) => {
      const [state, count] = entry.split(' ');
      return [state, Number(count?.replaceAll(',', ''))];
    }),
  );
  // A state the chart does not name reads as NaN, so the Runs figure checked from them fails.
  return Object.fromEntries(
    RUN_STATES.map((state) => [state, shown.get(state) ?? Number.NaN]),
  ) as Record<(typeof RUN_STATES)[number], number>;
}

const waitingItem = (page: Page, execId: string) => page.locator(`li[data-exec-id="${execId}"]`);

async function answer(page: Page, execId: string, text: string): Promise<void> {
  const item = waitingItem(page, execId);
  // By keyboard, as a person without a mouse would: the labelled box, then the button.
  await item.getByLabel(/Your answer to/).focus();
  await page.keyboard.insertText(text);
  await page.keyboard.press('Tab');
  await page.keyboard.press('Enter');
}

describe('the console at /console', () => {
  test('is one page with a CSP and cache headers, its client served from node_modules', async () => {
    const response = await fetch(`${t.url}/console`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const csp = response.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toMatch(/script-src 'self' 'sha256-[\w+/=]+'(;|$)/);
    expect(csp).toContain("connect-src 'self'");
    expect(response.headers.get('cache-control')).toBe('no-cache');
    const etag = response.headers.get('etag') ?? '';
    const again = await fetch(`${t.url}/console`, { headers: { 'if-none-match': etag } });
    expect(again.status).toBe(304);
    const html = await response.text();
    const client = html.match(/"(\/console\/vendor\/graphql-ws@[\d.]+\/client\.js)"/)?.[1];
    if (!client) throw new Error(`no graphql-ws import in the page: ${html}`);
    const vendor = await fetch(`${t.url}${client}`);
    expect(vendor.status).toBe(200);
    expect(vendor.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(await vendor.text()).toContain('createClient');
    expect((await fetch(`${t.url}/console/missing.js`)).status).toBe(404);
  });

  test('a waiting run appears live with its question; answering it confirms it and the run resumes', async () => {
    const execId = await waitingRun(pg);
    const { page, requested } = await open(`${t.url}/console`);
    const item = waitingItem(page, execId);
    await item.waitFor();
    const firstOnScreenMs = await page.evaluate(
      () => performance.getEntriesByName('console:first-waiting-run')[0]?.startTime ?? null,
    );
    const weight = await page.evaluate(() =>
      [
        ...performance.getEntriesByType('navigation'),
        ...performance.getEntriesByType('resource'),
      ].reduce((sum, entry) => sum + (entry as PerformanceResourceTiming).transferSize, 0),
    );
    console.log(
      `console: first waiting run on screen ${Math.round(firstOnScreenMs ?? -1)} ms after navigation start; page weight ${weight} bytes transferred`,
    );
    expect(firstOnScreenMs).toBeGreaterThan(0);
    expect(weight).toBeGreaterThan(0);

    await expect.poll(() => item.locator('h3').textContent()).toBe(REPORT);
    expect(await item.locator('.question').textContent()).not.toBe('(no question recorded)');
    // The wait time ticks: the shown text changes without any new event from the server.
    const ticking = item.locator('.ticking');
    const shown = await ticking.textContent();
    await expect.poll(() => ticking.textContent()).not.toBe(shown);
    await page.screenshot({ path: `${SCREENSHOTS}/console-waiting-1280.png` });
    await page.setViewportSize(PHONE);
    await page.screenshot({ path: `${SCREENSHOTS}/console-waiting-phone.png` });
    await page.setViewportSize(DESKTOP);

    // The filter hides what does not match and keeps what does.
    const filter = page.getByLabel('Filter');
    await filter.fill('no such team');
    await expect.poll(() => item.isHidden()).toBe(true);
    await filter.fill(`${REPORT.toLowerCase()} reviewer`);
    await expect.poll(() => item.isVisible()).toBe(true);
    // A suggested answer from the question's options fills the box, then the person adds to it.
    await item
      .getByRole('group', { name: 'Suggested answers' })
      .getByRole('button', { name: 'approve' })
      .press('Enter');
    await answer(page, execId, ': publish the summary');
    // The card stays, confirming what was sent, and says when the run no longer waits.
    await item.locator('.waited', { hasText: 'no longer waiting' }).waitFor();
    expect(await item.locator('.sent q').textContent()).toBe('approve: publish the summary');
    expect((await runsIn(pg, 'WAITING_FOR_HUMAN')).map((run) => run.execId)).not.toContain(execId);
    const { rows } = await pg.query<{ output: string }>(
      `SELECT output FROM dba_ai_agent_tool_history WHERE team_exec_id = $1 AND tool_name = 'HUMAN_REVIEW'`,
      [execId],
    );
    expect(rows.map((row) => row.output)).toContain('approve: publish the summary');

    expect(requested.length).toBeGreaterThan(3);
    expect(requested.filter((url) => new URL(url).hostname !== '127.0.0.1')).toEqual([]);
    expect(offLoopback).toEqual([]);
  });

  test('an answer to a wait that was already answered shows CONFLICT plainly', async () => {
    const execId = await waitingRun(pg);
    const { page } = await open(`${t.url}/console`);
    await waitingItem(page, execId).waitFor();
    // Someone else answers first, and (as on Oracle before the scheduler starts the job) the
    // run still reads as waiting on the same open call.
    const first = await t.post(
      'mutation($execId: ID!) { respondToHuman(execId: $execId, response: "first") { execId } }',
      { execId },
    );
    expect(first.errors).toBeUndefined();
    await stillWaiting(pg, execId);
    await waitingItem(page, execId).waitFor();
    await answer(page, execId, 'second');
    const refusal = waitingItem(page, execId).locator('.outcome.error');
    await refusal.waitFor();
    expect(await refusal.textContent()).toMatch(/^Not sent: .*already been answered.*\(CONFLICT/);
    expect(await refusal.getAttribute('role')).toBe('alert');
    await page.screenshot({ path: `${SCREENSHOTS}/console-conflict.png` });
  });

  test('an answer whose reply comes after its run left the waiting list still confirms it, and the run as no longer waiting', async () => {
    const execId = await waitingRun(pg);
    const { page } = await open(`${t.url}/console`);
    const item = waitingItem(page, execId);
    await item.waitFor();
    const count = page.getByText(/^\d+ runs? waiting/);
    const before = Number((await count.textContent())?.match(/^\d+/)?.[0]);
    const fewer =
      before === 1
        ? page.getByText('No run is waiting for a person.')
        : page.getByText(new RegExp(`^${before - 1} runs? waiting`));
    // The server's poll may see the answer before the answer's reply reaches the page, which
    // then gets the waiting set without the run first. That order is made certain here: the
    // real server's reply to the answer is held until the page shows one run fewer waiting.
    await page.route(`${t.url}/graphql`, async (route) => {
      if (route.request().postDataJSON()?.variables?.response === undefined) {
        return route.fallback();
      }
      const response = await route.fetch();
      try {
        await fewer.waitFor();
      } finally {
        await route.fulfill({ response });
      }
    });
    await answer(page, execId, 'approve');
    await item.locator('.waited', { hasText: 'no longer waiting' }).waitFor();
    expect(await item.locator('.sent q').textContent()).toBe('approve');
    expect((await runsIn(pg, 'WAITING_FOR_HUMAN')).map((run) => run.execId)).not.toContain(execId);
  });

  test('a run page shows tasks, tool calls and collapsed prompts; a team page its stats and card', async () => {
    const execId = await waitingRun(pg);
    const { page, requested } = await open(`${t.url}/console#/run/${execId}`);
    const task = page.locator('section.task').first();
    await task.waitFor();
    expect(await page.locator('h2').textContent()).toBe(`Run ${execId}`);
    // The call the run waits on is still open.
    const humanCallTook = page
      .locator('section.task tr', { hasText: 'HUMAN_REVIEW' })
      .locator('td')
      .nth(2);
    expect(await humanCallTook.textContent()).toBe('open');
    const prompts = task.locator('details.prompts');
    expect(await prompts.getAttribute('open')).toBeNull();
    await page.screenshot({ path: `${SCREENSHOTS}/console-run.png`, fullPage: true });

    // Answered elsewhere: the page says so (its live query's new answer), and shows the new
    // state when asked, with nothing fetched again.
    await liveQueriesSettled(t.server, 1);
    const fetched = graphqlPosts(requested);
    const answered = await t.post(
      'mutation($execId: ID!) { respondToHuman(execId: $execId, response: "done") { execId } }',
      { execId },
    );
    expect(answered.errors).toBeUndefined();
    const changed = page.locator('.changed');
    await changed.getByText('RESUMING').waitFor();
    await changed.getByRole('button', { name: 'Show the latest' }).click();
    await expect.poll(() => humanCallTook.textContent()).toMatch(/^\d+ ms$|^\d+s$/);
    expect(graphqlPosts(requested)).toBe(fetched);
    await page.screenshot({ path: `${SCREENSHOTS}/console-37-run-live.png`, fullPage: true });

    await page.getByRole('link', { name: REPORT }).first().click();
    await page.getByRole('heading', { name: 'Drift from the catalog' }).waitFor();
    expect(await page.locator('h2').textContent()).toBe(`Team ${REPORT}`);
    expect(await page.locator('.card .big').first().textContent()).toMatch(/^\d/);
    expect(
      await page
        .locator('figure', { hasText: 'Runs by state' })
        .locator('svg')
        .getAttribute('aria-label'),
    ).toContain('WAITING_FOR_HUMAN');
    // Where you are: under Teams, and the breadcrumb ends at the team.
    expect(await page.locator('nav a[aria-current="page"]').textContent()).toBe('Teams');
    expect(await page.locator('.breadcrumb [aria-current="page"]').textContent()).toBe(REPORT);
    await page.locator('svg.activity-bars').waitFor();
    expect(await page.locator('main').textContent()).toContain('A2A card');
    await page.screenshot({ path: `${SCREENSHOTS}/console-team.png`, fullPage: true });

    // The team page follows its runs through live queries (the figures above, the runs' first
    // page and the activity): a run that ends shows as ended, it moves from RESUMING to
    // SUCCEEDED in the runs by state and counts in the success rate, and the page fetches
    // nothing for it.
    const row = page.locator('tr', { hasText: execId });
    await row.waitFor();
    await liveQueriesSettled(t.server, 3);
    const before = await runsByState(page);
    expect(before.RESUMING).toBeGreaterThan(0);
    const teamFetched = graphqlPosts(requested);
    await setRunState(pg, execId, 'SUCCEEDED');
    await row.getByText('SUCCEEDED').waitFor();
    const after = {
      ...before,
      RESUMING: before.RESUMING - 1,
      SUCCEEDED: before.SUCCEEDED + 1,
    };
    await expect.poll(() => runsByState(page)).toEqual(after);
    const figure = (title: string) =>
      page.locator('.team-figures .card', { hasText: title }).locator('.big').textContent();
    expect(await figure('Runs')).toBe(
      Object.values(after)
        .reduce((sum, count) => sum + count, 0)
        .toLocaleString('en-US'),
    );
    expect(await figure('Success rate')).toBe(
      `${((100 * after.SUCCEEDED) / (after.SUCCEEDED + after.FAILED)).toFixed(1)}%`,
    );
    expect(graphqlPosts(requested)).toBe(teamFetched);
    await page.screenshot({ path: `${SCREENSHOTS}/console-37-team-live.png`, fullPage: true });
    expect(requested.filter((url) => new URL(url).hostname !== '127.0.0.1')).toEqual([]);
  });

  test('the run-changes feed shows a change live; the statistics page draws its charts; teams list', async () => {
    const { page, requested } = await open(`${t.url}/console#/changes`);
    await page.getByRole('heading', { name: 'Latest runs' }).waitFor();
    await settled(t.server, 1);
    const execId = await waitingRun(pg);
    const change = page.locator('ul.feed li', { hasText: execId }).first();
    await change.waitFor();
    expect(await change.textContent()).toMatch(/(new|RUNNING) → (RUNNING|WAITING_FOR_HUMAN)/);
    await page.screenshot({ path: `${SCREENSHOTS}/console-changes.png` });

    await page.getByRole('link', { name: 'Statistics' }).click();
    const charts = page.locator('figure svg[role="img"]');
    await charts.nth(2).waitFor();
    expect(await charts.nth(0).getAttribute('aria-label')).toMatch(
      /^Execution time: average .*p95 .*max /,
    );
    expect(await charts.nth(1).getAttribute('aria-label')).toMatch(
      /^Tokens: input [\d,]+, output [\d,]+$/,
    );
    expect(await charts.nth(2).getAttribute('aria-label')).toMatch(
      /^Where the time went: LLM .*tools .*other /,
    );
    await page.screenshot({ path: `${SCREENSHOTS}/console-stats-1280.png`, fullPage: true });
    await page.setViewportSize(PHONE);
    await page.screenshot({ path: `${SCREENSHOTS}/console-stats-phone.png`, fullPage: true });
    await page.setViewportSize(DESKTOP);

    await page.getByRole('link', { name: 'Teams' }).click();
    const report = page.locator('article.card', { hasText: REPORT });
    await report.waitFor();
    expect(await report.textContent()).toMatch(/\d+ runs · [\d.]+% succeeded/);
    await page.screenshot({ path: `${SCREENSHOTS}/console-teams.png` });
    expect(requested.filter((url) => new URL(url).hostname !== '127.0.0.1')).toEqual([]);
  });

  test('with AUTH_JWT_SECRET, anonymous is refused plainly; a token entered once opens the list', async () => {
    const execId = await waitingRun(embeddedPg(secured.server));
    const { page } = await open(`${secured.url}/console`);
    await page
      .getByText(/UNAUTHENTICATED/)
      .first()
      .waitFor();
    const token = await mintToken(secured.server.config.auth, {
      user: 'APP_USER',
      roles: [],
      expiresIn: '10m',
    });
    await page.getByLabel('Access token').fill(token);
    await page.getByRole('button', { name: 'Use token' }).click();
    await waitingItem(page, execId).waitFor();
    expect(await page.evaluate(() => Object.keys(sessionStorage))).toEqual([
      'agent-graph.console.token',
    ]);
    // Kept for the tab: a reload still sees the list.
    await page.reload();
    await waitingItem(page, execId).waitFor();
  });

  test('a run with hundreds of tool calls is a timeline: lanes, an aggregated row, a failed task, a wait; a bar opens its input', async () => {
    const execId = await manyCallsRun(pg, 300);
    const { page } = await open(`${t.url}/console#/run/${execId}`);
    const timeline = page.locator('svg.timeline');
    await timeline.waitFor();
    expect(await page.locator('nav a[aria-current="page"]').textContent()).toBe('Teams');
    expect(await page.locator('.breadcrumb [aria-current="page"]').textContent()).toBe(
      `Run ${execId}`,
    );
    expect(await timeline.locator('rect.task').count()).toBe(2);
    expect(await timeline.locator('rect.task.FAILED').count()).toBe(1);
    expect(await timeline.locator('text.state-label', { hasText: 'FAILED' }).count()).toBe(1);
    // 300 calls 1 s apart, each 2.5 s long: three lanes of overlapping calls, 120 bars drawn,
    // the other 180 counted per time bin in one row; the review task's wait for a person.
    expect(await timeline.locator('rect.call').count()).toBe(121);
    expect(await timeline.locator('text.lane-label', { hasText: '+180 more calls' }).count()).toBe(
      1,
    );
    expect(await timeline.locator('rect.call.human').count()).toBe(1);
    await timeline
      .locator('g.bar-button', { has: page.locator('rect.call') })
      .first()
      .click();
    await page.locator('.timeline-details pre', { hasText: /"chunk"\s*:\s*1\}/ }).waitFor();
    expect(await page.locator('.timeline-details h4').textContent()).toBe('SUMMARIZE_REPORT');
    await page
      .locator('figure.timeline-figure')
      .screenshot({ path: `${SCREENSHOTS}/console-run-timeline.png` });
  });

  test('the statistics page charts team-run activity, with hover values, and redraws when a run starts', async () => {
    const { page, requested } = await open(`${t.url}/console#/stats`);
    const bars = page.locator('svg.activity-bars');
    await bars.waitFor();
    expect(Number(await bars.getAttribute('data-started-total'))).toBeGreaterThan(0);
    expect(await bars.getAttribute('aria-label')).toMatch(
      /^Runs started per hour, by state: \d+ in 2[45] hours/,
    );
    expect(await page.locator('.legend li').allTextContents()).toEqual([
      ' SUCCEEDED',
      ' FAILED',
      ' RUNNING',
      ' RESUMING',
      ' WAITING_FOR_HUMAN',
    ]);
    await page.locator('svg.activity-trend polyline.p95').waitFor();
    const busy = bars.locator('g.bucket:not([data-started="0"])').last();
    await busy.hover();
    expect(await page.locator('.readout').textContent()).toMatch(/: \d+ started \(.*\); \d+ ended/);
    await page.screenshot({ path: `${SCREENSHOTS}/console-activity.png`, fullPage: true });

    // A run starts: the live query's new answer redraws the chart with it in the current hour,
    // and the page fetches nothing for it.
    const current = () => bars.locator('g.bucket').last().getAttribute('data-started');
    const before = Number(await current());
    await liveQueriesSettled(t.server, 2);
    const fetched = graphqlPosts(requested);
    await startRun(pg, {
      owner: 'APP_USER',
      teamName: REPORT,
      execId: `ACTIVITY_LIVE_${Date.now()}`,
    });
    await expect.poll(async () => Number(await current())).toBeGreaterThan(before);
    expect(graphqlPosts(requested)).toBe(fetched);
    await page.screenshot({ path: `${SCREENSHOTS}/console-activity-updated.png`, fullPage: true });

    // An agent executes elsewhere: the execution statistics count it, fetched by nobody.
    const executions = async () =>
      Number(
        (
          await page
            .locator('.exec-summary .card', { hasText: 'Executions' })
            .locator('.big')
            .textContent()
        )?.replaceAll(',', ''),
      );
    const executed = await executions();
    const agent = await t.post(`mutation { executeAgent(name: "REFUND_CHECKER", inputs: [
      { name: "order_id", value: "A-1001" }, { name: "amount", value: 25.5 },
      { name: "reason", value: "arrived broken" }]) { agentName } }`);
    expect(agent.errors).toBeUndefined();
    await expect.poll(executions).toBe(executed + 1);
    expect(graphqlPosts(requested)).toBe(fetched);
    await page.screenshot({ path: `${SCREENSHOTS}/console-37-stats-live.png`, fullPage: true });

    await page.getByRole('button', { name: 'Last 30 days' }).click();
    await page.locator('svg.activity-bars[aria-label^="Runs started per day"]').waitFor();
  });

  test('for a caller who owns no runs, the activity charts say there is nothing to draw', async () => {
    const token = await mintToken(secured.server.config.auth, {
      user: 'NOBODY',
      roles: [],
      expiresIn: '10m',
    });
    const { page } = await open(`${secured.url}/console#/stats`);
    await page.getByLabel('Access token').fill(token);
    await page.getByRole('button', { name: 'Use token' }).click();
    const bars = page.locator('svg.activity-bars');
    await bars.waitFor();
    expect(await bars.getAttribute('data-started-total')).toBe('0');
    expect(await bars.locator('text.empty').textContent()).toBe(
      'No runs started in these 25 hours.',
    );
    expect(await page.locator('svg.activity-trend text.empty').textContent()).toBe(
      'No run ended in this period.',
    );
    await page.screenshot({ path: `${SCREENSHOTS}/console-activity-empty.png`, fullPage: true });
  });

  test('a question in no known key reads as its values labelled by key, not as JSON', async () => {
    const execId = await waitingRun(pg);
    await pg.query(
      `UPDATE dba_ai_agent_tool_history SET input = $2 WHERE team_exec_id = $1 AND end_date IS NULL`,
      [execId, JSON.stringify({ film: 'Arrival', count: 2, genres: ['sci-fi', 'drama'] })],
    );
    const { page } = await open(`${t.url}/console#/run/${execId}`);
    const asked = page.locator('.question');
    await asked.waitFor();
    expect(await asked.locator('.asked').textContent()).toBe('The agent asks for input on:');
    expect(await asked.locator('dt').allTextContents()).toEqual(['film', 'count', 'genres']);
    expect(await asked.locator('dd').allTextContents()).toEqual([
      'Arrival',
      '2',
      '["sci-fi","drama"]',
    ]);
  });
});

/**
 * A failed run of the report team: a summarising task with `calls` tool calls one second
 * apart, each 2.5 s long, then a review task that waited for a person and failed.
 */
async function manyCallsRun(db: EmbeddedPg, calls: number): Promise<string> {
  const execId = `TIMELINE_${Date.now()}`;
  const t0 = new Date(Date.now() - 20 * 60_000);
  const at = (seconds: number) => new Date(t0.getTime() + seconds * 1000);
  const review = calls + 20;
  await db.query(
    `INSERT INTO dba_ai_agent_team_history (team_exec_id, team_name, team_owner, start_date, end_date, state, team_instance_id)
     VALUES ($1, $2, 'APP_USER', $3, $4, 'FAILED', 1)`,
    [execId, REPORT, t0, at(review + 120)],
  );
  await db.query(
    `INSERT INTO dba_ai_agent_task_history (team_exec_id, team_name, task_owner, agent_name, task_name, task_order, input, result, state, start_date, end_date)
     VALUES ($1, $2, 'APP_USER', 'SUMMARIZER', 'SUMMARIZE_TASK', 1, 'Summarize the upload', '{"status":"ok"}', 'SUCCEEDED', $3, $4),
            ($1, $2, 'APP_USER', 'REVIEWER', 'REVIEW_SUMMARY_TASK', 2, 'Review the summary', 'ORA-20404: no reviewer', 'FAILED', $4, $5)`,
    [execId, REPORT, t0, at(calls + 10), at(review + 110)],
  );
  await db.query(
    `INSERT INTO dba_ai_agent_tool_history (invocation_id, team_exec_id, task_order, tool_owner, tool_name, agent_name, task_name, start_date, end_date, input, output, tool_output)
     SELECT $1 || '_' || g, $1, 1, 'APP_USER', 'SUMMARIZE_REPORT', 'SUMMARIZER', 'SUMMARIZE_TASK',
       $2::timestamp + g * interval '1 second', $2::timestamp + g * interval '1 second' + interval '2.5 seconds',
       json_build_object('chunk', g)::text, '{"rows":1}', 'RAG call completed'
     FROM generate_series(1, $3::int) g`,
    [execId, t0, calls],
  );
  await db.query(
    `INSERT INTO dba_ai_agent_tool_history (invocation_id, team_exec_id, task_order, tool_owner, tool_name, agent_name, task_name, start_date, end_date, input, output, tool_output)
     VALUES ($1 || '_review', $1, 2, 'APP_USER', 'HUMAN_REVIEW', 'REVIEWER', 'REVIEW_SUMMARY_TASK', $2, $3,
       '{"question":"Approve this summary?"}', '{"answer":"reject"}', 'reviewer answered')`,
    [execId, at(review), at(review + 90)],
  );
  return execId;
}
