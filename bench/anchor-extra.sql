-- Loaded after the anchor kit's schema.sql (load-schema.mjs, ANCHOR_EXTRA_SQL) by bench/anchor.ts.
-- The demo logs a retried task twice under one TASK_ORDER (seed 003 documents no key); the
-- kit keys task_runs by (team_exec_id, task_order), so the anchor keeps the first attempt.
create rule task_runs_first_attempt as on insert to app.task_runs
  where exists (select 1 from app.task_runs t
                where t.team_exec_id = new.team_exec_id and t.task_order = new.task_order)
  do instead nothing;
-- Both attempts list the same calls (same run and TASK_ORDER): each call once.
create rule tool_calls_once as on insert to app.tool_calls
  where exists (select 1 from app.tool_calls c where c.invocation_id = new.invocation_id)
  do instead nothing;
-- Indexes PostGraphile needs to filter and order by these columns (bench/anchor-shapes.ts).
create index on app.team_runs (state);
create index on app.team_runs (start_date);
-- The demo holds two owners' teams of one name (ANALYST's and OPS's SALES_INSIGHT_TEAM, told
-- apart by TEAM_OWNER in the DBA_ views); the kit keys teams by name alone, so the anchor keeps
-- the first owner's team, and the other's runs are that team's there. No shape of
-- bench/anchor-shapes.ts reads that team's own page; the team catalog lists one team fewer
-- there (a bias in PostGraphile's favour, 22 teams against 23).
create rule teams_first_owner as on insert to app.teams
  where exists (select 1 from app.teams t where t.team_name = new.team_name)
  do instead nothing;
