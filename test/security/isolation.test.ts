import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { hs256Tokens } from '../support/tokens.js';

const SECRET = 'a-test-secret-that-is-long-enough-for-hs256!';
const AUDIENCE = 'agent-graph-tests';

const { sign: token } = hs256Tokens(SECRET, { audience: AUDIENCE, issuedAt: true });

let t: TestServer;
const as: Record<'appUser' | 'analyst' | 'admin', string> = { appUser: '', analyst: '', admin: '' };

beforeAll(async () => {
  t = await startTestServer({ AUTH_JWT_SECRET: SECRET, AUTH_AUDIENCE: AUDIENCE });
  as.appUser = await token({ db_user: 'app_user', roles: ['viewer'] });
  as.analyst = await token({ db_user: 'ANALYST' });
  as.admin = await token({ roles: ['admin'] });
});
afterAll(() => t.stop());

interface Result<T> {
  status: number;
  data?: T;
  errors?: { message: string; extensions?: { code?: string } }[];
}

async function query<T = Record<string, unknown>>(
  bearer: string | null,
  source: string,
  variables?: Record<string, unknown>,
): Promise<Result<T>> {
  const response = await fetch(`${t.url}/graphql`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(bearer === null ? {} : { authorization: `Bearer ${bearer}` }),
    },
    body: JSON.stringify({ query: source, variables }),
  });
  return { status: response.status, ...((await response.json()) as object) };
}

const owners = (nodes: { owner: string }[] | undefined) =>
  [...new Set(nodes?.map((n) => n.owner))].sort();

describe('tokens', () => {
  test.each([
    ['no token', () => null],
    ['garbage', () => 'not.a.jwt'],
    [
      'a wrong signature',
      () => hs256Tokens(`${SECRET}-other`, { audience: AUDIENCE }).sign({ db_user: 'APP_USER' }),
    ],
    ['an expired token', () => token({ db_user: 'APP_USER' }, { expires: '-1m' })],
    ['the wrong audience', () => token({ db_user: 'APP_USER' }, { audience: 'someone-else' })],
    [
      'alg: none',
      () => {
        const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
        return `${encode({ alg: 'none', typ: 'JWT' })}.${encode({ db_user: 'APP_USER', aud: AUDIENCE, exp: Math.floor(Date.now() / 1000) + 300 })}.`;
      },
    ],
    ['no db_user and no admin role', () => token({ roles: ['viewer'] })],
    [
      'db_user "APP_UſER" (long s, which toUpperCase() turns into APP_USER)',
      () => token({ db_user: 'APP_UſER' }),
    ],
    ['db_user "APP_USER " (trailing space)', () => token({ db_user: 'APP_USER ' })],
    ['db_user "app_user" followed by a NUL', () => token({ db_user: 'app_user\u0000' })],
    ['db_user "ＡPP_USER" (full-width A)', () => token({ db_user: 'ＡPP_USER' })],
    ['db_user "App_User" in double quotes (a quoted name)', () => token({ db_user: '"App_User"' })],
    ['db_user 42 (not a string)', () => token({ db_user: 42 })],
  ])('%s → HTTP 401 UNAUTHENTICATED, and the token is not echoed', async (_case, make) => {
    const bearer = await make();
    const result = await query(bearer, '{ agents { totalCount } }');
    expect(result.status).toBe(401);
    expect(result.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    if (bearer) expect(JSON.stringify(result)).not.toContain(bearer);
  });

  test('the GraphiQL page itself loads without a token', async () => {
    const response = await fetch(`${t.url}/graphql`, { headers: { accept: 'text/html' } });
    expect(response.status).toBe(200);
    expect(await response.text()).toContain('agent-graph');
  });
});

describe('owner isolation', () => {
  const AGENTS = '{ agents(first: 100) { totalCount nodes { name owner } } }';

  test('agents: each owner sees exactly their own, the admin all', async () => {
    type Agents = { agents: { totalCount: number; nodes: { name: string; owner: string }[] } };
    const app = await query<Agents>(as.appUser, AGENTS);
    const analyst = await query<Agents>(as.analyst, AGENTS);
    const admin = await query<Agents>(as.admin, AGENTS);
    expect(app.data?.agents.nodes.map((a) => a.name).sort()).toEqual([
      'ORDER_ASSISTANT',
      'ORDER_REQUEST_FLOW',
      'REFUND_CHECKER',
    ]);
    expect(app.data?.agents.totalCount).toBe(3);
    expect(owners(analyst.data?.agents.nodes)).toEqual(['ANALYST']);
    expect(admin.data?.agents.totalCount).toBe(7);
    expect(owners(admin.data?.agents.nodes)).toEqual(['ANALYST', 'APP_USER', 'OPS']);
  });

  test('another owner’s agent, team, run, task and tool call are NOT_FOUND, by lookup and by node(id)', async () => {
    const { data } = await query<{
      team: {
        id: string;
        runs: {
          nodes: {
            id: string;
            execId: string;
            tasks: { id: string }[];
            toolCalls: { id: string }[];
          }[];
        };
      };
      agent: { id: string };
    }>(
      as.admin,
      `{ agent(name: "REPORT_SUMMARIZER") { id }
         team(name: "SALES_INSIGHT_TEAM") { id runs(first: 20, filter: { states: [SUCCEEDED] }) {
           nodes { id execId tasks { id } toolCalls { id } } } } }`,
    );
    const run = data?.team.runs.nodes.find((r) => r.toolCalls.length > 0);
    expect(run).toBeDefined();
    const lookups = await query(
      as.appUser,
      'query($id: ID!) { agent(name: "REPORT_SUMMARIZER") { name } team(name: "SALES_INSIGHT_TEAM") { name } teamRun(execId: $id) { execId } }',
      { id: run?.execId },
    );
    expect(lookups.data).toEqual({ agent: null, team: null, teamRun: null });
    expect(lookups.errors?.map((e) => e.extensions?.code)).toEqual([
      'NOT_FOUND',
      'NOT_FOUND',
      'NOT_FOUND',
    ]);

    const ids = [data?.agent.id, data?.team.id, run?.id, run?.tasks[0]?.id, run?.toolCalls[0]?.id];
    const nodes = await query<{ nodes: unknown[] }>(
      as.appUser,
      'query($ids: [ID!]!) { nodes(ids: $ids) { id } }',
      { ids },
    );
    expect(nodes.errors?.map((e) => e.extensions?.code)).toEqual(Array(5).fill('NOT_FOUND'));
    const mine = await query<{ nodes: unknown[] }>(
      as.analyst,
      'query($ids: [ID!]!) { nodes(ids: $ids) { id } }',
      { ids },
    );
    expect(mine.errors).toBeUndefined();
    expect(mine.data?.nodes).toHaveLength(5);
  });

  test('teams, runs and tool calls: lists, counts and nested fields stay within the owner', async () => {
    type Dashboard = {
      teams: {
        totalCount: number;
        nodes: {
          owner: string;
          stats: { runCount: number };
          runs: {
            totalCount: number;
            nodes: {
              owner: string;
              tasks: { agent: { owner: string } | null }[];
              toolCalls: { toolOwner: string }[];
            }[];
          };
        }[];
      };
      teamRuns: { totalCount: number; nodes: { owner: string }[] };
      toolCalls: { totalCount: number; nodes: { toolOwner: string }[] };
    };
    const DASHBOARD = `{
      teams(first: 100) { totalCount nodes { owner stats { runCount }
        runs(first: 20) { totalCount nodes { owner tasks { agent { owner } } toolCalls { toolOwner } } } } }
      teamRuns(first: 100) { totalCount nodes { owner } }
      toolCalls(first: 100) { totalCount nodes { toolOwner } }
    }`;
    const admin = await query<Dashboard>(as.admin, DASHBOARD);
    for (const [bearer, owner] of [
      [as.appUser, 'APP_USER'],
      [as.analyst, 'ANALYST'],
    ] as const) {
      const { data, errors } = await query<Dashboard>(bearer, DASHBOARD);
      expect(errors).toBeUndefined();
      expect(owners(data?.teams.nodes)).toEqual([owner]);
      expect(data?.teams.totalCount).toBe(
        admin.data?.teams.nodes.filter((n) => n.owner === owner).length,
      );
      for (const team of data?.teams.nodes ?? []) {
        expect(team.stats.runCount).toBe(team.runs.totalCount);
        for (const run of team.runs.nodes) {
          expect(run.owner).toBe(owner);
          for (const task of run.tasks) if (task.agent) expect(task.agent.owner).toBe(owner);
          for (const call of run.toolCalls) expect(call.toolOwner).toBe(owner);
        }
      }
      expect(owners(data?.teamRuns.nodes)).toEqual([owner]);
      const adminRuns = admin.data?.teams.nodes
        .filter((n) => n.owner === owner)
        .reduce((sum, n) => sum + n.runs.totalCount, 0);
      expect(data?.teamRuns.totalCount).toBe(adminRuns);
      expect(data?.toolCalls.nodes.every((c) => c.toolOwner === owner)).toBe(true);
      expect(data?.toolCalls.totalCount).toBeLessThan(admin.data?.toolCalls.totalCount ?? 0);
    }
    expect(owners(admin.data?.teamRuns.nodes).length).toBeGreaterThan(1);
  });

  test('owner filters are admin-only: FORBIDDEN for others, honoured for admins', async () => {
    for (const source of [
      '{ teams(filter: { owner: "OPS" }) { totalCount } }',
      '{ teamRuns(filter: { owner: "OPS" }) { totalCount } }',
    ]) {
      const denied = await query(as.appUser, source);
      expect(denied.errors?.[0]?.extensions?.code, source).toBe('FORBIDDEN');
      const allowed = await query<Record<string, { totalCount: number }>>(as.admin, source);
      expect(allowed.errors, source).toBeUndefined();
      expect(Object.values(allowed.data ?? {})[0]?.totalCount).toBeGreaterThan(0);
    }
  });

  test('A2A cards and listings: only the caller’s teams; another owner’s card is NOT_FOUND', async () => {
    const mine = await query<{ agentCard: { name: string } }>(
      as.appUser,
      '{ agentCard(teamName: "REPORT_SUMMARY_AGENT_TEAM") { name } }',
    );
    expect(mine.data?.agentCard.name).toBe('REPORT_SUMMARY_AGENT_TEAM');
    const theirs = await query(
      as.appUser,
      '{ agentCard(teamName: "SALES_INSIGHT_TEAM") { name } }',
    );
    expect(theirs.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    const listed = await query<{ a2aAgents: { team: { owner: string } | null }[] }>(
      as.appUser,
      '{ a2aAgents { team { owner } } }',
    );
    expect(listed.data?.a2aAgents.length).toBeGreaterThan(0);
    expect(listed.data?.a2aAgents.every((l) => l.team?.owner === 'APP_USER')).toBe(true);
    const all = await query<{ a2aAgents: unknown[] }>(as.admin, '{ a2aAgents { name } }');
    expect(all.data?.a2aAgents.length).toBeGreaterThan(listed.data?.a2aAgents.length ?? 0);
  });

  test('runtime statistics are admin-only by default; CLUSTER needs admin', async () => {
    const denied = await query(as.appUser, '{ execStatSummary { executionCount } }');
    expect(denied.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const rows = await query(as.analyst, '{ execStats(first: 1) { totalCount } }');
    expect(rows.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const admin = await query<{ execStatSummary: { executionCount: number } }>(
      as.admin,
      '{ execStatSummary(scope: CLUSTER) { executionCount } }',
    );
    expect(admin.data?.execStatSummary.executionCount).toBeGreaterThan(300);
  });
});

describe('tasks and tool calls follow their run', () => {
  const EXEC_ID = 'ISOLATION_MIXED_OWNERS_RUN';
  const INVOCATION_ID = 'ISOLATION_MIXED_OWNERS_CALL';

  beforeAll(async () => {
    const pg = t.server.database.embedded?.pg;
    if (!pg) throw new Error('embedded only');
    // APP_USER's run, whose task and tool call name ANALYST in their own owner columns
    // (a tool ANALYST shared, a task row written under another schema).
    await pg.query(
      `INSERT INTO dba_ai_agent_team_history VALUES ($1, 'REPORT_SUMMARY_AGENT_TEAM', 'APP_USER',
         now() - interval '1 minute', now(), 'SUCCEEDED', 1)`,
      [EXEC_ID],
    );
    await pg.query(
      `INSERT INTO dba_ai_agent_task_history (team_exec_id, team_name, task_owner, agent_name,
         task_name, task_order, state, start_date, end_date)
       VALUES ($1, 'REPORT_SUMMARY_AGENT_TEAM', 'ANALYST', 'REPORT_SUMMARIZER', 'SUMMARIZE', 1,
         'SUCCEEDED', now() - interval '1 minute', now())`,
      [EXEC_ID],
    );
    await pg.query(
      `INSERT INTO dba_ai_agent_tool_history (invocation_id, team_exec_id, task_order, tool_owner,
         tool_name, agent_name, task_name, start_date, end_date)
       VALUES ($1, $2, 1, 'ANALYST', 'SHARED_TOOL', 'REPORT_SUMMARIZER', 'SUMMARIZE',
         now() - interval '1 minute', now())`,
      [INVOCATION_ID, EXEC_ID],
    );
  });
  afterAll(async () => {
    const pg = t.server.database.embedded?.pg;
    await pg?.query('DELETE FROM dba_ai_agent_tool_history WHERE invocation_id = $1', [
      INVOCATION_ID,
    ]);
    await pg?.query('DELETE FROM dba_ai_agent_task_history WHERE team_exec_id = $1', [EXEC_ID]);
    await pg?.query('DELETE FROM dba_ai_agent_team_history WHERE team_exec_id = $1', [EXEC_ID]);
  });

  const RUN = `query ($id: ID!) {
    teamRun(execId: $id) { owner tasks { id taskName } toolCalls { id toolOwner } }
    toolCalls(first: 10, filter: { teamExecId: $id }) { totalCount nodes { invocationId } }
  }`;

  type Run = {
    teamRun: {
      owner: string;
      tasks: { id: string; taskName: string }[];
      toolCalls: { id: string; toolOwner: string }[];
    };
    toolCalls: { totalCount: number; nodes: { invocationId: string }[] };
  };

  test('the run’s owner sees its task and tool call, whatever their own owner columns say', async () => {
    const { data, errors } = await query<Run>(as.appUser, RUN, { id: EXEC_ID });
    expect(errors, JSON.stringify(errors)).toBeUndefined();
    expect(data?.teamRun.owner).toBe('APP_USER');
    expect(data?.teamRun.tasks.map((task) => task.taskName)).toEqual(['SUMMARIZE']);
    expect(data?.teamRun.toolCalls.map((call) => call.toolOwner)).toEqual(['ANALYST']);
    expect(data?.toolCalls).toEqual({ totalCount: 1, nodes: [{ invocationId: INVOCATION_ID }] });
  });

  test('the owner named on the task and tool call, who cannot see the run, sees neither', async () => {
    const admin = await query<Run>(as.admin, RUN, { id: EXEC_ID });
    const ids = [admin.data?.teamRun.tasks[0]?.id, admin.data?.teamRun.toolCalls[0]?.id];
    expect(ids.every(Boolean)).toBe(true);
    const nodes = await query(as.analyst, 'query($ids: [ID!]!) { nodes(ids: $ids) { id } }', {
      ids,
    });
    expect(nodes.errors?.map((e) => e.extensions?.code)).toEqual(['NOT_FOUND', 'NOT_FOUND']);
    const list = await query<{ toolCalls: { totalCount: number } }>(
      as.analyst,
      'query ($id: ID) { toolCalls(first: 10, filter: { teamExecId: $id }) { totalCount } }',
      { id: EXEC_ID },
    );
    expect(list.errors).toBeUndefined();
    expect(list.data?.toolCalls.totalCount).toBe(0);
  });
});

describe('STATS_PUBLIC', () => {
  let open: TestServer;
  beforeAll(async () => {
    open = await startTestServer({ AUTH_JWT_SECRET: SECRET, STATS_PUBLIC: 'true' });
  });
  afterAll(() => open.stop());

  test('opens instance statistics to every authenticated caller, not GV$', async () => {
    const bearer = await hs256Tokens(SECRET).sign({ db_user: 'APP_USER' });
    const ask = async (source: string) => {
      const response = await fetch(`${open.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${bearer}` },
        body: JSON.stringify({ query: source }),
      });
      return (await response.json()) as Result<{ execStatSummary: { executionCount: number } }>;
    };
    expect(
      (await ask('{ execStatSummary { executionCount } }')).data?.execStatSummary.executionCount,
    ).toBeGreaterThan(200);
    const cluster = await ask('{ execStatSummary(scope: CLUSTER) { executionCount } }');
    expect(cluster.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
  });
});

describe('anonymous access', () => {
  test('is refused on a non-loopback address unless ALLOW_ANONYMOUS=true', () => {
    expect(() => loadConfig({ HOST: '0.0.0.0' })).toThrow(ConfigError);
    expect(() => loadConfig({ HOST: '0.0.0.0' })).toThrow(/ALLOW_ANONYMOUS/);
    expect(loadConfig({ HOST: '0.0.0.0', ALLOW_ANONYMOUS: 'true' }).auth.allowAnonymous).toBe(true);
    expect(loadConfig({ HOST: '0.0.0.0', AUTH_JWT_SECRET: SECRET }).auth.jwt?.kind).toBe('secret');
    expect(loadConfig({ HOST: '::1' }).auth.jwt).toBeNull();
  });
});
