import { createHash } from 'node:crypto';
import type { Catalog } from '../catalog.js';
import type { Binds, Block, Row } from '../driver.js';
import { num, strOrNull } from '../rows.js';
import { type Fragment, sql } from './fragment.js';
import { blockStatement, perCatalog, query, statement } from './query.js';

/**
 * How agent-graph hands a DBMS_CLOUD_AI_AGENT.RUN_TEAM call to the database: the one place
 * that knows how Oracle addresses a paused run (docs/oracle.md, "Answering a run").
 *
 * RUN_TEAM blocks until the team finishes or pauses again (LLM calls: minutes), so the
 * request does not call it: one round trip creates a one-off DBMS_SCHEDULER job (privilege
 * CREATE JOB) whose action is the RUN_TEAM call, and returns. The job is committed with
 * its creation (CREATE_JOB commits), so an answer accepted here survives this process
 * stopping the next instant; the scheduler runs it within a second or two.
 *
 * Assumed, not confirmed against a live database:
 * - a paused run resumes when RUN_TEAM is called again with the same team name, the
 *   person's answer as user_prompt and params {"conversation_id": <the run's conversation
 *   id, from the task history>};
 * - a new run starts with a conversation made by DBMS_CLOUD_AI.CREATE_CONVERSATION();
 * - RUN_TEAM resolves team_name in the job owner's schema (the connected user), so only
 *   that user's runs can be answered through this connection.
 *
 * The job name is derived from the wait (the run and its open tool call): a second answer
 * to the same wait collides with the first job (ORA-27477) while it exists, and after the
 * job has run the state check finds the run no longer waiting.
 *
 * Values reach the block only as binds. The job itself cannot take them as arguments: the
 * scheduler gives no arguments to a PLSQL_BLOCK job, and a STORED_PROCEDURE job runs a
 * procedure, not a function such as RUN_TEAM (DBMS_SCHEDULER.CREATE_JOB, job_type); a table
 * the job reads by id would need objects of agent-graph's own in the user's schema. So the
 * block writes them into the job's action as string literals, with jobAction below.
 */

/**
 * The PL/SQL string literal of an SQL expression's text: enclosed in quotes, quotes doubled,
 * nothing else changed (inside a literal only the quote is special; newlines, `--`, `/*` and
 * `q'[` stay text). Not DBMS_ASSERT.ENQUOTE_LITERAL: it adds no quotes to a text that
 * already starts and ends with one, so an answer `'yes'` would fail and `'` become empty.
 */
const literal = (text: Fragment) => sql`'''' || REPLACE(${text}, '''', '''''') || ''''`;

/** The team as RUN_TEAM addresses it: its bare name in the job owner's schema, else OWNER.NAME. */
const teamReference = (owner: Fragment, name: Fragment) =>
  sql`CASE WHEN ${owner} = SYS_CONTEXT('USERENV', 'SESSION_USER') THEN ${name} ELSE ${owner} || '.' || ${name} END`;

/**
 * The scheduler job's action, as an SQL expression over SQL expressions for the team's owner
 * and name, the prompt and the params JSON: the Oracle block passes it to CREATE_JOB, the
 * embedded emulation (src/db/embedded/plsql.ts) evaluates the same text and keeps the result.
 */
export function jobAction(parts: {
  readonly owner: Fragment;
  readonly team: Fragment;
  readonly prompt: Fragment;
  readonly params: Fragment;
}): Fragment {
  return sql`'DECLARE l_result CLOB; BEGIN l_result := DBMS_CLOUD_AI_AGENT.RUN_TEAM(team_name => '
      || ${literal(teamReference(parts.owner, parts.team))} || ', user_prompt => ' || ${literal(parts.prompt)}
      || ', params => ' || ${literal(parts.params)} || '); END;'`;
}

export interface RunTeamRequest {
  readonly jobName: string;
  /** The run to resume, or null to start a new run. */
  readonly execId: string | null;
  /** The owner the caller was authorised for: RUN_TEAM addresses the team by owner and name. */
  readonly teamOwner: string;
  readonly teamName: string;
  /** The person's answer (resume) or the request (start). */
  readonly prompt: string;
  /** The run's conversation (resume); null to start one. */
  readonly conversationId: string | null;
}

export type RunTeamOutcome =
  | { readonly kind: 'submitted'; readonly conversationId: string | null }
  | { readonly kind: 'not_waiting'; readonly state: string | null }
  | { readonly kind: 'duplicate' };

/** The job action holds the prompt as a literal; CREATE_JOB's job_action is VARCHAR2(4000). */
export const MAX_PROMPT_BYTES = 3000;

/** Bytes the prompt takes inside the job action (quotes doubled). */
export const promptBytes = (prompt: string) => Buffer.byteLength(prompt.replaceAll("'", "''"));

/** A scheduler job name (≤ 128, an unquoted identifier), the same for the same wait. */
export function runTeamJobName(kind: 'ANSWER' | 'START', ...parts: readonly string[]): string {
  const digest = createHash('sha256').update(parts.join('\u0000')).digest('hex').slice(0, 32);
  return `AGENTGRAPH_${kind}_${digest.toUpperCase()}`;
}

const OUTPUTS = ['outcome', 'run_state', 'conversation_out'] as const;

/** The block's binds: IN the request's, OUT the outcome's (OUTPUTS). */
const bind = {
  jobName: sql.placeholder('job_name'),
  execId: sql.placeholder('exec_id'),
  teamOwner: sql.placeholder('team_owner'),
  teamName: sql.placeholder('team_name'),
  prompt: sql.placeholder('prompt'),
  conversationId: sql.placeholder('conversation_id'),
  outcome: sql.placeholder('outcome'),
  runState: sql.placeholder('run_state'),
  conversationOut: sql.placeholder('conversation_out'),
};

export const runTeamSql = perCatalog((catalog: Catalog) => {
  const block: Block = {
    name: 'runTeam.submit',
    outputs: OUTPUTS,
    privileges: 'CREATE JOB, EXECUTE ON DBMS_CLOUD_AI_AGENT and EXECUTE ON DBMS_CLOUD_AI',
    oracle: blockStatement(
      'runTeam.submit',
      sql`DECLARE
  l_state VARCHAR2(30);
  l_conversation VARCHAR2(128) := ${bind.conversationId};
BEGIN
  ${bind.outcome} := 'SUBMITTED';
  IF ${bind.execId} IS NOT NULL THEN
    SELECT MAX(STATE) INTO l_state FROM ${sql.identifier(catalog, catalog.teamHistory)} WHERE TEAM_EXEC_ID = ${bind.execId};
    ${bind.runState} := l_state;
    IF l_state IS NULL OR l_state <> 'WAITING_FOR_HUMAN' THEN
      ${bind.outcome} := 'NOT_WAITING';
      RETURN;
    END IF;
  ELSE
    l_conversation := DBMS_CLOUD_AI.CREATE_CONVERSATION();
  END IF;
  DBMS_SCHEDULER.CREATE_JOB(
    job_name => ${bind.jobName},
    job_type => 'PLSQL_BLOCK',
    job_action => ${jobAction({
      owner: bind.teamOwner,
      team: bind.teamName,
      prompt: bind.prompt,
      params: sql`JSON_OBJECT('conversation_id' VALUE l_conversation)`,
    })},
    enabled => TRUE,
    auto_drop => TRUE,
    comments => 'agent-graph: RUN_TEAM');
  ${bind.conversationOut} := l_conversation;
EXCEPTION
  WHEN OTHERS THEN
    IF SQLCODE = -27477 THEN
      ${bind.outcome} := 'DUPLICATE';
    ELSE
      RAISE;
    END IF;
END;`,
    ),
    embedded: statement(
      'runTeam.submit',
      sql`SELECT outcome, run_state, conversation_out
        FROM emb_run_team_submit(${sql.join(
          [
            bind.jobName,
            bind.execId,
            bind.teamOwner,
            bind.teamName,
            bind.prompt,
            bind.conversationId,
          ],
          ', ',
        )})`,
    ),
  };
  return {
    block,
    binds: (request: RunTeamRequest): Binds => ({
      job_name: request.jobName,
      exec_id: request.execId,
      team_owner: request.teamOwner,
      team_name: request.teamName,
      prompt: request.prompt,
      conversation_id: request.conversationId,
    }),
    decode: (row: Row): RunTeamOutcome => {
      switch (row.outcome) {
        case 'NOT_WAITING':
          return { kind: 'not_waiting', state: strOrNull(row.runState) };
        case 'DUPLICATE':
          return { kind: 'duplicate' };
        default:
          return { kind: 'submitted', conversationId: strOrNull(row.conversationOut) };
      }
    },
  };
});

/**
 * Whether the session may create the job (ORA-27486 otherwise, when the job is created, which
 * the self-check's NOT_WAITING run never reaches). SESSION_PRIVS lists the privileges the
 * session has, through roles too, which an anonymous block uses.
 */
export const createJobPrivilege = query(
  'runTeam.createJobPrivilege',
  sql`SELECT COUNT(*) AS GRANTED FROM SESSION_PRIVS WHERE PRIVILEGE IN ('CREATE JOB', 'CREATE ANY JOB')`,
  (row: Row) => num(row.granted) > 0,
);

/**
 * The job's RUN_TEAM call, compiled and never run (IF 1 = 0), with arguments of the forms the
 * job action passes: a missing EXECUTE on DBMS_CLOUD_AI_AGENT or another signature fails to
 * compile (PLS-00201, PLS-00306), which the job's own text would only show when it runs.
 */
export const runTeamCompiles: Block = {
  name: 'runTeam.compile',
  outputs: ['compiled'],
  privileges: 'EXECUTE ON DBMS_CLOUD_AI_AGENT',
  oracle: blockStatement(
    'runTeam.compile',
    sql`DECLARE l_result CLOB;
BEGIN
  IF 1 = 0 THEN
    l_result := DBMS_CLOUD_AI_AGENT.RUN_TEAM(team_name => 'AGENTGRAPH_CHECK', user_prompt => 'check', params => '{}');
  END IF;
  ${sql.placeholder('compiled')} := 'YES';
END;`,
  ),
  embedded: statement('runTeam.compile', sql`SELECT 'YES' AS compiled`),
};
