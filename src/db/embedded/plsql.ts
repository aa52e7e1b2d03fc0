import { sql } from '../sql/fragment.js';
import { blockText } from '../sql/query.js';
import { jobAction } from '../sql/run-team.js';
import { executeAgentEmulation } from './execute-agent.js';

/**
 * DBMS_AI_AGENT.LIST_AGENTS and DESCRIBE_AGENT emulated as PL/pgSQL functions over the
 * stored specs, producing seed 000's JSON member for member and in the same order. The
 * embedded session behaves as an administrator, so every stored agent is visible. Also the
 * RUN_TEAM hand-off of src/db/sql/run-team.ts (scheduler job and RUN_TEAM in one), and
 * EXECUTE_AGENT (src/db/embedded/execute-agent.ts).
 */
export const ORACLE_EMULATION_SCHEMA = 'emb_oracle';

/** Where Oracle's `||` lives (ORACLE_BUILTINS): searched before pg_catalog. */
const ORACLE_OPERATORS_SCHEMA = 'emb_oracle_operators';

/**
 * The session's search path: the tables and views first (where CREATE puts what a test
 * makes), then Oracle's operators ahead of PostgreSQL's own (pg_catalog, otherwise searched
 * first), then DUAL, SYS_CONTEXT and the types behind both, so that none of them shadows a
 * PostgreSQL name.
 */
export const ORACLE_SEARCH_PATH = `public, ${ORACLE_OPERATORS_SCHEMA}, pg_catalog, ${ORACLE_EMULATION_SCHEMA}`;

/**
 * Oracle's DUAL, SYS_CONTEXT('USERENV', …) and PRODUCT_COMPONENT_VERSION, for the start-up
 * session statement (src/db/sql/session.ts), and its CLOB and DATE types. They live in their
 * own schema, after public in the search path, so that the Oracle fixture (generated from the
 * public schema) leaves them to the real database. Created before the tables (ddl.ts), whose
 * DATE columns use the type.
 */
export const ORACLE_BUILTINS = `
CREATE SCHEMA ${ORACLE_EMULATION_SCHEMA};
-- Oracle's || on character values: a NULL operand is skipped ("null can result only from the
-- concatenation of two null strings", SQL Reference, Concatenation Operator), where
-- PostgreSQL's gives NULL. A statement whose meaning hangs on the difference (a LIKE pattern
-- built from a nullable column, src/db/sql/task-details.ts) then means here what it means
-- on Oracle, so the embedded tests see it. Its schema is searched before pg_catalog
-- (ORACLE_SEARCH_PATH), where nothing else is; the function is inlined, so costs no call.
-- Operands of other types (a number) keep PostgreSQL's operator.
CREATE SCHEMA ${ORACLE_OPERATORS_SCHEMA};
CREATE FUNCTION ${ORACLE_OPERATORS_SCHEMA}.oracle_concat(a text, b text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN a IS NULL THEN b WHEN b IS NULL THEN a ELSE a OPERATOR(pg_catalog.||) b END
$$;
CREATE OPERATOR ${ORACLE_OPERATORS_SCHEMA}.|| (LEFTARG = text, RIGHTARG = text,
  FUNCTION = ${ORACLE_OPERATORS_SCHEMA}.oracle_concat);
-- DBTIMEZONE and SYSTIMESTAMP are columns of DUAL here: Oracle writes them without
-- parentheses, which PostgreSQL reads as column names (the check's session.timeZone).
CREATE VIEW ${ORACLE_EMULATION_SCHEMA}.dual AS
  SELECT 'X'::varchar(1) AS dummy, '+00:00'::varchar(6) AS dbtimezone, now() AS systimestamp;
CREATE FUNCTION ${ORACLE_EMULATION_SCHEMA}.sys_extract_utc(t timestamptz) RETURNS timestamp
LANGUAGE sql IMMUTABLE AS $$ SELECT t AT TIME ZONE 'UTC' $$;
-- A zone-less TIMESTAMP is taken in the session zone, +00:00 (src/db/oracle/options.ts): as it is.
CREATE FUNCTION ${ORACLE_EMULATION_SCHEMA}.sys_extract_utc(t timestamp) RETURNS timestamp
LANGUAGE sql IMMUTABLE AS $$ SELECT t $$;
-- The embedded session acts as an administrator: it may create scheduler jobs.
CREATE VIEW ${ORACLE_EMULATION_SCHEMA}.session_privs AS SELECT 'CREATE JOB'::varchar(40) AS privilege;
CREATE FUNCTION ${ORACLE_EMULATION_SCHEMA}.sys_context(namespace text, parameter text) RETURNS text
LANGUAGE sql STABLE AS $$
  SELECT CASE WHEN upper(namespace) = 'USERENV' AND upper(parameter) IN ('SESSION_USER', 'CURRENT_SCHEMA', 'CURRENT_USER')
    THEN current_setting('agentgraph.session_user', true) END
$$;
-- Oracle's CLOB, as RETURNING CLOB names it in the JSON aggregates (jsonArrayQuery): over json,
-- so that an object returned as CLOB is nested as JSON, not quoted, and never parsed again.
CREATE DOMAIN ${ORACLE_EMULATION_SCHEMA}.clob AS json;
-- Oracle's DATE: a date and a time of day to the second, without a time zone (seed 002's
-- CREATE_TIME). The dictionary query of database.ts reports the column as DATE.
CREATE DOMAIN ${ORACLE_EMULATION_SCHEMA}.date AS timestamp(0) without time zone;
-- Oracle's TRUNC(date, format), returning a DATE, for the formats the statements use:
-- HH (HH24, HH12), the hour, and DD (DDD, J), the day (teamRunActivity's buckets,
-- src/db/sql/team-activity.ts). Any other format raises, as Oracle's ORA-01898 would.
CREATE FUNCTION ${ORACLE_EMULATION_SCHEMA}.trunc(d timestamp, format text)
RETURNS ${ORACLE_EMULATION_SCHEMA}.date LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
  CASE upper(format)
    WHEN 'HH', 'HH24', 'HH12' THEN RETURN date_trunc('hour', d);
    WHEN 'DD', 'DDD', 'J' THEN RETURN date_trunc('day', d);
    ELSE RAISE EXCEPTION 'ORA-01898: too many precision specifiers (TRUNC format %)', format;
  END CASE;
END
$$;
-- Oracle's VARCHAR2(n), as JSON_TABLE's COLUMNS name it (src/db/sql/teams.ts): PostgreSQL's
-- varchar under another name, with its length modifier, and read as text.
CREATE TYPE ${ORACLE_EMULATION_SCHEMA}.varchar2;
CREATE FUNCTION ${ORACLE_EMULATION_SCHEMA}.varchar2in(cstring, oid, integer) RETURNS ${ORACLE_EMULATION_SCHEMA}.varchar2
  LANGUAGE internal IMMUTABLE STRICT AS 'varcharin';
CREATE FUNCTION ${ORACLE_EMULATION_SCHEMA}.varchar2out(${ORACLE_EMULATION_SCHEMA}.varchar2) RETURNS cstring
  LANGUAGE internal IMMUTABLE STRICT AS 'varcharout';
CREATE FUNCTION ${ORACLE_EMULATION_SCHEMA}.varchar2recv(internal, oid, integer) RETURNS ${ORACLE_EMULATION_SCHEMA}.varchar2
  LANGUAGE internal STABLE STRICT AS 'varcharrecv';
CREATE FUNCTION ${ORACLE_EMULATION_SCHEMA}.varchar2send(${ORACLE_EMULATION_SCHEMA}.varchar2) RETURNS bytea
  LANGUAGE internal STABLE STRICT AS 'varcharsend';
CREATE TYPE ${ORACLE_EMULATION_SCHEMA}.varchar2 (INPUT = ${ORACLE_EMULATION_SCHEMA}.varchar2in,
  OUTPUT = ${ORACLE_EMULATION_SCHEMA}.varchar2out, RECEIVE = ${ORACLE_EMULATION_SCHEMA}.varchar2recv,
  SEND = ${ORACLE_EMULATION_SCHEMA}.varchar2send, TYPMOD_IN = varchartypmodin,
  TYPMOD_OUT = varchartypmodout, LIKE = varchar, CATEGORY = 'S', COLLATABLE = true);
CREATE CAST (${ORACLE_EMULATION_SCHEMA}.varchar2 AS text) WITHOUT FUNCTION AS IMPLICIT;
CREATE CAST (text AS ${ORACLE_EMULATION_SCHEMA}.varchar2) WITHOUT FUNCTION AS ASSIGNMENT;
CREATE VIEW ${ORACLE_EMULATION_SCHEMA}.product_component_version AS
  SELECT 'PGlite (embedded PostgreSQL)'::varchar(80) AS product,
         current_setting('server_version')::varchar(80) AS version_full;
`;

export const PLSQL_EMULATION = `
${executeAgentEmulation(ORACLE_EMULATION_SCHEMA)}
-- DBMS_LOB.SUBSTR(lob, amount, offset): the characters of a CLOB from offset, at most amount.
CREATE SCHEMA dbms_lob;
CREATE FUNCTION dbms_lob.substr(lob text, amount integer, start_at integer) RETURNS text
LANGUAGE sql IMMUTABLE AS $$ SELECT substr(lob, start_at, amount) $$;

CREATE SCHEMA dbms_ai_agent;

CREATE FUNCTION emb_agent_description(s emb_agent_specs) RETURNS json LANGUAGE sql STABLE AS $$
  SELECT json_build_object(
    'name', s.agent_name,
    'create_time', to_char(s.create_time, 'YYYY-MM-DD"T"HH24:MI:SS'),
    'description', s.description,
    'inputs', COALESCE(s.inputs, '[]')::json,
    'outputs', COALESCE(s.outputs, '[]')::json,
    'call_contract', json_build_object(
      'input_format', 'json_array_name_value_pairs',
      'required_keys', json_build_array('name', 'value'),
      'name_matches', 'inputs[].title (exact match)'))
$$;

CREATE FUNCTION dbms_ai_agent.list_agents() RETURNS text LANGUAGE sql STABLE AS $$
  SELECT COALESCE(json_agg(emb_agent_description(s) ORDER BY s.agent_name), '[]'::json)::text
  FROM emb_agent_specs s
$$;

CREATE FUNCTION dbms_ai_agent.describe_agent(p_agent_name text) RETURNS text
LANGUAGE plpgsql STABLE AS $$
DECLARE
  details json;
BEGIN
  -- A name, no owner: the session user's agent of that name, as Oracle resolves it.
  SELECT emb_agent_description(s) INTO details FROM emb_agent_specs s WHERE s.agent_name = p_agent_name
  ORDER BY (s.owner = current_setting('agentgraph.session_user', true)) DESC, s.owner LIMIT 1;
  IF details IS NULL THEN
    RAISE EXCEPTION 'ORA-20051: agent % does not exist', p_agent_name;
  END IF;
  RETURN details::text;
END
$$;

-- What the Oracle driver's inline WITH FUNCTION does: DESCRIBE_AGENT, or NULL where it raises.
CREATE FUNCTION emb_describe_agent_or_null(p_agent_name text) RETURNS text
LANGUAGE plpgsql STABLE AS $$
BEGIN
  RETURN dbms_ai_agent.describe_agent(p_agent_name);
EXCEPTION WHEN OTHERS THEN
  RETURN NULL;
END
$$;

-- DBMS_SCHEDULER.CREATE_JOB's part of the RUN_TEAM hand-off (src/db/sql/run-team.ts): job
-- names are unique, which is what makes a second answer to the same wait a duplicate. The
-- job's action is the text the Oracle block would give the scheduler, built by the same
-- expression.
CREATE TABLE emb_scheduler_jobs (
  job_name varchar(128) PRIMARY KEY,
  owner varchar(128) NOT NULL,
  team_exec_id varchar(128),
  team_name varchar(128) NOT NULL,
  user_prompt text NOT NULL,
  conversation_id varchar(128),
  job_action text NOT NULL,
  created timestamptz NOT NULL
);

-- The block of run-team.ts and the RUN_TEAM call its job makes, at once: resuming closes the
-- open tool call with the answer as its output and moves the run to RESUMING (the simulator
-- carries it on); starting adds a RUNNING run of the owner's team with its first task and a
-- new conversation.
CREATE FUNCTION emb_run_team_submit(p_job_name text, p_exec_id text, p_team_owner text,
  p_team_name text, p_prompt text, p_conversation_id text)
RETURNS TABLE (outcome text, run_state text, conversation_out text)
LANGUAGE plpgsql AS $$
DECLARE
  l_run dba_ai_agent_team_history%ROWTYPE;
  l_owner text;
  l_now timestamptz := clock_timestamp();
  l_member json;
  l_exec text;
  l_conversation text := p_conversation_id;
BEGIN
  IF p_exec_id IS NOT NULL THEN
    SELECT * INTO l_run FROM dba_ai_agent_team_history h WHERE h.team_exec_id = p_exec_id FOR UPDATE;
    IF NOT FOUND OR l_run.state <> 'WAITING_FOR_HUMAN' THEN
      RETURN QUERY SELECT 'NOT_WAITING'::text, l_run.state::text, NULL::text;
      RETURN;
    END IF;
    l_owner := l_run.team_owner;
  ELSE
    SELECT t.owner INTO l_owner FROM dba_ai_agent_teams t
    WHERE t.owner = p_team_owner AND t.agent_team_name = p_team_name;
    IF l_owner IS NULL THEN
      RAISE EXCEPTION 'ORA-20050: team %.% does not exist', p_team_owner, p_team_name;
    END IF;
    l_conversation := gen_random_uuid()::text;
  END IF;
  BEGIN
    INSERT INTO emb_scheduler_jobs (job_name, owner, team_exec_id, team_name, user_prompt,
      conversation_id, job_action, created)
    VALUES (p_job_name, l_owner, p_exec_id, p_team_name, p_prompt, l_conversation,
      ${blockText(
        jobAction({
          owner: sql`p_team_owner`,
          team: sql`p_team_name`,
          prompt: sql`p_prompt`,
          params: sql`json_build_object('conversation_id', l_conversation)::text`,
        }),
      )},
      l_now);
  EXCEPTION WHEN unique_violation THEN
    RETURN QUERY SELECT 'DUPLICATE'::text, NULL::text, NULL::text;
    RETURN;
  END;
  IF p_exec_id IS NOT NULL THEN
    UPDATE dba_ai_agent_tool_history c SET end_date = l_now, output = p_prompt,
      tool_output = 'answered through RUN_TEAM'
    WHERE c.team_exec_id = p_exec_id AND c.end_date IS NULL;
    UPDATE dba_ai_agent_task_history k SET state = 'RESUMING'
    WHERE k.team_exec_id = p_exec_id AND k.state = 'WAITING_FOR_HUMAN';
    UPDATE dba_ai_agent_team_history h SET state = 'RESUMING' WHERE h.team_exec_id = p_exec_id;
    RETURN QUERY SELECT 'SUBMITTED'::text, 'RESUMING'::text, l_conversation;
    RETURN;
  END IF;
  SELECT a.attribute_value::json -> 0 INTO l_member FROM dba_ai_agent_team_attributes a
  WHERE a.owner = l_owner AND a.agent_team_name = p_team_name AND a.attribute_name = 'agents';
  l_exec := upper(replace(gen_random_uuid()::text, '-', ''));
  INSERT INTO dba_ai_agent_team_history (team_exec_id, team_name, team_owner, start_date,
    end_date, state, team_instance_id)
  VALUES (l_exec, p_team_name, l_owner, l_now, NULL, 'RUNNING', 1);
  INSERT INTO dba_ai_agent_task_history (team_exec_id, team_name, task_owner, agent_name,
    task_name, task_order, coversation_param, input, result, state, start_date, end_date)
  VALUES (l_exec, p_team_name, l_owner, l_member->>'name', l_member->>'task', 1,
    json_build_object('conversation_id', l_conversation, 'title', left(p_prompt, 40))::text,
    p_prompt, NULL, 'RUNNING', l_now, NULL);
  RETURN QUERY SELECT 'SUBMITTED'::text, 'RUNNING'::text, l_conversation;
END
$$;
`;
