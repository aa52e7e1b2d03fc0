/**
 * What the review of every printed statement (issue 14) checks, over the whole registry that
 * the contract suite and `npm run oracle:check` run: every statement the code can build is in
 * it, none casts a CLOB to a character type, and every statement read through the
 * DESCRIBE_AGENT wrapper names the order the wrapper must repeat.
 */
import { readdir, readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { type Catalog, discoverCatalog } from '../../src/db/catalog.js';
import type { Driver } from '../../src/db/driver.js';
import { openEmbeddedDatabase } from '../../src/db/embedded/database.js';
import { sql } from '../../src/db/sql/fragment.js';
import { fetchRows, query } from '../../src/db/sql/query.js';
import {
  type RegisteredStatement,
  registeredStatements,
} from '../../src/oracle-check/statements.js';

let driver: Driver;
let entries: RegisteredStatement[];

beforeAll(async () => {
  const config = loadConfig({});
  if (config.database.kind !== 'embedded') throw new Error('expected the embedded config');
  driver = (await openEmbeddedDatabase(config.database)).driver;
  const catalogs: Catalog[] = [];
  for (const scope of ['dba', 'user'] as const) {
    catalogs.push(await discoverCatalog(driver, scope, 'APP_USER'));
  }
  entries = registeredStatements(catalogs);
});
afterAll(() => driver?.close());

const SQL_DIR = new URL('../../src/db/sql/', import.meta.url);

/** Statement names as src/db/sql writes them: literal, or a literal prefix of a template. */
async function namesInSource(): Promise<{ names: Set<string>; prefixes: Set<string> }> {
  const names = new Set<string>();
  const prefixes = new Set<string>();
  for (const file of await readdir(SQL_DIR)) {
    const source = await readFile(new URL(file, SQL_DIR), 'utf8');
    for (const m of source.matchAll(
      /(?:\b(?:query|paged|jsonArrayQuery)\(\s*|\bcount: )'([\w.]+)'/g,
    )) {
      names.add(m[1] as string);
    }
    for (const m of source.matchAll(/\b(?:query|paged)\(\s*`([\w.]+)\$\{/g)) {
      prefixes.add(m[1] as string);
    }
  }
  return { names, prefixes };
}

describe('the statement registry (src/oracle-check/statements.ts)', () => {
  test('holds every statement src/db/sql can build, the live poll included', async () => {
    const registered = new Set(entries.map((entry) => entry.statement.name));
    const { names, prefixes } = await namesInSource();
    expect(names.size).toBeGreaterThan(20);
    expect(names).toContain('teamRuns.live');
    expect([...names].filter((name) => !registered.has(name))).toEqual([]);
    for (const prefix of prefixes) {
      expect(
        [...registered].some((name) => name.startsWith(prefix)),
        prefix,
      ).toBe(true);
    }
    expect(registered).toContain('teamRuns.live');
  });

  test('no statement casts a column to a character type (ORA-22835 on a long CLOB value)', () => {
    // PostgreSQL truncates silently, so only the text shows it; CAST(NULL AS …) is harmless.
    const castToText = /CAST\((?!NULL\b)[^()]*\bAS\s+N?(VAR)?CHAR2?\b/i;
    const offending = entries.filter((entry) => castToText.test(entry.statement.text));
    expect(offending.map((entry) => entry.statement.name)).toEqual([]);
    const stats = entries.find((entry) => entry.statement.name === 'teams.stats');
    expect(stats?.statement.text).toContain(
      "UPPER(TRIM(DBMS_LOB.SUBSTR(typ.ATTRIBUTE_VALUE, 30, 1))) = 'HUMAN'",
    );
  });

  test('no statement writes a zero-length string literal (Oracle reads it as NULL)', () => {
    // PostgreSQL's '' is a string: a comparison or concatenation with it would mean one thing
    // on the embedded database and another on Oracle. Literals are read whole, so a doubled
    // quote inside one ('''' is one quote) is not an empty one.
    const empty = (text: string) =>
      [...text.matchAll(/'(?:[^']|'')*'/g)].some((literal) => literal[0] === "''");
    expect(empty("SELECT '''' || x, 'it''s' FROM DUAL")).toBe(false);
    expect(empty("SELECT x FROM t WHERE y = ''")).toBe(true);
    const offending = entries.filter((entry) => empty(entry.statement.text));
    expect(offending.map((entry) => entry.statement.name)).toEqual([]);
  });

  test('a zero-length string bound reads as NULL on the embedded database, as on Oracle', async () => {
    const blank = query(
      'test.blankBind',
      sql`SELECT CASE WHEN UPPER(${sql.bind('v', '')}) IS NULL THEN 1 ELSE 0 END AS IS_NULL FROM DUAL`,
      (row) => row.isNull,
    );
    expect((await fetchRows(driver, blank)).map(Number)).toEqual([1]);
  });

  test('activity buckets truncate each event’s UTC time, a TIMESTAMP in every branch', () => {
    const activity = entries.filter((entry) =>
      entry.statement.name.startsWith('teamRuns.activity.'),
    );
    expect(activity.length).toBeGreaterThan(3);
    for (const { statement } of activity) {
      // TRUNC of a TIMESTAMP WITH TIME ZONE gives the DATE of the value's own zone; every
      // event's moment is its UTC wall clock before it is truncated.
      expect(statement.text, statement.name).toMatch(/TRUNC\(x\.AT, '(HH|DD)'\)/);
      for (const branch of statement.text.split(' UNION ALL ')) {
        const moment = /SELECT \d+(?: AS KIND)?, (.+?)(?: AS AT)?, /.exec(branch)?.[1];
        expect(moment, statement.name).toMatch(
          /^(SYS_EXTRACT_UTC\([hc]\.(START|END)_DATE\)|NULL)$/,
        );
      }
    }
  });

  test('JSON_TABLE columns have the types Oracle’s grammar names there (VARCHAR2, not VARCHAR)', () => {
    // 19c's JSON_value_return_type: VARCHAR2, NUMBER, DATE, TIMESTAMP [WITH TIME ZONE], CLOB.
    const columns = entries.flatMap((entry) =>
      [...entry.statement.text.matchAll(/JSON_TABLE\(.*?COLUMNS \((.*?)\)\) \w+/g)].flatMap((m) =>
        (m[1] as string).split(','),
      ),
    );
    expect(columns.length).toBeGreaterThan(3);
    for (const column of columns) {
      expect(column.trim()).toMatch(
        /^\w+ (FOR ORDINALITY|(VARCHAR2\(\d+\)|NUMBER|DATE|TIMESTAMP|CLOB) PATH '[^']*')$/,
      );
    }
  });

  test('every statement read with agent details names its order, which its own ORDER BY ends with', () => {
    const withDetails = entries.filter((entry) => entry.agentDetails);
    expect(withDetails.length).toBeGreaterThan(3);
    for (const { statement } of withDetails) {
      const order = statement.orderedBy ?? [];
      expect(order.length, statement.name).toBeGreaterThan(0);
      if (statement.name === 'agents.describeProbe') continue;
      expect(statement.text, statement.name).toMatch(
        new RegExp(`ORDER BY ${order.join(', ')}( OFFSET|$)`),
      );
    }
  });

  test('through the embedded wrapper, a page keeps its order (owner, then name)', async () => {
    const page = entries.find(
      (entry) => entry.statement.name === 'agents.page' && entry.statement.text.includes('OWNER,'),
    );
    if (!page) throw new Error('no agents.page with an owner column');
    const rows = await driver.queryWithAgentDetails(page.statement, {
      ...page.binds,
      page_limit: 100,
    });
    const keys = rows.map((row) => `${row.owner}\u0000${row.agentName}`);
    expect(keys.length).toBeGreaterThan(3);
    expect(keys).toEqual([...keys].sort());
  });
});
