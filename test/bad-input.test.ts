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
      'DateTime must be an ISO-8601 date-time string, got "yesterday"',
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
