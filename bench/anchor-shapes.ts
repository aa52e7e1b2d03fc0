/**
 * The shapes `npm run bench:anchor -- --shapes` measures side by side with PostGraphile on
 * the same rows: everyday queries a frontend writes, across the history roots (a team's runs,
 * the teamRuns connection both ways, teamRun by id, waitingForHuman, toolCalls with its
 * back-edges, `node` of a run), each written for both servers. `$EXEC` is replaced by a run's
 * id read from agent-graph before the rounds, `$RUN` by its global id (PostGraphile's
 * equivalent of `node` reads the run by its key). PostGraphile filters (`condition`) only indexed columns and
 * orders by them: anchor-extra.sql indexes STATE and START_DATE for it.
 */
export const SHAPES: Record<string, { agentGraph: string; postGraphile: string }> = {
  dashboard: {
    agentGraph:
      '{ teams(first: 20) { edges { node { name tools { name } runs(first: 10) { edges { node { state tasks { taskName agent { name } toolCalls { toolName } } } } } } } } }',
    postGraphile:
      '{ allTeams(first: 20) { nodes { teamName teamToolsByTeamName { nodes { toolName } } teamRunsByTeamName(first: 10, orderBy: START_DATE_DESC) { nodes { state taskRunsByTeamExecId { nodes { taskName agentByAgentName { agentName } toolCallsByTeamExecIdAndTaskOrder { nodes { toolName } } } } } } } } }',
  },
  recentRuns: {
    agentGraph:
      '{ teamRuns(first: 50) { nodes { execId state team { name } tasks { taskName agent { name } toolCalls { toolName } } } } }',
    postGraphile:
      '{ allTeamRuns(first: 50, orderBy: START_DATE_DESC) { nodes { teamExecId state teamByTeamName { teamName } taskRunsByTeamExecId { nodes { taskName agentByAgentName { agentName } toolCallsByTeamExecIdAndTaskOrder { nodes { toolName } } } } } } }',
  },
  runPage: {
    agentGraph: '{ teamRuns(first: 20) { nodes { execId teamName state startDate endDate } } }',
    postGraphile:
      '{ allTeamRuns(first: 20, orderBy: START_DATE_DESC) { nodes { teamExecId teamName state startDate endDate } } }',
  },
  runPageBackward: {
    agentGraph: '{ teamRuns(last: 20) { nodes { execId state tasks { taskName state } } } }',
    postGraphile:
      '{ allTeamRuns(last: 20, orderBy: START_DATE_DESC) { nodes { teamExecId state taskRunsByTeamExecId { nodes { taskName state } } } } }',
  },
  teamPageFiltered: {
    agentGraph:
      '{ team(name: "ORDER_SUPPORT_TEAM") { name runs(first: 10, filter: { states: [SUCCEEDED] }) { nodes { state startDate tasks { taskName state } } } } }',
    postGraphile:
      '{ teamByTeamName(teamName: "ORDER_SUPPORT_TEAM") { teamName teamRunsByTeamName(first: 10, orderBy: START_DATE_DESC, condition: { state: "SUCCEEDED" }) { nodes { state startDate taskRunsByTeamExecId { nodes { taskName state } } } } } }',
  },
  teamCatalog: {
    agentGraph: '{ teams(first: 20) { nodes { name description tools { name instruction } } } }',
    postGraphile:
      '{ allTeams(first: 20) { nodes { teamName description teamToolsByTeamName { nodes { toolName instruction } } } } }',
  },
  runById: {
    agentGraph:
      '{ teamRun(execId: "$EXEC") { execId state tasks { taskName result toolCalls { toolName input output } } } }',
    postGraphile:
      '{ teamRunByTeamExecId(teamExecId: "$EXEC") { teamExecId state taskRunsByTeamExecId { nodes { taskName result toolCallsByTeamExecIdAndTaskOrder { nodes { toolName input output } } } } } }',
  },
  waitingRuns: {
    agentGraph:
      '{ teams(first: 20) { nodes { name waitingForHuman { execId startDate tasks { taskName state } } } } }',
    postGraphile:
      '{ allTeams(first: 20) { nodes { teamName teamRunsByTeamName(condition: { state: "WAITING_FOR_HUMAN" }, orderBy: START_DATE_ASC) { nodes { teamExecId startDate taskRunsByTeamExecId { nodes { taskName state } } } } } } }',
  },
  failedRuns: {
    agentGraph:
      '{ teamRuns(first: 20, filter: { states: [FAILED] }) { nodes { execId teamName startDate endDate tasks { taskName state } } } }',
    postGraphile:
      '{ allTeamRuns(first: 20, orderBy: START_DATE_DESC, condition: { state: "FAILED" }) { nodes { teamExecId teamName startDate endDate taskRunsByTeamExecId { nodes { taskName state } } } } }',
  },
  runByNode: {
    agentGraph:
      '{ node(id: "$RUN") { id ... on TeamRun { execId state startDate tasks { taskName state toolCalls { toolName } } } } }',
    postGraphile:
      '{ teamRunByTeamExecId(teamExecId: "$EXEC") { id teamExecId state startDate taskRunsByTeamExecId { nodes { taskName state toolCallsByTeamExecIdAndTaskOrder { nodes { toolName } } } } } }',
  },
  toolCallsBackEdges: {
    agentGraph:
      '{ toolCalls(first: 30) { nodes { toolName taskRun { taskName agent { name } teamRun { state team { name } } } } } }',
    postGraphile:
      '{ allToolCalls(first: 30) { nodes { toolName taskRunByTeamExecIdAndTaskOrder { taskName agentByAgentName { agentName } teamRunByTeamExecId { state teamByTeamName { teamName } } } } } }',
  },
};
