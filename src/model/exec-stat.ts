/**
 * The measurements of V$AGENT_EXEC_STAT / GV$AGENT_EXEC_STAT (seed 002), listed once: the
 * SQL select list, the row mapping and the GraphQL fields are all generated from this list.
 */

export type MeasureKind = 'count' | 'nodeTime' | 'builtinTime' | 'tokens';

export interface Measure {
  /** Oracle column name. */
  readonly column: string;
  /** GraphQL field and record key. */
  readonly field: string;
  readonly kind: MeasureKind;
  readonly description: string;
}

const PREFIX = 'AGENT_EXECUTOR_';

function fieldName(column: string): string {
  const words = column.slice(PREFIX.length).toLowerCase().split('_');
  const camel = words
    .map((w, i) => (i === 0 ? w : w.charAt(0).toUpperCase() + w.slice(1)))
    .join('');
  return column.includes('_TOTAL_TIME_') ? `${camel}Ms` : camel;
}

function measure(suffix: string, kind: MeasureKind, description: string): Measure {
  const column = `${PREFIX}${suffix}`;
  return { column, field: fieldName(column), kind, description };
}

const count = (suffix: string, node: string) =>
  measure(suffix, 'count', `Number of ${node} calls during the execution.`);
const nodeTime = (suffix: string, node: string) =>
  measure(suffix, 'nodeTime', `Time attributed to ${node} processing, in milliseconds.`);
const builtin = (suffix: string, operation: string) =>
  measure(
    `TOTAL_TIME_BUILTIN_${suffix}`,
    'builtinTime',
    `Time attributed to ${operation}, in milliseconds.`,
  );

export const MEASURES: readonly Measure[] = [
  count('LLM_CALL_COUNT', 'LlmNode'),
  count('TOOL_CALL_COUNT', 'ToolNode'),
  measure('BRANCH_CALL_COUNT', 'count', 'Number of BranchingNode evaluations.'),
  measure(
    'BRANCH_DEFAULT_CALL_COUNT',
    'count',
    'Number of branching evaluations that selected the default branch.',
  ),
  count('MAP_NODE_CALL_COUNT', 'MapNode'),
  count('PARALLEL_MAP_NODE_CALL_COUNT', 'ParallelMapNode'),
  count('START_NODE_CALL_COUNT', 'StartNode'),
  count('END_NODE_CALL_COUNT', 'EndNode'),
  count('FLOW_NODE_CALL_COUNT', 'FlowNode'),
  count('PARALLEL_FLOW_NODE_CALL_COUNT', 'ParallelFlowNode'),
  nodeTime('TOTAL_TIME_LLM', 'LlmNode'),
  nodeTime('TOTAL_TIME_TOOL', 'ToolNode'),
  measure('TOTAL_TIME_EXEC', 'nodeTime', 'Total execution time, in milliseconds.'),
  nodeTime('TOTAL_TIME_START_NODE', 'StartNode'),
  nodeTime('TOTAL_TIME_END_NODE', 'EndNode'),
  nodeTime('TOTAL_TIME_FLOW_NODE', 'FlowNode'),
  nodeTime('TOTAL_TIME_PARALLEL_FLOW_NODE', 'ParallelFlowNode'),
  nodeTime('TOTAL_TIME_MAP_NODE', 'MapNode'),
  nodeTime('TOTAL_TIME_PARALLEL_MAP_NODE', 'ParallelMapNode'),
  nodeTime('TOTAL_TIME_BRANCH_NODE', 'BranchingNode'),
  builtin('GET_KEY_ANSWER', 'the get-key-answer operation'),
  builtin('GET_KEY_ANSWER_FOUND', 'the get-key-answer-found operation'),
  builtin('INSERT_CURRENT_QUESTION_LIST', 'insertion into the current question list'),
  builtin('GET_KEY_QUESTIONS', 'the get-key-questions operation'),
  builtin('VECTOR_SEARCH_SIMPLIFIED', 'the simplified vector-search operation'),
  builtin('VECTOR_SEARCH', 'the vector-search operation'),
  builtin('MERGE_AND_DEDUPLICATE_CHUNKS_SIMPLIFIED', 'simplified chunk merging and deduplication'),
  builtin('MERGE_AND_DEDUPLICATE_CHUNKS', 'chunk merging and deduplication'),
  builtin(
    'FILTER_ALREADY_RETRIEVED_CHUNKS_SIMPLIFIED',
    'simplified filtering of previously retrieved chunks',
  ),
  builtin('FILTER_ALREADY_RETRIEVED_CHUNKS', 'filtering of previously retrieved chunks'),
  builtin('MERGE_QUESTION_LISTS', 'merging question lists'),
  builtin('GROUP_CHUNKS', 'grouping chunks'),
  builtin('FLATTEN_QUERIES', 'flattening queries'),
  builtin('REMOVE_SOURCE', 'removing source information'),
  builtin('GET_KEY_SELECT_CHOICES', 'the get-key-select-choices operation'),
  builtin('FILTER_UNWANTED_CHUNKS', 'filtering unwanted chunks'),
  builtin('FLATTEN_CHUNK_LISTS', 'flattening chunk lists'),
  builtin('MERGE_RETRIEVED_CONTEXT_SIMPLIFIED', 'simplified merging of retrieved context'),
  builtin('MERGE_RETRIEVED_CONTEXT', 'merging retrieved context'),
  builtin('INC_COUNT', 'the legacy increment-count operation'),
  builtin('INCREMENT_COUNTER', 'the increment-counter operation'),
  builtin('GET_KEY_FINAL_ANSWER_READY', 'checking whether the final answer is ready'),
  builtin('GET_KEY_FEEDBACK', 'the get-key-feedback operation'),
  builtin('STRINGIFY_VALUE', 'conversion of a value to its string representation'),
  builtin('PLSQL_EXEC', 'the plsql_exec operation'),
  measure('INPUT_TOKENS', 'tokens', 'Number of LLM input tokens.'),
  measure('OUTPUT_TOKENS', 'tokens', 'Number of LLM output tokens.'),
];

export type ExecStatScope = 'INSTANCE' | 'CLUSTER';

/** One row of V$/GV$AGENT_EXEC_STAT: one completed execution. */
export interface ExecStat {
  readonly measures: Readonly<Record<string, number>>;
  readonly conId: number | null;
  /** Only in GV$AGENT_EXEC_STAT (CLUSTER scope). */
  readonly instId: number | null;
  /** The seed's diagnostics, computed by the database. */
  readonly llmTimePct: number | null;
  readonly toolTimePct: number | null;
  readonly unattributedTimeMs: number;
}

export interface ExecStatFilter {
  /** Executions whose total time exceeds this (the seed's `> 2000`). */
  readonly minTotalTimeMs?: number | null;
  readonly conId?: number | null;
  readonly instId?: number | null;
}

export type ExecStatOrderField =
  | 'TOTAL_TIME'
  | 'LLM_TIME'
  | 'TOOL_TIME'
  | 'LLM_TIME_PCT'
  | 'TOOL_TIME_PCT'
  | 'INPUT_TOKENS'
  | 'OUTPUT_TOKENS'
  | 'LLM_CALLS'
  | 'TOOL_CALLS';

export interface ExecStatOrder {
  readonly field: ExecStatOrderField;
  readonly direction: 'ASC' | 'DESC';
}

export interface ExecStatSummary {
  readonly executionCount: number;
  /** Sum of each count and token measure over the set, keyed like `measures`. */
  readonly totals: Readonly<Record<string, number>>;
  readonly totalTimeAvgMs: number | null;
  readonly totalTimeP50Ms: number | null;
  readonly totalTimeP95Ms: number | null;
  readonly totalTimeP99Ms: number | null;
  readonly totalTimeMaxMs: number | null;
  readonly llmTimePct: number | null;
  readonly toolTimePct: number | null;
}
