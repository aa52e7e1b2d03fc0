import { createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { subscribeSse, wsUrl } from './live/support.js';
import { startTestServer, type TestServer } from './support/server.js';
import { hs256Tokens } from './support/tokens.js';

const SECRET = 'statement-log-secret-0123456789abcdef';
const { bearer } = hs256Tokens(SECRET);
/** A bind value no statement text, name or row could hold by chance. */
const DISTINCTIVE = 'Zq7-bind-value-never-shown';

interface Logged {
  name: string;
  text: string | null;
  binds: Record<string, string>;
  ms: number;
  rows: number | null;
}

async function postRaw(t: TestServer, query: string, headers: Record<string, string>) {
  const response = await fetch(`${t.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ query, variables: { id: DISTINCTIVE } }),
  });
  return (await response.json()) as {
    data?: unknown;
    extensions?: { statements?: Logged[] };
  };
}

const TEAMS =
  'query Teams { teams(first: 2) { nodes { name runs(first: 2) { nodes { execId } } } } }';
const BY_ID = 'query ById($id: ID!) { teamRun(execId: $id) { execId } }';

describe('statements in the response, development mode', () => {
  let t: TestServer;
  let admin: Record<string, string>;
  let owner: Record<string, string>;

  beforeAll(async () => {
    // The team catalog is read by every request (no cross-request cache), so two requests of
    // one document send the same statements.
    t = await startTestServer({
      NODE_ENV: 'development',
      AUTH_JWT_SECRET: SECRET,
      TEAM_TOOLS_CACHE_TTL_MS: '0',
    });
    admin = await bearer({ roles: ['admin'] });
    owner = await bearer({ db_user: 'APP_USER' });
  });
  afterAll(() => t?.stop());

  it("an administrator's query over HTTP lists its statements: name, text, time, rows", async () => {
    const body = await postRaw(t, TEAMS, admin);
    const statements = body.extensions?.statements ?? [];
    expect(statements.length).toBeGreaterThan(0);
    const counted = await t.countStatements(() => postRaw(t, TEAMS, admin));
    expect(statements).toHaveLength(counted);
    for (const statement of statements) {
      expect(statement.name).toMatch(/\w/);
      expect(statement.text).toMatch(/\bSELECT\b/i);
      expect(statement.ms).toBeGreaterThanOrEqual(0);
      expect(statement.rows).toBeGreaterThanOrEqual(0);
    }
  });

  it('binds are named and redacted: the value never appears', async () => {
    const body = await postRaw(t, BY_ID, admin);
    const statements = body.extensions?.statements ?? [];
    expect(statements.length).toBeGreaterThan(0);
    const shown = JSON.stringify(body.extensions);
    expect(shown).not.toContain(DISTINCTIVE);
    expect(statements.flatMap((s) => Object.values(s.binds))).toContain('REDACTED');
    expect(new Set(statements.flatMap((s) => Object.values(s.binds)))).toEqual(
      new Set(['REDACTED']),
    );
  });

  it('a non-administrator sees none', async () => {
    const body = await postRaw(t, TEAMS, owner);
    expect(body.data).toBeTruthy();
    expect(body.extensions?.statements).toBeUndefined();
  });

  it('over graphql-ws, a query carries them too', async () => {
    const client = createClient({
      url: wsUrl(t.url),
      webSocketImpl: WebSocket,
      retryAttempts: 0,
      connectionParams: { authorization: admin.authorization },
    });
    try {
      const result = await new Promise<{ extensions?: { statements?: Logged[] } }>(
        (resolve, reject) => {
          client.subscribe(
            { query: TEAMS },
            { next: (value) => resolve(value as never), error: reject, complete: () => {} },
          );
        },
      );
      expect(result.extensions?.statements?.length).toBeGreaterThan(0);
    } finally {
      await client.dispose();
    }
  });

  it("over SSE, each subscription event carries its own event's statements", async () => {
    const events = await subscribeSse<unknown>(
      t.url,
      'subscription { teamsWaitingForHuman { execId run { tasks { taskName } } } }',
      {},
      admin,
    );
    try {
      await events.take(1);
      const first = events.events[0] as { extensions?: { statements?: Logged[] } };
      expect(first.extensions?.statements?.length).toBeGreaterThan(0);
      expect(first.extensions?.statements?.[0]?.text).toMatch(/\bSELECT\b/i);
    } finally {
      events.close();
    }
  });
});

describe('statements in the response, outside development mode', () => {
  it('production never shows them, not even to an administrator', async () => {
    const t = await startTestServer({ NODE_ENV: 'production', AUTH_JWT_SECRET: SECRET });
    try {
      const body = await postRaw(t, TEAMS, await bearer({ roles: ['admin'] }));
      expect(body.data).toBeTruthy();
      expect(body.extensions?.statements).toBeUndefined();
    } finally {
      await t.stop();
    }
  });
});
