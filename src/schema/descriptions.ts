/**
 * Descriptions of the concepts that recur across the schema, written once so that the
 * GraphiQL documentation explorer says the same thing everywhere (issue 19). A description
 * used by one field alone stays next to that field.
 */

/** Who sees which rows: the scope-auth rules of builder.ts and repositories/views.ts. */
export const VISIBILITY =
  'Non-admin callers see the rows of the database owner named by their token (USER_ views, or DBA_ views restricted to that owner); admins see every owner. Without authentication configured every caller is an admin.';

/** What a root over the team catalog (src/repositories/catalog-cache.ts) shows. */
export const CATALOG_SHARED =
  'Shared across requests: a team created or dropped shows within TEAM_TOOLS_CACHE_TTL_MS (60 s by default).';

/** A root list whose view may be missing: nullable so that the other root fields survive. */
export const NULL_WHEN_VIEW_NOT_GRANTED =
  'Null, with a FORBIDDEN error naming the grant, when the view is missing or not granted to the agent-graph database user.';

export const OWNER_FILTER =
  'Only rows of this owner (database schema, upper case as Oracle stores it). Admin only: a non-admin caller gets FORBIDDEN.';

export const ADMIN_ONLY = 'Admin only (token role admin).';

export const STATS_ACCESS =
  'Admin only, unless the server runs with STATS_PUBLIC=true (then any authenticated caller); scope CLUSTER stays admin only. Needs SELECT on V_$AGENT_EXEC_STAT (GV_$AGENT_EXEC_STAT for CLUSTER) for the agent-graph database user.';

export const CONNECTION_ARGS = {
  first:
    'Page size from the start of the window: at most 100 items (BAD_USER_INPUT above). Without first or last a page holds 20 items.',
  after: 'Start after this cursor (an edge cursor or PageInfo.endCursor of an earlier page).',
  last: 'Page size from the end of the window (at most 100); needs before or first to know where the window ends.',
  before: 'End before this cursor (an edge cursor or PageInfo.startCursor of a later page).',
} as const;

export const CONNECTION = {
  type: 'One page of a list (Relay cursor connection): edges with cursors, the nodes alone, paging information and the total count.',
  edges: 'The items of this page, each with its cursor.',
  nodes: 'The items of this page without cursors (the nodes of edges, in the same order).',
  pageInfo: 'Where this page lies in the whole list, and the cursors to fetch its neighbours.',
  edge: 'One item of a connection page with its cursor.',
  node: 'The item.',
  cursor: 'Opaque position of this item; pass it as after or before to page from here.',
} as const;

export const PAGE_INFO = {
  type: 'Relay paging information of one connection page.',
  hasNextPage: 'More items follow this page.',
  hasPreviousPage: 'Items precede this page (it does not start at the first item).',
  startCursor: 'Cursor of the first item of the page; null when the page is empty.',
  endCursor: 'Cursor of the last item of the page; null when the page is empty.',
} as const;

export const NODE = {
  type: 'An object with a global id, refetchable through Query.node.',
  id: 'Global id: opaque, unique across types; pass it to Query.node or Query.nodes.',
  node: 'The object with this global id; null with a NOT_FOUND error when no object the caller may see has it, BAD_USER_INPUT when the id is malformed.',
  nodeId: 'A global id (the id field of any Node).',
  nodes:
    'The objects with these global ids, in the same order; null, with a NOT_FOUND error, in place of each one that no object the caller may see has.',
  nodesIds: 'Global ids (the id field of any Node).',
} as const;

/** The history views' columns shared by team runs, task runs and tool calls (seed 003). */
export const HISTORY = {
  teamExecId:
    'TEAM_EXEC_ID: the unique id of the team run (usually a GUID); joins team, task and tool history.',
  taskOrder:
    'TASK_ORDER: position of the task in the team’s sequence; a task can occur several times, this number tells the occurrences apart.',
  startDate: 'START_DATE; null when the view has no start recorded (the column is nullable).',
  endDate: 'END_DATE; null while the work is still running.',
  durationMs: 'END_DATE minus START_DATE, in milliseconds; null while running or without a start.',
  state: 'STATE: RUNNING, WAITING_FOR_HUMAN, RESUMING, SUCCEEDED or FAILED (see TeamRunState).',
  teamName: 'TEAM_NAME: the agent team that ran.',
  agentName: 'AGENT_NAME: the team member (Select AI agent) that did the work.',
  taskName: 'TASK_NAME: the Select AI task; null when the view does not record it.',
} as const;

export const ORDER_DIRECTION = 'ASC or DESC; DESC when not given.';

export const TEAM_NAME_ARG =
  'The Select AI agent team name (AGENT_TEAM_NAME, as given to CREATE_TEAM), exact and case-sensitive.';
