/**
 * runTeam addresses the team by the owner it authorised: with a team of the same name in
 * the connected user's schema (APP_USER) and in ANALYST's, ANALYST's call starts a run of
 * ANALYST's team, and the job's RUN_TEAM call names it OWNER.NAME.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { EmbeddedPg } from '../../src/db/embedded/database.js';
import { embeddedPg } from '../live/support.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { hs256Tokens } from '../support/tokens.js';
import { REPORT } from './support.js';

const SECRET = 'a-run-team-owner-test-secret-long-enough!!';

let t: TestServer;
let pg: EmbeddedPg;
beforeAll(async () => {
  t = await startTestServer({ AUTH_JWT_SECRET: SECRET });
  pg = embeddedPg(t.server);
  // ANALYST's own team of the report team's name, with the same members.
  await pg.query(
    `INSERT INTO dba_ai_agent_teams (owner, agent_team_name, description, status)
     SELECT 'ANALYST', agent_team_name, 'ANALYST''s copy', status FROM dba_ai_agent_teams
     WHERE owner = 'APP_USER' AND agent_team_name = $1`,
    [REPORT],
  );
  await pg.query(
    `INSERT INTO dba_ai_agent_team_attributes (owner, agent_team_name, attribute_name, attribute_value)
     SELECT 'ANALYST', agent_team_name, attribute_name, attribute_value
     FROM dba_ai_agent_team_attributes WHERE owner = 'APP_USER' AND agent_team_name = $1`,
    [REPORT],
  );
});
afterAll(() => t.stop());

const { bearer } = hs256Tokens(SECRET);

const START = `mutation { runTeam(teamName: "${REPORT}", prompt: "Summarize the analysts' report") { conversationId } }`;

async function runsOf(owner: string): Promise<number> {
  const { rows } = await pg.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM dba_ai_agent_team_history WHERE team_owner = $1 AND team_name = $2',
    [owner, REPORT],
  );
  return rows[0]?.n ?? 0;
}

test('ANALYST starts a run of ANALYST’s team, not of the connected user’s team of that name', async () => {
  const [analystBefore, appUserBefore] = [await runsOf('ANALYST'), await runsOf('APP_USER')];
  const analyst = await bearer({ db_user: 'ANALYST' });
  const { data, errors } = await t.post<{ runTeam: { conversationId: string } }>(
    START,
    {},
    analyst,
  );
  expect(errors).toBeUndefined();
  const conversationId = data?.runTeam.conversationId as string;

  expect(await runsOf('ANALYST')).toBe(analystBefore + 1);
  expect(await runsOf('APP_USER')).toBe(appUserBefore);
  const found = await t.post<{ teamRuns: { nodes: { owner: string; teamName: string }[] } }>(
    'query($c: String!) { teamRuns(filter: { conversationId: $c }) { nodes { owner teamName } } }',
    { c: conversationId },
    analyst,
  );
  expect(found.data?.teamRuns.nodes).toEqual([{ owner: 'ANALYST', teamName: REPORT }]);

  const { rows } = await pg.query<{ owner: string; job_action: string }>(
    'SELECT owner, job_action FROM emb_scheduler_jobs WHERE conversation_id = $1',
    [conversationId],
  );
  expect(rows).toHaveLength(1);
  expect(rows[0]?.owner).toBe('ANALYST');
  expect(rows[0]?.job_action).toContain(`RUN_TEAM(team_name => 'ANALYST.${REPORT}', `);
});

test('the connected user’s own team keeps its bare name', async () => {
  const { data, errors } = await t.post<{ runTeam: { conversationId: string } }>(
    START,
    {},
    await bearer({ db_user: 'APP_USER' }),
  );
  expect(errors).toBeUndefined();
  const { rows } = await pg.query<{ owner: string; job_action: string }>(
    'SELECT owner, job_action FROM emb_scheduler_jobs WHERE conversation_id = $1',
    [data?.runTeam.conversationId],
  );
  expect(rows[0]?.owner).toBe('APP_USER');
  expect(rows[0]?.job_action).toContain(`RUN_TEAM(team_name => '${REPORT}', `);
});
