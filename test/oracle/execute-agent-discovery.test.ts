/**
 * Discovery of DBMS_AI_AGENT.EXECUTE_AGENT reads the package the call reaches: PL/SQL
 * resolves an unqualified name in the current schema before any synonym, as the contract
 * suite's fixture relies on (its stand-in DBMS_AI_AGENT, which has no EXECUTE_AGENT). On the
 * embedded database, whose dictionary lists the emulation as SYS's, a package of the session's
 * own schema is made to appear in ALL_OBJECTS.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { type EmbeddedDatabase, openEmbeddedDatabase } from '../../src/db/embedded/database.js';
import { executeAgentArguments, resolveExecuteAgent } from '../../src/db/sql/execute-agent.js';
import { fetchRows } from '../../src/db/sql/query.js';

let database: EmbeddedDatabase;
beforeAll(async () => {
  const config = loadConfig({ EMBEDDED_WORKER: 'false' });
  if (config.database.kind !== 'embedded') throw new Error('expected the embedded config');
  database = await openEmbeddedDatabase(config.database);
});
afterAll(() => database?.driver.close());

test('SYS’s package through the PUBLIC synonym when the schema has none', async () => {
  const procedure = resolveExecuteAgent(await fetchRows(database.driver, executeAgentArguments));
  expect(procedure.missing).toBeNull();
  expect(procedure.traced).not.toBeNull();
});

test('a DBMS_AI_AGENT of the session’s own schema is the one read, as the call would run it', async () => {
  await database.pg.exec(`CREATE OR REPLACE VIEW emb_oracle.all_objects AS
    SELECT 'APP_USER'::varchar(128) AS owner, 'DBMS_AI_AGENT'::varchar(128) AS object_name,
           'PACKAGE'::varchar(23) AS object_type`);
  // The schema's stand-in has no EXECUTE_AGENT: the call would fail (PLS-00302), so discovery
  // says what is missing rather than offering SYS's overloads.
  const procedure = resolveExecuteAgent(await fetchRows(database.driver, executeAgentArguments));
  expect(procedure.plain).toBeNull();
  expect(procedure.missing).toMatch(/not in ALL_ARGUMENTS/);
});
