import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { wsClient } from './live/support.js';
import { startTestServer, type TestServer } from './support/server.js';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.stop());

const cursor = (text: string) => Buffer.from(text).toString('base64url');

/** Runs the operation over HTTP and returns its only error, which must have the code. */
async function onlyError(
  query: string,
  variables?: Record<string, unknown>,
  code = 'BAD_USER_INPUT',
) {
  const { errors, text } = await t.post(query, variables);
  expect(errors, text).toHaveLength(1);
  const [error] = errors ?? [];
  expect(error?.extensions?.code, text).toBe(code);
  return error as { message: string };
}

describe('page arguments', () => {
  test.each([
    ['agents', 101],
    ['agents', -1],
    ['execStats', 101],
    ['execStats', -1],
  ])('%s(first: %i) is BAD_USER_INPUT naming "first"', async (field, first) => {
    const error = await onlyError(`{ ${field}(first: ${first}) { totalCount } }`);
    expect(error.message).toContain('"first"');
    expect(error.message).toContain(String(first));
  });

  test('first: 100 is the largest page accepted', async () => {
    const { errors } = await t.post('{ execStats(first: 100) { totalCount } }');
    expect(errors).toBeUndefined();
  });

  test.each([
    ['not base64 at all', '!!!'],
    ['garbage', 'garbage'],
    ['a negative offset', cursor('offset:-5')],
    ['a non-numeric offset', cursor('offset:abc')],
    ['another kind of cursor', cursor('arrayconnection:3')],
  ])('a malformed cursor (%s) is BAD_USER_INPUT naming "after"', async (_, after) => {
    for (const field of ['agents', 'execStats']) {
      const error = await onlyError(
        `query($after: String) { ${field}(first: 2, after: $after) { totalCount } }`,
        { after },
      );
      expect(error.message).toContain('"after"');
    }
  });
});

describe('enums', () => {
  test('an unknown enum literal is BAD_USER_INPUT naming the argument and the value', async () => {
    const error = await onlyError('{ execStats(scope: GALAXY) { totalCount } }');
    expect(error.message).toBe(
      'Argument "scope": Value "GALAXY" does not exist in "ExecStatScope" enum.',
    );
    // The second time the document comes from the validation cache: same message.
    const again = await onlyError('{ execStats(scope: GALAXY) { totalCount } }');
    expect(again.message).toBe(error.message);
  });

  test('an unknown enum value nested in an input object names its path', async () => {
    const error = await onlyError(
      '{ execStats(orderBy: { field: SPEED, direction: DESC }) { totalCount } }',
    );
    expect(error.message).toContain('"orderBy.field"');
    expect(error.message).toContain('SPEED');
  });

  test('an unknown enum value in a variable is BAD_USER_INPUT naming the variable', async () => {
    const error = await onlyError(
      'query($scope: ExecStatScope!) { execStatSummary(scope: $scope) { executionCount } }',
      { scope: 'GALAXY' },
    );
    expect(error.message).toContain('$scope');
    expect(error.message).toContain('GALAXY');
  });
});

describe('DateTime', () => {
  test('a date that is not ISO-8601 is BAD_USER_INPUT naming the argument or variable', async () => {
    const literal = await onlyError(
      '{ teamRuns(filter: { startedAfter: "yesterday" }) { totalCount } }',
    );
    expect(literal.message).toContain('Argument "filter.startedAfter"');
    expect(literal.message).toContain(
      'DateTime must be an ISO-8601 date-time string with an offset (e.g. 2026-08-20T12:34:56.000Z), got "yesterday"',
    );
    const variable = await onlyError(
      'query($after: DateTime) { teamRuns(filter: { startedAfter: $after }) { totalCount } }',
      { after: 'yesterday' },
    );
    expect(variable.message).toContain('Variable "$after" got invalid value "yesterday"');
    expect(variable.message).toContain('DateTime must be an ISO-8601 date-time string');
  });
});

describe('other input', () => {
  test('instId with INSTANCE scope is BAD_USER_INPUT: V$AGENT_EXEC_STAT has no instance column', async () => {
    for (const query of [
      '{ execStats(scope: INSTANCE, filter: { instId: 1 }) { totalCount } }',
      '{ execStatSummary(filter: { instId: 1 }) { executionCount } }',
    ]) {
      const error = await onlyError(query);
      expect(error.message).toContain('instId');
      expect(error.message).toContain('CLUSTER');
    }
  });

  test('an unknown agent is NOT_FOUND, naming it', async () => {
    const error = await onlyError('{ agent(name: "NO_SUCH_AGENT") { name } }', {}, 'NOT_FOUND');
    expect(error.message).toContain('NO_SUCH_AGENT');
  });

  test('a syntax error and an unknown field are BAD_USER_INPUT', async () => {
    await onlyError('{ agents(first: 2) { totalCount }');
    const error = await onlyError('{ agents(first: 2) { totalCount colour } }');
    expect(error.message).toContain('colour');
  });
});

describe('values no database can hold', () => {
  const RUNS =
    'query ($filter: TeamRunFilter) { teamRuns(first: 5, filter: $filter) { totalCount } }';

  test.each([
    ['a variable', RUNS, { filter: { teamName: 'ORDER\u0000TEAM' } }],
    [
      'a literal (\\u0000 escape)',
      '{ teamRuns(first: 5, filter: { teamName: "ORDER\\u0000TEAM" }) { totalCount } }',
      {},
    ],
    ['an owner filter', RUNS, { filter: { owner: 'APP\u0000USER' } }],
    [
      'a lookup by name',
      'query ($name: String!) { agent(name: $name) { name } }',
      { name: 'A\u0000' },
    ],
  ])(
    'a NUL byte in %s is BAD_USER_INPUT, and no statement runs',
    async (_where, query, variables) => {
      let message = '';
      const statements = await t.countStatements(async () => {
        message = (await onlyError(query, variables)).message;
      });
      expect(message).toBe('Strings may not contain NUL (U+0000)');
      expect(statements).toBe(0);
    },
  );

  test('a NUL byte in a subscription’s variable over graphql-ws is BAD_USER_INPUT, and no statement runs', async () => {
    const client = wsClient(t.url);
    let outcome: unknown[] = [];
    const statements = await t.countStatements(async () => {
      outcome = await new Promise<unknown[]>((resolve) => {
        const seen: unknown[] = [];
        client.subscribe(
          {
            query:
              'subscription ($team: String) { teamsWaitingForHuman(teamName: $team) { execId } }',
            variables: { team: 'ORDER\u0000TEAM' },
          },
          {
            next: (value) => seen.push(value),
            error: (error) => resolve([...seen, error]),
            complete: () => resolve(seen),
          },
        );
      });
    });
    await client.dispose();
    expect(outcome).toEqual([
      {
        errors: [
          {
            message: 'Strings may not contain NUL (U+0000)',
            extensions: { code: 'BAD_USER_INPUT' },
          },
        ],
      },
    ]);
    expect(statements).toBe(0);
  });

  test.each(['TeamRun:\u0000x', 'Agent:A\u0000'])(
    'a global ID that decodes to %j (NUL inside) is BAD_USER_INPUT, and no statement runs',
    async (raw) => {
      const id = Buffer.from(raw).toString('base64');
      let message = '';
      const statements = await t.countStatements(async () => {
        message = (await onlyError('query ($id: ID!) { node(id: $id) { id } }', { id })).message;
      });
      expect(message).toBe(`Invalid global ID: ${id}`);
      expect(statements).toBe(0);
    },
  );

  test.each([
    '0000-01-01T00:00:00Z',
    '+275760-09-13T00:00:00Z',
    '-000001-01-01T00:00:00Z',
    '9999-12-31T23:30:00-01:00',
    '0001-01-01T00:00:00+01:00',
  ])(
    'DateTime %s (outside years 1–9999 UTC) is BAD_USER_INPUT, and no statement runs',
    async (date) => {
      let message = '';
      const statements = await t.countStatements(async () => {
        message = (await onlyError(RUNS, { filter: { startedAfter: date } })).message;
      });
      expect(message).toContain(
        `DateTime must be between 0001-01-01T00:00:00Z and 9999-12-31T23:59:59.999Z, got "${date}"`,
      );
      expect(statements).toBe(0);
    },
  );

  test('the first and last instants of the range are accepted', async () => {
    const { data, errors } = await t.post(
      'query ($filter: TeamRunFilter) { teamRuns(first: 1, filter: $filter) { totalCount } }',
      {
        filter: { startedAfter: '0001-01-01T00:00:00Z', startedBefore: '9999-12-31T23:59:59.999Z' },
      },
    );
    expect(errors).toBeUndefined();
    expect(data).toMatchObject({ teamRuns: { totalCount: expect.any(Number) } });
  });
});

describe('DateTime takes only what its description promises', () => {
  const RUNS =
    'query ($filter: TeamRunFilter) { teamRuns(first: 1, filter: $filter) { totalCount } }';

  test.each([
    'Dec 1 2026',
    '1',
    '2026-02-30T00:00:00Z',
    '2026-08-20T24:00:00Z',
    '2026-08-20T12:34:56',
    '2026-08-20',
    '2026-08-20T12:34:56+25:00',
  ])('%j is BAD_USER_INPUT, and no statement runs', async (date) => {
    let message = '';
    const statements = await t.countStatements(async () => {
      message = (await onlyError(RUNS, { filter: { startedAfter: date } })).message;
    });
    expect(message).toContain(
      `DateTime must be an ISO-8601 date-time string with an offset (e.g. 2026-08-20T12:34:56.000Z), got ${JSON.stringify(date)}`,
    );
    expect(statements).toBe(0);
  });

  test.each([
    ['2026-08-20T12:34:56.000Z', '2026-08-20T12:34:56.000Z'],
    ['2026-08-20T12:34Z', '2026-08-20T12:34:00.000Z'],
    ['2026-08-20t12:34:56.123456789+02:00', '2026-08-20T10:34:56.123Z'],
    ['2028-02-29T00:00:00-05:30', '2028-02-29T05:30:00.000Z'],
  ])('%j is the instant %s', async (date, instant) => {
    const { data, errors } = await t.post<{ teamRunActivity: { from: string } }>(
      'query ($from: DateTime) { teamRunActivity(bucket: DAY, from: $from, to: "2028-03-01T00:00:00Z") { from } }',
      { from: date },
    );
    expect(errors).toBeUndefined();
    expect(data?.teamRunActivity.from).toBe(instant);
  });
});

const RUNS_BY_TEAM =
  'query ($filter: TeamRunFilter) { teamRuns(first: 5, filter: $filter) { totalCount } }';

describe('values no string may hold, and variables nested too deep', () => {
  const SURROGATE = 'Strings may not contain a lone UTF-16 surrogate (U+D800 to U+DFFF)';

  test.each([
    [
      'an executeAgent input',
      'mutation ($inputs: [AgentInput!]!) { executeAgent(name: "REPORT_SUMMARIZER", inputs: $inputs) { output } }',
      { inputs: [{ name: 'topic', value: 'half \ud800 a pair' }] },
    ],
    ['a filter', RUNS_BY_TEAM, { filter: { teamName: 'ORDER\udc00TEAM' } }],
    [
      'a key of a JSON input',
      'mutation ($inputs: [AgentInput!]!) { executeAgent(name: "REPORT_SUMMARIZER", inputs: $inputs) { output } }',
      { inputs: [{ name: 'topic', value: { '\ud800': 1 } }] },
    ],
  ])(
    'a lone surrogate in %s is BAD_USER_INPUT, as NUL is, and no statement runs',
    async (_where, query, variables) => {
      let message = '';
      const statements = await t.countStatements(async () => {
        message = (await onlyError(query, variables)).message;
      });
      expect(message).toBe(SURROGATE);
      expect(statements).toBe(0);
    },
  );

  test('a pair of surrogates (one character) is taken', async () => {
    const { errors } = await t.post(RUNS_BY_TEAM, { filter: { teamName: 'TEAM 😀' } });
    expect(errors).toBeUndefined();
  });

  test('variables nested 20,000 levels deep are BAD_USER_INPUT before any work on them, and nothing is logged as internal', async () => {
    const deep = `${'['.repeat(20_000)}${']'.repeat(20_000)}`;
    const response = await fetch(`${t.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: `{"query":"{ agents(first: 1) { totalCount } }","variables":{"deep":${deep}}}`,
    });
    const body = (await response.json()) as { errors?: { message: string; extensions: unknown }[] };
    expect(body.errors).toEqual([
      {
        message: 'Variables may nest lists and objects at most 32 levels deep',
        extensions: { code: 'BAD_USER_INPUT' },
      },
    ]);
    expect(t.logs.filter((line) => line.msg === 'internal error')).toEqual([]);
    // 32 levels are taken.
    const { errors } = await t.post('{ agents(first: 1) { totalCount } }', {
      deep: JSON.parse(`${'['.repeat(31)}${']'.repeat(31)}`),
    });
    expect(errors).toBeUndefined();
  });

  test('an alias starting with __ (the response cache’s __responseCacheTypeName) is refused', async () => {
    for (const alias of ['__responseCacheTypeName', '__responseCacheId', '__typename']) {
      const error = await onlyError(`{ agents(first: 1) { nodes { ${alias}: name } } }`);
      expect(error.message).toContain(`Alias "${alias}" is reserved`);
    }
  });

  test('a malformed JSON body is BAD_USER_INPUT whose error does not echo the body', async () => {
    const response = await fetch(`${t.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"query": "{ agents { totalCount } }", "secret": "hunter2-in-the-body" oops',
    });
    const text = await response.text();
    expect(text).not.toContain('hunter2');
    expect(text).not.toContain('oops');
    const body = JSON.parse(text) as { errors: { extensions: Record<string, unknown> }[] };
    expect(body.errors[0]?.extensions.code).toBe('BAD_USER_INPUT');
    expect(body.errors[0]?.extensions).not.toHaveProperty('originalError');
  });
});
