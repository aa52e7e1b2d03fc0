import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { TeamTool } from '../src/model/team.js';
import { ANONYMOUS_ADMIN, type Viewer } from '../src/model/viewer.js';
import { TeamToolsCache } from '../src/repositories/team-tools-cache.js';
import { startTestServer, type TestServer } from './support/server.js';

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

describe('TeamToolsCache', () => {
  test('reads only the teams it does not hold, and again once they are older than the TTL', async () => {
    let now = 1_000;
    const cache = new TeamToolsCache(60_000, () => now);
    const reads = catalogReads();
    const first = await cache.toolsOf(ANONYMOUS_ADMIN, ['T1', 'T2'], reads.read);
    expect(first.map((tools) => tools.map((t) => t.name))).toEqual([
      ['T1_TOOL_V1'],
      ['T2_TOOL_V1'],
    ]);
    reads.bump();
    now += 59_999;
    const second = await cache.toolsOf(ANONYMOUS_ADMIN, ['T2', 'T3', 'T1'], reads.read);
    expect(second.map((tools) => tools[0]?.name)).toEqual([
      'T2_TOOL_V1',
      'T3_TOOL_V2',
      'T1_TOOL_V1',
    ]);
    now += 1;
    const third = await cache.toolsOf(ANONYMOUS_ADMIN, ['T1', 'T3'], reads.read);
    expect(third.map((tools) => tools[0]?.name)).toEqual(['T1_TOOL_V2', 'T3_TOOL_V2']);
    expect(reads.calls).toEqual([['T1', 'T2'], ['T3'], ['T1']]);
  });

  test('keeps each viewer scope apart: an owner never gets what another owner or an administrator read', async () => {
    const cache = new TeamToolsCache(60_000, () => 0);
    const reads = catalogReads();
    await cache.toolsOf(OWNER_A, ['T1'], reads.read);
    await cache.toolsOf(OWNER_B, ['T1'], reads.read);
    await cache.toolsOf(ANONYMOUS_ADMIN, ['T1'], reads.read);
    await cache.toolsOf({ ...OWNER_A, subject: 'another token of A' }, ['T1'], reads.read);
    expect(reads.calls).toEqual([['T1'], ['T1'], ['T1']]);
  });

  test('simultaneous requests share one read; a failed read is not kept', async () => {
    const cache = new TeamToolsCache(60_000, () => 0);
    const reads = catalogReads();
    const [a, b] = await Promise.all([
      cache.toolsOf(ANONYMOUS_ADMIN, ['T1'], reads.read),
      cache.toolsOf(ANONYMOUS_ADMIN, ['T1'], reads.read),
    ]);
    expect(a).toEqual(b);
    expect(reads.calls).toEqual([['T1']]);
    const failing = () => Promise.reject(new Error('ORA-03113'));
    await expect(cache.toolsOf(ANONYMOUS_ADMIN, ['T9'], failing)).rejects.toThrow('ORA-03113');
    await cache.toolsOf(ANONYMOUS_ADMIN, ['T9'], reads.read);
    expect(reads.calls).toEqual([['T1'], ['T9']]);
  });

  test('holds a bounded number of teams, dropping the oldest read; TTL 0 holds none', async () => {
    const cache = new TeamToolsCache(60_000, () => 0, 2);
    const reads = catalogReads();
    await cache.toolsOf(ANONYMOUS_ADMIN, ['T1', 'T2', 'T3'], reads.read);
    await cache.toolsOf(ANONYMOUS_ADMIN, ['T2', 'T3', 'T1'], reads.read);
    expect(reads.calls).toEqual([['T1', 'T2', 'T3'], ['T1']]);
    const off = new TeamToolsCache(0);
    await off.toolsOf(ANONYMOUS_ADMIN, ['T1'], reads.read);
    await off.toolsOf(ANONYMOUS_ADMIN, ['T1'], reads.read);
    expect(reads.calls).toHaveLength(4);
  });
});

describe('the dashboard with the tools catalog cached (default TEAM_TOOLS_CACHE_TTL_MS)', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(() => t.stop());

  test('the first dashboard reads the catalog, the next ones within the TTL do not, with the same answer', async () => {
    const dashboard =
      '{ teams(first: 20) { nodes { name tools { name toolType instruction } runs(first: 2) { nodes { state tasks { taskName } } } } } }';
    let first: unknown;
    const cold = await t.countStatements(async () => {
      const result = await t.gql(dashboard);
      expect(result.errors).toBeUndefined();
      first = result.data;
    });
    const warm = await t.countStatements(async () => {
      const result = await t.gql(dashboard);
      expect(result.errors).toBeUndefined();
      expect(result.data).toEqual(first);
    });
    // teams, tools, the runs with their tasks; then the same without the tools
    expect([cold, warm]).toEqual([3, 2]);
    const tools = (first as { teams: { nodes: { tools: unknown[] }[] } }).teams.nodes.flatMap(
      (team) => team.tools,
    );
    expect(tools.length).toBeGreaterThan(20);
  });
});
