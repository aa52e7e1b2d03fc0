import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { EmbeddedPg } from '../src/db/embedded/database.js';
import { startTestServer, type TestServer } from './support/server.js';

/**
 * This file breaks its server's database on purpose, so it has a server of its own. The
 * failures are real ones raised by the database, as Oracle raises them: nothing in our code
 * is replaced.
 */
let t: TestServer;
let pg: EmbeddedPg;
beforeAll(async () => {
  t = await startTestServer();
  const embedded = t.server.database.embedded;
  if (!embedded) throw new Error('the test server runs on the embedded database');
  pg = embedded.pg;
});
afterAll(() => t.stop());

/** What a client must never see: Oracle/PostgreSQL error text, SQL, object names, stacks. */
const LEAKS = [/ORA-\d/, /\bSELECT\b/i, /\bFROM\b/, /agent_exec_stat/i, /PGlite/i, /\n\s+at /];

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('a statement that fails in the database', () => {
  beforeAll(async () => {
    // V$AGENT_EXEC_STAT now raises what Oracle raises on an internal failure.
    await pg.exec(`
      CREATE FUNCTION test_raise_ora() RETURNS boolean LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION 'ORA-00600: internal error code, arguments: [kghfrf], [SELECT * FROM v$agent_exec_stat]';
      END $$;
      DROP VIEW v$agent_exec_stat;
      CREATE VIEW v$agent_exec_stat AS SELECT * FROM gv$agent_exec_stat WHERE test_raise_ora();
    `);
  });

  test('reaches the client as INTERNAL with the request id, and no database text', async () => {
    const { errors, text } = await t.post(
      '{ execStats(first: 5) { totalCount nodes { conId totalTimeExecMs } } }',
      undefined,
      { 'x-request-id': 'req-database-failure-1' },
    );
    expect(errors).toHaveLength(1);
    expect(errors?.[0]).toMatchObject({
      message: 'Internal server error',
      path: ['execStats'],
      extensions: { code: 'INTERNAL', requestId: 'req-database-failure-1' },
    });
    for (const leak of LEAKS) expect(text).not.toMatch(leak);
  });

  test('is logged on the server with the detail and the same request id', async () => {
    await t.post('{ execStatSummary { executionCount } }', undefined, {
      'x-request-id': 'req-database-failure-2',
    });
    const entry = t.logs.find((l) => l.requestId === 'req-database-failure-2');
    expect(entry?.msg).toBe('internal error');
    expect(entry?.level).toBeGreaterThanOrEqual(50);
    expect((entry?.err as { message?: string } | undefined)?.message).toContain('ORA-00600');
  });

  test('without an X-Request-Id the server makes one up, so the log can still be found', async () => {
    const { errors } = await t.post('{ execStats { totalCount } }');
    const requestId = errors?.[0]?.extensions?.requestId;
    expect(requestId).toMatch(UUID);
    expect(t.logs.some((l) => l.requestId === requestId && l.msg === 'internal error')).toBe(true);
  });

  test('does not break the fields that do not need it', async () => {
    const { data, errors } = await t.post('{ agents(first: 1) { totalCount } }');
    expect(errors).toBeUndefined();
    expect(data).toMatchObject({ agents: { totalCount: expect.any(Number) } });
  });
});

describe('a database that is gone', () => {
  beforeAll(async () => {
    await pg.close();
  });

  test('makes /ready answer 503 while /health stays 200', async () => {
    const ready = await fetch(`${t.url}/ready`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toEqual({ status: 'database unavailable' });
    expect((await fetch(`${t.url}/health`)).status).toBe(200);
    expect(t.logs.some((l) => l.msg === 'readiness check failed')).toBe(true);
  });

  test('turns every query into INTERNAL without the driver message', async () => {
    const { errors, text } = await t.post('{ agent(name: "ORDER_ASSISTANT") { name } }');
    expect(errors?.[0]?.extensions?.code).toBe('INTERNAL');
    for (const leak of LEAKS) expect(text).not.toMatch(leak);
  });
});
