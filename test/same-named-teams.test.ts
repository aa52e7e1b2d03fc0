/**
 * Two owners' teams of one name (issue 34, item 9). The DBA_ views list every owner's teams,
 * and the embedded demo holds ANALYST's and OPS's SALES_INSIGHT_TEAM: each is its own team,
 * with its own id, tools, runs (windows and totals), statistics and waiting runs. Checked
 * against the cross-team root `teamRuns`, whose owner filter is TEAM_OWNER itself.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type GqlResult, startTestServer, type TestServer } from './support/server.js';

const NAME = 'SALES_INSIGHT_TEAM';

let t: TestServer;
beforeAll(async () => {
  // The administrator (DBA_ views, every owner) with no tools cache: each read is the statement's.
  t = await startTestServer({ TEAM_TOOLS_CACHE_TTL_MS: '0' });
});
afterAll(() => t.stop());

interface Run {
  execId: string;
  owner: string;
  teamName: string;
}

interface TeamOfName {
  id: string;
  owner: string;
  name: string;
  tools: { name: string }[];
  stats: { runCount: number; runsByState: { state: string; count: number }[] };
  runs: { totalCount: number; nodes: Run[]; pageInfo: { endCursor: string } };
  waitingForHuman: Run[];
}

async function gql<T>(query: string, variables: Record<string, unknown> = {}): Promise<T> {
  const { data, errors }: GqlResult<T> = await t.gql<T>(query, variables);
  expect(errors).toBeUndefined();
  return data as T;
}

/** Every run of one owner's team, newest first, through the root's TEAM_OWNER filter. */
async function runsOf(owner: string, states?: string[]): Promise<Run[]> {
  const runs: Run[] = [];
  let after: string | null = null;
  for (;;) {
    const data: {
      teamRuns: { nodes: Run[]; pageInfo: { hasNextPage: boolean; endCursor: string } };
    } = await gql(
      `query($after: String, $filter: TeamRunFilter) {
        teamRuns(first: 100, after: $after, filter: $filter) {
          nodes { execId owner teamName } pageInfo { hasNextPage endCursor }
        }
      }`,
      { after, filter: { teamName: NAME, owner, states } },
    );
    runs.push(...data.teamRuns.nodes);
    if (!data.teamRuns.pageInfo.hasNextPage) return runs;
    after = data.teamRuns.pageInfo.endCursor;
  }
}

const TEAMS_OF_NAME = `query($after: String) {
  teams(filter: { nameContains: "${NAME}" }) {
    nodes {
      id owner name
      tools { name }
      stats { runCount runsByState { state count } }
      runs(first: 3, after: $after) {
        totalCount nodes { execId owner teamName } pageInfo { endCursor }
      }
      waitingForHuman { execId owner teamName }
    }
  }
}`;

/** The teams of the name, both in one operation (each field batched across them). */
async function teamsOfName(after: string | null = null): Promise<TeamOfName[]> {
  const data = await gql<{ teams: { nodes: TeamOfName[] } }>(TEAMS_OF_NAME, { after });
  return data.teams.nodes.filter((team) => team.name === NAME);
}

describe('two owners’ teams of one name (DBA_ views)', () => {
  test('the demo holds the pair: two teams, two ids, each with its own tools', async () => {
    const teams = await teamsOfName();
    expect(teams.map((team) => team.owner)).toEqual(['ANALYST', 'OPS']);
    expect(new Set(teams.map((team) => team.id)).size).toBe(2);
    expect(teams.map((team) => team.tools.map((tool) => tool.name))).toEqual([
      ['SALES_SQL', 'CHART_BUILDER'],
      ['SALES_FEED_SQL', 'SALES_FEED_SIGNOFF'],
    ]);
    // Each id finds its own team again.
    for (const team of teams) {
      const data = await gql<{ node: { owner: string; name: string } | null }>(
        'query($id: ID!) { node(id: $id) { ... on Team { owner name } } }',
        { id: team.id },
      );
      expect(data.node).toEqual({ owner: team.owner, name: NAME });
    }
  });

  test('each team has its own runs: windows, totals and statistics', async () => {
    const [analyst, ops] = [await runsOf('ANALYST'), await runsOf('OPS')];
    expect(analyst.length).toBeGreaterThan(3);
    expect(ops.length).toBeGreaterThan(3);
    // The first window, then the next: Team.runs' cursor is an offset, the same for both.
    const first = await teamsOfName();
    const next = await teamsOfName(first[0]?.runs.pageInfo.endCursor);
    for (const [offset, teams] of [
      [0, first],
      [3, next],
    ] as const) {
      for (const [team, own] of [
        [teams[0], analyst],
        [teams[1], ops],
      ] as const) {
        const label = `${team?.owner} from ${offset}`;
        expect(team?.runs.totalCount, label).toBe(own.length);
        expect(team?.runs.nodes, label).toEqual(own.slice(offset, offset + 3));
        expect(team?.stats.runCount, label).toBe(own.length);
        const counted = team?.stats.runsByState.reduce((sum, s) => sum + s.count, 0);
        expect(counted, label).toBe(own.length);
      }
    }
  });

  test('each team has its own waiting runs', async () => {
    const teams = await teamsOfName();
    const waiting = [
      await runsOf('ANALYST', ['WAITING_FOR_HUMAN']),
      await runsOf('OPS', ['WAITING_FOR_HUMAN']),
    ];
    // ANALYST's team has no HUMAN tool, so none of its runs waits; OPS's has one.
    expect(waiting[0]).toEqual([]);
    expect(waiting[1]?.length).toBeGreaterThan(0);
    const ids = (runs: readonly Run[]) => runs.map((run) => run.execId).sort();
    expect(ids(teams[0]?.waitingForHuman ?? [])).toEqual(ids(waiting[0] ?? []));
    expect(ids(teams[1]?.waitingForHuman ?? [])).toEqual(ids(waiting[1] ?? []));
  });

  test('a run’s team is its owner’s team of that name', async () => {
    const data = await gql<{
      teamRuns: { nodes: { owner: string; team: { owner: string; id: string } | null }[] };
    }>(
      `{ teamRuns(first: 100, filter: { teamName: "${NAME}" }) {
        nodes { owner team { owner id } } } }`,
    );
    const owners = new Set(data.teamRuns.nodes.map((run) => run.owner));
    expect(owners).toEqual(new Set(['ANALYST', 'OPS']));
    for (const run of data.teamRuns.nodes) expect(run.team?.owner).toBe(run.owner);
  });
});
