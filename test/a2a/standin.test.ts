import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { A2AClient } from '../../src/a2a/client.js';
import { cardDrift } from '../../src/a2a/drift.js';
import { type A2ACatalog, type A2AStandin, startA2AStandin } from '../../src/a2a/standin.js';

const CATALOG: A2ACatalog = {
  teams: [
    {
      name: 'REPORT_SUMMARY_AGENT_TEAM',
      description: 'Summarizes uploaded reports and answers follow-up questions',
      tools: [
        {
          toolId: '5001',
          name: 'SUMMARIZE_REPORT',
          instruction: 'Summarize uploaded reports and answer follow-up questions',
        },
        {
          toolId: '5002',
          name: 'HUMAN_REVIEW',
          instruction: 'Ask a person to approve or correct the summary',
        },
      ],
    },
    { name: 'MOVIE_RECOMMENDER_TEAM', description: null, tools: [] },
  ],
};
const CREDENTIALS = { username: 'APP_USER', password: 'demo-password' };

let standin: A2AStandin;
let catalogReads = 0;
beforeAll(async () => {
  standin = await startA2AStandin({
    loadCatalog: async () => {
      catalogReads++;
      return CATALOG;
    },
    credentials: CREDENTIALS,
    staticTokens: ['configured-token'],
  });
});
afterAll(() => standin.stop());

async function token(): Promise<string> {
  const response = await fetch(standin.tokenUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ grant_type: 'password', ...CREDENTIALS }),
  });
  expect(response.status).toBe(200);
  const body = (await response.json()) as { access_token: string; token_type: string };
  expect(body.token_type).toBe('Bearer');
  return body.access_token;
}

const get = async (path: string, headers: Record<string, string> = {}) =>
  fetch(`${standin.baseUrl}${path}`, { headers, cache: 'no-cache' });

describe('the embedded A2A stand-in', () => {
  test('listens on loopback at Oracle’s paths', () => {
    expect(standin.baseUrl).toMatch(
      /^http:\/\/127\.0\.0\.1:\d+\/adb\/a2a\/v1\/databases\/ocid1\.autonomousdatabase\.oc1\.\.embedded$/,
    );
    expect(standin.tokenUrl).toMatch(
      /^http:\/\/127\.0\.0\.1:\d+\/adb\/auth\/v1\/databases\/ocid1\.autonomousdatabase\.oc1\.\.embedded\/token$/,
    );
  });

  test('the token endpoint takes the demo credentials and nothing else', async () => {
    expect(await token()).toMatch(/^[\w-]{32}$/);
    const post = (body: unknown) =>
      fetch(standin.tokenUrl, { method: 'POST', body: JSON.stringify(body) });
    expect((await post({ grant_type: 'password', ...CREDENTIALS, password: 'x' })).status).toBe(
      401,
    );
    expect((await post({ grant_type: 'client_credentials', ...CREDENTIALS })).status).toBe(400);
    expect((await fetch(standin.tokenUrl)).status).toBe(405);
  });

  test('A2A paths need a bearer token it issued or was configured with', async () => {
    expect((await get('/agents/')).status).toBe(401);
    expect((await get('/agents/', { authorization: 'Bearer forged' })).status).toBe(401);
    expect((await get('/agents/', { authorization: 'Bearer configured-token' })).status).toBe(200);
    const issued = await token();
    expect((await get('/agents/', { authorization: `Bearer ${issued}` })).status).toBe(200);
    standin.revokeTokens();
    expect((await get('/agents/', { authorization: `Bearer ${issued}` })).status).toBe(401);
  });

  test('lists the teams in seed 004’s shape', async () => {
    const response = await get('/agents/', { authorization: `Bearer ${await token()}` });
    expect(await response.json()).toEqual([
      {
        agent_card_url: `${standin.baseUrl}/agents/REPORT_SUMMARY_AGENT_TEAM/.well-known/agent-card.json`,
        name: 'REPORT_SUMMARY_AGENT_TEAM',
        description: 'Summarizes uploaded reports and answers follow-up questions',
      },
      {
        agent_card_url: `${standin.baseUrl}/agents/MOVIE_RECOMMENDER_TEAM/.well-known/agent-card.json`,
        name: 'MOVIE_RECOMMENDER_TEAM',
        description: 'MOVIE_RECOMMENDER_TEAM',
      },
    ]);
  });

  test('serves a 1.0 card per team by seed 001’s mapping, with an ETag', async () => {
    const auth = { authorization: `Bearer ${await token()}` };
    const response = await get(
      '/agents/REPORT_SUMMARY_AGENT_TEAM/.well-known/agent-card.json',
      auth,
    );
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('private, max-age=60');
    const card = (await response.json()) as Record<string, unknown>;
    expect(card).toMatchObject({
      name: 'REPORT_SUMMARY_AGENT_TEAM',
      description: 'Summarizes uploaded reports and answers follow-up questions',
      supportedInterfaces: [
        {
          url: `${standin.baseUrl}/agents/REPORT_SUMMARY_AGENT_TEAM`,
          protocolBinding: 'JSONRPC',
          protocolVersion: '1.0',
        },
      ],
      skills: [
        {
          id: '5001',
          name: 'SUMMARIZE_REPORT',
          description: 'Summarize uploaded reports and answer follow-up questions',
        },
        {
          id: '5002',
          name: 'HUMAN_REVIEW',
          description: 'Ask a person to approve or correct the summary',
        },
      ],
    });
    const etag = response.headers.get('etag');
    expect(etag).toMatch(/^".+"$/);
    const again = await get('/agents/REPORT_SUMMARY_AGENT_TEAM/.well-known/agent-card.json', {
      ...auth,
      'if-none-match': etag ?? '',
    });
    expect(again.status).toBe(304);
    expect(again.headers.get('etag')).toBe(etag);
  });

  test('an unknown team is 404', async () => {
    const auth = { authorization: `Bearer ${await token()}` };
    expect((await get('/agents/NO_SUCH_TEAM/.well-known/agent-card.json', auth)).status).toBe(404);
  });

  test('the A2A client reads its cards with no drift from the catalog they came from', async () => {
    const client = new A2AClient({
      baseUrl: standin.baseUrl,
      credentials: { ...CREDENTIALS, tokenUrl: standin.tokenUrl },
      timeoutMs: 1000,
      cacheTtlMs: 60_000,
      retries: 0,
      maxBodyBytes: 1_048_576,
    });
    const listing = await client.listAgents();
    expect(listing.map((l) => l.name)).toEqual(CATALOG.teams.map((t) => t.name));
    for (const team of CATALOG.teams) {
      const card = await client.card(team.name);
      expect(cardDrift(card, team.tools, team)).toEqual([]);
    }
    const movies = await client.card('MOVIE_RECOMMENDER_TEAM');
    expect(movies.description).toBe('MOVIE_RECOMMENDER_TEAM');
    expect(movies.skills).toEqual([]);
    const before = standin.requestCount;
    const reads = catalogReads;
    await client.card('REPORT_SUMMARY_AGENT_TEAM');
    expect(standin.requestCount).toBe(before);
    expect(catalogReads).toBe(reads);
  });
});

describe('catalog reads', () => {
  async function countingStandin(catalogReuseMs: number | undefined, fail = false) {
    const reads = { count: 0 };
    const instance = await startA2AStandin({
      loadCatalog: async () => {
        reads.count++;
        if (fail && reads.count === 1) throw new Error('database down');
        return CATALOG;
      },
      credentials: CREDENTIALS,
      staticTokens: ['t'],
      catalogReuseMs,
    });
    const list = async () =>
      (await fetch(`${instance.baseUrl}/agents/`, { headers: { authorization: 'Bearer t' } }))
        .status;
    return { instance, reads, list };
  }

  test('requests within a second share one read', async () => {
    const { instance, reads, list } = await countingStandin(undefined);
    expect([await list(), await list(), await list()]).toEqual([200, 200, 200]);
    expect(reads.count).toBe(1);
    await instance.stop();
  });

  test('catalogReuseMs 0: a read per request', async () => {
    const { instance, reads, list } = await countingStandin(0);
    await list();
    await list();
    expect(reads.count).toBe(2);
    await instance.stop();
  });

  test('a failed read is a 500 and is not reused', async () => {
    const { instance, reads, list } = await countingStandin(undefined, true);
    expect(await list()).toBe(500);
    expect(await list()).toBe(200);
    expect(reads.count).toBe(2);
    await instance.stop();
  });
});
