import { ApolloClient, gql, HttpLink, InMemoryCache } from '@apollo/client/core';
import { fetchExchange, Client as UrqlClient } from '@urql/core';
import { request as graphqlRequest } from 'graphql-request';
import { createClient as createSseClient } from 'graphql-sse';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { embeddedPg, runsIn, wsClient } from './live/support.js';
import { startTestServer, type TestServer } from './support/server.js';

// The GraphQL clients frontends use, each with its defaults (only the URL), against a real
// server over a real socket. What each sent is recorded by wrapping the platform's fetch.

const QUERY = '{ agents(first: 2) { totalCount nodes { name owner } } }';
const WAITING = 'subscription { teamsWaitingForHuman { execId teamName } }';

interface Agents {
  agents: { totalCount: number; nodes: { name: string; owner: string }[] };
}
interface Waiting {
  teamsWaitingForHuman: { execId: string; teamName: string }[];
}

let t: TestServer;
let endpoint: string;
let waitingNow: string[];
const sent: { method: string; contentType: string | null }[] = [];

beforeAll(async () => {
  t = await startTestServer();
  endpoint = `${t.url}/graphql`;
  waitingNow = (await runsIn(embeddedPg(t.server), 'WAITING_FOR_HUMAN')).map((r) => r.execId);
});
afterAll(() => t.stop());

/** The platform's fetch, noting each request's method and content type. */
const recordingFetch: typeof fetch = (input, init) => {
  const request = new Request(input, init);
  sent.push({ method: request.method, contentType: request.headers.get('content-type') });
  return fetch(request);
};

function expectAgents(data: Agents | null | undefined): void {
  expect(data?.agents.totalCount).toBe(7);
  expect(data?.agents.nodes).toHaveLength(2);
}

describe('queries with each client’s defaults', () => {
  test('urql (@urql/core): queries go out as GET', async () => {
    sent.length = 0;
    const client = new UrqlClient({
      url: endpoint,
      exchanges: [fetchExchange],
      fetch: recordingFetch,
    });
    const result = await client.query<Agents>(QUERY, {}).toPromise();
    expect(result.error).toBeUndefined();
    expectAgents(result.data);
    expect(sent.map((r) => r.method)).toEqual(['GET']);
  });

  test('Apollo Client (@apollo/client/core)', async () => {
    sent.length = 0;
    const client = new ApolloClient({
      link: new HttpLink({ uri: endpoint, fetch: recordingFetch }),
      cache: new InMemoryCache(),
    });
    const result = await client.query<Agents>({ query: gql(QUERY) });
    expect(result.error).toBeUndefined();
    expectAgents(result.data);
    expect(sent).toEqual([{ method: 'POST', contentType: 'application/json' }]);
    client.stop();
  });

  test('graphql-request', async () => {
    expectAgents(await graphqlRequest<Agents>(endpoint, QUERY));
  });

  test('graphql-ws', async () => {
    const client = wsClient(t.url);
    try {
      const result = await new Promise<{ data?: Agents | null; errors?: unknown }>(
        (resolve, reject) => {
          client.subscribe<Agents>(
            { query: QUERY },
            { next: resolve, error: reject, complete() {} },
          );
        },
      );
      expect(result.errors).toBeUndefined();
      expectAgents(result.data);
    } finally {
      await client.dispose();
    }
  });

  test('graphql-sse', async () => {
    const client = createSseClient({ url: endpoint, fetchFn: recordingFetch });
    try {
      sent.length = 0;
      const results = [];
      for await (const result of client.iterate<Agents>({ query: QUERY })) results.push(result);
      expect(results).toHaveLength(1);
      expectAgents(results[0]?.data);
      expect(sent.map((r) => r.method)).toEqual(['POST']);
    } finally {
      client.dispose();
    }
  });
});

describe('subscriptions with each client’s defaults', () => {
  const first = async (events: AsyncIterable<{ data?: Waiting | null }>) => {
    for await (const event of events) return event;
    throw new Error('the subscription ended without an event');
  };
  const ids = (event: { data?: Waiting | null }) =>
    (event.data?.teamsWaitingForHuman.map((run) => run.execId) ?? []).sort();

  test('graphql-ws: the current set of runs waiting for a human', async () => {
    const client = wsClient(t.url);
    try {
      const event = await first(client.iterate<Waiting>({ query: WAITING }));
      expect(ids(event)).toEqual([...waitingNow].sort());
    } finally {
      await client.dispose();
    }
  });

  test('graphql-sse: the same set', async () => {
    const client = createSseClient({ url: endpoint });
    try {
      const event = await first(client.iterate<Waiting>({ query: WAITING }));
      expect(ids(event)).toEqual([...waitingNow].sort());
    } finally {
      client.dispose();
    }
  });
});
