import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildSubgraphSchema, printSubgraphSchema } from '@apollo/subgraph';
import { createGatewayRuntime } from '@graphql-hive/gateway-runtime';
import { composeServices } from '@theguild/federation-composition';
import { parse, printSchema, printType } from 'graphql';
import { createYoga } from 'graphql-yoga';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { schema, subgraphSchema } from '../../src/schema/index.js';
import { metric } from '../live/support.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { hs256Tokens } from '../support/tokens.js';

const SECRET = 'a-test-secret-that-is-long-enough-for-hs256!';
const { sign: token } = hs256Tokens(SECRET, { subject: 'federation-test' });

/** Types only a subgraph has: federation's own. */
const FEDERATION_TYPES = /^(_Any|_Entity|_Service|link__\w+|federation__\w+)$/;

describe('FEDERATION off and on: the printed schema, both ways', () => {
  test('off, the schema has nothing of federation', () => {
    const printed = printSchema(schema);
    for (const name of ['_entities', '_service', '_Any', '@key', '@link']) {
      expect(printed).not.toContain(name);
    }
  });

  test('on, every type prints as off, Query gains _entities and _service, and the keys are declared', () => {
    const subgraph = subgraphSchema();
    const clientTypes = Object.keys(schema.getTypeMap()).sort();
    const subgraphTypes = Object.keys(subgraph.getTypeMap()).filter(
      (n) => !FEDERATION_TYPES.test(n),
    );
    expect(subgraphTypes.sort()).toEqual(clientTypes);
    for (const name of clientTypes) {
      if (name === 'Query') continue;
      expect(printType(subgraph.getType(name) as never), name).toBe(
        printType(schema.getType(name) as never),
      );
    }
    const queryFields = Object.keys(subgraph.getQueryType()?.getFields() ?? {});
    expect(queryFields.sort()).toEqual(
      [...Object.keys(schema.getQueryType()?.getFields() ?? {}), '_entities', '_service'].sort(),
    );
    const sdl = printSubgraphSchema(subgraph);
    expect(sdl).toMatch(/type Agent implements Node\s*@key\(fields: "owner name"\)/);
    expect(sdl).toMatch(/type Team implements Node\s*@key\(fields: "owner name"\)/);
    expect(sdl).toMatch(/type TeamRun implements Node\s*@key\(fields: "execId"\)/);
  });
});

/** A second, tiny subgraph that points at agent-graph's entities by their keys. */
const INCIDENTS_SDL = `
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.6", import: ["@key"])
  type Query { incidents: [Incident!]! }
  type Incident { id: ID! title: String! team: Team! run: TeamRun }
  type Team @key(fields: "owner name", resolvable: false) { owner: String! name: String! }
  type TeamRun @key(fields: "execId", resolvable: false) { execId: ID! }
`;

describe('composed into a supergraph, served by Hive Gateway', () => {
  let agentGraph: TestServer;
  let incidents: Server;
  let incidentsUrl: string;
  let runs: { execId: string; teamName: string; owner: string }[];
  let gateway: ReturnType<typeof createGatewayRuntime>;

  beforeAll(async () => {
    // Each request reads the teams it resolves (no cross-request catalog cache): the counts
    // below are what one request's batching sends.
    agentGraph = await startTestServer({
      FEDERATION: 'true',
      AUTH_JWT_SECRET: SECRET,
      TEAM_TOOLS_CACHE_TTL_MS: '0',
    });
    const admin = { authorization: `Bearer ${await token({ roles: ['admin'] })}` };
    const found = await agentGraph.post<{
      teamRuns: { nodes: { execId: string; teamName: string; owner: string }[] };
    }>('{ teamRuns(first: 4) { nodes { execId teamName owner } } }', {}, admin);
    runs = found.data?.teamRuns.nodes ?? [];
    const yoga = createYoga({
      schema: buildSubgraphSchema({
        typeDefs: parse(INCIDENTS_SDL),
        resolvers: {
          Query: {
            incidents: () =>
              runs.map((run, i) => ({
                id: String(i),
                title: `incident ${i}`,
                team: { owner: run.owner, name: run.teamName },
                run: { execId: run.execId },
              })),
          },
        },
      }),
      logging: false,
    });
    incidents = createServer(yoga);
    await new Promise<void>((resolve) => incidents.listen(0, '127.0.0.1', resolve));
    incidentsUrl = `http://127.0.0.1:${(incidents.address() as AddressInfo).port}/graphql`;

    const sdl = await agentGraph.post<{ _service: { sdl: string } }>(
      '{ _service { sdl } }',
      {},
      admin,
    );
    const composed = composeServices([
      {
        name: 'agentgraph',
        typeDefs: parse(sdl.data?._service.sdl ?? ''),
        url: `${agentGraph.url}/graphql`,
      },
      { name: 'incidents', typeDefs: parse(INCIDENTS_SDL), url: incidentsUrl },
    ]);
    expect(composed.errors ?? []).toEqual([]);
    gateway = createGatewayRuntime({
      supergraph: composed.supergraphSdl as string,
      logging: false,
      // The gateway passes the caller's token on, so that agent-graph's isolation applies.
      propagateHeaders: {
        fromClientToSubgraphs: ({ request }) => ({
          authorization: request.headers.get('authorization') ?? '',
        }),
      },
    });
  });

  afterAll(async () => {
    await gateway?.dispose();
    await new Promise((resolve) => incidents?.close(resolve));
    await agentGraph?.stop();
  });

  const CROSSING = `{ incidents { title team { name description stats { runCount } } run { execId state team { name } } } }`;

  async function throughGateway(claims: Record<string, unknown>) {
    const response = await gateway.fetch('http://gateway/graphql', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${await token(claims)}`,
      },
      body: JSON.stringify({ query: CROSSING }),
    });
    return (await response.json()) as {
      data?: {
        incidents: {
          title: string;
          team: { name: string; description: string | null; stats: { runCount: number } } | null;
          run: { execId: string; state: string; team: { name: string } | null } | null;
        }[];
      };
      errors?: unknown[];
    };
  }

  test('a query crosses from the second subgraph into agent-graph’s teams and runs', async () => {
    expect(runs.length).toBeGreaterThan(1);
    const result = await throughGateway({ roles: ['admin'] });
    expect(result.errors).toBeUndefined();
    const answered = result.data?.incidents ?? [];
    expect(answered).toHaveLength(runs.length);
    for (const [i, incident] of answered.entries()) {
      const run = runs[i] as (typeof runs)[number];
      expect(incident.team?.name).toBe(run.teamName);
      expect(incident.team?.stats.runCount).toBeGreaterThan(0);
      expect(incident.run).toMatchObject({ execId: run.execId, team: { name: run.teamName } });
    }
  });

  test('_entities costs one statement per entity type, however many representations', async () => {
    const statements = (name: string) =>
      metric(agentGraph.server, 'agentgraph_db_statements_total', { statement: name });
    const admin = { authorization: `Bearer ${await token({ roles: ['admin'] })}` };
    const representations = [
      ...runs.map((run) => ({ __typename: 'Team', owner: run.owner, name: run.teamName })),
      ...runs.map((run) => ({ __typename: 'TeamRun', execId: run.execId })),
    ];
    const query = `query ($r: [_Any!]!) { _entities(representations: $r) {
      ... on Team { name } ... on TeamRun { execId state } } }`;
    const total = await agentGraph.countStatements(() =>
      agentGraph.post(query, { r: representations }, admin),
    );
    expect(total).toBe(2);
    const byName = await statements('teams.byNames');
    const again = await agentGraph.post<{ _entities: unknown[] }>(
      query,
      { r: representations },
      admin,
    );
    expect(again.data?._entities).toHaveLength(representations.length);
    expect(await statements('teams.byNames')).toBe(byName + 1);
  });

  test('_entities of team runs with their tree are planned: one statement for the runs, their team, tasks, agents and tool calls', async () => {
    const admin = { authorization: `Bearer ${await token({ roles: ['admin'] })}` };
    const representations = runs.map((run) => ({ __typename: 'TeamRun', execId: run.execId }));
    const query = `query ($r: [_Any!]!) { _entities(representations: $r) { ... on TeamRun {
      execId team { name } tasks { taskName agent { name } toolCalls { toolName } } toolCalls { toolName } } } }`;
    type Entity = {
      execId: string;
      team: { name: string } | null;
      tasks: { taskName: string | null; toolCalls: unknown[] }[];
      toolCalls: unknown[];
    };
    const got: { entities?: Entity[] } = {};
    const total = await agentGraph.countStatements(async () => {
      const result = await agentGraph.post<{ _entities: Entity[] }>(
        query,
        { r: representations },
        admin,
      );
      expect(result.errors).toBeUndefined();
      got.entities = result.data?._entities;
    });
    expect(total).toBe(1);
    expect(got.entities?.map((entity) => entity.execId)).toEqual(runs.map((run) => run.execId));
    for (const [i, entity] of (got.entities ?? []).entries()) {
      expect(entity.team?.name).toBe(runs[i]?.teamName);
    }
    // The same tree through teamRun(execId) answers alike.
    const first = runs[0] as (typeof runs)[number];
    const alone = await agentGraph.post<{ teamRun: Entity }>(
      `{ teamRun(execId: "${first.execId}") { execId team { name } tasks { taskName agent { name } toolCalls { toolName } } toolCalls { toolName } } }`,
      undefined,
      admin,
    );
    expect(got.entities?.[0]).toEqual(alone.data?.teamRun);
    expect(got.entities?.flatMap((entity) => entity.tasks).length).toBeGreaterThan(0);
  });

  test('owner isolation is unchanged: another owner’s entities resolve to null', async () => {
    const admin = { authorization: `Bearer ${await token({ roles: ['admin'] })}` };
    const all = await agentGraph.post<{ teamRuns: { nodes: typeof runs } }>(
      '{ teamRuns(first: 100) { nodes { execId teamName owner } } }',
      {},
      admin,
    );
    const nodes = all.data?.teamRuns.nodes ?? [];
    const mine = nodes.find((run) => run.owner === 'APP_USER');
    const theirs = nodes.find((run) => run.owner !== 'APP_USER');
    expect(mine && theirs).toBeTruthy();
    const query = `query ($r: [_Any!]!) { _entities(representations: $r) { ... on Team { name owner } ... on TeamRun { execId } } }`;
    const headers = { authorization: `Bearer ${await token({ db_user: 'APP_USER' })}` };
    const representations = [mine, theirs].flatMap((run) =>
      run
        ? [
            { __typename: 'Team', owner: run.owner, name: run.teamName },
            { __typename: 'TeamRun', execId: run.execId },
          ]
        : [],
    );
    const result = await agentGraph.post<{ _entities: (Record<string, string> | null)[] }>(
      query,
      { r: representations },
      headers,
    );
    const expected = [mine, theirs].flatMap((run) =>
      run
        ? run.owner === 'APP_USER'
          ? [{ name: run.teamName, owner: run.owner }, { execId: run.execId }]
          : [null, null]
        : [],
    );
    expect(result.data?._entities).toEqual(expected);
  });

  const ENTITIES = `query ($r: [_Any!]!) { _entities(representations: $r) {
    ... on Team { name } ... on TeamRun { execId } ... on Agent { name } } }`;

  /** The only error of `_entities` over these representations, and the statements it cost. */
  async function refused(representations: unknown[]) {
    const admin = { authorization: `Bearer ${await token({ roles: ['admin'] })}` };
    let result: Awaited<ReturnType<TestServer['post']>> | undefined;
    const statements = await agentGraph.countStatements(async () => {
      result = await agentGraph.post(ENTITIES, { r: representations }, admin);
    });
    expect(result?.errors, result?.text).toHaveLength(1);
    return { error: result?.errors?.[0], statements };
  }

  test('_entities costs its selection per representation, as teams(first:) does per team', async () => {
    const admin = { authorization: `Bearer ${await token({ roles: ['admin'] })}` };
    const selection =
      'name runs(first: 100) { nodes { execId tasks { taskName toolCalls { toolName } } } }';
    const teams = (count: number) =>
      Array.from({ length: count }, (_, i) => ({
        __typename: 'Team',
        owner: 'APP_USER',
        name: `T${i}`,
      }));
    const query = `query ($r: [_Any!]!) { _entities(representations: $r) { ... on Team { ${selection} } } }`;
    const many = await agentGraph.post(query, { r: teams(100) }, admin);
    expect(many.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(many.errors?.[0]?.message).toMatch(/^Query cost \d+ exceeds the limit/);
    const throughTeams = await agentGraph.post(
      `{ teams(first: 100) { nodes { ${selection} } } }`,
      {},
      admin,
    );
    expect(throughTeams.errors?.[0]?.message).toMatch(/^Query cost \d+ exceeds the limit/);
    const few = await agentGraph.post(query, { r: teams(2) }, admin);
    expect(few.errors).toBeUndefined();
  });

  test.each([
    [
      'a 300,000-character name',
      { __typename: 'Team', owner: 'APP_USER', name: 'x'.repeat(300_000) },
      /^Argument "representations\[0\]\.name" must be an Oracle name/,
    ],
    [
      'a double quote in a name',
      { __typename: 'Agent', owner: 'APP_USER', name: 'A"B' },
      /^Argument "representations\[0\]\.name" must be an Oracle name, without double quotes/,
    ],
    [
      'a 300,000-character execId',
      { __typename: 'TeamRun', execId: '1'.repeat(300_000) },
      /^Argument "representations\[0\]\.execId" must be an identifier/,
    ],
  ])(
    'a representation with %s is BAD_USER_INPUT before any statement',
    async (_what, representation, message) => {
      const { error, statements } = await refused([representation]);
      expect(error?.extensions?.code).toBe('BAD_USER_INPUT');
      expect(error?.message).toMatch(message);
      expect(statements).toBe(0);
    },
  );

  test.each([
    [
      'a string instead of an object',
      'Team',
      /^Argument "representations\[1\]" must be an entity representation/,
    ],
    [
      'no __typename',
      { owner: 'APP_USER', name: 'T' },
      /^Argument "representations\[1\]\.__typename" must be one of Agent, Team, TeamRun/,
    ],
    [
      'an unknown __typename',
      { __typename: 'Query', owner: 'A', name: 'B' },
      /^Argument "representations\[1\]\.__typename" must be one of/,
    ],
    [
      'a missing key field',
      { __typename: 'Team', owner: 'APP_USER' },
      /^Argument "representations\[1\]\.name" must be a string: Team is keyed by owner and name/,
    ],
    [
      'a number for a key',
      { __typename: 'TeamRun', execId: 7 },
      /^Argument "representations\[1\]\.execId" must be a string/,
    ],
  ])(
    'a malformed representation (%s) is BAD_USER_INPUT, not INTERNAL, and nothing is logged',
    async (_what, representation, message) => {
      const logged = agentGraph.logs.length;
      const { error, statements } = await refused([
        { __typename: 'TeamRun', execId: 'X' },
        representation,
      ]);
      expect(error?.extensions?.code).toBe('BAD_USER_INPUT');
      expect(error?.message).toMatch(message);
      expect(statements).toBe(0);
      expect(agentGraph.logs.slice(logged).filter((line) => line.level >= 50)).toEqual([]);
    },
  );

  test('_entities takes at most 100 representations, BAD_USER_INPUT past that', async () => {
    const admin = { authorization: `Bearer ${await token({ roles: ['admin'] })}` };
    const r = Array.from({ length: 101 }, (_, i) => ({ __typename: 'TeamRun', execId: String(i) }));
    const result = await agentGraph.post(
      'query ($r: [_Any!]!) { _entities(representations: $r) { __typename } }',
      { r },
      admin,
    );
    expect(result.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(result.errors?.[0]?.message).toMatch(/at most 100/);
  });
});

describe('FEDERATION with INTROSPECTION=false', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ FEDERATION: 'true', INTROSPECTION: 'false' });
  });
  afterAll(() => server?.stop());

  test('_service { sdl } is refused like __schema; _entities still answers', async () => {
    const sdl = await server.post('{ _service { sdl } }');
    expect(sdl.data ?? null).toBeNull();
    expect(sdl.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(sdl.errors?.[0]?.message).toMatch(/introspection has been disabled/);
    expect(sdl.text).not.toContain('type Team');
    const entities = await server.post(
      'query ($r: [_Any!]!) { _entities(representations: $r) { __typename } }',
      { r: [{ __typename: 'TeamRun', execId: 'NO_SUCH_RUN' }] },
    );
    expect(entities.errors).toBeUndefined();
    expect(entities.data).toEqual({ _entities: [null] });
  });
});
