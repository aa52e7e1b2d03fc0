/** The queries the benches load agent-graph with, by name (`--only` picks them). */
export interface Scenario {
  readonly name: string;
  readonly query: string;
  readonly variables?: Record<string, unknown>;
}

/** The dashboard's selection of one run; `dashboard-texts` adds the large text columns. */
const DASHBOARD_RUN = 'state tasks { taskName agent { name } toolCalls { toolName } }';
const DASHBOARD_RUN_TEXTS =
  'state tasks { taskName input result agent { name } toolCalls { toolName input output } }';
const dashboard = (
  run: string,
) => `query Dashboard { teams(first: 20) { edges { node { name tools { name } agentCard { name skills { name } }
      runs(first: 10) { edges { node { ${run} } } } } } } }`;

export const SCENARIOS: readonly Scenario[] = [
  { name: 'floor', query: '{ __typename }' },
  {
    name: 'lookup',
    query:
      'query Lookup { agent(name: "ORDER_ASSISTANT") { name agentId owner createTime inputs { title type } callContract { inputFormat requiredKeys nameMatches } } }',
  },
  { name: 'dashboard', query: dashboard(DASHBOARD_RUN) },
  { name: 'dashboard-texts', query: dashboard(DASHBOARD_RUN_TEXTS) },
  {
    name: 'stats',
    query: `query Stats {
      execStatSummary { executionCount totalTimeAvgMs totalTimeP50Ms totalTimeP95Ms totalTimeP99Ms totalTimeMaxMs
        totals { inputTokens outputTokens llmCallCount toolCallCount } }
      diagnose: execStats(first: 100, filter: { minTotalTimeMs: 2000 }, orderBy: { field: TOTAL_TIME, direction: DESC }) {
        nodes { conId totalTimeExecMs totalTimeLlmMs totalTimeToolMs llmTimePct toolTimePct
          llmCallCount toolCallCount inputTokens outputTokens } } }`,
  },
];

/**
 * Many clients asking for the same dashboard, as a room of operators' screens do: the
 * response cache's case (`npm run bench:cache`, bench/cache.ts).
 */
export const REPEATED_DASHBOARD: Scenario = {
  name: 'repeated-dashboard',
  query: dashboard(DASHBOARD_RUN),
};
