-- Indexes PostGraphile needs to filter and order by these columns (bench/anchor-shapes.ts).
create index on app.team_runs (state);
create index on app.team_runs (start_date);
