import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';
import {
  PASSWORD,
  type SdkTestServer,
  startSdkTestServer,
  USERNAME,
} from './support/sdk-server.js';

let a2a: SdkTestServer;
let t: TestServer;
beforeAll(async () => {
  a2a = await startSdkTestServer({ slowMs: 5_000 });
  t = await startTestServer({
    A2A_BASE_URL: a2a.baseUrl,
    A2A_USERNAME: USERNAME,
    A2A_PASSWORD: PASSWORD,
    A2A_TIMEOUT_MS: '2000',
    A2A_RETRIES: '1',
    A2A_CACHE_TTL_MS: '60000',
  });
});
afterAll(async () => {
  await t.stop();
  await a2a.stop();
});

describe('A2A cards from a remote A2A server (A2A_BASE_URL)', () => {
  test('no stand-in is started', () => {
    expect(t.server.a2aStandin).toBeUndefined();
  });

  test('1.0 and 0.3 cards come back in one shape', async () => {
    const { data, errors } = await t.gql(`{
      v1: agentCard(teamName: "V1_TEAM") { name protocolVersion url preferredTransport capabilities { stateTransitionHistory } skills { id name } }
      v03: agentCard(teamName: "LEGACY_TEAM") { name protocolVersion url preferredTransport capabilities { stateTransitionHistory } skills { id name } }
    }`);
    expect(errors).toBeUndefined();
    expect(data).toEqual({
      v1: {
        name: 'V1_TEAM',
        protocolVersion: '1.0',
        url: 'https://agents.example.com/V1_TEAM/jsonrpc',
        preferredTransport: 'JSONRPC',
        capabilities: { stateTransitionHistory: null },
        skills: [{ id: '5001', name: 'SUMMARIZE_REPORT' }],
      },
      v03: {
        name: 'LEGACY_TEAM',
        protocolVersion: '0.3.0',
        url: 'https://agents.example.com/LEGACY_TEAM/a2a/v1',
        preferredTransport: 'JSONRPC',
        capabilities: { stateTransitionHistory: true },
        skills: [{ id: '5002', name: 'ORDER_LOOKUP' }],
      },
    });
  });

  test('each failing card nulls its own field with its code; everything else resolves', async () => {
    const response = await t.server.yoga.fetch('http://localhost/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        query: `{
          ok: agentCard(teamName: "V1_TEAM") { name }
          broken: agentCard(teamName: "BROKEN_TEAM") { name }
          slow: agentCard(teamName: "SLOW_TEAM") { name }
          missing: agentCard(teamName: "NO_SUCH_TEAM") { name }
          forbidden: agentCard(teamName: "FORBIDDEN_TEAM") { name }
          rejected: agentCard(teamName: "ALWAYS_401_TEAM") { name }
          malformed: agentCard(teamName: "MALFORMED_TEAM") { name }
          incomplete: agentCard(teamName: "INCOMPLETE_TEAM") { name }
          agents(first: 1) { totalCount }
        }`,
      }),
    });
    const text = await response.text();
    const { data, errors } = JSON.parse(text) as {
      data: Record<string, unknown>;
      errors: { path: string[]; message: string; extensions: { code: string } }[];
    };
    expect(data.ok).toEqual({ name: 'V1_TEAM' });
    expect(data.agents).toEqual({ totalCount: expect.any(Number) });
    const byField = Object.fromEntries(
      errors.map((e) => [e.path[0], [e.extensions.code, e.message]]),
    );
    expect(byField).toEqual({
      broken: [
        'UPSTREAM_UNAVAILABLE',
        'The A2A server answered 500 for the agent card of team "BROKEN_TEAM" (2 attempts)',
      ],
      slow: [
        'TIMEOUT',
        'The A2A server did not answer within 2000 ms for the agent card of team "SLOW_TEAM"',
      ],
      missing: ['NOT_FOUND', 'The A2A server has no agent card of team "NO_SUCH_TEAM" (404)'],
      forbidden: ['UNAUTHENTICATED', expect.stringContaining('(403)')],
      rejected: ['UNAUTHENTICATED', expect.stringContaining('(401 twice)')],
      malformed: [
        'UPSTREAM_UNAVAILABLE',
        expect.stringMatching(/^The agent card of team "MALFORMED_TEAM" .* not valid JSON/),
      ],
      incomplete: [
        'UPSTREAM_UNAVAILABLE',
        expect.stringContaining('version is missing; supportedInterfaces is missing'),
      ],
    });
    for (const field of Object.keys(byField)) expect(data[field]).toBeNull();
    for (const secret of [...a2a.issuedTokens, PASSWORD]) expect(text).not.toContain(secret);
  });

  test('one fetch per card per request, even when the server forbids keeping it', async () => {
    const query = `{
      a: agentCard(teamName: "NO_STORE_TEAM") { name }
      b: agentCard(teamName: "NO_STORE_TEAM") { skills { id } }
      c: agentCard(teamName: "NO_STORE_TEAM") { version }
    }`;
    const before = a2a.cardRequests('NO_STORE_TEAM').length;
    expect((await t.gql(query)).errors).toBeUndefined();
    expect(a2a.cardRequests('NO_STORE_TEAM').length - before).toBe(1);
    await t.gql(query);
    expect(a2a.cardRequests('NO_STORE_TEAM').length - before).toBe(2);
  });

  // Expiry after the TTL is client.test.ts's, on an injected clock.
  test('across requests: no request while fresh; max-age=0 revalidates with If-None-Match', async () => {
    const query = '{ agentCard(teamName: "REVALIDATE_TEAM") { name } }';
    const requests = () => a2a.cardRequests('REVALIDATE_TEAM');
    await t.gql(query);
    // The handler sends max-age=0: every later request revalidates, and gets a 304.
    await t.gql(query);
    expect(requests().map((r) => r.status)).toEqual([200, 304]);

    const fresh = '{ agentCard(teamName: "V1_TEAM") { name } }';
    await t.gql(fresh);
    const before = a2a.cardRequests('V1_TEAM').length;
    await t.gql(fresh);
    expect(a2a.cardRequests('V1_TEAM').length).toBe(before);
  });

  test('a2aAgents from the list endpoint', async () => {
    const { data } = await t.gql<{ a2aAgents: { name: string; description: string | null }[] }>(
      '{ a2aAgents { name description agentCardUrl } }',
    );
    expect(data?.a2aAgents[0]).toEqual({
      name: 'V1_TEAM',
      description: 'V1_TEAM description',
      agentCardUrl: `${a2a.baseUrl}/agents/V1_TEAM/.well-known/agent-card.json`,
    });
  });

  test.each(['..', '.'])(
    'teamName "%s" is BAD_USER_INPUT and sends nothing (no path outside agents/)',
    async (name) => {
      const sent = a2a.requests.length;
      const { data, errors } = await t.gql(
        'query ($name: String!) { agentCard(teamName: $name) { name } }',
        {
          name,
        },
      );
      expect(data?.agentCard ?? null).toBeNull();
      expect(errors?.map((e) => [e.extensions?.code, e.message])).toEqual([
        ['BAD_USER_INPUT', `"${name}" is not a team name`],
      ]);
      expect(a2a.requests.slice(sent)).toEqual([]);
    },
  );

  test('a team name with a slash or percent sign stays one path segment', async () => {
    const sent = a2a.requests.length;
    await t.gql('{ agentCard(teamName: "../x%2F..") { name } }');
    expect(a2a.requests.slice(sent).map((r) => r.path)).toEqual([
      `${new URL(a2a.baseUrl).pathname}/agents/..%2Fx%252F../.well-known/agent-card.json`,
    ]);
  });
});
