import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';

let t: TestServer;
beforeAll(async () => {
  // The dashboard test below asks for 20 cards by alias, over the default limit of 15.
  t = await startTestServer({ MAX_ALIASES: '40' });
});
afterAll(() => t.stop());

const standinRequests = () => t.server.a2aStandin?.requestCount ?? Number.NaN;

async function a2aRequestsByOutcome(): Promise<Record<string, number>> {
  const metric = await t.server.metrics.a2aRequests.get();
  return Object.fromEntries(metric.values.map((v) => [String(v.labels.outcome), v.value]));
}

describe('A2A cards in embedded mode (the stand-in, no configuration)', () => {
  test('agentCard: seed 001’s mapping of REPORT_SUMMARY_AGENT_TEAM', async () => {
    const { data, errors } = await t.gql<{ agentCard: Record<string, unknown> }>(`{
      agentCard(teamName: "REPORT_SUMMARY_AGENT_TEAM") {
        name description version protocolVersion url preferredTransport
        interfaces { url transport protocolVersion }
        provider { organization url }
        iconUrl documentationUrl
        capabilities { streaming pushNotifications stateTransitionHistory extensions { uri description required } }
        defaultInputModes defaultOutputModes securitySchemes
        skills { id name description tags examples inputModes outputModes }
        signed
      }
    }`);
    expect(errors).toBeUndefined();
    const base = t.server.a2aStandin?.baseUrl;
    expect(data?.agentCard).toEqual({
      name: 'REPORT_SUMMARY_AGENT_TEAM',
      description: 'Summarizes uploaded reports and answers follow-up questions',
      version: '1.0.0',
      protocolVersion: '1.0',
      url: `${base}/agents/REPORT_SUMMARY_AGENT_TEAM`,
      preferredTransport: 'JSONRPC',
      interfaces: [
        {
          url: `${base}/agents/REPORT_SUMMARY_AGENT_TEAM`,
          transport: 'JSONRPC',
          protocolVersion: '1.0',
        },
      ],
      provider: { organization: 'Oracle', url: 'https://www.oracle.com/autonomous-database/' },
      iconUrl: null,
      documentationUrl: null,
      capabilities: {
        streaming: false,
        pushNotifications: false,
        stateTransitionHistory: null,
        extensions: [],
      },
      defaultInputModes: ['text/plain'],
      defaultOutputModes: ['text/plain'],
      securitySchemes: {
        bearer: {
          httpAuthSecurityScheme: {
            description: expect.stringMatching(/^Database user token from POST http:.+\/token$/),
            scheme: 'Bearer',
          },
        },
      },
      skills: [
        {
          id: '5001',
          name: 'SUMMARIZE_REPORT',
          description: 'Summarize uploaded reports and answer follow-up questions',
          tags: [],
          examples: [],
          inputModes: [],
          outputModes: [],
        },
        {
          id: '5002',
          name: 'HUMAN_REVIEW',
          description: 'Ask a person to approve or correct the summary',
          tags: [],
          examples: [],
          inputModes: [],
          outputModes: [],
        },
      ],
      signed: false,
    });
  });

  test('a team without a description: the card takes the team name', async () => {
    const { data } = await t.gql(
      '{ agentCard(teamName: "MOVIE_RECOMMENDER_TEAM") { description } }',
    );
    expect(data?.agentCard).toEqual({ description: 'MOVIE_RECOMMENDER_TEAM' });
  });

  test('a2aAgents: every team, each with its card URL', async () => {
    const { data, errors } = await t.gql<{ a2aAgents: Record<string, string | null>[] }>(
      '{ a2aAgents { name description agentCardUrl } }',
    );
    expect(errors).toBeUndefined();
    expect(data?.a2aAgents).toHaveLength(22);
    expect(data?.a2aAgents).toContainEqual({
      name: 'ORDER_SUPPORT_TEAM',
      description: 'Answers order questions and handles refunds',
      agentCardUrl: `${t.server.a2aStandin?.baseUrl}/agents/ORDER_SUPPORT_TEAM/.well-known/agent-card.json`,
    });
  });

  test('an unknown team: that field is null with NOT_FOUND, the rest resolves', async () => {
    const { data, errors } = await t.gql(`{
      missing: agentCard(teamName: "NO_SUCH_TEAM") { name }
      report: agentCard(teamName: "REPORT_SUMMARY_AGENT_TEAM") { name }
      agents(first: 1) { totalCount }
    }`);
    expect(data?.missing).toBeNull();
    expect(data?.report).toEqual({ name: 'REPORT_SUMMARY_AGENT_TEAM' });
    expect(data?.agents).toEqual({ totalCount: expect.any(Number) });
    expect(errors).toEqual([
      {
        message: 'The A2A server has no agent card of team "NO_SUCH_TEAM" (404)',
        path: ['missing'],
        locations: expect.any(Array),
        extensions: { code: 'NOT_FOUND' },
      },
    ]);
  });

  test('an empty team name is BAD_USER_INPUT, without asking the A2A server', async () => {
    const before = standinRequests();
    const { errors } = await t.gql('{ agentCard(teamName: " ") { name } }');
    expect(errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(standinRequests()).toBe(before);
  });

  test('a 20-team dashboard: 20 card requests cold, none warm', async () => {
    const listing = await t.gql<{ a2aAgents: { name: string }[] }>('{ a2aAgents { name } }');
    const names = (listing.data?.a2aAgents ?? [])
      .map((a) => a.name)
      .filter((name) => !['REPORT_SUMMARY_AGENT_TEAM', 'MOVIE_RECOMMENDER_TEAM'].includes(name))
      .slice(0, 20);
    expect(names).toHaveLength(20);
    const dashboard = `{ ${names
      .map(
        (name, i) =>
          `t${i}: agentCard(teamName: "${name}") { name skills { id name description } }`,
      )
      .join(' ')} }`;

    const before = standinRequests();
    const cold = await t.gql<Record<string, { name: string }>>(dashboard);
    expect(cold.errors).toBeUndefined();
    expect(Object.values(cold.data ?? {}).map((card) => card.name)).toEqual(names);
    expect(standinRequests() - before).toBe(20);

    const warmStart = standinRequests();
    const warm = await t.gql(dashboard);
    expect(warm.data).toEqual(cold.data);
    expect(standinRequests() - warmStart).toBe(0);
  });

  test('/metrics counts A2A requests by outcome and cache results', async () => {
    const outcomes = await a2aRequestsByOutcome();
    expect(outcomes.token_ok).toBe(1);
    expect(outcomes.ok).toBeGreaterThanOrEqual(22);
    expect(outcomes.not_found).toBe(1);
    const text = await (await fetch(`${t.url}/metrics`)).text();
    expect(text).toMatch(/^agentgraph_a2a_requests_total\{outcome="ok"\} \d+$/m);
    expect(text).toMatch(/^agentgraph_a2a_cache_total\{result="hit"\} \d+$/m);
  });
});
