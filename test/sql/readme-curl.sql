-- { agents(first: 3) { totalCount nodes { name owner } } }
-- 1 statement

-- agents.page (with DESCRIBE_AGENT details)
SELECT AGENT_ID AS AGENT_ID, OWNER AS OWNER, AGENT_NAME, CREATE_TIME, INPUTS AS INPUTS, OUTPUTS AS OUTPUTS, COUNT(*) OVER () AS TOTAL_COUNT FROM DBA_AI_AGENTS ORDER BY OWNER, AGENT_NAME OFFSET :page_offset ROWS FETCH NEXT :page_limit ROWS ONLY;
