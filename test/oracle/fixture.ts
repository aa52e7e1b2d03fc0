/**
 * Prints test/oracle/fixture.sql (`npm run -s oracle:fixture > test/oracle/fixture.sql`): the
 * embedded database's tables, views and demo rows, rewritten for an Oracle test schema.
 *
 * The shapes are read from the embedded database's own catalog, so the fixture follows
 * src/db/embedded/ddl.ts: tables keep their columns, types and NOT NULL/DEFAULT 0; each view
 * becomes `SELECT <its columns> FROM <its table> WHERE <the column it filters on> = …`, the
 * column being the one it reads but does not show (USER_ views: the owner, bound to
 * APP_USER as the embedded session user; V$: INST_ID = 1). The rows come from demoData().
 */

import { pathToFileURL } from 'node:url';
import { parseCommand } from '../../src/command-line.js';
import { loadConfig } from '../../src/config.js';
import { openEmbeddedDatabase } from '../../src/db/embedded/database.js';
import { pgColumn } from '../../src/db/embedded/ddl.js';
import { demoData } from '../../src/db/embedded/demo-data.js';
import { MEASURES } from '../../src/model/exec-stat.js';

/** The user that USER_ views show, as in the embedded default (EMBEDDED_SESSION_USER). */
export const FIXTURE_SESSION_USER = 'APP_USER';

const ROWS_PER_BLOCK = 100;

interface Column {
  readonly name: string;
  readonly type: string;
  readonly nullable: boolean;
  readonly defaultZero: boolean;
}

interface Relation {
  readonly name: string;
  readonly kind: 'table' | 'view';
  readonly columns: Column[];
  /** Views only. */
  readonly from?: string;
  readonly filterColumn?: string;
}

/** PostgreSQL cut two of seed 002's names to the same 63 bytes; Oracle keeps both. */
function oracleColumns(pgName: string): string[] {
  const measures = MEASURES.filter((m) => pgColumn(m.column) === pgName).map((m) => m.column);
  return measures.length > 0 ? measures : [pgName.toUpperCase()];
}

function oracleType(column: Column): string {
  switch (column.type) {
    case 'numeric':
      return 'NUMBER';
    case 'text':
      return 'CLOB';
    case 'emb_oracle.date':
      return 'DATE';
    case 'timestamp without time zone':
      return 'TIMESTAMP';
    case 'timestamp with time zone':
      return 'TIMESTAMP WITH TIME ZONE';
    default: {
      const varchar = /^character varying\((\d+)\)$/.exec(column.type);
      if (varchar) return `VARCHAR2(${varchar[1]})`;
      throw new Error(`no Oracle type for ${column.name} ${column.type}`);
    }
  }
}

async function readRelations(): Promise<Relation[]> {
  const config = loadConfig({});
  if (config.database.kind !== 'embedded') throw new Error('the fixture needs the embedded config');
  const database = await openEmbeddedDatabase(config.database);
  try {
    const { rows: columns } = await database.pg.query<{
      table_name: string;
      table_type: string;
      column_name: string;
      data_type: string;
      is_nullable: string;
      column_default: string | null;
    }>(
      `SELECT c.table_name, t.table_type, c.column_name, c.is_nullable, c.column_default,
              format_type(a.atttypid, a.atttypmod) AS data_type
       FROM information_schema.columns c
       JOIN information_schema.tables t USING (table_schema, table_name)
       JOIN pg_attribute a ON a.attrelid = format('%I', c.table_name)::regclass AND a.attname = c.column_name
       WHERE c.table_schema = 'public'
       ORDER BY t.table_type, c.table_name, c.ordinal_position`,
    );
    const { rows: usage } = await database.pg.query<{
      view_name: string;
      table_name: string;
      column_name: string;
    }>(
      `SELECT view_name, table_name, column_name FROM information_schema.view_column_usage
       WHERE view_schema = 'public'`,
    );
    const relations = new Map<string, Relation>();
    for (const row of columns) {
      let relation = relations.get(row.table_name);
      if (!relation) {
        relation = {
          name: row.table_name,
          kind: row.table_type === 'VIEW' ? 'view' : 'table',
          columns: [],
        };
        relations.set(row.table_name, relation);
      }
      relation.columns.push({
        name: row.column_name,
        type: row.data_type,
        nullable: row.is_nullable === 'YES',
        defaultZero: row.column_default === '0',
      });
    }
    return [...relations.values()].map((relation) => {
      if (relation.kind === 'table') return relation;
      const used = usage.filter((u) => u.view_name === relation.name);
      const from = used[0]?.table_name;
      if (!from) throw new Error(`view ${relation.name} reads no table`);
      const shown = new Set(relation.columns.map((c) => c.name));
      const hidden = [...new Set(used.map((u) => u.column_name))].filter((c) => !shown.has(c));
      if (hidden.length > 1) throw new Error(`view ${relation.name} hides ${hidden.join(', ')}`);
      return { ...relation, from, ...(hidden[0] ? { filterColumn: hidden[0] } : {}) };
    });
  } finally {
    await database.driver.close();
  }
}

const name = (relation: string) => relation.toUpperCase();

function literal(value: unknown, column: Column): string {
  if (value === null || value === undefined) return 'NULL';
  if (/^(DATE|TIMESTAMP)/.test(oracleType(column))) {
    // The demo rows hold UTC instants: UTC wall clocks, and +00:00 where the column has a zone.
    const iso = new Date(String(value)).toISOString();
    const zone = oracleType(column).endsWith('TIME ZONE') ? ' +00:00' : '';
    return `TIMESTAMP '${iso.slice(0, 10)} ${iso.slice(11, 23)}${zone}'`;
  }
  if (typeof value === 'number') return String(value);
  const text = String(value).replaceAll("'", "''");
  // PL/SQL string literals stop at 32,767 bytes; the demo rows stay far below.
  if (Buffer.byteLength(text) > 32_000) throw new Error(`value too long for a literal`);
  return `'${text}'`;
}

function createTable(table: Relation): string {
  const columns = table.columns.flatMap((column) =>
    oracleColumns(column.name).map(
      (oracleName) =>
        `  ${oracleName} ${oracleType(column)}${column.defaultZero ? ' DEFAULT 0' : ''}${column.nullable ? '' : ' NOT NULL'}`,
    ),
  );
  return `CREATE TABLE ${name(table.name)} (\n${columns.join(',\n')}\n)\n/`;
}

function createView(view: Relation): string {
  const columns = view.columns.flatMap((c) => oracleColumns(c.name)).join(', ');
  let where = '';
  if (view.filterColumn) {
    const value = view.name.startsWith('user_') ? `'${FIXTURE_SESSION_USER}'` : '1';
    where = ` WHERE ${view.filterColumn.toUpperCase()} = ${value}`;
  }
  return `CREATE VIEW ${name(view.name)} AS SELECT ${columns} FROM ${name(view.from as string)}${where}\n/`;
}

function insertBlocks(table: Relation, rows: Record<string, unknown>[]): string[] {
  const blocks: string[] = [];
  for (let i = 0; i < rows.length; i += ROWS_PER_BLOCK) {
    const inserts = rows.slice(i, i + ROWS_PER_BLOCK).map((row) => {
      const values = table.columns.flatMap((column) =>
        oracleColumns(column.name).map(() => literal(row[column.name], column)),
      );
      return `  INSERT INTO ${name(table.name)} VALUES (${values.join(', ')});`;
    });
    blocks.push(`BEGIN\n${inserts.join('\n')}\nEND;\n/`);
  }
  return blocks;
}

const PACKAGE = `CREATE OR REPLACE PACKAGE DBMS_AI_AGENT AS
  PROCEDURE LIST_AGENTS(AGENTS OUT CLOB);
  PROCEDURE DESCRIBE_AGENT(AGENT_NAME IN VARCHAR2, AGENT_DETAILS OUT CLOB);
END;
/
CREATE OR REPLACE PACKAGE BODY DBMS_AI_AGENT AS
  -- Seed 000 description object, member for member, as the embedded emulation builds it.
  FUNCTION AGENT_JSON(P_AGENT_ID NUMBER) RETURN CLOB IS
    L CLOB;
  BEGIN
    SELECT JSON_OBJECT(
             'name' VALUE s.AGENT_NAME,
             'create_time' VALUE TO_CHAR(s.CREATE_TIME, 'YYYY-MM-DD"T"HH24:MI:SS'),
             'description' VALUE s.DESCRIPTION,
             'inputs' VALUE COALESCE(s.INPUTS, TO_CLOB('[]')) FORMAT JSON,
             'outputs' VALUE COALESCE(s.OUTPUTS, TO_CLOB('[]')) FORMAT JSON,
             'call_contract' VALUE JSON_OBJECT(
               'input_format' VALUE 'json_array_name_value_pairs',
               'required_keys' VALUE JSON_ARRAY('name', 'value'),
               'name_matches' VALUE 'inputs[].title (exact match)')
             NULL ON NULL RETURNING CLOB)
      INTO L FROM EMB_AGENT_SPECS s WHERE s.AGENT_ID = P_AGENT_ID;
    RETURN L;
  END;

  PROCEDURE LIST_AGENTS(AGENTS OUT CLOB) IS
  BEGIN
    AGENTS := TO_CLOB('[');
    FOR s IN (SELECT AGENT_ID FROM EMB_AGENT_SPECS ORDER BY AGENT_NAME) LOOP
      IF LENGTH(AGENTS) > 1 THEN AGENTS := AGENTS || ','; END IF;
      AGENTS := AGENTS || AGENT_JSON(s.AGENT_ID);
    END LOOP;
    AGENTS := AGENTS || ']';
  END;

  PROCEDURE DESCRIBE_AGENT(AGENT_NAME IN VARCHAR2, AGENT_DETAILS OUT CLOB) IS
    L_AGENT_ID NUMBER;
  BEGIN
    SELECT MIN(s.AGENT_ID) INTO L_AGENT_ID FROM EMB_AGENT_SPECS s
      WHERE s.AGENT_NAME = DESCRIBE_AGENT.AGENT_NAME;
    IF L_AGENT_ID IS NULL THEN
      RAISE_APPLICATION_ERROR(-20051, 'agent ' || DESCRIBE_AGENT.AGENT_NAME || ' does not exist');
    END IF;
    AGENT_DETAILS := AGENT_JSON(L_AGENT_ID);
  END;
END;
/`;

const HEADER = `-- agent-graph contract-suite fixture for Oracle. GENERATED by \`npm run -s oracle:fixture\`
-- from src/db/embedded (ddl.ts, demo-data.ts); do not edit by hand.
--
-- Run it in a DEDICATED, EMPTY test schema: it drops and re-creates the objects it names.
--   sql agentgraph_test/password@db @test/oracle/fixture.sql      (SQLcl or SQL*Plus)
-- The contract suite (test/oracle/contract.test.ts) loads it itself when ORACLE_TEST_* is set.
--
-- The real views are SYS-owned and reached through PUBLIC synonyms. A table or view of the
-- same name in the session's own schema takes precedence over a public synonym when Oracle
-- resolves an unqualified name, so the unchanged statements of src/db/sql read these
-- objects instead, and the driver's dictionary discovery prefers them for the same reason.
-- Names with $ (V$AGENT_EXEC_STAT, GV$AGENT_EXEC_STAT) are legal unquoted identifiers in a
-- user schema: no quoting and no synonyms are needed. The package DBMS_AI_AGENT below
-- likewise shadows the real one for the statements' inline DESCRIBE_AGENT call.
--
-- USER_ views show the rows of ${FIXTURE_SESSION_USER}, as the embedded database does by default. Dates
-- are UTC wall-clock times, as the driver reads them. Every statement ends with a line
-- holding only "/", which SQL*Plus and SQLcl execute and the suite's loader splits on.
-- Needs Oracle Database 19c or later (long identifiers, JSON_OBJECT).
SET DEFINE OFF
`;

export async function generateFixture(): Promise<string> {
  const relations = await readRelations();
  const tables = relations.filter((r) => r.kind === 'table');
  const views = relations.filter((r) => r.kind === 'view');
  const objects = [...relations.map((r) => name(r.name)), 'DBMS_AI_AGENT'];
  const drop = `BEGIN
  FOR o IN (SELECT OBJECT_NAME, OBJECT_TYPE FROM USER_OBJECTS
            WHERE OBJECT_TYPE IN ('VIEW', 'TABLE', 'PACKAGE')
              AND OBJECT_NAME IN (${objects.map((o) => `'${o}'`).join(', ')})
            ORDER BY DECODE(OBJECT_TYPE, 'VIEW', 1, 'PACKAGE', 2, 3)) LOOP
    EXECUTE IMMEDIATE 'DROP ' || o.OBJECT_TYPE || ' "' || o.OBJECT_NAME || '"'
      || CASE o.OBJECT_TYPE WHEN 'TABLE' THEN ' PURGE' END;
  END LOOP;
END;
/`;
  const data = demoData();
  const parts = [
    HEADER,
    drop,
    ...tables.map(createTable),
    ...views.map(createView),
    PACKAGE,
    ...tables.flatMap((table) => insertBlocks(table, data[table.name] ?? [])),
    'COMMIT\n/',
  ];
  return `${parts.join('\n')}\n`;
}

/** The fixture's statements, in order, as the loader sends them (SQL*Plus commands dropped). */
export function fixtureStatements(sql: string): string[] {
  return sql
    .split(/^\/$/m)
    .map((chunk) =>
      chunk
        .split('\n')
        .filter((line) => !line.startsWith('--') && !/^SET\s/i.test(line))
        .join('\n')
        .trim(),
    )
    .filter((statement) => statement !== '');
}

/** What the loader needs of a node-oracledb connection. */
export interface FixtureConnection {
  execute(sql: string): Promise<{ readonly warning?: Error | undefined }>;
}

/**
 * Sends the fixture's statements in order. node-oracledb reports a PL/SQL object created with
 * compilation errors (the DBMS_AI_AGENT stand-in on a database that cannot compile it) as a
 * warning, NJS-700, not an error; the statements would then fail later with a misleading
 * ORA-04063, so the load stops here, naming the object.
 */
export async function runFixture(connection: FixtureConnection, sql: string): Promise<void> {
  for (const statement of fixtureStatements(sql)) {
    const { warning } = await connection.execute(statement);
    if (warning) {
      const object = /^CREATE (?:OR REPLACE )?(\w+(?: BODY)? \S+)/.exec(statement)?.[1];
      throw new Error(
        `fixture.sql: ${object ?? statement.split('\n')[0]} was created with compilation errors (${warning.message})`,
        { cause: warning },
      );
    }
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  parseCommand({
    name: 'npm run -s oracle:fixture',
    synopsis: '> test/oracle/fixture.sql',
    about: `Prints test/oracle/fixture.sql: the embedded database's tables, views and demo rows,
rewritten for an Oracle test schema (USER_ views bound to APP_USER, V$ to INST_ID = 1).`,
  });
  process.stdout.write(await generateFixture());
}
