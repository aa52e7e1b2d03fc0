import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { subscribeSse, wsClient } from '../live/support.js';
import { startTestServer, type TestServer } from '../support/server.js';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.stop());

const MEGABYTE_NAME = 'A'.repeat(1_000_000);
const REPORT = 'REPORT_SUMMARY_AGENT_TEAM';

/** The longest log line the server wrote, in characters of its JSON. */
const longestLogLine = () => Math.max(...t.logs.map((entry) => JSON.stringify(entry).length));

describe('Oracle names are bounded at the edge (issue 25, item 1)', () => {
  test('a 1 MB team name in 15 aliases of team, agentCard and runTeam is BAD_USER_INPUT naming the limit, at once, and is never logged', async () => {
    const aliases = (field: string) =>
      Array.from({ length: 15 }, (_, i) => `a${i}: ${field}`).join('\n');
    for (const [operation, fields] of [
      ['query($n: String!)', aliases('team(name: $n) { name }')],
      ['query($n: String!)', aliases('agentCard(teamName: $n) { name }')],
      ['mutation($n: String!)', aliases('runTeam(teamName: $n, prompt: "hi") { conversationId }')],
    ] as const) {
      const health = fetch(`${t.url}/health`);
      const { errors, data } = await t.post(`${operation} { ${fields} }`, { n: MEGABYTE_NAME });
      expect(data ?? null).toBeNull();
      expect(errors).toHaveLength(1);
      expect(errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
      expect(errors?.[0]?.message).toMatch(
        /^Argument "(name|teamName)" must be an Oracle name: 1 to 128 bytes of UTF-8/,
      );
      expect(errors?.[0]?.message.length).toBeLessThan(300);
      expect((await health).status).toBe(200);
    }
    expect(longestLogLine()).toBeLessThan(4_000);
  });

  test('a long name in a cross-site GET (an <img src>) is refused the same way', async () => {
    // Node answers 431 to a request line and headers past 16 KB: this is as long as GET goes.
    const query = encodeURIComponent(`{ team(name: "${'B'.repeat(15_000)}") { name } }`);
    const response = await fetch(`${t.url}/graphql?query=${query}`, {
      headers: { accept: 'application/graphql-response+json', origin: 'https://evil.example' },
    });
    const body = (await response.json()) as {
      errors?: { message: string; extensions: { code: string } }[];
    };
    expect(body.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
    expect(body.errors?.[0]?.message).toContain('128 bytes');
    expect(longestLogLine()).toBeLessThan(4_000);
  });

  test('teamRunChanged(filter: { teamName }) and teamsWaitingForHuman(teamName) refuse it over WebSocket and SSE', async () => {
    const client = wsClient(t.url);
    try {
      const failure = await new Promise<unknown>((resolve) => {
        client.subscribe(
          {
            query:
              'subscription($n: String) { teamRunChanged(filter: { teamName: $n }) { state } }',
            variables: { n: 'C'.repeat(200_000) },
          },
          { next: resolve, error: resolve, complete: () => resolve('complete') },
        );
      });
      expect(JSON.stringify(failure)).toContain(
        'Argument \\"filter.teamName\\" must be an Oracle name: 1 to 128 bytes',
      );
    } finally {
      await client.dispose();
    }
    const sse = await subscribeSse<unknown>(
      t.url,
      'subscription($n: String) { teamsWaitingForHuman(teamName: $n) { execId } }',
      { n: 'D'.repeat(129) },
    );
    await sse.until(() => sse.events.length > 0);
    expect(JSON.stringify(sse.events[0])).toContain(
      'Argument \\"teamName\\" must be an Oracle name',
    );
    sse.close();
  });

  test.each([
    ['129 ASCII bytes', 'X'.repeat(129), 'got 129 bytes'],
    ['65 two-byte characters (130 bytes)', 'é'.repeat(65), 'got 130 bytes'],
    ['an empty name', '', 'it is blank'],
    ['a blank name', '   ', 'it is blank'],
    ['a double quote', 'A"B', 'U+0022'],
    ['a line feed', 'A\nB', 'U+000A'],
  ])('%s is refused in every Oracle-name argument', async (_, name, detail) => {
    for (const [query, argument] of [
      ['query($n: String!) { team(name: $n) { name } }', 'name'],
      ['query($n: String!) { agent(name: $n) { name } }', 'name'],
      ['query($n: String) { teams(filter: { owner: $n }) { totalCount } }', 'filter.owner'],
      [
        'query($n: String) { teamRuns(filter: { teamName: $n }) { totalCount } }',
        'filter.teamName',
      ],
      ['query($n: String) { teamRuns(filter: { owner: $n }) { totalCount } }', 'filter.owner'],
      [
        'query($n: String) { toolCalls(filter: { toolName: $n }) { totalCount } }',
        'filter.toolName',
      ],
      [
        'query($n: String) { toolCalls(filter: { agentName: $n }) { totalCount } }',
        'filter.agentName',
      ],
    ]) {
      const { errors, text } = await t.post(query as string, { n: name });
      expect(errors?.[0]?.extensions?.code, text).toBe('BAD_USER_INPUT');
      expect(errors?.[0]?.message, text).toContain(`Argument "${argument}" must be an Oracle name`);
      expect(errors?.[0]?.message, text).toContain(detail);
    }
  });

  test('128 bytes (64 two-byte characters) is a name: NOT_FOUND, not refused', async () => {
    const { errors } = await t.post('query($n: String!) { team(name: $n) { name } }', {
      n: 'é'.repeat(64),
    });
    expect(errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
  });

  test('keys (execId, conversationId, global ids) are bounded too, item by item in lists', async () => {
    const long = 'k'.repeat(257);
    for (const [query, argument] of [
      ['query($k: ID!) { teamRun(execId: $k) { execId } }', 'execId'],
      [
        'query($k: String) { teamRuns(filter: { conversationId: $k }) { totalCount } }',
        'filter.conversationId',
      ],
      [
        'query($k: ID) { toolCalls(filter: { teamExecId: $k }) { totalCount } }',
        'filter.teamExecId',
      ],
      ['query($k: ID!) { node(id: $k) { id } }', 'id'],
      ['query($k: ID!) { nodes(ids: ["VGVhbTpY", $k]) { id } }', 'ids[1]'],
      ['mutation($k: ID!) { respondToHuman(execId: $k, response: "yes") { execId } }', 'execId'],
    ]) {
      const { errors, text } = await t.post(query as string, { k: long });
      expect(errors?.[0]?.extensions?.code, text).toBe('BAD_USER_INPUT');
      expect(errors?.[0]?.message, text).toContain(
        `Argument "${argument}" must be an identifier: 1 to 256 bytes`,
      );
    }
  });

  test('the bound holds for literals in fragments as for variables, on every request of the document', async () => {
    // A literal's verdict is found once per document (hardening/argument-bounds.ts): the
    // document sent again is refused again.
    for (let i = 0; i < 2; i++) {
      const { errors } = await t.post(
        `query { ...F } fragment F on Query { teams(filter: { nameContains: "${'n'.repeat(129)}" }) { totalCount } }`,
      );
      expect(errors?.[0]?.message).toContain(
        'Argument "filter.nameContains" must be part of an Oracle name: at most 128 bytes',
      );
    }
  });

  test('an unknown name still gets its near miss, with one names statement for all the fields that miss', async () => {
    let data: unknown;
    const statements = await t.countStatements(async () => {
      const result = await t.post(
        `{ a: team(name: "REPORT_SUMMARY_AGENT_TEEM") { name } b: team(name: "report_summary_agent_team") { name } }`,
      );
      data = result.errors?.map((e) => e.message);
    });
    expect(data).toEqual([
      expect.stringContaining(`did you mean "${REPORT}"?`),
      expect.stringContaining(`did you mean "${REPORT}"?`),
    ]);
    // One look-up for both names (the loader batches them), one for the visible names.
    expect(statements).toBe(2);
  });

  test('an unknown team is the same NOT_FOUND, near miss included, by name, as a node and in nodes', async () => {
    const typo = 'REPORT_SUMMARY_AGENT_TEEM';
    const id = Buffer.from(`Team:${typo}`).toString('base64');
    const answers = await Promise.all([
      t.post(`{ team(name: "${typo}") { name } }`),
      t.post(`{ node(id: "${id}") { id } }`),
      t.post(`{ nodes(ids: ["${id}"]) { id } }`),
      t.post(`subscription { teamsWaitingForHuman(teamName: "${typo}") { execId } }`, undefined, {
        accept: 'application/json',
      }),
    ]);
    const expected = {
      message: `No agent team named "${typo}"; did you mean "${REPORT}"? Team names are exact and case-sensitive (names created unquoted are stored in upper case).`,
      extensions: { code: 'NOT_FOUND' },
    };
    for (const { errors, text } of answers) {
      expect(errors, text).toHaveLength(1);
      expect(errors?.[0], text).toMatchObject(expected);
    }
  });

  test('lists are bounded in length before any item is read (states, nodes ids)', async () => {
    for (const [query, variables, message] of [
      [
        'query($s: [TeamRunState!]) { teamRuns(filter: { states: $s }) { totalCount } }',
        { s: Array(100_000).fill('FAILED') },
        'Argument "filter.states" takes at most 5 items (got 100000)',
      ],
      [
        'query($i: [ID!]!) { nodes(ids: $i) { id } }',
        { i: Array(50_000).fill('x') },
        'Argument "ids" takes at most 100 items (got 50000)',
      ],
    ] as const) {
      const { errors } = await t.post(query, variables);
      expect(errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
      expect(errors?.[0]?.message).toBe(message);
    }
  });
});
