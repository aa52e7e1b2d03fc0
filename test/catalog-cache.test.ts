import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { TeamTool } from '../src/model/team.js';
import { ANONYMOUS_ADMIN, type Viewer } from '../src/model/viewer.js';
import { CatalogCache } from '../src/repositories/catalog-cache.js';
import { embeddedPg } from './live/support.js';
import { startTestServer, type TestServer } from './support/server.js';
import { hs256Tokens } from './support/tokens.js';

const tool = (teamName: string, name: string): TeamTool => ({
  teamName,
  teamOwner: 'APP_USER',
  toolId: null,
  name,
  owner: 'APP_USER',
  instruction: null,
  toolType: null,
  agentName: null,
  taskName: null,
});

/** A catalog read that records the teams each call asked for. */
function catalogReads() {
  const calls: string[][] = [];
  let version = 1;
  return {
    calls,
    bump: () => version++,
    read: async (names: readonly string[]) => {
      calls.push([...names]);
      return names.map((name) => [tool(name, `${name}_TOOL_V${version}`)]);
    },
  };
}

const OWNER_A: Viewer = { owner: 'A', admin: false, subject: 'a' };
const OWNER_B: Viewer = { owner: 'B', admin: false, subject: 'b' };

describe('CatalogCache', () => {
  test('reads only the teams it does not hold, and again once they are older than the TTL', async () => {
    let now = 1_000;
    const cache = new CatalogCache(60_000, () => now);
    const reads = catalogReads();
    const first = await cache.each(ANONYMOUS_ADMIN, 'tools', ['T1', 'T2'], reads.read);
    expect(first.map((tools) => tools.map((t) => t.name))).toEqual([
      ['T1_TOOL_V1'],
      ['T2_TOOL_V1'],
    ]);
    reads.bump();
    now += 59_999;
    const second = await cache.each(ANONYMOUS_ADMIN, 'tools', ['T2', 'T3', 'T1'], reads.read);
    expect(second.map((tools) => tools[0]?.name)).toEqual([
      'T2_TOOL_V1',
      'T3_TOOL_V2',
      'T1_TOOL_V1',
    ]);
    now += 1;
    const third = await cache.each(ANONYMOUS_ADMIN, 'tools', ['T1', 'T3'], reads.read);
    expect(third.map((tools) => tools[0]?.name)).toEqual(['T1_TOOL_V2', 'T3_TOOL_V2']);
    expect(reads.calls).toEqual([['T1', 'T2'], ['T3'], ['T1']]);
  });

  test('keeps each viewer scope apart: an owner never gets what another owner or an administrator read', async () => {
    const cache = new CatalogCache(60_000, () => 0);
    const reads = catalogReads();
    await cache.each(OWNER_A, 'tools', ['T1'], reads.read);
    await cache.each(OWNER_B, 'tools', ['T1'], reads.read);
    await cache.each(ANONYMOUS_ADMIN, 'tools', ['T1'], reads.read);
    await cache.each({ ...OWNER_A, subject: 'another token of A' }, 'tools', ['T1'], reads.read);
    expect(reads.calls).toEqual([['T1'], ['T1'], ['T1']]);
  });

  test('simultaneous requests share one read; a failed read is not kept', async () => {
    const cache = new CatalogCache(60_000, () => 0);
    const reads = catalogReads();
    const [a, b] = await Promise.all([
      cache.each(ANONYMOUS_ADMIN, 'tools', ['T1'], reads.read),
      cache.each(ANONYMOUS_ADMIN, 'tools', ['T1'], reads.read),
    ]);
    expect(a).toEqual(b);
    expect(reads.calls).toEqual([['T1']]);
    const failing = () => Promise.reject(new Error('ORA-03113'));
    await expect(cache.each(ANONYMOUS_ADMIN, 'tools', ['T9'], failing)).rejects.toThrow(
      'ORA-03113',
    );
    await cache.each(ANONYMOUS_ADMIN, 'tools', ['T9'], reads.read);
    expect(reads.calls).toEqual([['T1'], ['T9']]);
  });

  test('keeps kinds apart, and a read of one key (a page) as one entry', async () => {
    const cache = new CatalogCache(60_000, () => 0);
    const reads = catalogReads();
    await cache.each(ANONYMOUS_ADMIN, 'tools', ['T1'], reads.read);
    await cache.each(ANONYMOUS_ADMIN, 'team', ['T1'], reads.read);
    let pages = 0;
    const page = async () => ({ items: [`page ${++pages}`], totalCount: 1 });
    const first = await cache.one(ANONYMOUS_ADMIN, 'teams.page[null,null,0,21]', page);
    const again = await cache.one(ANONYMOUS_ADMIN, 'teams.page[null,null,0,21]', page);
    await cache.one(ANONYMOUS_ADMIN, 'teams.page[null,null,20,21]', page);
    await cache.one(OWNER_A, 'teams.page[null,null,0,21]', page);
    expect(again).toBe(first);
    expect([reads.calls, pages]).toEqual([[['T1'], ['T1']], 3]);
  });

  test('holds a bounded number of teams, dropping the oldest read; TTL 0 holds none', async () => {
    const cache = new CatalogCache(60_000, () => 0, 2);
    const reads = catalogReads();
    await cache.each(ANONYMOUS_ADMIN, 'tools', ['T1', 'T2', 'T3'], reads.read);
    await cache.each(ANONYMOUS_ADMIN, 'tools', ['T2', 'T3', 'T1'], reads.read);
    expect(reads.calls).toEqual([['T1', 'T2', 'T3'], ['T1']]);
    const off = new CatalogCache(0);
    await off.each(ANONYMOUS_ADMIN, 'tools', ['T1'], reads.read);
    await off.each(ANONYMOUS_ADMIN, 'tools', ['T1'], reads.read);
    expect(reads.calls).toHaveLength(4);
  });
});

describe('roots over teams with the catalog cached (default TEAM_TOOLS_CACHE_TTL_MS)', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(() => t.stop());

  /** The statements of `query` the first time and the next, with the same answer both times. */
  async function coldThenWarm(query: string): Promise<{ counts: number[]; data: unknown }> {
    let first: unknown;
    const cold = await t.countStatements(async () => {
      const result = await t.gql(query);
      expect(result.errors).toBeUndefined();
      first = result.data;
    });
    const warm = await t.countStatements(async () => {
      const result = await t.gql(query);
      expect(result.errors).toBeUndefined();
      expect(result.data).toEqual(first);
    });
    return { counts: [cold, warm], data: first };
  }

  test('the first dashboard reads the catalog, the next ones within the TTL only their runs, with the same answer', async () => {
    const { counts, data } = await coldThenWarm(
      '{ teams(first: 20) { nodes { name tools { name toolType instruction } runs(first: 2) { nodes { state tasks { taskName } } } } } }',
    );
    // teams, tools, the runs with their tasks; then the runs alone
    expect(counts).toEqual([3, 1]);
    const tools = (data as { teams: { nodes: { tools: unknown[] }[] } }).teams.nodes.flatMap(
      (team) => team.tools,
    );
    expect(tools.length).toBeGreaterThan(20);
  });

  test("the teams' waiting runs, and a team by name with its runs: one history statement once the teams are read", async () => {
    const waiting = await coldThenWarm(
      '{ teams(first: 20) { nodes { name waitingForHuman { execId startDate tasks { taskName state } } } } }',
    );
    // The page of twenty teams is the dashboard's (above): read once, by the first of them.
    expect(waiting.counts[1]).toBe(1);
    const named = await coldThenWarm(
      '{ team(name: "ORDER_SUPPORT_TEAM") { name runs(first: 10, filter: { states: [SUCCEEDED] }) { nodes { state tasks { taskName } } } } }',
    );
    expect(named.counts).toEqual([2, 1]);
    expect(named.data).toMatchObject({ team: { name: 'ORDER_SUPPORT_TEAM' } });
    // Another page is another read; the same page with other arguments is not the same read.
    const other = await coldThenWarm(
      '{ teams(first: 2, filter: { nameContains: "order" }) { nodes { name } } }',
    );
    expect(other.counts).toEqual([1, 0]);
    expect(
      (other.data as { teams: { nodes: { name: string }[] } }).teams.nodes.every((team) =>
        team.name.includes('ORDER'),
      ),
    ).toBe(true);
  });
});

describe("a plan's back-edges to the catalog (a run's team, a task's agent) with the catalog cached", () => {
  const SECRET = 'a-catalog-cache-secret-that-is-long-enough!';
  const tokens = hs256Tokens(SECRET);
  const VIEWERS: Record<string, Record<string, unknown>> = {
    admin: { roles: ['admin'] },
    APP_USER: { db_user: 'APP_USER' },
    OPS: { db_user: 'OPS' },
    NOBODY: { db_user: 'NOBODY' },
  };
  const BACK_EDGES = `{ toolCalls(first: 100) { nodes { invocationId toolName taskRun {
    taskName agent { name owner createTime } teamRun { state owner team { id name owner description } } } } } }`;
  const RECENT_RUNS =
    '{ teamRuns(first: 50) { nodes { execId teamName team { name } tasks { agentName agent { name } } } } }';
  type Calls = {
    toolCalls: {
      nodes: {
        taskRun: {
          agent: { name: string } | null;
          teamRun: { team: { name: string } | null } | null;
        } | null;
      }[];
    };
  };
  let cached: TestServer;
  let inline: TestServer;
  let dropped: { team: string; agent: string };
  beforeAll(async () => {
    const env = { AUTH_JWT_SECRET: SECRET };
    [cached, inline] = await Promise.all([
      startTestServer(env),
      startTestServer({ ...env, TEAM_TOOLS_CACHE_TTL_MS: '0' }),
    ]);
    // A team and an agent of the page dropped from the catalog, their history kept, before
    // the cached server reads anything (the other one keeps nothing).
    const page = (await ask(inline, 'admin', BACK_EDGES)).data as Calls;
    const task = page.toolCalls.nodes.find((call) => call.taskRun?.agent)?.taskRun;
    dropped = { team: task?.teamRun?.team?.name ?? '', agent: task?.agent?.name ?? '' };
    expect(dropped.team).not.toBe('');
    for (const server of [cached, inline]) {
      const pg = embeddedPg(server.server);
      await pg.query('DELETE FROM dba_ai_agent_teams WHERE agent_team_name = $1', [dropped.team]);
      await pg.query('DELETE FROM emb_agent_specs WHERE agent_name = $1', [dropped.agent]);
    }
  });
  afterAll(() => Promise.all([cached?.stop(), inline?.stop()]));

  /** The answer and the statements it cost, as `viewer`. */
  async function ask(server: TestServer, viewer: string, query: string) {
    const headers = await tokens.bearer(VIEWERS[viewer] ?? {});
    let data: unknown;
    const statements = await server.countStatements(async () => {
      const result = await server.post(query, {}, headers);
      expect(result.errors, viewer).toBeUndefined();
      data = result.data;
    });
    return { data, statements };
  }

  test('answer as the statement reads them, for every viewer; a cold catalog costs one statement per catalog, a warm one none', async () => {
    for (const viewer of Object.keys(VIEWERS)) {
      const expected = await ask(inline, viewer, BACK_EDGES);
      const cold = await ask(cached, viewer, BACK_EDGES);
      const warm = await ask(cached, viewer, BACK_EDGES);
      expect(cold.data, viewer).toEqual(expected.data);
      expect(warm.data, viewer).toEqual(expected.data);
      const calls = (expected.data as Calls).toolCalls.nodes;
      // The catalog read with the history: one statement.
      expect(expected.statements, viewer).toBe(1);
      if (viewer === 'NOBODY') {
        expect(calls).toEqual([]);
        expect([cold.statements, warm.statements]).toEqual([1, 1]);
        continue;
      }
      // The page of calls, then the teams and the agents its rows name (read for this
      // viewer's scope the first time); then the page alone.
      expect([cold.statements, warm.statements], viewer).toEqual([3, 1]);
      const tasks = calls.flatMap((call) => (call.taskRun ? [call.taskRun] : []));
      expect(tasks.some((task) => task.agent !== null)).toBe(true);
      expect(tasks.some((task) => task.teamRun?.team)).toBe(true);
    }
    // The dropped team's runs and the dropped agent's tasks are there, with no catalog row.
    const all = (await ask(cached, 'admin', BACK_EDGES)).data as Calls;
    const rows = all.toolCalls.nodes.flatMap((call) => (call.taskRun ? [call.taskRun] : []));
    expect(rows.some((task) => task.teamRun && task.teamRun.team === null)).toBe(true);
    expect(rows.some((task) => task.agent === null)).toBe(true);
    expect(JSON.stringify(all)).not.toContain(`"name":"${dropped.team}"`);
    expect(JSON.stringify(all)).not.toContain(`"name":"${dropped.agent}"`);
    // Another root: the teams and agents its rows name that no page read before, then nothing.
    const recent = await ask(inline, 'admin', RECENT_RUNS);
    const [cold, warm] = [
      await ask(cached, 'admin', RECENT_RUNS),
      await ask(cached, 'admin', RECENT_RUNS),
    ];
    expect([cold.data, warm.data]).toEqual([recent.data, recent.data]);
    expect(cold.statements).toBeLessThanOrEqual(3);
    expect(warm.statements).toBe(1);
  });
});
