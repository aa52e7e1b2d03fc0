import { MEASURES } from '../../model/exec-stat.js';
import { ORACLE_EMULATION_SCHEMA } from './plsql.js';

/**
 * Tables and views with Oracle's names and columns (seeds 002 and 003, and the Select AI
 * catalog in the reference). The DBA_ forms and GV$ are tables; the USER_ forms and V$ are
 * views over them, filtered the way Oracle filters them: USER_ by the session user (the
 * `agentgraph.session_user` setting), V$ by the current instance (1).
 *
 * Spec details that Oracle only returns through DBMS_AI_AGENT (the description) live in
 * `emb_agent_specs`, behind DBA_AI_AGENTS.
 *
 * Dates have the seeds' types, zone and all: CREATE_TIME is a DATE (seed 002, Oracle's DATE
 * emulated in plsql.ts), the history views' START_DATE and END_DATE are TIMESTAMP (seed 003),
 * both without a time zone, so a driver that reads them in the process's local time shows it
 * here as on Oracle. The scheduler's LOG_DATE and ACTUAL_START_DATE are TIMESTAMP(6) WITH
 * TIME ZONE (Oracle Database Reference, ALL_SCHEDULER_JOB_RUN_DETAILS); the conversation
 * prompts' CREATED is taken to be too, like the CREATED of the other DBMS_CLOUD_AI views.
 */
const DATE = `${ORACLE_EMULATION_SCHEMA}.date`;

/**
 * PostgreSQL truncates identifiers to 63 bytes, and two of seed 002's column names
 * (FILTER_ALREADY_RETRIEVED_CHUNKS and its _SIMPLIFIED twin) share their first 63: in the
 * embedded database they read one stored column. Oracle keeps them apart; the SQL text is
 * the same for both.
 */
export const pgColumn = (oracleColumn: string) => oracleColumn.toLowerCase().slice(0, 63);

const measureColumnNames = [...new Set(MEASURES.map((m) => pgColumn(m.column)))];
const measureColumns = measureColumnNames.map((c) => `${c} numeric NOT NULL DEFAULT 0`);

const SESSION_USER = `current_setting('agentgraph.session_user', true)`;

/** A USER_ view: the DBA_ table's rows for the session user, without the owner column. */
function userView(name: string, from: string, ownerColumn: string, columns: string[]): string {
  return `CREATE VIEW ${name} AS SELECT ${columns.join(', ')} FROM ${from} WHERE ${ownerColumn} = ${SESSION_USER};`;
}

const TEAM_HISTORY = [
  'team_exec_id',
  'team_name',
  'start_date',
  'end_date',
  'state',
  'team_instance_id',
];
const TASK_HISTORY = [
  'team_exec_id',
  'team_name',
  'agent_name',
  'task_name',
  'task_order',
  'coversation_param',
  'input',
  'result',
  'state',
  'start_date',
  'end_date',
];
const TOOL_HISTORY = [
  'invocation_id',
  'team_exec_id',
  'task_order',
  'tool_name',
  'agent_name',
  'task_name',
  'start_date',
  'end_date',
  'input',
  'output',
  'tool_output',
];

export const DDL = `
CREATE TABLE emb_agent_specs (
  agent_id numeric PRIMARY KEY,
  owner varchar(128) NOT NULL,
  agent_name varchar(128) NOT NULL,
  create_time ${DATE} NOT NULL,
  description text,
  inputs text,
  outputs text,
  UNIQUE (owner, agent_name)
);
CREATE VIEW dba_ai_agents AS
  SELECT agent_id, owner, agent_name, create_time, inputs, outputs FROM emb_agent_specs;
${userView('user_ai_agents', 'emb_agent_specs', 'owner', ['agent_id', 'agent_name', 'create_time', 'inputs', 'outputs'])}

CREATE TABLE gv$agent_exec_stat (
  inst_id numeric NOT NULL,
  ${measureColumns.join(',\n  ')},
  con_id numeric NOT NULL
);
CREATE VIEW v$agent_exec_stat AS
  SELECT ${measureColumnNames.join(', ')}, con_id
  FROM gv$agent_exec_stat WHERE inst_id = 1;

CREATE TABLE dba_ai_agent_teams (
  owner varchar(128) NOT NULL,
  agent_team_name varchar(128) NOT NULL,
  description text,
  status varchar(30),
  PRIMARY KEY (owner, agent_team_name)
);
${userView('user_ai_agent_teams', 'dba_ai_agent_teams', 'owner', ['agent_team_name', 'description', 'status'])}
CREATE TABLE dba_ai_agent_team_attributes (
  owner varchar(128) NOT NULL,
  agent_team_name varchar(128) NOT NULL,
  attribute_name varchar(128) NOT NULL,
  attribute_value text
);
${userView('user_ai_agent_team_attributes', 'dba_ai_agent_team_attributes', 'owner', ['agent_team_name', 'attribute_name', 'attribute_value'])}
CREATE TABLE dba_ai_agent_tools (
  owner varchar(128) NOT NULL,
  tool_id numeric NOT NULL,
  tool_name varchar(128) NOT NULL,
  description text,
  PRIMARY KEY (owner, tool_name)
);
${userView('user_ai_agent_tools', 'dba_ai_agent_tools', 'owner', ['tool_id', 'tool_name', 'description'])}
CREATE TABLE dba_ai_agent_tool_attributes (
  owner varchar(128) NOT NULL,
  tool_name varchar(128) NOT NULL,
  attribute_name varchar(128) NOT NULL,
  attribute_value text
);
${userView('user_ai_agent_tool_attributes', 'dba_ai_agent_tool_attributes', 'owner', ['tool_name', 'attribute_name', 'attribute_value'])}
CREATE TABLE dba_ai_agent_tasks (
  owner varchar(128) NOT NULL,
  task_name varchar(128) NOT NULL,
  description text,
  PRIMARY KEY (owner, task_name)
);
${userView('user_ai_agent_tasks', 'dba_ai_agent_tasks', 'owner', ['task_name', 'description'])}
CREATE TABLE dba_ai_agent_task_attributes (
  owner varchar(128) NOT NULL,
  task_name varchar(128) NOT NULL,
  attribute_name varchar(128) NOT NULL,
  attribute_value text
);
${userView('user_ai_agent_task_attributes', 'dba_ai_agent_task_attributes', 'owner', ['task_name', 'attribute_name', 'attribute_value'])}

CREATE TABLE dba_ai_agent_team_history (
  team_exec_id varchar(128) PRIMARY KEY,
  team_name varchar(128) NOT NULL,
  team_owner varchar(128) NOT NULL,
  start_date timestamp,
  end_date timestamp,
  state varchar(30) NOT NULL,
  team_instance_id numeric
);
CREATE INDEX emb_team_history_team ON dba_ai_agent_team_history (team_owner, team_name, start_date);
CREATE INDEX emb_team_history_state ON dba_ai_agent_team_history (state);
-- The keyset order of the pages of runs and of tool calls (runOrderKeys, TOOL_CALL_ORDER_KEYS in
-- src/db/sql/team-history.ts, newest first): a page reads its rows off the index, either way,
-- and stops at the page's end, instead of sorting the whole history for every page.
CREATE INDEX emb_team_history_newest ON dba_ai_agent_team_history (start_date DESC NULLS LAST, team_exec_id);
${userView('user_ai_agent_team_history', 'dba_ai_agent_team_history', 'team_owner', TEAM_HISTORY)}
CREATE TABLE dba_ai_agent_task_history (
  team_exec_id varchar(128) NOT NULL,
  team_name varchar(128) NOT NULL,
  task_owner varchar(128),
  agent_name varchar(128) NOT NULL,
  task_name varchar(128),
  task_order numeric,
  coversation_param text,
  input text,
  result text,
  state varchar(30) NOT NULL,
  start_date timestamp,
  end_date timestamp
);
CREATE INDEX emb_task_history_exec ON dba_ai_agent_task_history (team_exec_id, task_order);
${userView('user_ai_agent_task_history', 'dba_ai_agent_task_history', 'task_owner', TASK_HISTORY)}
CREATE TABLE dba_ai_agent_tool_history (
  invocation_id varchar(128) PRIMARY KEY,
  team_exec_id varchar(128) NOT NULL,
  task_order numeric,
  tool_owner varchar(128),
  tool_name varchar(128),
  agent_name varchar(128),
  task_name varchar(128),
  start_date timestamp,
  end_date timestamp,
  input text,
  output text,
  tool_output text
);
CREATE INDEX emb_tool_history_exec ON dba_ai_agent_tool_history (team_exec_id, task_order);
CREATE INDEX emb_tool_history_newest ON dba_ai_agent_tool_history (start_date DESC NULLS LAST, invocation_id);
${userView('user_ai_agent_tool_history', 'dba_ai_agent_tool_history', 'tool_owner', TOOL_HISTORY)}

CREATE TABLE dba_scheduler_job_run_details (
  log_id numeric PRIMARY KEY,
  log_date timestamptz NOT NULL,
  owner varchar(128) NOT NULL,
  job_name varchar(261) NOT NULL,
  status varchar(30),
  actual_start_date timestamptz,
  additional_info text
);
CREATE INDEX emb_job_run_details_job ON dba_scheduler_job_run_details (owner, job_name);
${userView('user_scheduler_job_run_details', 'dba_scheduler_job_run_details', 'owner', ['log_id', 'log_date', 'job_name', 'status', 'actual_start_date', 'additional_info'])}
CREATE TABLE dba_cloud_ai_conversation_prompts (
  owner varchar(128) NOT NULL,
  conversation_id varchar(128) NOT NULL,
  prompt text,
  prompt_response text,
  created timestamptz NOT NULL
);
CREATE INDEX emb_conversation_prompts ON dba_cloud_ai_conversation_prompts (conversation_id, created);
${userView('user_cloud_ai_conversation_prompts', 'dba_cloud_ai_conversation_prompts', 'owner', ['conversation_id', 'prompt', 'prompt_response', 'created'])}
`;
