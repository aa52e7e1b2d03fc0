/**
 * `npm run oracle:check` against the embedded database, through the code path it takes on
 * Oracle: the command as a process, and its check over a database with a broken and a
 * missing view.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { openEmbeddedDatabase } from '../../src/db/embedded/database.js';
import { DEMO_PRESENT } from '../../src/db/embedded/demo-data.js';
import { checkDatabase, oracleCheck } from '../../src/oracle-check/check.js';
import { closedPort } from './support.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** `npm run oracle:check` without npm (as package.json runs it), with only the given settings. */
function runCheck(env: Record<string, string>): Promise<{ code: number | null; stdout: string }> {
  const child = spawn(process.execPath, ['scripts/run.mjs', 'src/oracle-check/main.ts'], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let stdout = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk;
  });
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout })));
}

test('without ORACLE_CONNECT_STRING it checks the embedded database: every statement ok, exit 0', async () => {
  const { code, stdout } = await runCheck({
    EMBEDDED_SESSION_USER: 'analyst',
    ORACLE_VIEW_SCOPE: 'user',
  });
  const lines = stdout.trimEnd().split('\n');
  expect(lines[0]).toBe('agent-graph oracle:check');
  expect(lines[1]).toBe('database         embedded (no ORACLE_CONNECT_STRING), view scope user');
  expect(lines[2]).toMatch(/^version {10}PGlite \(embedded PostgreSQL\) \d+\.\d+$/);
  // SYS_CONTEXT('USERENV', …), emulated as Oracle answers it.
  expect(lines).toContain('session user     ANALYST');
  expect(lines).toContain('current schema   ANALYST');
  expect(lines).toContain(
    'time zone        session +00:00, DBTIMEZONE +00:00, SYSTIMESTAMP +00:00',
  );
  expect(stdout).toMatch(/^newest run {7}START_DATE \d{4}-\d\d-\d\dT[\d:.]+Z, /m);
  expect(stdout).toMatch(/^discovery {8}\d+ ms$/m);
  expect(stdout).toMatch(/^ {2}USER_AI_AGENT_TEAM_HISTORY +found, 6 columns$/m);
  expect(stdout).toMatch(/^ {2}task history conversation column +COVERSATION_PARAM$/m);
  // The seeds' types (002: DATE, 003: TIMESTAMP), the scheduler's as Oracle's reference has it.
  expect(stdout).toMatch(/^ {2}USER_AI_AGENTS\.CREATE_TIME +DATE$/m);
  expect(stdout).toMatch(/^ {2}USER_AI_AGENT_TEAM_HISTORY\.START_DATE +TIMESTAMP\(6\)$/m);
  expect(stdout).toMatch(/^ {2}USER_AI_AGENT_TASK_HISTORY\.END_DATE +TIMESTAMP\(6\)$/m);
  expect(stdout).toMatch(/^ {2}USER_AI_AGENT_TOOL_HISTORY\.START_DATE +TIMESTAMP\(6\)$/m);
  expect(stdout).toMatch(
    /^ {2}USER_SCHEDULER_JOB_RUN_DETAILS\.LOG_DATE +TIMESTAMP\(6\) WITH TIME ZONE$/m,
  );
  expect(stdout).toMatch(/^ {2}DBMS_AI_AGENT\.DESCRIBE_AGENT +yes {2}Agent\.description/m);
  const summaryAt = lines.findIndex((line) => line.startsWith('summary: '));
  const table = lines.slice(
    lines.indexOf('statements (each variant once, first row only)') + 2,
    summaryAt,
  );
  const names = table.map((line) => line.trim().split(/\s+/)[0]);
  for (const name of ['agents.page', 'teams.stats', 'teamRuns.live', 'session.user']) {
    expect(names).toContain(name);
  }
  for (const line of table) expect(line).toMatch(/^ {2}\S+ +\d+ +ok +\d+$/);
  const summary = /^summary: (\d+) statements, (\d+) ok, 0 failed, 0 skipped/.exec(
    lines[summaryAt] ?? '',
  );
  expect(Number(summary?.[1])).toBeGreaterThan(300);
  expect(summary?.[2]).toBe(summary?.[1]);
  // The second pass, on keys that match: every batched, keyset and JSON-building statement
  // finds rows (the first five runs have no failed task and no wait in ANALYST's history).
  const second = lines.slice(
    lines.indexOf(
      'second pass (real keys from the first rows of teams.page, history.runsPage, agents.page)',
    ) + 1,
  );
  expect(second[0]).toMatch(/^ {2}keys +5 teams, 5 runs, 2 agents \(2 own\)$/);
  const counts = new Map(
    second
      .slice(2, -1)
      // A note beside ok (the demo's retried tasks, logged twice under one TASK_ORDER) is no fault.
      .map((line) => /^ {2}(\S+) +(\d+) +ok(?: \(.*\))? +\d+$/.exec(line))
      .map((match) => [match?.[1], Number(match?.[2])] as const),
  );
  expect(counts.has(undefined)).toBe(false);
  for (const name of [
    'teams.byNames',
    'teams.tools',
    'teams.stats',
    'history.runsOfTeams',
    'history.waitingOfTeams',
    'teamRuns.byIds',
    'taskRuns.byRuns',
    'toolCalls.byRuns',
    'history.runsPage',
    'history.callsPage',
    'agents.byNames',
  ]) {
    expect(counts.get(name), name).toBeGreaterThan(0);
  }
  expect(second.at(-1)).toMatch(
    /^second pass: 21 statements, 21 ok, 0 flagged, 0 failed, 0 skipped \(view missing\)$/,
  );
  // Names and codes only: no row of the demo data.
  expect(stdout).not.toMatch(/ORDER_REQUEST_FLOW|Classifies an incident/);
  expect(code).toBe(0);
});

test('a broken view is reported with its error code and fails the check; a missing view is skipped', async () => {
  // The generated dates, which the registry's date filters (September 2026) fall among.
  const config = loadConfig({ EMBEDDED_DEMO_NOW: new Date(DEMO_PRESENT).toISOString() });
  if (config.database.kind !== 'embedded') throw new Error('expected the embedded config');
  const database = await openEmbeddedDatabase(config.database);
  try {
    // The history view still exists (discovery finds it) but raises when read, as an
    // Oracle view left INVALID by a change underneath it would.
    const { rows } = await database.pg.query<{ definition: string }>(
      `SELECT pg_get_viewdef('user_ai_agent_team_history') AS definition`,
    );
    await database.pg.exec(`
      CREATE FUNCTION emb_broken() RETURNS boolean LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'view is invalid' USING ERRCODE = '55000'; END $$;
      CREATE OR REPLACE VIEW user_ai_agent_team_history AS
        ${rows[0]?.definition.replace(/;\s*$/, '')} AND emb_broken();
      DROP VIEW user_ai_agent_tool_history;`);
    const lines: string[] = [];
    const code = await checkDatabase(database.driver, 'user', (line) => lines.push(line));
    const report = lines.join('\n');
    expect(code).toBe(1);
    expect(report).toMatch(
      /^ {2}USER_AI_AGENT_TOOL_HISTORY +MISSING \(grant EXECUTE ON DBMS_CLOUD_AI_AGENT/m,
    );
    // 88 variants of the planned page; the 8 that filter on a conversation no task holds are
    // answered before any row reaches the view's raising condition.
    const pages = /^ {2}history\.runsPage +(\d+) +(\d+) failed: SQLSTATE 55000 +\d+$/m.exec(report);
    expect(Number(pages?.[1]) - Number(pages?.[2])).toBe(8);
    expect(report).toMatch(/^newest run {7}FAILED: SQLSTATE 55000: view is invalid$/m);
    expect(report).toMatch(/^ {2}RUN_TEAM hand-off \(DBMS_SCHEDULER\) yes /m);
    expect(report).toMatch(/^ {2}agents\.page +\d+ +ok +\d+$/m);
    expect(report).toMatch(
      /^FAILED teamRuns\.live \(1 variants\): SQLSTATE 55000: view is invalid$/m,
    );
    expect(report).toMatch(/^ {2}SELECT .* FROM USER_AI_AGENT_TEAM_HISTORY h WHERE/m);
    expect(report.match(/^FAILED history\.runsPage /gm)).toHaveLength(1);
    expect(report).not.toMatch(/^ {2}(toolCalls\.|history\.callsPage)/m);
    // The second pass reads its run keys from the broken view: it says so and fails.
    expect(report).toMatch(/^ {2}keys +FAILED: SQLSTATE 55000: view is invalid$/m);
    expect(report).toMatch(/^summary: \d+ statements, \d+ ok, [1-9]\d* failed, [1-9]\d* skipped/m);
  } finally {
    await database.driver.close();
  }
});

test('an Oracle that refuses the connection: one line, exit 1, and never the password', async () => {
  const lines: string[] = [];
  const port = await closedPort();
  const code = await oracleCheck(
    {
      ORACLE_CONNECT_STRING: `127.0.0.1:${port}/FREEPDB1`,
      ORACLE_USER: 'agentgraph',
      ORACLE_PASSWORD: 'pw-never-printed',
      DB_CONNECT_TIMEOUT_MS: '5000',
    },
    (line) => lines.push(line),
  );
  expect(code).toBe(1);
  expect(lines[1]).toBe(
    `database         Oracle at 127.0.0.1:${port}/FREEPDB1 as agentgraph, view scope user`,
  );
  expect(lines[2]).toMatch(
    /^connect FAILED: cannot connect to Oracle at 127\.0\.0\.1:\d+\/FREEPDB1: NJS-503/,
  );
  expect(lines.join('\n')).not.toContain('pw-never-printed');
});
