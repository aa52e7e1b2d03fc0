import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ANONYMOUS_ADMIN } from '../src/model/viewer.js';
import { type GqlResult, startTestServer, type TestServer } from './support/server.js';

let t: TestServer;
beforeAll(async () => {
  // "The count does not grow with the page sizes" asks for 100 teams × 100 runs with their
  // tasks and tool calls: a cost of about 1.4 million, far over the default MAX_QUERY_COST.
  // The level counts below read the tools catalog every time; test/catalog-cache.test.ts
  // pins what its cross-request cache saves.
  t = await startTestServer({ MAX_QUERY_COST: '2000000', TEAM_TOOLS_CACHE_TTL_MS: '0' });
});
afterAll(() => t.stop());

interface RunNode {
  execId: string;
  teamName: string;
  owner: string;
  state: string;
  startDate: string | null;
  endDate: string | null;
  durationMs: number | null;
}

interface RunPage {
  totalCount: number;
  nodes: RunNode[];
  pageInfo: { hasNextPage: boolean; endCursor: string };
}

const RUN_FIELDS = 'execId teamName owner state startDate endDate durationMs';

async function allRuns(filter: Record<string, unknown> = {}): Promise<RunNode[]> {
  const runs: RunNode[] = [];
  let after: string | null = null;
  for (;;) {
    const { data, errors }: GqlResult<{ teamRuns: RunPage }> = await t.gql(
      `query($after: String, $filter: TeamRunFilter) {
        teamRuns(first: 100, after: $after, filter: $filter) {
          nodes { ${RUN_FIELDS} } pageInfo { hasNextPage endCursor }
        }
      }`,
      { after, filter },
    );
    expect(errors).toBeUndefined();
    runs.push(...(data?.teamRuns.nodes ?? []));
    if (!data?.teamRuns.pageInfo.hasNextPage) return runs;
    after = data.teamRuns.pageInfo.endCursor;
  }
}

const DASHBOARD = (teams: number, runs: number) => `{
  teams(first: ${teams}) { edges { node { name tools { name }
    runs(first: ${runs}) { edges { node { state tasks { taskName agent { name }
      toolCalls { toolName } } } } } } } }
}`;

describe('round trips', () => {
  test('the dashboard query costs 3 statements: the history tree under the runs is one', async () => {
    // teams, team tools, the runs of all teams with their tasks, tool calls and the tasks'
    // agents (one windowed statement)
    const count = await t.countStatements(async () => {
      const { errors, data } = await t.gql<{ teams: { edges: unknown[] } }>(DASHBOARD(20, 10));
      expect(errors).toBeUndefined();
      expect(data?.teams.edges).toHaveLength(20);
    });
    expect(count).toBe(3);
  });

  test('the count does not grow with the page sizes', async () => {
    const small = await t.countStatements(() => t.gql(DASHBOARD(2, 1)));
    const large = await t.countStatements(() => t.gql(DASHBOARD(100, 100)));
    expect(small).toBe(3);
    expect(large).toBe(3);
  });

  test('two shapes of the same rows in one operation: one statement per history root, neither widening the other', async () => {
    // Each path reads only the columns its own selection needs (src/schema/plan.ts): `a` and
    // `b` ask the same runs, tasks and calls for different fields, each root in one statement.
    const shape = (fields: string) =>
      `teams(first: 5) { nodes { name runs(first: 2) { nodes { ${fields} } } } }`;
    const aFields = 'execId tasks { taskName } toolCalls { toolName }';
    const bFields =
      'state startDate tasks { taskOrder state agent { name } } toolCalls { invocationId durationMs }';
    type Shape = Record<'a' | 'b', { nodes: { runs: { nodes: Record<string, unknown>[] } }[] }>;
    const got: { data?: Shape | null } = {};
    const count = await t.countStatements(async () => {
      const result = await t.gql<Shape>(`{ a: ${shape(aFields)} b: ${shape(bFields)} }`);
      expect(result.errors).toBeUndefined();
      got.data = result.data;
    });
    // two root pages, then each root's runs with their tasks, tool calls and agents
    expect(count).toBe(4);
    const alone = async (fields: string) =>
      (await t.gql<{ teams: Shape['a'] }>(`{ ${shape(fields)} }`)).data?.teams;
    expect(got.data?.a).toEqual(await alone(aFields));
    expect(got.data?.b).toEqual(await alone(bFields));
    const runs = got.data?.b.nodes.flatMap((team) => team.runs.nodes) ?? [];
    expect(runs.length).toBeGreaterThan(5);
    for (const run of runs) {
      expect(run.state).toEqual(expect.any(String));
      expect(run.startDate).toEqual(expect.any(String));
    }
  });

  test('texts and agent details asked through fragments come back, in the same statements', async () => {
    // The dashboard's own selection reads none of the large columns (test/sql/dashboard.sql
    // pins that); asking for them switches the whole level, never adds a statement.
    interface Texts {
      teams: {
        nodes: {
          runs: {
            nodes: {
              execId: string;
              tasks: {
                taskOrder: number;
                input: string | null;
                result: string | null;
                conversationParams: unknown;
                agent: { name: string; description: string | null } | null;
                toolCalls: { invocationId: string; input: string | null; output: string | null }[];
              }[];
            }[];
          };
        }[];
      };
    }
    const got: { data?: Texts } = {};
    const count = await t.countStatements(async () => {
      const result = await t.gql<Texts>(
        `{ teams(first: 20) { nodes { runs(first: 3) { nodes { execId tasks { ...Texts
            agent { name ... on Agent { description } } toolCalls { invocationId ...CallTexts } } } } } } }
         fragment Texts on TaskRun { taskOrder input result conversationParams }
         fragment CallTexts on ToolCall { input output }`,
      );
      expect(result.errors).toBeUndefined();
      got.data = result.data ?? undefined;
    });
    // teams, the runs with their tasks and tool calls, agents with DESCRIBE_AGENT (which the
    // runs' statement does not call)
    expect(count).toBe(3);
    const runs = got.data?.teams.nodes.flatMap((team) => team.runs.nodes) ?? [];
    const { history, agents } = t.server.repositoriesFor(ANONYMOUS_ADMIN);
    const ids = runs.map((run) => run.execId);
    const stored = (await history.tasksOf(ids)).flat();
    const served = runs.flatMap((run) => run.tasks);
    const texts = (task: Omit<(typeof served)[number], 'agent' | 'toolCalls'>) => [
      task.taskOrder,
      task.input,
      task.result,
      task.conversationParams,
    ];
    expect(served.map(texts)).toEqual(stored.map(texts));
    expect(stored.some((task) => task.input !== null && task.result !== null)).toBe(true);
    const callTexts = (call: {
      invocationId: string;
      input: string | null;
      output: string | null;
    }) => [call.invocationId, call.input, call.output].join('|');
    expect(served.flatMap((task) => task.toolCalls.map(callTexts)).sort()).toEqual(
      (await history.toolCallsOf(ids)).flat().map(callTexts).sort(),
    );
    expect(served.some((task) => task.toolCalls.some((call) => call.output !== null))).toBe(true);
    // DESCRIBE_AGENT describes only the session user's agents (docs/oracle.md), so the task
    // compared is one whose agent the database describes.
    const withAgent = served.find((task) => task.agent?.description != null);
    const [agent] = await agents.byNames([withAgent?.agent?.name ?? '']);
    expect(agent?.description).toBeTruthy();
    expect(withAgent?.agent?.description).toBe(agent?.description);
  });

  test('tasks, tool calls and agents read with the runs answer as their own loaders do, past the first page too', async () => {
    // The runs' statement carries their tasks and calls and primes the loaders the fields ask;
    // teamRun(execId) reads the same lists through those loaders' own statements.
    const first = await t.gql<{
      teams: { nodes: { runs: { pageInfo: { endCursor: string } } }[] };
    }>('{ teams(first: 20) { nodes { runs(first: 2) { pageInfo { endCursor } } } } }');
    const after = first.data?.teams.nodes[0]?.runs.pageInfo.endCursor;
    expect(after).toEqual(expect.any(String));
    const RUN = `execId state tasks { taskOrder taskName state agent { name owner createTime }
        toolCalls { invocationId toolName } }
      toolCalls { invocationId taskOrder durationMs }`;
    type Run = {
      execId: string;
      tasks: { agent: { name: string } | null; toolCalls: unknown[] }[];
      toolCalls: unknown[];
    };
    const got: { runs: Run[] } = { runs: [] };
    const count = await t.countStatements(async () => {
      const result = await t.gql<{ teams: { nodes: { runs: { nodes: Run[] } }[] } }>(
        `{ teams(first: 20) { nodes { runs(first: 3, after: "${after}") { nodes { ${RUN} } } } } }`,
      );
      expect(result.errors).toBeUndefined();
      got.runs = result.data?.teams.nodes.flatMap((team) => team.runs.nodes) ?? [];
    });
    // teams, and the runs with their tasks, tool calls and the tasks' agents
    expect(count).toBe(2);
    expect(got.runs.length).toBeGreaterThan(20);
    const tasks = got.runs.flatMap((run) => run.tasks);
    expect(tasks.some((task) => task.toolCalls.length > 0)).toBe(true);
    // Tasks whose agent is a stored Agent Spec and tasks whose agent is not (null).
    expect(tasks.some((task) => task.agent !== null)).toBe(true);
    expect(tasks.some((task) => task.agent === null)).toBe(true);
    const alone = await Promise.all(
      got.runs.map(async (run) => {
        const result = await t.gql<{ teamRun: Run }>(
          `query($id: ID!) { teamRun(execId: $id) { ${RUN} } }`,
          { id: run.execId },
        );
        expect(result.errors).toBeUndefined();
        return result.data?.teamRun;
      }),
    );
    expect(got.runs).toEqual(alone);
  });

  test('a batch over the 1,000-key IN-list limit is split, never rejected', async () => {
    const ids = Array.from({ length: 2500 }, (_, i) => `NO_SUCH_RUN_${i}`);
    const { history } = t.server.repositoriesFor(ANONYMOUS_ADMIN);
    const count = await t.countStatements(async () => {
      const found = await history.runsByIds(ids);
      expect(found).toHaveLength(2500);
      expect(found.every((run) => run === null)).toBe(true);
    });
    expect(count).toBe(3);
  });
});

describe('teams', () => {
  test('team(name) returns the catalog values of seed 001', async () => {
    const { data, errors } = await t.gql(`{
      team(name: "REPORT_SUMMARY_AGENT_TEAM") {
        name owner description tools { name instruction toolType toolId }
      }
    }`);
    expect(errors).toBeUndefined();
    expect(data?.team).toMatchObject({
      name: 'REPORT_SUMMARY_AGENT_TEAM',
      owner: 'APP_USER',
      description: 'Summarizes uploaded reports and answers follow-up questions',
    });
    const tools =
      (data?.team as { tools: { name: string; instruction: string; toolId: string }[] } | undefined)
        ?.tools ?? [];
    expect(tools.find((tool) => tool.name === 'SUMMARIZE_REPORT')).toMatchObject({
      instruction: 'Summarize uploaded reports and answer follow-up questions',
      toolType: 'RAG',
    });
    expect(tools.every((tool) => /^\d+$/.test(tool.toolId))).toBe(true);
  });

  test('a team without a description has a null description', async () => {
    const { data } = await t.gql('{ team(name: "MOVIE_RECOMMENDER_TEAM") { description } }');
    expect(data?.team).toEqual({ description: null });
  });

  test('unknown team is NOT_FOUND', async () => {
    const { data, errors } = await t.gql('{ team(name: "NO_SUCH_TEAM") { name } }');
    expect(data?.team).toBeNull();
    expect(errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    expect(errors?.[0]?.message).toContain('NO_SUCH_TEAM');
  });

  test('filters by part of the name, case-insensitively, and by owner', async () => {
    const { data } = await t.gql<{
      teams: { totalCount: number; nodes: { name: string; owner: string }[] };
    }>(
      '{ teams(first: 100, filter: { nameContains: "order" }) { totalCount nodes { name owner } } }',
    );
    expect(data?.teams.nodes.map((n) => n.name)).toEqual(['ORDER_SUPPORT_TEAM']);
    const byOwner = await t.gql<{ teams: { totalCount: number; nodes: { owner: string }[] } }>(
      '{ teams(first: 100, filter: { owner: "OPS" }) { totalCount nodes { owner } } }',
    );
    expect(byOwner.data?.teams.totalCount).toBeGreaterThan(1);
    expect(byOwner.data?.teams.nodes.every((n) => n.owner === 'OPS')).toBe(true);
  });

  test('LIKE wildcards in nameContains match literally', async () => {
    const { data } = await t.gql(
      '{ teams(first: 10, filter: { nameContains: "%" }) { totalCount } }',
    );
    expect(data?.teams).toEqual({ totalCount: 0 });
  });

  test('stats agree with the runs themselves', async () => {
    const runs = await allRuns({ teamName: 'ORDER_SUPPORT_TEAM' });
    const { data } = await t.gql<{
      team: {
        stats: {
          runCount: number;
          successRate: number | null;
          durationP50Ms: number | null;
          runsByState: { state: string; count: number }[];
          humanWaitCount: number;
        };
      };
    }>(
      '{ team(name: "ORDER_SUPPORT_TEAM") { stats { runCount successRate durationP50Ms humanWaitCount runsByState { state count } } } }',
    );
    const stats = data?.team.stats;
    expect(stats?.runCount).toBe(runs.length);
    for (const { state, count } of stats?.runsByState ?? []) {
      expect(count).toBe(runs.filter((r) => r.state === state).length);
    }
    const succeeded = runs.filter((r) => r.state === 'SUCCEEDED').length;
    const failed = runs.filter((r) => r.state === 'FAILED').length;
    // Ratios to 3 decimals, milliseconds to 0.1, for the people reading them.
    expect(stats?.successRate).toBe(Math.round((1000 * succeeded) / (succeeded + failed)) / 1000);
    const durations = runs
      .map((r) => r.durationMs)
      .filter((d): d is number => d !== null)
      .sort((a, b) => a - b);
    const mid = (durations.length - 1) / 2;
    const median = ((durations[Math.floor(mid)] ?? 0) + (durations[Math.ceil(mid)] ?? 0)) / 2;
    expect(stats?.durationP50Ms).toBe(Math.round(median * 10) / 10);
    expect(stats?.humanWaitCount).toBeGreaterThan(0);
  });

  test('waitingForHuman lists exactly the team’s paused runs', async () => {
    const waiting = await allRuns({
      teamName: 'REPORT_SUMMARY_AGENT_TEAM',
      states: ['WAITING_FOR_HUMAN'],
    });
    const { data } = await t.gql<{
      team: { waitingForHuman: { execId: string; state: string }[] };
    }>('{ team(name: "REPORT_SUMMARY_AGENT_TEAM") { waitingForHuman { execId state } } }');
    expect(waiting.length).toBeGreaterThan(0);
    expect(data?.team.waitingForHuman.map((r) => r.execId).sort()).toEqual(
      waiting.map((r) => r.execId).sort(),
    );
  });

  test('Team.runs pages through one team’s runs, newest first', async () => {
    // team(name:) finds the first of the name by owner: ANALYST's, not OPS's of that name.
    const all = await allRuns({ teamName: 'SALES_INSIGHT_TEAM', owner: 'ANALYST' });
    const seen: string[] = [];
    let after: string | null = null;
    for (;;) {
      const { data }: GqlResult<{ team: { runs: RunPage } }> = await t.gql(
        `query($after: String) { team(name: "SALES_INSIGHT_TEAM") {
          runs(first: 3, after: $after) { totalCount nodes { ${RUN_FIELDS} } pageInfo { hasNextPage endCursor } } } }`,
        { after },
      );
      const runs: RunPage | undefined = data?.team.runs;
      expect(runs?.totalCount).toBe(all.length);
      seen.push(...(runs?.nodes.map((n) => n.execId) ?? []));
      if (!runs?.pageInfo.hasNextPage) break;
      after = runs.pageInfo.endCursor;
    }
    expect(seen).toHaveLength(all.length);
    expect(new Set(seen).size).toBe(all.length);
  });
});

describe('team runs', () => {
  test('at least 200 runs over all five states, with ended runs having an end date', async () => {
    const runs = await allRuns();
    expect(runs.length).toBeGreaterThanOrEqual(200);
    expect(new Set(runs.map((r) => r.state))).toEqual(
      new Set(['RUNNING', 'WAITING_FOR_HUMAN', 'RESUMING', 'SUCCEEDED', 'FAILED']),
    );
    for (const run of runs) {
      const ended = run.state === 'SUCCEEDED' || run.state === 'FAILED';
      expect(run.endDate !== null).toBe(ended);
      expect(run.durationMs !== null).toBe(ended);
    }
  });

  test('filters by team, states, start window and owner', async () => {
    // Between 20 and 10 days ago: inside the demo's 30 days of history.
    const daysAgo = (days: number) => new Date(Date.now() - days * 24 * 3600 * 1000).toISOString();
    const after = daysAgo(20);
    const before = daysAgo(10);
    const runs = await allRuns({
      states: ['SUCCEEDED', 'FAILED'],
      startedAfter: after,
      startedBefore: before,
      owner: 'ANALYST',
    });
    expect(runs.length).toBeGreaterThan(0);
    for (const run of runs) {
      expect(['SUCCEEDED', 'FAILED']).toContain(run.state);
      expect(run.owner).toBe('ANALYST');
      expect(run.startDate && run.startDate >= after && run.startDate < before).toBe(true);
    }
    const everything = await allRuns();
    const expected = everything.filter(
      (r) =>
        ['SUCCEEDED', 'FAILED'].includes(r.state) &&
        r.owner === 'ANALYST' &&
        r.startDate !== null &&
        r.startDate >= after &&
        r.startDate < before,
    );
    expect(runs.map((r) => r.execId).sort()).toEqual(expected.map((r) => r.execId).sort());
  });

  test('orders by start date, newest first by default', async () => {
    const { data } = await t.gql<{ teamRuns: { nodes: RunNode[] } }>(
      `{ teamRuns(first: 50) { nodes { ${RUN_FIELDS} } } }`,
    );
    const starts = data?.teamRuns.nodes.map((n) => n.startDate ?? '') ?? [];
    expect(starts).toEqual([...starts].sort().reverse());
    const asc = await t.gql<{ teamRuns: { nodes: RunNode[] } }>(
      `{ teamRuns(first: 50, orderBy: { field: START_DATE, direction: ASC }) { nodes { ${RUN_FIELDS} } } }`,
    );
    const ascStarts = asc.data?.teamRuns.nodes.map((n) => n.startDate ?? '') ?? [];
    expect(ascStarts).toEqual([...ascStarts].sort());
  });

  test('teamRun(execId) returns tasks in order with their tool calls', async () => {
    const [run] = await allRuns({ teamName: 'ORDER_SUPPORT_TEAM', states: ['SUCCEEDED'] });
    const { data, errors } = await t.gql<{
      teamRun: {
        execId: string;
        team: { name: string };
        tasks: {
          teamExecId: string;
          taskOrder: number;
          agentName: string;
          agent: { name: string } | null;
          conversationId: string;
          conversationParams: { conversation_id: string };
          toolCalls: { teamExecId: string; taskOrder: number; taskRun: { taskOrder: number } }[];
        }[];
        toolCalls: { invocationId: string }[];
      };
    }>(
      `query($id: ID!) { teamRun(execId: $id) { execId team { name }
        tasks { teamExecId taskOrder agentName agent { name } conversationId conversationParams
          toolCalls { teamExecId taskOrder taskRun { taskOrder } } }
        toolCalls { invocationId } } }`,
      { id: run?.execId },
    );
    expect(errors).toBeUndefined();
    const teamRun = data?.teamRun;
    expect(teamRun?.team.name).toBe('ORDER_SUPPORT_TEAM');
    const orders = teamRun?.tasks.map((task) => task.taskOrder) ?? [];
    expect(orders).toEqual([...orders].sort((a, b) => a - b));
    let callsViaTasks = 0;
    for (const task of teamRun?.tasks ?? []) {
      expect(task.teamExecId).toBe(run?.execId);
      expect(task.conversationId).toBe(task.conversationParams.conversation_id);
      // Stored agents exist for ORDER_ASSISTANT and REFUND_CHECKER, not for other members.
      expect(task.agent?.name ?? null).toBe(
        ['ORDER_ASSISTANT', 'REFUND_CHECKER'].includes(task.agentName) ? task.agentName : null,
      );
      for (const call of task.toolCalls) {
        expect(call).toMatchObject({
          teamExecId: run?.execId,
          taskOrder: task.taskOrder,
          taskRun: { taskOrder: task.taskOrder },
        });
        callsViaTasks++;
      }
    }
    expect(teamRun?.toolCalls).toHaveLength(callsViaTasks);
  });

  test('unknown execId is NOT_FOUND', async () => {
    const { data, errors } = await t.gql('{ teamRun(execId: "NOPE") { execId } }');
    expect(data?.teamRun).toBeNull();
    expect(errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
  });
});

describe('tool calls', () => {
  test('filter by tool, agent and run', async () => {
    const { data } = await t.gql<{
      toolCalls: {
        totalCount: number;
        nodes: { toolName: string; agentName: string; teamExecId: string }[];
      };
    }>(
      '{ toolCalls(first: 100, filter: { toolName: "SUMMARIZE_REPORT", agentName: "SUMMARIZER" }) { totalCount nodes { toolName agentName teamExecId } } }',
    );
    expect(data?.toolCalls.totalCount).toBeGreaterThan(0);
    expect(
      data?.toolCalls.nodes.every(
        (c) => c.toolName === 'SUMMARIZE_REPORT' && c.agentName === 'SUMMARIZER',
      ),
    ).toBe(true);
    const execId = data?.toolCalls.nodes[0]?.teamExecId;
    const ofRun = await t.gql<{ toolCalls: { nodes: { teamExecId: string }[] } }>(
      'query($id: ID!) { toolCalls(first: 100, filter: { teamExecId: $id }) { nodes { teamExecId } } }',
      { id: execId },
    );
    expect(ofRun.data?.toolCalls.nodes.length).toBeGreaterThan(0);
    expect(ofRun.data?.toolCalls.nodes.every((c) => c.teamExecId === execId)).toBe(true);
  });
});

describe('global object identification', () => {
  test('node(id) finds every type by the id it reports', async () => {
    const { data } = await t.gql<{
      agent: { id: string };
      team: {
        id: string;
        runs: { nodes: { id: string; tasks: { id: string }[]; toolCalls: { id: string }[] }[] };
      };
    }>(`{
      agent(name: "ORDER_ASSISTANT") { id }
      team(name: "ORDER_SUPPORT_TEAM") { id runs(first: 5, filter: { states: [SUCCEEDED] }) { nodes { id tasks { id } toolCalls { id } } } }
    }`);
    const run = data?.team.runs.nodes.find((r) => r.toolCalls.length > 0);
    const ids = [data?.agent.id, data?.team.id, run?.id, run?.tasks[0]?.id, run?.toolCalls[0]?.id];
    const { data: nodes, errors } = await t.gql<{ nodes: { __typename: string; id: string }[] }>(
      'query($ids: [ID!]!) { nodes(ids: $ids) { __typename id } }',
      { ids },
    );
    expect(errors).toBeUndefined();
    expect(nodes?.nodes.map((n) => n.__typename)).toEqual([
      'Agent',
      'Team',
      'TeamRun',
      'TaskRun',
      'ToolCall',
    ]);
    expect(nodes?.nodes.map((n) => n.id)).toEqual(ids);
  });

  test('nodes: an unknown id is NOT_FOUND in its place, and one statement reads the rest and a root look-up', async () => {
    const teamId = (name: string) => Buffer.from(`Team:${name}`).toString('base64');
    const ids = [
      teamId('ORDER_SUPPORT_TEAM'),
      teamId('NO_SUCH_TEAM'),
      teamId('MOVIE_RECOMMENDER_TEAM'),
    ];
    let result:
      | GqlResult<{ nodes: ({ name: string } | null)[]; team: { name: string } }>
      | undefined;
    const statements = await t.countStatements(async () => {
      result = await t.gql(
        'query($ids: [ID!]!) { nodes(ids: $ids) { ... on Team { name } } team(name: "ORDER_SUPPORT_TEAM") { name } }',
        { ids },
      );
    });
    expect(result?.data?.nodes).toEqual([
      { name: 'ORDER_SUPPORT_TEAM' },
      null,
      { name: 'MOVIE_RECOMMENDER_TEAM' },
    ]);
    expect(result?.data?.team).toEqual({ name: 'ORDER_SUPPORT_TEAM' });
    expect(result?.errors?.map((e) => [e.path, e.extensions?.code])).toEqual([
      [['nodes', 1], 'NOT_FOUND'],
    ]);
    // One for the rows; the miss adds one for the visible names behind its "did you mean"
    // (read once per request, as for team(name): src/repositories/teams.ts `unknown`).
    expect(statements).toBe(2);
  });
});

describe('bad input', () => {
  test('startedAfter later than startedBefore is BAD_USER_INPUT', async () => {
    const { errors } = await t.gql(
      '{ teamRuns(filter: { startedAfter: "2026-09-20T00:00:00Z", startedBefore: "2026-09-10T00:00:00Z" }) { totalCount } }',
    );
    expect(errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });

  test('a malformed date, an unknown state and a malformed cursor are BAD_USER_INPUT', async () => {
    for (const query of [
      '{ teamRuns(filter: { startedAfter: "yesterday" }) { totalCount } }',
      '{ teamRuns(filter: { states: [SLEEPING] }) { totalCount } }',
      '{ teamRuns(after: "not-a-cursor") { totalCount } }',
    ]) {
      const { errors } = await t.gql(query);
      expect(errors?.[0]?.extensions?.code, query).toBe('BAD_USER_INPUT');
    }
    const viaVariables = await t.gql(
      'query($s: [TeamRunState!]) { teamRuns(filter: { states: $s }) { totalCount } }',
      {
        s: ['SLEEPING'],
      },
    );
    expect(viaVariables.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });

  test('filter values are binds: an injection attempt finds nothing and breaks nothing', async () => {
    const injection = "X' OR '1'='1";
    const { data, errors } = await t.gql<{
      teamRuns: { totalCount: number };
      teams: { totalCount: number };
    }>(
      'query($n: String!) { teamRuns(filter: { teamName: $n }) { totalCount } teams(filter: { nameContains: $n }) { totalCount } }',
      { n: injection },
    );
    expect(errors).toBeUndefined();
    expect(data).toEqual({ teamRuns: { totalCount: 0 }, teams: { totalCount: 0 } });
    const team = await t.gql('query($n: String!) { team(name: $n) { name } }', { n: injection });
    expect(team.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
  });
});
