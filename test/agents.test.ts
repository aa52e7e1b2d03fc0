import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestServer, type TestServer } from './support/server.js';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.stop());

describe('agent(name:)', () => {
  test('returns the stored spec with the values DESCRIBE_AGENT returns (seed 000)', async () => {
    const { data, errors } = await t.gql(`{
      agent(name: "ORDER_REQUEST_FLOW") {
        name agentId owner createTime description
        inputs { title type } outputs { title type }
        callContract { inputFormat requiredKeys nameMatches }
      }
    }`);
    expect(errors).toBeUndefined();
    expect(data?.agent).toEqual({
      name: 'ORDER_REQUEST_FLOW',
      agentId: '1001',
      owner: 'APP_USER',
      createTime: '2026-08-20T12:34:56.000Z',
      description: null,
      inputs: [{ title: 'order_id', type: 'string' }],
      outputs: [{ title: 'order_id', type: 'string' }],
      callContract: {
        inputFormat: 'json_array_name_value_pairs',
        requiredKeys: ['name', 'value'],
        nameMatches: 'inputs[].title (exact match)',
      },
    });
  });

  test('costs one round trip', async () => {
    const count = await t.countStatements(() =>
      t.gql(
        '{ agent(name: "ORDER_ASSISTANT") { name agentId description callContract { inputFormat } } }',
      ),
    );
    expect(count).toBe(1);
  });

  test('an unknown name is NOT_FOUND, naming the agent', async () => {
    const { data, errors } = await t.gql('{ agent(name: "NO_SUCH_AGENT") { name } }');
    expect(data?.agent).toBeNull();
    expect(errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    expect(errors?.[0]?.message).toContain('NO_SUCH_AGENT');
  });
});

interface AgentNode {
  name: string;
  owner: string;
  createTime: string;
  description: string | null;
  inputs: { title: string; type: string | null }[];
  outputs: { title: string; type: string | null }[];
  callContract: { inputFormat: string; requiredKeys: string[]; nameMatches: string };
}

interface AgentPage {
  agents: {
    totalCount: number;
    edges: { cursor: string; node: AgentNode }[];
    pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; endCursor: string | null };
  };
}

const AGENT_PAGE = `query($first: Int, $after: String) {
  agents(first: $first, after: $after) {
    totalCount
    edges { cursor node {
      name owner createTime description
      inputs { title type } outputs { title type }
      callContract { inputFormat requiredKeys nameMatches }
    } }
    pageInfo { hasNextPage hasPreviousPage endCursor }
  }
}`;

async function allAgentPages(pageSize: number): Promise<AgentPage['agents'][]> {
  const pages: AgentPage['agents'][] = [];
  let after: string | null = null;
  for (;;) {
    const { data, errors } = await t.gql<AgentPage>(AGENT_PAGE, { first: pageSize, after });
    expect(errors).toBeUndefined();
    const page = data?.agents as AgentPage['agents'];
    pages.push(page);
    if (!page.pageInfo.hasNextPage) return pages;
    after = page.pageInfo.endCursor;
    expect(pages.length).toBeLessThan(100);
  }
}

describe('agents(first, after)', () => {
  test('paging with cursors yields every agent exactly once, by owner and name', async () => {
    const pages = await allAgentPages(2);
    const agents = pages.flatMap((p) => p.edges.map((e) => e.node));
    const totalCount = pages[0]?.totalCount ?? 0;

    expect(totalCount).toBeGreaterThanOrEqual(7);
    expect(pages.every((p) => p.totalCount === totalCount)).toBe(true);
    expect(pages.length).toBe(Math.ceil(totalCount / 2));
    expect(agents).toHaveLength(totalCount);
    expect(new Set(agents.map((a) => `${a.owner}.${a.name}`)).size).toBe(totalCount);

    // Code-point order, as Oracle's binary sort and the embedded database's C collation give.
    const keys = agents.map((a) => `${a.owner}\u0000${a.name}`);
    const sorted = [...keys].sort();
    expect(keys).toEqual(sorted);

    expect(pages[0]?.pageInfo.hasPreviousPage).toBe(false);
    expect(pages.slice(1).every((p) => p.pageInfo.hasPreviousPage)).toBe(true);
    expect(new Set(agents.map((a) => a.owner))).toEqual(new Set(['APP_USER', 'ANALYST', 'OPS']));
  });

  test('lists the seed agents with their spec values; description is null where the spec has none', async () => {
    const [page] = await allAgentPages(100);
    const byName = new Map(page?.edges.map((e) => [e.node.name, e.node]));

    expect(byName.get('ORDER_REQUEST_FLOW')).toMatchObject({
      owner: 'APP_USER',
      createTime: '2026-08-20T12:34:56.000Z',
      description: null,
      inputs: [{ title: 'order_id', type: 'string' }],
      outputs: [{ title: 'order_id', type: 'string' }],
    });
    const assistant = byName.get('ORDER_ASSISTANT');
    expect(assistant?.owner).toBe('APP_USER');
    expect(assistant?.description).toEqual(expect.any(String));
    expect(assistant?.inputs.map((i) => i.title)).toContain('order_id');
    expect([...byName.values()].some((a) => a.inputs.length >= 3)).toBe(true);
  });

  test('every agent matches what DBMS_AI_AGENT.LIST_AGENTS returns for it', async () => {
    const pg = t.server.database.embedded?.pg;
    if (!pg) throw new Error('the test server runs on the embedded database');
    const result = await pg.query<{ agents: string }>(
      'SELECT dbms_ai_agent.list_agents() AS agents',
    );
    const listed = JSON.parse(result.rows[0]?.agents ?? '[]') as Record<string, unknown>[];
    const [page] = await allAgentPages(100);
    const served = page?.edges.map((e) => e.node) ?? [];

    expect(served.map((a) => a.name).sort()).toEqual(listed.map((a) => a.name).sort());
    for (const spec of listed) {
      const contract = spec.call_contract as Record<string, unknown>;
      expect(served.find((a) => a.name === spec.name)).toMatchObject({
        createTime: `${spec.create_time}.000Z`,
        description: spec.description,
        inputs: spec.inputs,
        outputs: spec.outputs,
        callContract: {
          inputFormat: contract.input_format,
          requiredKeys: contract.required_keys,
          nameMatches: contract.name_matches,
        },
      });
    }
  });

  test('a page costs one statement, whatever its size', async () => {
    const small = await t.countStatements(() => t.gql(AGENT_PAGE, { first: 2 }));
    const large = await t.countStatements(() => t.gql(AGENT_PAGE, { first: 100 }));
    expect(small).toBe(1);
    expect(large).toBe(1);
  });

  test('a page after the last agent is empty but still counts the agents', async () => {
    const [page] = await allAgentPages(100);
    const last = page?.edges.at(-1)?.cursor;
    const { data, errors } = await t.gql<AgentPage>(AGENT_PAGE, { first: 5, after: last });
    expect(errors).toBeUndefined();
    expect(data?.agents.edges).toEqual([]);
    expect(data?.agents.totalCount).toBe(page?.totalCount);
    expect(data?.agents.pageInfo.hasNextPage).toBe(false);
  });
});
