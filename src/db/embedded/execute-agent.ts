/**
 * DBMS_AI_AGENT.EXECUTE_AGENT for the demo agents, and the dictionary rows that describe it.
 *
 * ALL_ARGUMENTS and ALL_SYNONYMS list the emulation with the signature the reference gives
 * (unconfirmed): a function of AGENT_NAME and INPUTS returning a CLOB, and an overload that
 * also returns TRACES. Start-up discovers it from them with the statement it runs on Oracle
 * (src/db/sql/execute-agent.ts).
 *
 * emb_execute_agent answers deterministically for the same agent and inputs: an output with
 * one member per `outputs[].title` (an input of the same title is echoed; other values follow
 * the declared type), and a trace of nested components (StartNode, an Agent whose rounds plan
 * with an LlmNode and call a ToolNode until the last composes the answer, a BranchingNode, a
 * MapNode over the outputs, EndNode) with plausible
 * times and tokens. As the runtime does for a successful execution (seed 002), it adds one
 * V$AGENT_EXEC_STAT row whose measures are the trace's totals, traced or not.
 */
export const executeAgentEmulation = (oracleSchema: string) => `
-- No package of the session's own schema stands in for DBMS_AI_AGENT here.
CREATE VIEW ${oracleSchema}.all_objects AS
  SELECT NULL::varchar(128) AS owner, NULL::varchar(128) AS object_name,
         NULL::varchar(23) AS object_type WHERE FALSE;
CREATE VIEW ${oracleSchema}.all_synonyms AS
  SELECT 'PUBLIC'::varchar(128) AS owner, 'DBMS_AI_AGENT'::varchar(128) AS synonym_name,
         'SYS'::varchar(128) AS table_owner, 'DBMS_AI_AGENT'::varchar(128) AS table_name;
CREATE VIEW ${oracleSchema}.all_arguments AS
  SELECT a.owner::varchar(128), a.package_name::varchar(128), a.object_name::varchar(128),
         a.overload::varchar(40), a.position::numeric, a.argument_name::varchar(128),
         a.data_type::varchar(30), a.in_out::varchar(9), a.defaulted::varchar(1),
         0::numeric AS data_level
  FROM (VALUES
    ('SYS', 'DBMS_AI_AGENT', 'EXECUTE_AGENT', '1', 0, NULL, 'CLOB', 'OUT', 'N'),
    ('SYS', 'DBMS_AI_AGENT', 'EXECUTE_AGENT', '1', 1, 'AGENT_NAME', 'VARCHAR2', 'IN', 'N'),
    ('SYS', 'DBMS_AI_AGENT', 'EXECUTE_AGENT', '1', 2, 'INPUTS', 'CLOB', 'IN', 'N'),
    ('SYS', 'DBMS_AI_AGENT', 'EXECUTE_AGENT', '2', 0, NULL, 'CLOB', 'OUT', 'N'),
    ('SYS', 'DBMS_AI_AGENT', 'EXECUTE_AGENT', '2', 1, 'AGENT_NAME', 'VARCHAR2', 'IN', 'N'),
    ('SYS', 'DBMS_AI_AGENT', 'EXECUTE_AGENT', '2', 2, 'INPUTS', 'CLOB', 'IN', 'N'),
    ('SYS', 'DBMS_AI_AGENT', 'EXECUTE_AGENT', '2', 3, 'TRACES', 'CLOB', 'OUT', 'N')
  ) AS a(owner, package_name, object_name, overload, position, argument_name, data_type,
         in_out, defaulted);

-- A number from lo to hi, the same for the same seed and k.
CREATE FUNCTION emb_rand(seed text, k int, lo int, hi int) RETURNS int
LANGUAGE sql IMMUTABLE AS $$
  SELECT lo + abs(('x' || substr(md5(seed || ':' || k), 1, 7))::bit(28)::int) % (hi - lo + 1)
$$;

CREATE FUNCTION emb_trace_node(kind text, name text, started timestamptz, duration int,
  input_tokens int, output_tokens int, children json, extra json DEFAULT NULL) RETURNS json
LANGUAGE sql IMMUTABLE AS $$
  SELECT (jsonb_build_object(
    'component_type', kind,
    'name', name,
    'start_time', to_char(started AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    'duration_ms', duration,
    'input_tokens', input_tokens,
    'output_tokens', output_tokens,
    'children', COALESCE(children, '[]'::json)) || COALESCE(extra::jsonb, '{}'::jsonb))::json
$$;

CREATE FUNCTION emb_execute_agent(p_agent_name text, p_inputs text, p_traces boolean)
RETURNS TABLE (agent_output text, agent_traces text)
LANGUAGE plpgsql AS $$
DECLARE
  l_spec emb_agent_specs%ROWTYPE;
  l_seed text;
  l_inputs json := p_inputs::json;
  l_output jsonb := '{}'::jsonb;
  l_out record;
  l_echo json;
  l_summary text;
  l_t0 timestamptz := clock_timestamp();
  l_at timestamptz;
  l_rounds int;
  l_round int;
  l_round_start timestamptz;
  l_round_children json[];
  l_agent_start timestamptz;
  l_agent_children json[] := '{}';
  l_map_start timestamptz;
  l_map_children json[] := '{}';
  l_d int;
  l_in int;
  l_out_tokens int;
  l_start json;
  l_agent json;
  l_branch json;
  l_map json;
  l_end json;
  l_branch_taken text;
  l_llm_calls int := 0;
  l_llm_ms int := 0;
  l_tool_calls int := 0;
  l_tool_ms int := 0;
  l_tokens_in int := 0;
  l_tokens_out int := 0;
  l_start_ms int;
  l_end_ms int;
  l_branch_ms int;
  l_map_ms int;
  l_total int;
  l_k int := 0;
BEGIN
  SELECT * INTO l_spec FROM emb_agent_specs s WHERE s.agent_name = p_agent_name
  ORDER BY (s.owner = current_setting('agentgraph.session_user', true)) DESC, s.owner LIMIT 1;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'ORA-20051: agent % does not exist', p_agent_name;
  END IF;
  l_seed := p_agent_name || ':' || p_inputs;
  SELECT string_agg((e->>'name') || '=' || (e->'value')::text, ', ' ORDER BY ord)
    INTO l_summary FROM json_array_elements(l_inputs) WITH ORDINALITY AS x(e, ord);

  FOR l_out IN SELECT o->>'title' AS title, lower(COALESCE(o->>'type', 'string')) AS type
    FROM json_array_elements(COALESCE(l_spec.outputs, '[]')::json) o
  LOOP
    l_k := l_k + 1;
    SELECT e->'value' INTO l_echo FROM json_array_elements(l_inputs) e WHERE e->>'name' = l_out.title LIMIT 1;
    l_output := l_output || jsonb_build_object(l_out.title, CASE
      WHEN l_echo IS NOT NULL THEN l_echo::jsonb
      WHEN l_out.type = 'number' THEN to_jsonb(round(emb_rand(l_seed, l_k, 1, 10000) / 100.0, 2))
      WHEN l_out.type = 'integer' THEN to_jsonb(emb_rand(l_seed, l_k, 1, 1000))
      WHEN l_out.type = 'boolean' THEN to_jsonb(emb_rand(l_seed, l_k, 0, 1) = 1)
      ELSE to_jsonb(initcap(replace(l_out.title, '_', ' ')) || ' for ' || COALESCE(l_summary, 'no inputs'))
    END);
  END LOOP;

  l_at := l_t0;
  l_start_ms := emb_rand(l_seed, 101, 2, 6);
  l_start := emb_trace_node('StartNode', 'start', l_at, l_start_ms, NULL, NULL, NULL);
  l_at := l_at + make_interval(secs => l_start_ms / 1000.0);

  l_agent_start := l_at;
  l_rounds := emb_rand(l_seed, 102, 2, 3);
  FOR l_round IN 1..l_rounds LOOP
    l_round_start := l_at;
    l_round_children := '{}';
    l_d := emb_rand(l_seed, 110 + l_round, 450, 1400);
    l_in := emb_rand(l_seed, 120 + l_round, 280, 900);
    l_out_tokens := emb_rand(l_seed, 130 + l_round, 30, 160);
    l_round_children := l_round_children || emb_trace_node('LlmNode',
      CASE WHEN l_round = l_rounds THEN 'compose_answer' ELSE 'plan' END,
      l_at, l_d, l_in, l_out_tokens, NULL);
    l_llm_calls := l_llm_calls + 1; l_llm_ms := l_llm_ms + l_d;
    l_tokens_in := l_tokens_in + l_in; l_tokens_out := l_tokens_out + l_out_tokens;
    l_at := l_at + make_interval(secs => l_d / 1000.0);
    IF l_round < l_rounds THEN
      l_d := emb_rand(l_seed, 140 + l_round, 60, 380);
      l_round_children := l_round_children || emb_trace_node('ToolNode',
        'lookup_' || lower(p_agent_name), l_at, l_d, NULL, NULL, NULL);
      l_tool_calls := l_tool_calls + 1; l_tool_ms := l_tool_ms + l_d;
      l_at := l_at + make_interval(secs => l_d / 1000.0);
    END IF;
    l_d := (extract(epoch FROM l_at - l_round_start) * 1000)::int + 2;
    l_agent_children := l_agent_children || emb_trace_node('AgentRound', 'round ' || l_round,
      l_round_start, l_d, NULL, NULL, array_to_json(l_round_children));
    l_at := l_round_start + make_interval(secs => l_d / 1000.0);
  END LOOP;
  l_agent := emb_trace_node('Agent', lower(p_agent_name) || '_agent', l_agent_start,
    (extract(epoch FROM l_at - l_agent_start) * 1000)::int, NULL, NULL, array_to_json(l_agent_children));

  l_branch_ms := emb_rand(l_seed, 103, 2, 9);
  l_branch_taken := CASE WHEN emb_rand(l_seed, 104, 0, 2) = 0 THEN 'default' ELSE 'answered' END;
  l_branch := emb_trace_node('BranchingNode', 'check_answer', l_at, l_branch_ms, NULL, NULL, NULL,
    json_build_object('selected_branch', l_branch_taken));
  l_at := l_at + make_interval(secs => l_branch_ms / 1000.0);

  l_map_start := l_at;
  l_k := 0;
  FOR l_out IN SELECT o->>'title' AS title FROM json_array_elements(COALESCE(l_spec.outputs, '[]')::json) o LOOP
    l_k := l_k + 1;
    l_d := emb_rand(l_seed, 150 + l_k, 3, 25);
    l_map_children := l_map_children || emb_trace_node('ToolNode', 'format_' || l_out.title, l_at, l_d, NULL, NULL, NULL);
    l_tool_calls := l_tool_calls + 1; l_tool_ms := l_tool_ms + l_d;
    l_at := l_at + make_interval(secs => l_d / 1000.0);
  END LOOP;
  l_map_ms := (extract(epoch FROM l_at - l_map_start) * 1000)::int + 1;
  l_map := emb_trace_node('MapNode', 'format_outputs', l_map_start, l_map_ms, NULL, NULL, array_to_json(l_map_children));
  l_at := l_map_start + make_interval(secs => l_map_ms / 1000.0);

  l_end_ms := emb_rand(l_seed, 105, 1, 4);
  l_end := emb_trace_node('EndNode', 'end', l_at, l_end_ms, NULL, NULL, NULL);
  l_at := l_at + make_interval(secs => l_end_ms / 1000.0);
  -- Runtime work no component is charged with: seed 002's unattributed time.
  l_total := (extract(epoch FROM l_at - l_t0) * 1000)::int + emb_rand(l_seed, 106, 8, 40);

  INSERT INTO gv$agent_exec_stat (inst_id, con_id,
    agent_executor_llm_call_count, agent_executor_tool_call_count,
    agent_executor_branch_call_count, agent_executor_branch_default_call_count,
    agent_executor_map_node_call_count, agent_executor_start_node_call_count,
    agent_executor_end_node_call_count,
    agent_executor_total_time_llm, agent_executor_total_time_tool,
    agent_executor_total_time_exec, agent_executor_total_time_start_node,
    agent_executor_total_time_end_node, agent_executor_total_time_map_node,
    agent_executor_total_time_branch_node,
    agent_executor_input_tokens, agent_executor_output_tokens)
  VALUES (1, 3, l_llm_calls, l_tool_calls, 1, CASE WHEN l_branch_taken = 'default' THEN 1 ELSE 0 END,
    1, 1, 1, l_llm_ms, l_tool_ms, l_total, l_start_ms, l_end_ms, l_map_ms, l_branch_ms,
    l_tokens_in, l_tokens_out);

  RETURN QUERY SELECT l_output::text, CASE WHEN p_traces THEN json_build_object(
    'agent_name', p_agent_name,
    'root', emb_trace_node('Flow', p_agent_name, l_t0, l_total, NULL, NULL,
      json_build_array(l_start, l_agent, l_branch, l_map, l_end)))::text END;
END
$$;
`;
