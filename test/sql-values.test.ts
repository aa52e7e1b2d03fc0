/**
 * The statement helpers of src/db/sql (fragment.ts, query.ts, in-lists.ts), as a new statement
 * would use them, and the readers of its rows' values (src/db/rows.ts).
 */
import { expect, test } from 'vitest';
import { dateOrNull } from '../src/db/rows.js';
import { sql } from '../src/db/sql/fragment.js';
import { inList } from '../src/db/sql/in-lists.js';
import { query } from '../src/db/sql/query.js';

test('a fragment brings its binds; an absent condition drops out of WHERE', () => {
  const byName = (name: string | null) =>
    query(
      'example',
      sql`SELECT AGENT_NAME FROM USER_AI_AGENTS ${sql.where(
        name === null ? undefined : sql`AGENT_NAME = ${sql.bind('name', name)}`,
        sql`AGENT_ID IN (${inList('id', [1, 2, 3])})`,
      )}`,
      (row) => row.agentName,
    );
  expect(byName('X')).toMatchObject({
    statement: {
      text: 'SELECT AGENT_NAME FROM USER_AI_AGENTS WHERE AGENT_NAME = :name AND AGENT_ID IN (:id0, :id1, :id2, :id3)',
    },
    binds: { name: 'X', id0: 1, id1: 2, id2: 3, id3: 3 },
  });
  expect(byName(null).statement.text).toBe(
    'SELECT AGENT_NAME FROM USER_AI_AGENTS WHERE AGENT_ID IN (:id0, :id1, :id2, :id3)',
  );
  expect(query('all', sql`SELECT 1 AS ONE FROM DUAL ${sql.where()}`, Number).statement.text).toBe(
    'SELECT 1 AS ONE FROM DUAL',
  );
});

test('one bind name given two different values is refused', () => {
  expect(() => sql`${sql.bind('owner', 'A')} ${sql.bind('owner', 'B')}`).toThrow(
    'bind :owner is given two different values',
  );
  expect(sql`${sql.bind('owner', 'A')} OR ${sql.bind('owner', 'A')}`.binds).toEqual({ owner: 'A' });
});

test("a date's text reads as the instant Date's parser gives, in UTC, or null", () => {
  // What both databases write in a JSON list: a wall clock without a zone, up to nine digits
  // of a fraction, read to the millisecond.
  const read = (text: string) => dateOrNull(text)?.toISOString() ?? null;
  expect(read('2026-12-03T08:08:21')).toBe('2026-12-03T08:08:21.000Z');
  expect(read('2026-12-03T08:08:21.5')).toBe('2026-12-03T08:08:21.500Z');
  expect(read('2026-12-03T08:08:21.539999999')).toBe('2026-12-03T08:08:21.539Z');
  expect(read('2024-02-29T23:59:59.999')).toBe('2024-02-29T23:59:59.999Z');
  expect(read('1900-03-01T00:00:00')).toBe('1900-03-01T00:00:00.000Z');
  expect(read('0001-01-01T00:00:00')).toBe('0001-01-01T00:00:00.000Z');
  expect(read('9999-12-31T23:59:59.999999')).toBe('9999-12-31T23:59:59.999Z');
  // Texts the digits alone do not read are Date's parser's to judge, as before.
  expect(read('2023-02-29T00:00:00')).toBe('2023-03-01T00:00:00.000Z');
  expect(read('2026-12-03T24:00:00')).toBe('2026-12-04T00:00:00.000Z');
  expect(read('2026-12-03T08:08:60')).toBeNull();
  expect(read('2026-12-03T08:08:21+02:00')).toBe('2026-12-03T06:08:21.000Z');
  expect(read('not a date')).toBeNull();
  for (let i = 0; i < 2000; i++) {
    const instant = Date.UTC(1000, 0, 1) + Math.floor(Math.random() * 2.5e14);
    const text = new Date(instant).toISOString().slice(0, -1);
    expect(dateOrNull(text)?.getTime()).toBe(instant);
  }
});
