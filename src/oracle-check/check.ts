/**
 * `npm run oracle:check`: what works on the user's own database, in one command and in text
 * worth pasting into a bug report. It connects with the server's settings (src/config.ts)
 * through the server's driver, runs the server's start-up discovery, then every registered
 * statement once (first row only). With no ORACLE_CONNECT_STRING it checks the embedded
 * database the same way. A second pass then takes real keys from the first rows of teams.page,
 * history.runsPage and agents.page and runs the batched, keyset, JSON-building and DESCRIBE_AGENT
 * statements on them, reporting each one's row count and flagging a JSON that does not parse
 * or an own agent whose description comes back null.
 *
 * It prints names, codes, data types and timings only: no password (the configuration is
 * never printed, the connect target is shortened as in start-up errors) and no row data (rows
 * are counted, never shown).
 */
import { type Config, ConfigError, loadConfig } from '../config.js';
import { agentsViewShape, type Catalog, catalogViews, dateColumnTypes } from '../db/catalog.js';
import { type Discovery, discoverDatabase } from '../db/discover.js';
import type { Driver, Row } from '../db/driver.js';
import { openDatabase } from '../db/open.js';
import { isCompileError } from '../db/oracle/driver.js';
import { errorCode, reportedLine } from '../db/oracle/errors.js';
import { connectTarget } from '../db/oracle/options.js';
import { fetchRows } from '../db/sql/query.js';
import { type TimeZones, timeZoneQuery, versionQuery } from '../db/sql/session.js';
import { StartupError } from '../errors.js';
import {
  CAPABILITY_PROBES,
  type KeyedStatement,
  keyedStatements,
  type RegisteredStatement,
  registeredStatements,
  type SampleKeys,
  sampleQueries,
} from './statements.js';

export type Print = (line: string) => void;

export interface StatementOutcome {
  readonly name: string;
  /** Null when it ran; else the database's error code (ORA-…, NJS-…, a SQLSTATE). */
  readonly error: string | null;
  /** The first line of the error message (Oracle's message text names no row value). */
  readonly message: string | null;
  readonly ms: number;
  readonly text: string;
}

/** What a probe's block that does not compile, missing no grant, is said to be. */
const BLOCK_FAULT =
  "its block does not compile: a fault in agent-graph's PL/SQL, not a missing grant (please report it)";

/** ORA-/NJS- code of an error or of its cause; else the SQLSTATE or the error's own code. */
export function checkErrorCode(error: unknown): string {
  const cause = (error as { cause?: unknown } | null)?.cause;
  const oracle = errorCode(cause) ?? errorCode(error);
  if (oracle !== undefined) return /^[0-9A-Z]{5}$/.test(oracle) ? `SQLSTATE ${oracle}` : oracle;
  return error instanceof Error ? error.name : 'ERROR';
}

/** The error's line worth reporting: a compile error's PLS- line, else its first line. */
function firstLine(error: unknown): string {
  const cause = (error as { cause?: unknown } | null)?.cause;
  const source = cause instanceof Error ? cause : error;
  return reportedLine(String(source instanceof Error ? source.message : source));
}

/** Refuses anything but a query: the check must not change the database. */
function assertReadOnly(entry: Pick<RegisteredStatement, 'statement'>): void {
  if (!/^(SELECT|WITH)\b/i.test(entry.statement.text)) {
    throw new Error(`${entry.statement.name} is not a query; the check only reads`);
  }
}

async function runStatement(driver: Driver, entry: RegisteredStatement): Promise<StatementOutcome> {
  assertReadOnly(entry);
  const { statement, binds } = entry;
  const started = performance.now();
  const ms = () => Math.round(performance.now() - started);
  try {
    await (entry.agentDetails
      ? driver.queryWithAgentDetails(statement, binds, { maxRows: 1 })
      : driver.query(statement, binds, { maxRows: 1 }));
    return { name: statement.name, error: null, message: null, ms: ms(), text: statement.text };
  } catch (error) {
    return {
      name: statement.name,
      error: checkErrorCode(error),
      message: firstLine(error),
      ms: ms(),
      text: statement.text,
    };
  }
}

const pad = (value: string, width: number) => value.padEnd(width);

function describeViews(catalog: Catalog, print: Print): void {
  print('views');
  for (const view of catalogViews(catalog)) {
    print(
      `  ${pad(view.name, 34)} ${
        view.columns ? `found, ${view.columns.size} columns` : `MISSING (grant ${view.grant})`
      }`,
    );
  }
  const agents = catalog.agents.columns;
  const shape = {
    agentSpec: 'Agent Spec (AGENT_ID, CREATE_TIME, INPUTS, OUTPUTS)',
    selectAi: 'Select AI Agent (DESCRIPTION, CREATED, LAST_MODIFIED, STATUS)',
    unknown: 'unknown',
  }[agentsViewShape(catalog.agents)];
  print('column variants');
  print(
    `  ${pad('task history conversation column', 34)} ${catalog.columns.taskConversation ?? 'none'}`,
  );
  print(`  ${pad('team catalog name column', 34)} ${catalog.columns.teamName}`);
  print(`  ${pad('tool id column', 34)} ${catalog.columns.toolId ?? 'none'}`);
  print(`  ${pad(`${catalog.agents.name} shape`, 34)} ${agents ? shape : 'view missing'}`);
  print('date columns');
  for (const [column, type] of dateColumnTypes(catalog)) print(`  ${pad(column, 44)} ${type}`);
}

const DAY_MS = 86_400_000;

/**
 * The session's zone is always +00:00 (the pool's session callback sets it); the database's
 * (DBTIMEZONE) and its server's (SYSTIMESTAMP) tell whether history could be written in local
 * time, and the newest START_DATE, compared with UTC now, shows whether it is.
 */
async function describeTimeZones(
  driver: Driver,
  catalog: Catalog,
  sessionOffset: string,
  print: Print,
): Promise<void> {
  let zones: TimeZones | undefined;
  try {
    [zones] = await fetchRows(driver, timeZoneQuery(catalog));
  } catch (error) {
    // A history view that fails to read is reported with the statements below as well.
    print(`${pad('time zone', 16)} session ${sessionOffset}`);
    print(`${pad('newest run', 16)} FAILED: ${checkErrorCode(error)}: ${firstLine(error)}`);
    return;
  }
  if (!zones) return;
  print(
    `${pad('time zone', 16)} session ${sessionOffset}, DBTIMEZONE ${zones.databaseZone}, SYSTIMESTAMP ${zones.serverOffset}`,
  );
  const { newestStart, nowUtc } = zones;
  let verdict: string;
  if (newestStart === null || nowUtc === null) {
    verdict = 'no run in the team history to judge by';
  } else {
    const ahead = newestStart.getTime() - nowUtc.getTime();
    const hours = (Math.abs(ahead) / 3_600_000).toFixed(1);
    if (ahead > 60_000) {
      verdict = `${newestStart.toISOString()}, ${hours} h after SYS_EXTRACT_UTC(SYSTIMESTAMP): NOT UTC, the history seems written in local time`;
    } else if (-ahead <= DAY_MS) {
      verdict = `${newestStart.toISOString()}, ${hours} h before SYS_EXTRACT_UTC(SYSTIMESTAMP): plausible as UTC`;
    } else {
      verdict = `${newestStart.toISOString()}, more than a day before SYS_EXTRACT_UTC(SYSTIMESTAMP): no recent run to judge by`;
    }
  }
  print(`${pad('newest run', 16)} START_DATE ${verdict}`);
}

/** One row per statement name: its variants, ok or the error codes seen, the slowest run. */
function statementTable(outcomes: readonly StatementOutcome[], print: Print): void {
  const byName = new Map<string, StatementOutcome[]>();
  for (const outcome of outcomes) {
    byName.set(outcome.name, [...(byName.get(outcome.name) ?? []), outcome]);
  }
  print(`  ${pad('statement', 28)} ${pad('variants', 8)} ${pad('result', 32)} max ms`);
  for (const [name, runs] of byName) {
    const codes = [...new Set(runs.flatMap((run) => (run.error ? [run.error] : [])))];
    const failed = runs.filter((run) => run.error).length;
    const result = codes.length === 0 ? 'ok' : `${failed} failed: ${codes.join(', ')}`;
    const slowest = Math.max(...runs.map((run) => run.ms));
    print(`  ${pad(name, 28)} ${pad(String(runs.length), 8)} ${pad(result, 32)} ${slowest}`);
  }
}

/** Whether a statement's text reads a view that discovery did not find. */
function readsMissingView(catalog: Catalog): (text: string) => boolean {
  const missing = catalogViews(catalog).filter((view) => view.columns === null);
  const reads = (text: string, view: string) =>
    new RegExp(`(?<![\\w$#])${view.replace(/\$/g, '\\$')}(?![\\w$#])`).test(text);
  return (text) => missing.some((view) => reads(text, view.name));
}

/**
 * The columns that carry JSON text as the database sends it (jsonArrayQuery, jsonListColumn,
 * DESCRIBE_AGENT).
 */
const JSON_COLUMNS = [
  'rowsJson',
  'runsJson',
  'tasksJson',
  'toolCallsJson',
  'agentsJson',
  'agentDetails',
] as const;

const parses = (text: string) => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};

interface KeyedOutcome {
  readonly name: string;
  /** Rows decoded (a JSON array's rows, not the one row that holds it); null when it failed. */
  readonly rows: number | null;
  /** `FAILED: code: line`, `FLAGGED: why`, `ok (note)`, or null when ok. */
  readonly problem: string | null;
  readonly ms: number;
}

/** Runs one keyed statement whole; counts its rows and inspects their JSON, never shows them. */
async function runKeyed(driver: Driver, { query, inspect }: KeyedStatement): Promise<KeyedOutcome> {
  assertReadOnly(query);
  const name = query.statement.name;
  const started = performance.now();
  const ms = () => Math.round(performance.now() - started);
  let raw: Row[];
  try {
    raw = await (query.agentDetails
      ? driver.queryWithAgentDetails(query.statement, query.binds)
      : driver.query(query.statement, query.binds));
  } catch (error) {
    const problem = `FAILED: ${checkErrorCode(error)}: ${firstLine(error)}`;
    return { name, rows: null, problem, ms: ms() };
  }
  const elapsed = ms();
  const unparsable = JSON_COLUMNS.filter((column) =>
    raw.some((row) => typeof row[column] === 'string' && !parses(row[column] as string)),
  );
  if (unparsable.length > 0) {
    const columns = unparsable.map((column) =>
      column.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase(),
    );
    return {
      name,
      rows: raw.length,
      problem: `FLAGGED: ${columns.join(', ')} does not parse as JSON`,
      ms: elapsed,
    };
  }
  try {
    const rows = query.decodeRows(raw);
    const { flag, note } = inspect(rows, raw);
    const problem = flag ? `FLAGGED: ${flag}` : note ? `ok (${note})` : null;
    return { name, rows: rows.length, problem, ms: elapsed };
  } catch (error) {
    // A decoder's message may quote a value: its error's name only.
    const problem = `FLAGGED: rows do not decode (${error instanceof Error ? error.name : 'error'})`;
    return { name, rows: raw.length, problem, ms: elapsed };
  }
}

/** The first rows of teams.page, history.runsPage and agents.page, as keys; null where one failed. */
async function sampleKeys(
  driver: Driver,
  catalog: Catalog,
  print: Print,
): Promise<SampleKeys | null> {
  const pages = sampleQueries(catalog);
  try {
    const [teams, [runPage], agents] = [
      await fetchRows(driver, pages.teams),
      await fetchRows(driver, pages.runs),
      await fetchRows(driver, pages.agents),
    ];
    const runs = runPage?.rows ?? [];
    const own = agents.filter(({ item }) => item.owner === catalog.sessionUser).length;
    print(
      `  ${pad('keys', 28)} ${teams.length} teams, ${runs.length} runs, ${agents.length} agents (${own} own)`,
    );
    return {
      teamNames: teams.map(({ item }) => item.name),
      runs,
      agentNames: agents.map(({ item }) => item.name),
    };
  } catch (error) {
    print(`  ${pad('keys', 28)} FAILED: ${checkErrorCode(error)}: ${firstLine(error)}`);
    return null;
  }
}

/**
 * The second pass: the keyed statements (statements.ts, keyedStatements) over real keys.
 * Resolves to whether every one ran and none was flagged.
 */
async function secondPass(
  driver: Driver,
  discovery: Discovery,
  readsMissing: (text: string) => boolean,
  print: Print,
): Promise<boolean> {
  const { catalog } = discovery;
  print('second pass (real keys from the first rows of teams.page, history.runsPage, agents.page)');
  if (
    readsMissing(
      Object.values(sampleQueries(catalog))
        .map((q) => q.statement.text)
        .join(' '),
    )
  ) {
    print('  skipped: a view the keys are read from is missing');
    return true;
  }
  const keys = await sampleKeys(driver, catalog, print);
  if (!keys) return false;
  const describable = discovery.agentDetails.callable;
  if (!describable) print(`  ${pad('descriptions', 28)} not checked (DESCRIBE_AGENT not callable)`);
  print(`  ${pad('statement', 28)} ${pad('rows', 8)} ${pad('result', 32)} ms`);
  const outcomes: KeyedOutcome[] = [];
  let skipped = 0;
  for (const statement of keyedStatements(catalog, keys, describable)) {
    if (readsMissing(statement.query.statement.text)) {
      skipped++;
      continue;
    }
    const outcome = await runKeyed(driver, statement);
    outcomes.push(outcome);
    print(
      `  ${pad(outcome.name, 28)} ${pad(outcome.rows === null ? '-' : String(outcome.rows), 8)} ${pad(
        outcome.problem ?? 'ok',
        32,
      )} ${outcome.ms}`,
    );
  }
  const failed = outcomes.filter((o) => o.problem?.startsWith('FAILED')).length;
  const flagged = outcomes.filter((o) => o.problem?.startsWith('FLAGGED')).length;
  print(
    `second pass: ${outcomes.length + skipped} statements, ${
      outcomes.length - failed - flagged
    } ok, ${flagged} flagged, ${failed} failed, ${skipped} skipped (view missing)`,
  );
  return failed === 0 && flagged === 0;
}

/**
 * Runs the check over an open driver and prints the report; resolves to the exit code: 0 when
 * every statement ran, 1 otherwise. Statements on a view the discovery did not find are
 * skipped (the view is listed as missing, with its grant).
 */
export async function checkDatabase(
  driver: Driver,
  scope: Config['database']['viewScope'],
  print: Print,
): Promise<number> {
  let discovery: Discovery;
  try {
    const [version] = await fetchRows(driver, versionQuery);
    print(`${pad('version', 16)} ${version ?? 'unknown'}`);
    discovery = await discoverDatabase(driver, scope);
  } catch (error) {
    print(`discovery FAILED: ${checkErrorCode(error)}: ${firstLine(error)}`);
    return 1;
  }
  const { session, catalog } = discovery;
  print(`${pad('session user', 16)} ${session.sessionUser}`);
  print(`${pad('current schema', 16)} ${session.currentSchema}`);
  await describeTimeZones(driver, catalog, session.timeZoneOffset, print);
  print(`${pad('discovery', 16)} ${discovery.durationMs} ms`);
  describeViews(catalog, print);

  print('capabilities');
  for (const capability of CAPABILITY_PROBES) {
    const result = await capability.probe(driver, discovery).catch((error: unknown) => ({
      available: false,
      detail: `${checkErrorCode(error)}: ${firstLine(error)}`,
      // A block that does not compile for another reason than a missing object or grant
      // (the driver's FORBIDDEN) is a fault of its text: naming grants would mislead.
      needs: isCompileError(error) ? BLOCK_FAULT : undefined,
    }));
    const needs = ('needs' in result ? result.needs : undefined) ?? capability.needs;
    print(
      `  ${pad(capability.name, 34)} ${result.available ? 'yes' : 'NO'}  ${needs}${
        result.detail ? ` (${result.detail})` : ''
      }`,
    );
  }

  const readsMissing = readsMissingView(catalog);
  const entries = registeredStatements([catalog]);
  const outcomes: StatementOutcome[] = [];
  let skipped = 0;
  for (const entry of entries) {
    if (readsMissing(entry.statement.text)) {
      skipped++;
      continue;
    }
    outcomes.push(await runStatement(driver, entry));
  }
  print('statements (each variant once, first row only)');
  statementTable(outcomes, print);
  const failures = outcomes.filter((outcome) => outcome.error !== null);
  // One entry per statement and error: its first failing variant's message and text.
  const reported = new Set<string>();
  for (const failure of failures) {
    const key = `${failure.name} ${failure.error}`;
    if (reported.has(key)) continue;
    reported.add(key);
    const variants = failures.filter((f) => `${f.name} ${f.error}` === key).length;
    print(`FAILED ${failure.name} (${variants} variants): ${failure.error}: ${failure.message}`);
    print(`  ${failure.text}`);
  }
  print(
    `summary: ${outcomes.length + skipped} statements, ${outcomes.length - failures.length} ok, ${
      failures.length
    } failed, ${skipped} skipped (view missing)`,
  );
  const keyedOk = await secondPass(driver, discovery, readsMissing, print);
  return failures.length === 0 && keyedOk ? 0 : 1;
}

/** The command: configuration from `env`, the server's driver, then checkDatabase. */
export async function oracleCheck(
  env: Record<string, string | undefined>,
  print: Print,
): Promise<number> {
  let config: Config;
  try {
    config = loadConfig(env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    print(`configuration: ${error.message}`);
    return 2;
  }
  const database = config.database;
  print('agent-graph oracle:check');
  print(
    `${pad('database', 16)} ${
      database.kind === 'oracle'
        ? `Oracle at ${connectTarget(database.connectString)} as ${database.user}`
        : 'embedded (no ORACLE_CONNECT_STRING)'
    }, view scope ${database.viewScope}`,
  );
  let driver: Driver;
  try {
    driver = (await openDatabase(database, { warn: (message) => print(`warning: ${message}`) }))
      .driver;
  } catch (error) {
    if (!(error instanceof StartupError)) throw error;
    print(`connect FAILED: ${error.message}`);
    return 1;
  }
  try {
    return await checkDatabase(driver, database.viewScope, print);
  } finally {
    await driver.close();
  }
}
