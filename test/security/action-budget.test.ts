import { buildSchema, GraphQLObjectType, GraphQLSchema, GraphQLString, parse } from 'graphql';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { actionsOf } from '../../src/hardening/actions.js';
import { ACTION } from '../../src/schema/action.js';
import { wsUrl } from '../live/support.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { RawSocket } from './raw-ws.js';

const REPORT = 'REPORT_SUMMARY_AGENT_TEAM';

let t: TestServer;
let ws: TestServer;
beforeAll(async () => {
  [t, ws] = await Promise.all([
    startTestServer({ RATE_LIMIT_REQUESTS: '5', RATE_LIMIT_WINDOW_MS: '600000' }),
    startTestServer({ RATE_LIMIT_ACTIONS: '2', RATE_LIMIT_WINDOW_MS: '600000' }),
  ]);
});
afterAll(() => Promise.all([t.stop(), ws.stop()]));

/** The runs the server's audit log says it submitted. */
const submitted = (server: TestServer) =>
  server.logs.filter((entry) => entry.component === 'audit' && entry.outcome === 'submitted')
    .length;

const runTeams = (count: number) =>
  `mutation { ${Array.from(
    { length: count },
    (_, i) => `r${i}: runTeam(teamName: "${REPORT}", prompt: "run ${i}") { conversationId }`,
  ).join(' ')} }`;

describe('actions are budgeted one by one (issue 25, item 3)', () => {
  test('RATE_LIMIT_REQUESTS=5: five requests of 15 aliased runTeam start no run, five of five start five, not 75', async () => {
    const before = submitted(t);
    const fifteen = await t.post(runTeams(15));
    expect(fifteen.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(fifteen.errors?.[0]?.message).toBe(
      'An operation may run at most 5 actions (runTeam, respondToHuman, …; MAX_ACTIONS_PER_OPERATION); this one has 15: send them in separate operations',
    );
    expect(submitted(t)).toBe(before);

    const results = [];
    for (let i = 0; i < 4; i++) results.push(await t.post(runTeams(5)));
    expect(results[0]?.errors, results[0]?.text).toBeUndefined();
    for (const refused of results.slice(1)) {
      expect(refused.status).toBe(429);
      expect(refused.errors?.[0]?.message).toMatch(
        /^Rate limit: at most 5 actions \(runTeam, respondToHuman, …\) per 600 s for one identity \(RATE_LIMIT_ACTIONS\); this operation has 5, 0 left; retry in \d+ s$/,
      );
    }
    expect(submitted(t) - before).toBe(5);
    // Reads are not actions: the operation budget still has room.
    expect((await t.post('{ teams(first: 1) { totalCount } }')).errors).toBeUndefined();
  });
});

describe('mutations over WebSocket (issue 25, also seen)', () => {
  test('run with the same budget as over HTTP, instead of yoga’s "only from a POST request"', async () => {
    const socket = await RawSocket.connect(wsUrl(ws.url));
    const mutation = `mutation { runTeam(teamName: "${REPORT}", prompt: "over ws") { teamName conversationId } }`;
    socket.subscribe('one', mutation);
    const first = await socket.next((m) => m.id === 'one' && m.type === 'next');
    expect(first.payload).toMatchObject({
      data: { runTeam: { teamName: REPORT, conversationId: expect.any(String) } },
    });
    expect((await ws.post(mutation)).errors).toBeUndefined();
    socket.subscribe('three', mutation);
    const third = await socket.next((m) => m.id === 'three' && m.type === 'next');
    expect(JSON.stringify(third.payload)).toMatch(/at most 2 actions .*RATE_LIMIT_ACTIONS/);
    expect(submitted(ws)).toBe(2);
    socket.terminate();
  });

  test('from a page that could not POST them (another loopback origin), they are refused saying what to do', async () => {
    const socket = await RawSocket.connect(wsUrl(ws.url), {}, { origin: 'http://localhost:1' });
    socket.subscribe('m', `mutation { runTeam(teamName: "${REPORT}", prompt: "x") { teamName } }`);
    const message = await socket.next((m) => m.id === 'm');
    expect(message.type).toBe('error');
    expect(JSON.stringify(message.payload)).toContain(
      'A mutation over WebSocket from a page at http://localhost:1 is refused, as a POST from it would be: add that origin to CORS_ORIGINS',
    );
    // The same page may still subscribe and query.
    socket.subscribe('q', '{ __typename }');
    expect((await socket.next((m) => m.id === 'q')).type).toBe('next');
    socket.terminate();
  });
});

describe('an action is a declaration', () => {
  const Mutation = new GraphQLObjectType({
    name: 'Mutation',
    fields: {
      act: { type: GraphQLString, ...ACTION },
      note: { type: GraphQLString },
    },
  });
  const schema = new GraphQLSchema({
    query: buildSchema('type Query { a: String }').getQueryType(),
    mutation: Mutation,
  });
  const count = (text: string, variableValues?: Record<string, unknown>) =>
    actionsOf({ schema, document: parse(text), variableValues });

  test('each response key of a declared field counts, through fragments, with @skip/@include', () => {
    expect(count('mutation { a: act b: act note }')).toBe(2);
    expect(count('mutation { act act }')).toBe(1);
    expect(
      count(
        'mutation { ...F ... on Mutation { c: act } } fragment F on Mutation { a: act b: act }',
      ),
    ).toBe(3);
    expect(
      count('mutation($no: Boolean!) { a: act b: act @include(if: $no) c: act @skip(if: true) }', {
        no: false,
      }),
    ).toBe(1);
    expect(count('{ a }')).toBe(0);
  });
});
