/**
 * Run by test/oracle/time-zone.test.ts in a process started with TZ=America/New_York, whose
 * clocks skip from 02:00 to 03:00 on 2026-03-08. Reads and writes the UTC wall clock
 * 2026-03-08 02:30, inside that gap, through both drivers as the server opens them, and prints
 * what came back as one JSON line.
 */
import { createRequire } from 'node:module';
import oracledb from 'oracledb';
import { loadConfig } from '../../src/config.js';
import { discoverDatabase } from '../../src/db/discover.js';
import type { Driver } from '../../src/db/driver.js';
import { openDatabase } from '../../src/db/open.js';
import { type OracleConnection, OracleDriver } from '../../src/db/oracle/driver.js';
import { sql } from '../../src/db/sql/fragment.js';
import { statement as statementOf } from '../../src/db/sql/query.js';
import { ANONYMOUS_ADMIN } from '../../src/model/viewer.js';
import { TeamHistoryRepository } from '../../src/repositories/team-history.js';

/** node-oracledb Thin's own bind conversion, wire encoding and date decoding. */
const require = createRequire(import.meta.url);
const transformer = require('oracledb/lib/transformer.js') as {
  transformValueIn(info: { type?: unknown }, value: unknown, options: object): unknown;
};
const { GrowableBuffer } = require('oracledb/lib/impl/datahandlers/buffer.js') as {
  GrowableBuffer: new () => {
    buf: Buffer;
    writeOracleDate(value: unknown, type: unknown): void;
    parseOracleDate(bytes: Buffer): Date;
  };
};

/** The wall clock in an Oracle DATE/TIMESTAMP's wire bytes: length, century, year, … */
function wallClock(bytes: Buffer): string {
  const at = (i: number) => bytes[i] as number;
  const pad = (n: number) => String(n).padStart(2, '0');
  const date = `${(at(1) - 100) * 100 + at(2) - 100}-${pad(at(3))}-${pad(at(4))}`;
  return `${date} ${pad(at(5) - 1)}:${pad(at(6) - 1)}:${pad(at(7) - 1)}`;
}

/**
 * Oracle: a connection that answers as Thin does. A fetched TIMESTAMP holding the wall clock
 * 2026-03-08 02:30:00 is decoded by Thin's parseOracleDate, then given to the driver's fetch
 * type handler as Thin would; a Date bind is encoded by Thin's writeOracleDate.
 */
async function throughOracle(): Promise<{ fetched: string; bound: string }> {
  const bound: string[] = [];
  const connection: OracleConnection = {
    async execute<T>(
      _sql: string,
      binds: oracledb.BindParameters,
      options: oracledb.ExecuteOptions,
    ) {
      for (const value of Object.values(binds as Record<string, unknown>)) {
        if (!(value instanceof Date)) continue;
        const info: { type?: unknown } = {};
        transformer.transformValueIn(info, value, {});
        const buffer = new GrowableBuffer();
        buffer.writeOracleDate(value, info.type);
        bound.push(wallClock(buffer.buf));
      }
      let value: unknown = new GrowableBuffer().parseOracleDate(
        Buffer.from([120, 126, 3, 8, 2 + 1, 30 + 1, 0 + 1]),
      );
      const handler = options.fetchTypeHandler?.({
        name: 'START_DATE',
        dbType: oracledb.DB_TYPE_TIMESTAMP,
      } as unknown as oracledb.Metadata<unknown>);
      if (handler?.converter) value = handler.converter(value);
      return { rows: [{ START_DATE: value }] } as unknown as oracledb.Result<T>;
    },
    close: async () => {},
    break: async () => {},
  };
  const driver = new OracleDriver(
    {
      getConnection: async () => connection,
      close: async () => {},
      getStatistics: () => null,
    },
    { callTimeoutMs: 1000 },
  );
  const [row] = await driver.query(
    statementOf('x', sql`SELECT START_DATE FROM T WHERE START_DATE >= ${sql.placeholder('after')}`),
    { after: new Date('2026-03-08T02:30:00Z') },
  );
  return {
    fetched: String((row?.startDate as Date | undefined)?.toISOString()),
    bound: bound[0] ?? '',
  };
}

/** The embedded database as the server opens it: a run inserted with that wall clock, read back. */
async function throughEmbedded(worker: boolean): Promise<string> {
  const config = loadConfig({ ...process.env, EMBEDDED_WORKER: String(worker) });
  const { driver, embedded } = await openDatabase(config.database);
  try {
    await embedded?.pg.query(
      `INSERT INTO dba_ai_agent_team_history (team_exec_id, team_name, team_owner, start_date,
         end_date, state, team_instance_id)
       VALUES ('DST_GAP_RUN', 'REPORT_SUMMARY_AGENT_TEAM', 'APP_USER', '2026-03-08 02:30:00',
         '2026-03-08 03:10:00', 'SUCCEEDED', 1)`,
    );
    const { catalog } = await discoverDatabase(driver as Driver, 'dba');
    const history = new TeamHistoryRepository(driver, catalog, ANONYMOUS_ADMIN);
    const [run] = await history.runsByIds(['DST_GAP_RUN']);
    return run?.startDate?.toISOString() ?? 'none';
  } finally {
    await driver.close();
  }
}

const oracle = await throughOracle();
const embeddedInThread = await throughEmbedded(false);
const embeddedInWorker = await throughEmbedded(true);
process.stdout.write(
  `${JSON.stringify({ startedIn: process.argv[2], oracle, embeddedInThread, embeddedInWorker })}\n`,
);
