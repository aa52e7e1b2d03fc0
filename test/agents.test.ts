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
      const agent = served.find((a) => a.name === spec.name);
      if (agent?.owner !== 'APP_USER') {
        // DESCRIBE_AGENT addresses the session user's agents only: another owner's agent
        // is not described (its catalog row still gives its inputs).
        expect(agent).toMatchObject({ description: null, callContract: null, inputs: spec.inputs });
        continue;
      }
      expect(agent).toMatchObject({
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

describe('agents(last, before)', () => {
  const BACKWARD = `query($last: Int, $before: String, $first: Int) {
    agents(last: $last, before: $before, first: $first) {
      totalCount
      edges { cursor node { name owner } }
      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
    }
  }`;
  type BackwardPage = {
    agents: {
      totalCount: number;
      edges: { cursor: string; node: { name: string; owner: string } }[];
      pageInfo: {
        hasNextPage: boolean;
        hasPreviousPage: boolean;
        startCursor: string | null;
        endCursor: string | null;
      };
    };
  };

  test('paging backwards from the last agent yields every earlier agent once, in order', async () => {
    const [all] = await allAgentPages(100);
    const forward = all?.edges ?? [];
    expect(forward.length).toBeGreaterThanOrEqual(7);

    const pages: BackwardPage['agents'][] = [];
    let before = forward.at(-1)?.cursor;
    for (;;) {
      const { data, errors } = await t.gql<BackwardPage>(BACKWARD, { last: 3, before });
      expect(errors).toBeUndefined();
      const page = data?.agents;
      if (!page) throw new Error('no page');
      pages.unshift(page);
      if (!page.pageInfo.hasPreviousPage) break;
      before = page.pageInfo.startCursor ?? undefined;
    }
    const edges = pages.flatMap((page) => page.edges);
    expect(edges.map((e) => e.cursor)).toEqual(forward.slice(0, -1).map((e) => e.cursor));
    expect(edges.map((e) => e.node)).toEqual(
      forward.slice(0, -1).map((e) => ({ name: e.node.name, owner: e.node.owner })),
    );
    expect(pages.map((page) => page.edges.length)).toEqual(
      [...Array(pages.length)].map((_, i) => (i === 0 ? (forward.length - 1) % 3 || 3 : 3)),
    );
    expect(pages.every((page) => page.totalCount === all?.totalCount)).toBe(true);
    expect(pages.every((page) => page.pageInfo.hasNextPage)).toBe(true);
  });

  test('first and last together take the last items of the first page', async () => {
    const [all] = await allAgentPages(100);
    const { data, errors } = await t.gql<BackwardPage>(BACKWARD, { first: 5, last: 2 });
    expect(errors).toBeUndefined();
    expect(data?.agents.edges.map((e) => e.cursor)).toEqual(
      all?.edges.slice(3, 5).map((e) => e.cursor),
    );
    expect(data?.agents.pageInfo.hasPreviousPage).toBe(true);
  });

  test('last without before or first is BAD_USER_INPUT, and a backward page costs one statement', async () => {
    const { errors } = await t.gql(BACKWARD, { last: 2 });
    expect(errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(errors?.[0]?.message).toContain('"last" needs "before"');
    const [all] = await allAgentPages(100);
    const before = all?.edges.at(-1)?.cursor;
    expect(await t.countStatements(() => t.gql(BACKWARD, { last: 3, before }))).toBe(1);
  });
});

test('an agent of another owner named like one of the session user’s is not described as that one', async () => {
  const pg = t.server.database.embedded?.pg;
  if (!pg) throw new Error('the test server runs on the embedded database');
  await pg.query(
    `INSERT INTO emb_agent_specs (agent_id, owner, agent_name, create_time, description, inputs, outputs)
     SELECT 9001, 'ANALYST', agent_name, create_time, 'ANALYST''s own flow', inputs, outputs
     FROM emb_agent_specs WHERE owner = 'APP_USER' AND agent_name = 'ORDER_REQUEST_FLOW'`,
  );
  const [page] = await allAgentPages(100);
  const flows = (page?.edges.map((e) => e.node) ?? []).filter(
    (a) => a.name === 'ORDER_REQUEST_FLOW',
  );
  expect(flows.map((a) => [a.owner, a.description, a.callContract === null])).toEqual([
    ['ANALYST', null, true],
    ['APP_USER', null, false],
  ]);
});
