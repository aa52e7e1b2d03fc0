import { afterAll, beforeAll, describe, expect, test } from 'vitest';
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
