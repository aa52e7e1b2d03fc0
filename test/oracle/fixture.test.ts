import { readFile } from 'node:fs/promises';
import { expect, test } from 'vitest';
import { fixtureStatements, generateFixture, runFixture } from './fixture.js';
import { njsError } from './oracledb-errors.js';

const checkedIn = () => readFile(new URL('./fixture.sql', import.meta.url), 'utf8');

test('fixture.sql is what src/db/embedded generates (run `npm run -s oracle:fixture > test/oracle/fixture.sql`)', async () => {
  expect((await generateFixture()) === (await checkedIn())).toBe(true);
});

test('the loader splits fixture.sql into the statements SQL*Plus would run', async () => {
  const statements = fixtureStatements(await checkedIn());
  expect(statements[0]).toMatch(
    /^BEGIN\n {2}FOR o IN \(SELECT OBJECT_NAME, OBJECT_TYPE FROM USER_OBJECTS/,
  );
  expect(statements.at(-1)).toBe('COMMIT');
  const kinds = statements.map(
    (s) => /^(CREATE OR REPLACE PACKAGE|CREATE TABLE|CREATE VIEW|BEGIN|COMMIT)/.exec(s)?.[1],
  );
  expect(kinds.filter((k) => k === 'CREATE TABLE')).toHaveLength(14);
  expect(kinds.filter((k) => k === 'CREATE VIEW')).toHaveLength(14);
  expect(kinds.filter((k) => k === 'CREATE OR REPLACE PACKAGE')).toHaveLength(2);
  expect(kinds).not.toContain(undefined);
  for (const statement of statements) {
    // SQL ends without a semicolon (Oracle rejects one); PL/SQL ends with END;
    if (/^(BEGIN|CREATE OR REPLACE PACKAGE)/.test(statement)) expect(statement).toMatch(/END;$/);
    else expect(statement).not.toMatch(/;$/);
    expect(statement).not.toMatch(/^(--|SET )/m);
  }
});

test('the loader stops at a PL/SQL object created with compilation errors (NJS-700), naming it', async () => {
  const sql = await checkedIn();
  const sent: string[] = [];
  // node-oracledb's own NJS-700 warning, on the package body as a 19c without JSON_OBJECT
  // over CLOBs would give it.
  const connection = {
    execute: async (statement: string) => {
      sent.push(statement);
      return statement.startsWith('CREATE OR REPLACE PACKAGE BODY')
        ? { warning: njsError(700) }
        : {};
    },
  };
  const error = await runFixture(connection, sql).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(Error);
  expect((error as Error).message).toBe(
    'fixture.sql: PACKAGE BODY DBMS_AI_AGENT was created with compilation errors (NJS-700: creation succeeded with compilation errors)',
  );
  expect(sent.at(-1)).toMatch(/^CREATE OR REPLACE PACKAGE BODY DBMS_AI_AGENT AS/);
  expect(sent.length).toBeLessThan(fixtureStatements(sql).length);

  sent.length = 0;
  const record = async (statement: string) => {
    sent.push(statement);
    return {};
  };
  await runFixture({ execute: record }, sql);
  expect(sent).toEqual(fixtureStatements(sql));
});
