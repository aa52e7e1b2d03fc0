import { MEASURES } from './exec-stat.js';

/**
 * The TRACES output of one EXECUTE_AGENT call, read as a tree of components. Neither the
 * seeds nor the reference document the trace's JSON (seed 002 only names its components:
 * LlmNode, Agent round, mapped iteration, nested component), so the reader accepts the
 * shapes tracing formats commonly take (nested children, or a flat list of spans with parent
 * ids; Agent Spec Tracing's and OpenTelemetry's member names) and returns null for anything
 * else: the raw JSON is kept beside the tree for that case and for what the tree leaves out.
 */

/** The component categories V$AGENT_EXEC_STAT counts and times, plus the containers. */
export const TRACE_COMPONENTS = [
  'LLM_NODE',
  'TOOL_NODE',
  'BRANCHING_NODE',
  'MAP_NODE',
  'PARALLEL_MAP_NODE',
  'START_NODE',
  'END_NODE',
  'FLOW_NODE',
  'PARALLEL_FLOW_NODE',
  'FLOW',
  'AGENT',
  'AGENT_ROUND',
  'OTHER',
] as const;

export type TraceComponent = (typeof TRACE_COMPONENTS)[number];

export interface AgentTraceNode {
  /** The component's kind as the trace names it (`LlmNode`, `Agent round`, …). */
  readonly kind: string;
  readonly component: TraceComponent;
  readonly name: string | null;
  readonly startTime: Date | null;
  /** Milliseconds from the root's start to this component's; null without start times. */
  readonly offsetMs: number | null;
  readonly durationMs: number | null;
  readonly inputTokens: number | null;
  readonly outputTokens: number | null;
  /** BranchingNode: the branch taken, when the trace says. */
  readonly branch: string | null;
  readonly children: readonly AgentTraceNode[];
}

/** Kind words, lower case without separators, and the category each names. */
const KINDS: Record<string, TraceComponent> = {
  llmnode: 'LLM_NODE',
  llm: 'LLM_NODE',
  llmgeneration: 'LLM_NODE',
  llmcall: 'LLM_NODE',
  toolnode: 'TOOL_NODE',
  tool: 'TOOL_NODE',
  toolexecution: 'TOOL_NODE',
  toolcall: 'TOOL_NODE',
  branchingnode: 'BRANCHING_NODE',
  branchnode: 'BRANCHING_NODE',
  mapnode: 'MAP_NODE',
  parallelmapnode: 'PARALLEL_MAP_NODE',
  startnode: 'START_NODE',
  endnode: 'END_NODE',
  flownode: 'FLOW_NODE',
  parallelflownode: 'PARALLEL_FLOW_NODE',
  flow: 'FLOW',
  flowexecution: 'FLOW',
  agent: 'AGENT',
  agentexecution: 'AGENT',
  agentround: 'AGENT_ROUND',
  round: 'AGENT_ROUND',
};

export const componentOf = (kind: string): TraceComponent =>
  KINDS[kind.toLowerCase().replace(/[^a-z]/g, '')] ?? 'OTHER';

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const first = (object: Json, names: readonly string[]): unknown =>
  names.map((name) => object[name]).find((value) => value !== undefined && value !== null);

const numberOf = (value: unknown): number | null => {
  const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  return typeof n === 'number' && Number.isFinite(n) ? n : null;
};

/** An ISO string, or epoch milliseconds (or seconds, for values that small). */
function instant(value: unknown): Date | null {
  if (typeof value === 'number' && Number.isFinite(value)) {
    return new Date(value < 1e11 ? value * 1000 : value);
  }
  if (typeof value !== 'string') return null;
  const date = new Date(/^\d{4}-\d{2}-\d{2}T[\d:.]+$/.test(value) ? `${value}Z` : value);
  return Number.isNaN(date.getTime()) ? null : date;
}

const KIND = ['component_type', 'kind', 'type', 'span_type', 'node_type', 'span_kind'];
const NAME = ['name', 'component_name', 'node_name', 'span_name'];
const START = ['start_time', 'startTime', 'start', 'started_at', 'start_time_ms'];
const END = ['end_time', 'endTime', 'end', 'ended_at', 'end_time_ms'];
const DURATION = ['duration_ms', 'durationMs', 'elapsed_ms', 'elapsed_time_ms', 'time_ms'];
const INPUT_TOKENS = ['input_tokens', 'inputTokens', 'prompt_tokens'];
const OUTPUT_TOKENS = ['output_tokens', 'outputTokens', 'completion_tokens'];
const CHILDREN = ['children', 'components', 'spans', 'steps'];
const ID = ['id', 'span_id', 'spanId'];
const PARENT = ['parent_id', 'parent_span_id', 'parentSpanId', 'parentId'];

/** Members that may sit in the node itself or in its `attributes` / `usage` object. */
function member(node: Json, names: readonly string[]): unknown {
  const own = first(node, names);
  if (own !== undefined) return own;
  for (const nested of ['attributes', 'usage', 'metrics']) {
    const inner = node[nested];
    if (isObject(inner)) {
      const found = first(inner, names);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}

interface Parsed {
  readonly node: Omit<AgentTraceNode, 'offsetMs' | 'children'>;
  readonly children: Json[];
}

function parseNode(raw: Json): Parsed | null {
  const kind = first(raw, KIND);
  if (typeof kind !== 'string' || kind === '') return null;
  const startTime = instant(first(raw, START));
  const endTime = instant(first(raw, END));
  const duration =
    numberOf(member(raw, DURATION)) ??
    (startTime && endTime ? endTime.getTime() - startTime.getTime() : null);
  if (duration === null && startTime === null) return null;
  const name = first(raw, NAME);
  const branch = member(raw, ['selected_branch', 'branch', 'branch_taken']);
  const children = first(raw, CHILDREN);
  return {
    node: {
      kind,
      component: componentOf(kind),
      name: typeof name === 'string' ? name : null,
      startTime,
      durationMs: duration,
      inputTokens: numberOf(member(raw, INPUT_TOKENS)),
      outputTokens: numberOf(member(raw, OUTPUT_TOKENS)),
      branch: typeof branch === 'string' ? branch : null,
    },
    children: Array.isArray(children) ? children.filter(isObject) : [],
  };
}

/** Nested form: every node names its kind and a start or duration, children under CHILDREN. */
function nested(raw: Json, rootStart: Date | null, depth: number): AgentTraceNode | null {
  if (depth > 64) return null;
  const parsed = parseNode(raw);
  if (!parsed) return null;
  const start = rootStart ?? parsed.node.startTime;
  const children: AgentTraceNode[] = [];
  for (const child of parsed.children) {
    const node = nested(child, start, depth + 1);
    if (!node) return null;
    children.push(node);
  }
  return {
    ...parsed.node,
    offsetMs:
      start && parsed.node.startTime ? parsed.node.startTime.getTime() - start.getTime() : null,
    children,
  };
}

/** Flat form: a list of spans with ids and parent ids, exactly one without a parent. */
function flat(spans: readonly Json[]): AgentTraceNode | null {
  const byParent = new Map<string | null, Json[]>();
  for (const span of spans) {
    const parent = first(span, PARENT);
    const key = parent === undefined ? null : String(parent);
    byParent.set(key, [...(byParent.get(key) ?? []), span]);
  }
  const roots = byParent.get(null) ?? [];
  if (roots.length !== 1 || spans.some((span) => first(span, ID) === undefined)) return null;
  const attach = (span: Json, depth: number): Json => ({
    ...span,
    children:
      depth > 64
        ? []
        : (byParent.get(String(first(span, ID))) ?? []).map((c) => attach(c, depth + 1)),
  });
  return nested(attach(roots[0] as Json, 0), null, 0);
}

/** The tree of a TRACES document, or null when its shape is not one of those above. */
export function parseTrace(document: unknown): AgentTraceNode | null {
  if (Array.isArray(document)) {
    const spans = document.filter(isObject);
    return spans.length === document.length ? flat(spans) : null;
  }
  if (!isObject(document)) return null;
  for (const wrapper of ['root', 'trace', 'root_span', 'execution']) {
    const inner = document[wrapper];
    if (isObject(inner)) return parseTrace(inner);
  }
  if (first(document, KIND) === undefined && Array.isArray(document.spans)) {
    return parseTrace(document.spans);
  }
  return nested(document, null, 0);
}

/**
 * The V$AGENT_EXEC_STAT measures a trace accounts for (counts, node times, tokens), keyed by
 * the ExecStat field names of src/model/exec-stat.ts, so that one execution's totals read
 * like its statistics row.
 */
export const TRACE_MEASURES = MEASURES.filter((m) => m.kind !== 'builtinTime');

/** Each counted category: its count field and its time field in TRACE_MEASURES. */
const COUNTED: Partial<Record<TraceComponent, readonly [string, string]>> = {
  LLM_NODE: ['llmCallCount', 'totalTimeLlmMs'],
  TOOL_NODE: ['toolCallCount', 'totalTimeToolMs'],
  BRANCHING_NODE: ['branchCallCount', 'totalTimeBranchNodeMs'],
  MAP_NODE: ['mapNodeCallCount', 'totalTimeMapNodeMs'],
  PARALLEL_MAP_NODE: ['parallelMapNodeCallCount', 'totalTimeParallelMapNodeMs'],
  START_NODE: ['startNodeCallCount', 'totalTimeStartNodeMs'],
  END_NODE: ['endNodeCallCount', 'totalTimeEndNodeMs'],
  FLOW_NODE: ['flowNodeCallCount', 'totalTimeFlowNodeMs'],
  PARALLEL_FLOW_NODE: ['parallelFlowNodeCallCount', 'totalTimeParallelFlowNodeMs'],
};

/**
 * Sums over the tree: calls and time per node category, the root's duration as the total,
 * and the tokens of the LLM nodes (containers that repeat their children's sums are not
 * counted twice; a trace whose LLM nodes carry no tokens sums the nodes that do).
 */
export function traceTotals(root: AgentTraceNode): Record<string, number> {
  const totals: Record<string, number> = Object.fromEntries(
    TRACE_MEASURES.map((m) => [m.field, 0]),
  );
  const all: AgentTraceNode[] = [];
  const walk = (node: AgentTraceNode) => {
    all.push(node);
    node.children.forEach(walk);
  };
  walk(root);
  for (const node of all) {
    const fields = COUNTED[node.component];
    if (!fields) continue;
    const [count, time] = fields;
    totals[count] = (totals[count] ?? 0) + 1;
    totals[time] = (totals[time] ?? 0) + (node.durationMs ?? 0);
    if (
      node.component === 'BRANCHING_NODE' &&
      node.branch !== null &&
      node.branch.toLowerCase() === 'default'
    ) {
      totals.branchDefaultCallCount = (totals.branchDefaultCallCount ?? 0) + 1;
    }
  }
  const llm = all.filter((n) => n.component === 'LLM_NODE');
  const tokenNodes = llm.some((n) => n.inputTokens !== null || n.outputTokens !== null)
    ? llm
    : all.filter((n) => n.children.length === 0);
  totals.inputTokens = tokenNodes.reduce((sum, n) => sum + (n.inputTokens ?? 0), 0);
  totals.outputTokens = tokenNodes.reduce((sum, n) => sum + (n.outputTokens ?? 0), 0);
  totals.totalTimeExecMs = root.durationMs ?? 0;
  return totals;
}

/** A tree node with its place in the pre-order list of the whole trace. */
export interface IndexedTraceNode extends Omit<AgentTraceNode, 'children'> {
  readonly index: number;
  readonly parentIndex: number | null;
  readonly depth: number;
  readonly children: readonly IndexedTraceNode[];
}

/** The tree's nodes, parents before children, each knowing its index, parent and depth. */
export function indexTrace(root: AgentTraceNode): IndexedTraceNode[] {
  const list: IndexedTraceNode[] = [];
  const visit = (node: AgentTraceNode, parentIndex: number | null, depth: number) => {
    const children: IndexedTraceNode[] = [];
    const indexed: IndexedTraceNode = { ...node, index: list.length, parentIndex, depth, children };
    list.push(indexed);
    for (const child of node.children) children.push(visit(child, indexed.index, depth + 1));
    return indexed;
  };
  visit(root, null, 0);
  return list;
}
