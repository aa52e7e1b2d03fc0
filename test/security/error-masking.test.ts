import pino from 'pino';
import { afterAll, beforeAll, expect, test, vi } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { type AgentGraphServer, createServer } from '../../src/server.js';

const TOKEN = 'eyJhbGciOiJIUzI1NiJ9.eyJkYl91c2VyIjoiT1BTIn0.c2VjcmV0LXNpZ25hdHVyZS14eXo';
const ORA = 'ORA-00942: table or view does not exist';
const SQL = 'SELECT team_name, a2a_secret FROM dba_ai_agent_teams WHERE owner = :owner';

const logLines: string[] = [];
let server: AgentGraphServer;
let url: string;
beforeAll(async () => {
  const logger = pino({ level: 'info' }, { write: (line: string) => logLines.push(line) });
  server = await createServer(loadConfig({ PORT: '0', SIMULATE: 'false' }), logger);
  url = await server.start();
});
afterAll(() => server.stop(100));

/** What an oracledb error looks like: ORA- text, the statement, a stack, driver fields. */
function driverError(): Error {
  const error = new Error(
    `${ORA}\nHelp: https://docs.oracle.com/error-help/db/ora-00942/\n${SQL} -- bearer ${TOKEN}`,
  );
  return Object.assign(error, { errorNum: 942, offset: 24, code: 'ORA-00942' });
}

test('a driver error reaches the client as INTERNAL with a request id, and the log has it all', async () => {
  const { driver } = server.database;
  const query = vi.spyOn(driver, 'query').mockRejectedValue(driverError());
  const withDetails = vi.spyOn(driver, 'queryWithAgentDetails').mockRejectedValue(driverError());
  let text: string;
  let status: number;
  try {
    const response = await fetch(`${url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-request-id': 'masking-test-1' },
      body: JSON.stringify({ query: '{ teams(first: 2) { nodes { name } } }' }),
    });
    status = response.status;
    text = await response.text();
  } finally {
    query.mockRestore();
    withDetails.mockRestore();
  }

  expect(status).toBe(200);
  const body = JSON.parse(text) as {
    data: unknown;
    errors: { message: string; path: string[]; extensions: Record<string, unknown> }[];
  };
  expect(body.data).toEqual({ teams: null });
  expect(body.errors).toEqual([
    {
      message: 'Internal server error',
      locations: [{ line: 1, column: 3 }],
      path: ['teams'],
      extensions: { code: 'INTERNAL', requestId: 'masking-test-1' },
    },
  ]);
  for (const secret of ['ORA-', 'SELECT', 'dba_ai_agent_teams', TOKEN, 'eyJ', 'errorNum', '942']) {
    expect(text).not.toContain(secret);
  }
  expect(text).not.toMatch(/\bat .+:\d+:\d+/);

  const entry = logLines
    .map(
      (line) =>
        JSON.parse(line) as {
          msg: string;
          requestId?: string;
          err?: { message: string; stack: string; errorNum: number };
        },
    )
    .find((e) => e.requestId === 'masking-test-1' && e.msg === 'internal error');
  expect(entry?.err?.message).toContain(ORA);
  expect(entry?.err?.message).toContain(SQL);
  expect(entry?.err?.errorNum).toBe(942);
  expect(entry?.err?.stack).toMatch(/error-masking\.test\.ts:\d+:\d+/);
});

test('without a caller request id the server makes one, and logs under it', async () => {
  const query = vi.spyOn(server.database.driver, 'query').mockRejectedValue(driverError());
  let body: { errors: { extensions: { code: string; requestId: string } }[] };
  try {
    const response = await fetch(`${url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ team(name: "ORDER_SUPPORT_TEAM") { name } }' }),
    });
    body = (await response.json()) as typeof body;
  } finally {
    query.mockRestore();
  }
  const { code, requestId } = body.errors[0]?.extensions ?? {};
  expect(code).toBe('INTERNAL');
  expect(requestId).toMatch(/^[0-9a-f-]{36}$/);
  expect(logLines.some((line) => line.includes(requestId ?? '?') && line.includes(ORA))).toBe(true);

  const health = await fetch(`${url}/health`);
  expect(health.status).toBe(200);
  const after = await fetch(`${url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: '{ team(name: "ORDER_SUPPORT_TEAM") { name } }' }),
  });
  expect(await after.json()).toEqual({ data: { team: { name: 'ORDER_SUPPORT_TEAM' } } });
});
