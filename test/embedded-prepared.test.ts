/**
 * The embedded driver's prepared statements (src/db/embedded/prepared.ts): a text parsed once
 * answers every later run with that run's values, whatever PostgreSQL plans; a text closed
 * beyond the cache is prepared again; an error leaves the session serving; a run waits for
 * an open transaction; a run done at once, for a session nothing else is using, answers alike.
 */
import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { PreparedStatements } from '../src/db/embedded/prepared.js';

let pg: PGlite;
let prepared: PreparedStatements;

beforeAll(async () => {
  pg = await PGlite.create();
  await pg.exec(`CREATE TABLE runs (id text PRIMARY KEY, started timestamptz, n int);
    INSERT INTO runs SELECT 'r' || i, timestamptz '2026-01-01T00:00:00Z' + i * interval '1 hour', i
      FROM generate_series(1, 20) i;`);
  prepared = new PreparedStatements(pg);
});
afterAll(() => pg.close());

const byStart = 'SELECT id, n FROM runs WHERE started >= $1 AND n <= $2 ORDER BY n';

test('each run of one text answers with its own values, past the point PostgreSQL may plan it once', async () => {
  for (let limit = 1; limit <= 12; limit++) {
    const { columns, rows } = await prepared.rows(
      byStart,
      [new Date('2026-01-01T05:00:00Z'), limit],
      undefined,
    );
    expect(columns).toEqual(['id', 'n']);
    expect(rows).toEqual(
      Array.from({ length: Math.max(0, limit - 4) }, (_, i) => [`r${i + 5}`, i + 5]),
    );
  }
  const { rows } = await prepared.rows(
    'SELECT count(*)::int AS c FROM runs WHERE id = $1',
    [null],
    1,
  );
  expect(rows).toEqual([[0]]);
});

test('a text closed to make room is prepared again and answers as before', async () => {
  const first = await prepared.rows('SELECT $1::int + 0 AS v', [7], undefined);
  for (let i = 0; i < 300; i++) {
    await prepared.rows(`SELECT $1::int + ${i + 1} AS v`, [i], undefined);
  }
  expect(await prepared.rows('SELECT $1::int + 0 AS v', [8], undefined)).toEqual({
    columns: ['v'],
    rows: [[8]],
  });
  expect(first.rows).toEqual([[7]]);
  const { rows } = await pg.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_prepared_statements`,
  );
  expect(rows[0]?.n).toBeLessThanOrEqual(256);
});

test("an error is PostgreSQL's, with the text and values, and the session goes on serving", async () => {
  const failed = await prepared.rows(byStart, ['not a date', 3], undefined).catch((e) => e);
  expect(failed).toMatchObject({ code: '22007', query: byStart, params: ['not a date', 3] });
  const missing = await prepared.rows('SELECT x FROM no_such_table', [], undefined).catch((e) => e);
  expect(missing).toMatchObject({ code: '42P01' });
  expect((await prepared.rows(byStart, [new Date(0), 2], undefined)).rows).toEqual([
    ['r1', 1],
    ['r2', 2],
  ]);
});

test('a run done at once (rowsNow) answers as a run that waits its turn, on the same prepared texts', async () => {
  const texts = [byStart, 'SELECT count(*)::int AS c FROM runs WHERE id = $1'];
  for (let limit = 0; limit <= 6; limit++) {
    const values = [new Date('2026-01-01T02:00:00Z'), limit];
    expect(prepared.rowsNow(byStart, values, undefined)).toEqual(
      await prepared.rows(byStart, values, undefined),
    );
    expect(prepared.rowsNow(texts[1] as string, [`r${limit}`], 1)).toEqual(
      await prepared.rows(texts[1] as string, [`r${limit}`], 1),
    );
  }
  // Past the cache's capacity, a text is closed and prepared again either way.
  for (let i = 0; i < 300; i++) {
    expect(prepared.rowsNow(`SELECT $1::int * ${i + 2} AS v`, [i], undefined).rows).toEqual([
      [i * (i + 2)],
    ]);
  }
  expect((await prepared.rows(`SELECT $1::int * 2 AS v`, [21], undefined)).rows).toEqual([[42]]);
  const { rows } = await pg.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_prepared_statements`,
  );
  expect(rows[0]?.n).toBeLessThanOrEqual(256);
});

test("a run done at once throws PostgreSQL's error, with the text and values, and the session goes on", async () => {
  let failed: unknown;
  try {
    prepared.rowsNow(byStart, ['not a date', 3], undefined);
  } catch (error) {
    failed = error;
  }
  expect(failed).toMatchObject({ code: '22007', query: byStart, params: ['not a date', 3] });
  expect(() => prepared.rowsNow('SELECT x FROM no_such_table', [], undefined)).toThrow(
    expect.objectContaining({ code: '42P01' }),
  );
  expect(prepared.rowsNow(byStart, [new Date(0), 2], undefined).rows).toEqual([
    ['r1', 1],
    ['r2', 2],
  ]);
});

test('a run waits for an open transaction: it never sees rows the transaction rolls back', async () => {
  let release: () => void = () => {};
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  let inserted: () => void = () => {};
  const insertedYet = new Promise<void>((resolve) => {
    inserted = resolve;
  });
  const transaction = pg.transaction(async (tx) => {
    await tx.query(`INSERT INTO runs VALUES ('r99', now(), 99)`);
    inserted();
    await held;
    await tx.rollback();
  });
  await insertedYet;
  const read = prepared.rows('SELECT id FROM runs WHERE n = $1', [99], undefined);
  release();
  await transaction;
  // Run inside the open transaction, it would have read the row before the rollback.
  expect((await read).rows).toEqual([]);
});
