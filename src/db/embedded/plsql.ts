/**
 * DBMS_AI_AGENT.LIST_AGENTS and DESCRIBE_AGENT emulated as PL/pgSQL functions over the
 * stored specs, producing seed 000's JSON member for member and in the same order. The
 * embedded session behaves as an administrator, so every stored agent is visible.
 */
export const ORACLE_EMULATION_SCHEMA = 'emb_oracle';

/**
 * Oracle's DUAL, SYS_CONTEXT('USERENV', …) and PRODUCT_COMPONENT_VERSION, for the start-up
 * session statement (src/db/sql/session.ts). They live in their own schema, after public in
 * the search path, so that the Oracle fixture (generated from the public schema) leaves them
 * to the real database.
 */
const ORACLE_BUILTINS = `
CREATE SCHEMA ${ORACLE_EMULATION_SCHEMA};
CREATE VIEW ${ORACLE_EMULATION_SCHEMA}.dual AS SELECT 'X'::varchar(1) AS dummy;
CREATE FUNCTION ${ORACLE_EMULATION_SCHEMA}.sys_context(namespace text, parameter text) RETURNS text
LANGUAGE sql STABLE AS $$
  SELECT CASE WHEN upper(namespace) = 'USERENV' AND upper(parameter) IN ('SESSION_USER', 'CURRENT_SCHEMA', 'CURRENT_USER')
    THEN current_setting('agentgraph.session_user', true) END
$$;
CREATE VIEW ${ORACLE_EMULATION_SCHEMA}.product_component_version AS
  SELECT 'PGlite (embedded PostgreSQL)'::varchar(80) AS product,
         current_setting('server_version')::varchar(80) AS version_full;
`;

export const PLSQL_EMULATION = `${ORACLE_BUILTINS}
CREATE SCHEMA dbms_ai_agent;

CREATE FUNCTION emb_agent_description(s emb_agent_specs) RETURNS json LANGUAGE sql STABLE AS $$
  SELECT json_build_object(
    'name', s.agent_name,
    'create_time', to_char(s.create_time AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS'),
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
  SELECT emb_agent_description(s) INTO details FROM emb_agent_specs s WHERE s.agent_name = p_agent_name LIMIT 1;
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
`;
