import { readFile } from 'node:fs/promises';
import oracledb from 'oracledb';
import { type EmbeddedDatabaseConfig, loadConfig } from '../../src/config.js';
import type { Driver } from '../../src/db/driver.js';
import { type EmbeddedDatabase, openEmbeddedDatabase } from '../../src/db/embedded/database.js';
import { DEMO_PRESENT } from '../../src/db/embedded/demo-data.js';
import { openOracleDriver } from '../../src/db/oracle/driver.js';
import { poolAttributes } from '../../src/db/oracle/options.js';
import { leaseDatabase } from '../support/databases.js';
import { FIXTURE_SESSION_USER, runFixture } from './fixture.js';
import { oracleTestConfig } from './support.js';

/** A database the contract suite runs against, holding the demo data. */
export interface Target {
  readonly name: string;
  /** Why the target is skipped, or undefined when it runs. */
  readonly skipReason: string | undefined;
  /** The owner that USER_ views show (the embedded session user; the fixture's stand-in). */
  readonly sessionUser: string;
  open(): Promise<{ driver: Driver; close(): Promise<void> }>;
}

const embeddedTarget = (
  name: string,
  open: (config: EmbeddedDatabaseConfig) => Promise<EmbeddedDatabase>,
): Target => ({
  name,
  skipReason: undefined,
  sessionUser: FIXTURE_SESSION_USER,
  async open() {
    // The generated dates, as demoData() and the Oracle fixture hold them.
    const config = loadConfig({
      EMBEDDED_SESSION_USER: FIXTURE_SESSION_USER,
      EMBEDDED_DEMO_NOW: new Date(DEMO_PRESENT).toISOString(),
    });
    if (config.database.kind !== 'embedded') throw new Error('expected the embedded config');
    const database = await open(config.database);
    return { driver: database.driver, close: () => database.driver.close() };
  },
});

/**
 * PGlite on the test's own thread, and in a worker thread (EMBEDDED_WORKER, the default): the
 * one the worker process's test servers share in turn (test/support/databases.ts).
 */
const embedded = embeddedTarget('embedded', openEmbeddedDatabase);
const embeddedWorker = embeddedTarget(
  'embedded in a worker thread',
  async (config) => (await leaseDatabase(config)).embedded,
);

const env = process.env;

/**
 * A real Oracle test schema, opt-in: ORACLE_TEST_CONNECT_STRING, ORACLE_TEST_USER and
 * ORACLE_TEST_PASSWORD (plus ORACLE_TEST_CONFIG_DIR, ORACLE_TEST_WALLET_LOCATION and
 * ORACLE_TEST_WALLET_PASSWORD for a wallet). Opening (re)loads test/oracle/fixture.sql there.
 */
const oracle: Target = {
  name: 'oracle',
  skipReason: env.ORACLE_TEST_CONNECT_STRING
    ? undefined
    : 'set ORACLE_TEST_CONNECT_STRING, ORACLE_TEST_USER and ORACLE_TEST_PASSWORD to run it',
  sessionUser: FIXTURE_SESSION_USER,
  async open() {
    const config = oracleTestConfig({
      ORACLE_CONNECT_STRING: env.ORACLE_TEST_CONNECT_STRING,
      ORACLE_USER: env.ORACLE_TEST_USER,
      ORACLE_PASSWORD: env.ORACLE_TEST_PASSWORD,
      ORACLE_CONFIG_DIR: env.ORACLE_TEST_CONFIG_DIR,
      ORACLE_WALLET_LOCATION: env.ORACLE_TEST_WALLET_LOCATION,
      ORACLE_WALLET_PASSWORD: env.ORACLE_TEST_WALLET_PASSWORD,
      DB_CONNECT_TIMEOUT_MS: '30000',
      DB_CALL_TIMEOUT_MS: '60000',
    });
    await loadFixture(poolAttributes(config));
    const driver = await openOracleDriver(config);
    return { driver, close: () => driver.close() };
  },
};

export const TARGETS: readonly Target[] = [embedded, embeddedWorker, oracle];

/** One connection for the whole script, so that its final COMMIT covers every insert. */
async function loadFixture(attributes: oracledb.PoolAttributes): Promise<void> {
  const { user, password, connectString, configDir, walletLocation, walletPassword } = attributes;
  const connection = await oracledb.getConnection({
    user,
    password,
    connectString,
    ...(configDir ? { configDir } : {}),
    ...(walletLocation ? { walletLocation } : {}),
    ...(walletPassword ? { walletPassword } : {}),
  });
  try {
    await runFixture(connection, await readFile(new URL('./fixture.sql', import.meta.url), 'utf8'));
  } finally {
    await connection.close();
  }
}
