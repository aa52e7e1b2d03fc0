import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { EmbeddedPg } from '../../src/db/embedded/database.js';
import { setRunState, startRun } from '../../src/db/embedded/simulator.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { WAIT_MS } from '../support/wait.js';
import {
  embeddedPg,
  goodCycles,
  metric,
  settled,
  sleep,
  subscribeSse,
  subscribeWs,
  until,
  wsClient,
} from './support.js';

const INTERVAL = 100;
const OVERLAP = 150;

let t: TestServer;
let pg: EmbeddedPg;

// USER_ scope: the poller reads the USER_AI_AGENT_TEAM_HISTORY view, which the test can take
// away and give back while runs keep changing in the DBA_ table underneath.
beforeAll(async () => {
  t = await startTestServer({
    POLL_INTERVAL_MS: String(INTERVAL),
    POLL_OVERLAP_MS: String(OVERLAP),
    ORACLE_VIEW_SCOPE: 'user',
  });
  pg = embeddedPg(t.server);
});
afterAll(() => t.stop());

async function newRun(teamName: string): Promise<string> {
  const execId = randomUUID().replaceAll('-', '').toUpperCase();
  await startRun(pg, { owner: 'APP_USER', teamName, execId });
  return execId;
}

interface Change {
  teamRunChanged: { previousState: string | null; state: string; run: { execId: string } };
}

interface Waiting {
  teamsWaitingForHuman: { execId: string }[];
}

const errorCycles = () => metric(t.server, 'agentgraph_poll_cycles_total', { outcome: 'error' });

test('a database outage mid-stream loses no event, invents none, and keeps subscriptions open', async () => {
  const paused = await newRun('REPORT_SUMMARY_AGENT_TEAM');
  const finished = await newRun('ORDER_SUPPORT_TEAM');
  const client = wsClient(t.url);
  const changes = subscribeWs<Change>(
    client,
    'subscription { teamRunChanged { previousState state run { execId } } }',
  );
  const waiting = await subscribeSse<Waiting>(
    t.url,
    'subscription { teamsWaitingForHuman(teamName: "REPORT_SUMMARY_AGENT_TEAM") { execId } }',
  );
  await settled(t.server, 2);
  await setRunState(pg, paused, 'WAITING_FOR_HUMAN');
  await changes.take(1);
  await waiting.until(() =>
    waiting.data.some((set) => set.teamsWaitingForHuman.some((run) => run.execId === paused)),
  );
  const setsBefore = waiting.events.length;

  await pg.exec('ALTER VIEW user_ai_agent_team_history RENAME TO user_ai_agent_team_history_gone');
  const errorsBefore = await errorCycles();
  await until(async () => (await errorCycles()) >= errorsBefore + 2, WAIT_MS, 'failed cycles');

  // During the outage: a round trip through the human loop (seen only as its net change), a
  // run that ends, and a run that starts and ends unseen. Then the outage outlasts the
  // overlap, so only a window that starts at the last good cycle still finds the ended runs.
  await setRunState(pg, paused, 'RESUMING');
  await setRunState(pg, paused, 'RUNNING');
  await setRunState(pg, finished, 'SUCCEEDED');
  const unseen = await newRun('MOVIE_RECOMMENDER_TEAM');
  await setRunState(pg, unseen, 'FAILED');
  await sleep(OVERLAP * 3);
  expect(changes.events).toHaveLength(1);
  expect(changes.completed || changes.errors.length > 0).toBe(false);
  const lookupsBefore = await metric(t.server, 'agentgraph_db_statements_total', {
    statement: 'teamRuns.byIds',
  });

  await pg.exec('ALTER VIEW user_ai_agent_team_history_gone RENAME TO user_ai_agent_team_history');
  await changes.take(4);
  const cycles = await goodCycles(t.server);
  await until(async () => (await goodCycles(t.server)) >= cycles + 3);

  const seen = changes.data
    .slice(1)
    .map((c) => [
      c.teamRunChanged.run.execId,
      c.teamRunChanged.previousState,
      c.teamRunChanged.state,
    ]);
  expect(seen.sort()).toEqual(
    [
      [paused, 'WAITING_FOR_HUMAN', 'RUNNING'],
      [finished, 'RUNNING', 'SUCCEEDED'],
      [unseen, null, 'FAILED'],
    ].sort(),
  );
  // Found by the window from the last good cycle, not by the by-id safety net.
  expect(
    await metric(t.server, 'agentgraph_db_statements_total', { statement: 'teamRuns.byIds' }),
  ).toBe(lookupsBefore);
  // The waiting set changed once across the outage: the paused run left it.
  await waiting.take(setsBefore + 1);
  expect(waiting.events).toHaveLength(setsBefore + 1);
  expect(waiting.data.at(-1)?.teamsWaitingForHuman.some((run) => run.execId === paused)).toBe(
    false,
  );

  // The same subscriptions carry on.
  await setRunState(pg, paused, 'SUCCEEDED');
  await changes.take(5);
  expect(changes.completed || waiting.completed).toBe(false);

  changes.close();
  waiting.close();
  await client.dispose();
});
