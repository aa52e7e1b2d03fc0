import { execute, parse } from 'graphql';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { type Context, operationState } from '../src/context.js';
import { ANONYMOUS_ADMIN } from '../src/model/viewer.js';
import { schema } from '../src/schema/index.js';
import { startTestServer, type TestServer } from './support/server.js';

/**
 * Queries run compiled by graphql-jit (src/compiled-queries.ts); graphql-js's own executor is
 * the reference. Each document here is answered over the socket and by graphql-js's execute
 * on the same schema, data and viewer, and the two answers must be the same JSON.
 */
let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.stop());

async function reference(query: string, variables: Record<string, unknown> = {}) {
  const context = {
    requestId: 'reference',
    viewer: ANONYMOUS_ADMIN,
    statsPublic: true,
    ...operationState(t.server.repositoriesFor, ANONYMOUS_ADMIN),
    live: t.server.live,
    idempotencyKey: null,
  } as unknown as Context;
  const result = await execute({
    schema,
    document: parse(query),
    contextValue: context,
    variableValues: variables,
  });
  return JSON.parse(JSON.stringify(result)) as { data?: unknown; errors?: unknown[] };
}

const DASHBOARD = `query Dashboard($withTasks: Boolean!, $runs: Int = 3) {
  first: teams(first: 4) { totalCount nodes { ...team } }
  again: teams(first: 2) { edges { cursor node { __typename name } } pageInfo { hasNextPage endCursor } }
  agents(first: 3) { totalCount nodes { name owner } }
}
fragment team on Team {
  name
  tools { name toolType }
  runs(first: $runs) {
    nodes {
      execId state startDate durationMs
      tasks @include(if: $withTasks) { taskOrder taskName agent { name } toolCalls { toolName durationMs } }
      skipped: tasks @skip(if: true) { taskName }
    }
  }
}`;

test.each([
  ['with the tasks', { withTasks: true }],
  ['without them, and a default overridden', { withTasks: false, runs: 1 }],
])(
  'aliases, fragments, @include/@skip and variables answer as graphql-js: %s',
  async (_, variables) => {
    const answer = await t.post(DASHBOARD, variables);
    expect(answer.errors).toBeUndefined();
    expect(answer.data).toEqual((await reference(DASHBOARD, variables)).data);
    // Compiled once, the document answers the same the second time.
    expect((await t.post(DASHBOARD, variables)).text).toBe(answer.text);
  },
);

test('an interface field resolves to the concrete type, as graphql-js resolves it', async () => {
  const ids = await t.post<{ teams: { nodes: { id: string }[] } }>(
    '{ teams(first: 2) { nodes { id } } }',
  );
  const [team] = ids.data?.teams.nodes ?? [];
  const query = `query($id: ID!) { node(id: $id) { __typename id ... on Team { name description } } }`;
  const answer = await t.post(query, { id: team?.id });
  expect(answer.data).toEqual((await reference(query, { id: team?.id })).data);
  expect(answer.data).toMatchObject({ node: { __typename: 'Team' } });
});

test('a field error keeps its path and its place in the document; the rest resolves', async () => {
  const query = `{
  teams(first: 1) { totalCount }
  missing: team(name: "NO_SUCH_TEAM") { name }
}`;
  const answer = await t.post(query);
  const expected = await reference(query);
  expect(answer.data).toEqual(expected.data);
  expect(answer.errors).toHaveLength(1);
  expect(answer.errors?.[0]).toMatchObject({
    path: ['missing'],
    locations: [{ line: 3, column: 3 }],
    extensions: { code: 'NOT_FOUND' },
  });
});
