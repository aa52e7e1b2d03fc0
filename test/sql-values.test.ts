/**
 * The statement helpers of src/db/sql (fragment.ts, query.ts, in-lists.ts), as a new statement
 * would use them.
 */
import { expect, test } from 'vitest';
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
