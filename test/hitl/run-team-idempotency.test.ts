/**
 * runTeam with an idempotency key (issue 25 item 9): a retry or a double click with the same
 * key starts one run and gets the first call's submission back.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { EmbeddedPg } from '../../src/db/embedded/database.js';
import { embeddedPg } from '../live/support.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { hs256Tokens } from '../support/tokens.js';
import { REPORT } from './support.js';

const SECRET = 'a-run-team-idempotency-test-secret-long!!';

const { bearer } = hs256Tokens(SECRET);

let t: TestServer;
let pg: EmbeddedPg;
let alice: Record<string, string>;
let bob: Record<string, string>;
beforeAll(async () => {
  t = await startTestServer({ AUTH_JWT_SECRET: SECRET });
  pg = embeddedPg(t.server);
  // Two viewers who may both start APP_USER's team.
  alice = await bearer({ db_user: 'APP_USER' });
  bob = await bearer({ roles: ['admin'] });
});
afterAll(() => t.stop());

interface Submission {
  readonly conversationId: string;
  readonly submittedAt: string;
}

const RUN = `mutation($key: String, $prompt: String!) {
  runTeam(teamName: "${REPORT}", prompt: $prompt, idempotencyKey: $key) { conversationId submittedAt }
}`;

async function runTeam(
  headers: Record<string, string>,
  variables: { key?: string; prompt?: string },
) {
  return t.post<{ runTeam: Submission }>(
    RUN,
    { prompt: 'Summarize the quarter', ...variables },
    headers,
  );
}

async function jobs(): Promise<number> {
  const { rows } = await pg.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM emb_scheduler_jobs',
  );
  return rows[0]?.n ?? 0;
}

const submittedLines = () =>
  t.logs.filter((l) => l.component === 'audit' && l.msg === 'runTeam submitted').length;

test('concurrent calls with the same key start one run and return the same submission', async () => {
  const [jobsBefore, linesBefore] = [await jobs(), submittedLines()];
  const [first, second] = await Promise.all([
    runTeam(alice, { key: 'double-click-1' }),
    runTeam(alice, { key: 'double-click-1' }),
  ]);
  expect(first.errors).toBeUndefined();
  expect(second.data?.runTeam).toEqual(first.data?.runTeam);
  // A retry after the first has answered: still the first call's result.
  const retry = await runTeam(alice, { key: 'double-click-1' });
  expect(retry.data?.runTeam).toEqual(first.data?.runTeam);

  expect(await jobs()).toBe(jobsBefore + 1);
  expect(submittedLines()).toBe(linesBefore + 1);
  expect(
    t.logs.filter((l) => l.component === 'audit' && l.msg === 'runTeam replayed'),
  ).toHaveLength(2);
});

test('the Idempotency-Key header works as the argument does', async () => {
  const jobsBefore = await jobs();
  const headers = { ...alice, 'idempotency-key': 'header-key-1' };
  const first = await runTeam(headers, {});
  const again = await runTeam(headers, {});
  const viaArgument = await runTeam(alice, { key: 'header-key-1' });
  expect(first.errors).toBeUndefined();
  expect(again.data?.runTeam).toEqual(first.data?.runTeam);
  expect(viaArgument.data?.runTeam).toEqual(first.data?.runTeam);
  expect(await jobs()).toBe(jobsBefore + 1);
});

test('a different key, no key, or another viewer’s same key each start a run', async () => {
  const jobsBefore = await jobs();
  const mine = await runTeam(alice, { key: 'shared-key' });
  const other = await runTeam(alice, { key: 'another-key' });
  const bobs = await runTeam(bob, { key: 'shared-key' });
  const none = await Promise.all([runTeam(alice, {}), runTeam(alice, {})]);
  const ids = [mine, other, bobs, ...none].map((r) => r.data?.runTeam.conversationId);
  expect(new Set(ids).size).toBe(5);
  expect(await jobs()).toBe(jobsBefore + 5);
});

test('a key reused for another prompt, or too long, is BAD_USER_INPUT and starts nothing', async () => {
  await runTeam(alice, { key: 'reused-key' });
  const jobsBefore = await jobs();
  const reused = await runTeam(alice, { key: 'reused-key', prompt: 'Something else' });
  expect(reused.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  expect(reused.errors?.[0]?.message).toContain('other arguments');
  const long = await runTeam(alice, { key: 'k'.repeat(256) });
  expect(long.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  const header = await runTeam({ ...alice, 'idempotency-key': 'h'.repeat(256) }, {});
  expect(header.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  expect(header.errors?.[0]?.message).toContain('Idempotency-Key');
  const differ = await runTeam({ ...alice, 'idempotency-key': 'one' }, { key: 'two' });
  expect(differ.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  expect(await jobs()).toBe(jobsBefore);
});

test('a call that failed is forgotten, so its key can be retried', async () => {
  const unknown = await t.post(
    'mutation { runTeam(teamName: "NO_SUCH_TEAM", prompt: "hi", idempotencyKey: "retry-key") { conversationId } }',
    {},
    alice,
  );
  expect(unknown.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
  const jobsBefore = await jobs();
  const retried = await runTeam(alice, { key: 'retry-key' });
  expect(retried.errors).toBeUndefined();
  expect(await jobs()).toBe(jobsBefore + 1);
});
