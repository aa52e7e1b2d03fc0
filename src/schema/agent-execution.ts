import { builder } from '../builder.js';
import {
  type IndexedTraceNode,
  TRACE_COMPONENTS,
  TRACE_MEASURES,
  type TraceComponent,
} from '../model/agent-trace.js';
import {
  MAX_AGENT_INPUTS,
  MAX_INPUT_NAME_BYTES,
  MAX_INPUTS_BYTES,
} from '../model/call-contract.js';
import type { AgentExecution, AgentExecutionTrace } from '../repositories/agent-executions.js';
import { ACTION } from './action.js';
import { type ArgumentBound, bounded, ORACLE_NAME } from './bounds.js';

/** An input's name: inputs[].title of an Agent Spec, any text but control characters. */
const INPUT_NAME: ArgumentBound = {
  kind: 'an input name',
  minBytes: 1,
  maxBytes: MAX_INPUT_NAME_BYTES,
  refused: {
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds
    pattern: /[\u0000-\u001f\u007f]/,
    description: 'control characters',
  },
};

const AgentInputRef = builder.inputType('AgentInput', {
  description:
    'One element of the inputs array EXECUTE_AGENT receives (call_contract: json_array_name_value_pairs).',
  fields: (t) => ({
    name: t.string({
      required: true,
      ...bounded(INPUT_NAME, 'Matches one inputs[].title of the agent exactly, case included.'),
    }),
    value: t.field({
      type: 'JSON',
      description:
        'Any JSON value, of the input’s declared type where it declares one; null when left out.',
    }),
  }),
});

const COMPONENT_DESCRIPTIONS: Record<TraceComponent, string> = {
  LLM_NODE: 'An LlmNode call (counted in AGENT_EXECUTOR_LLM_CALL_COUNT).',
  TOOL_NODE: 'A ToolNode call (AGENT_EXECUTOR_TOOL_CALL_COUNT).',
  BRANCHING_NODE: 'A BranchingNode evaluation (AGENT_EXECUTOR_BRANCH_CALL_COUNT).',
  MAP_NODE: 'A MapNode call (AGENT_EXECUTOR_MAP_NODE_CALL_COUNT).',
  PARALLEL_MAP_NODE: 'A ParallelMapNode call.',
  START_NODE: 'A StartNode call.',
  END_NODE: 'An EndNode call.',
  FLOW_NODE: 'A FlowNode call (a nested flow).',
  PARALLEL_FLOW_NODE: 'A ParallelFlowNode call.',
  FLOW: 'The top-level flow of the Agent Spec.',
  AGENT: 'An Agent component, whose rounds are its children.',
  AGENT_ROUND: 'One Agent round.',
  OTHER:
    'A component kind this API does not classify; its kind field says what the trace calls it.',
};

const TraceComponentRef = builder.enumType('AgentTraceComponent', {
  description: 'The category of a trace component, as V$AGENT_EXEC_STAT counts them (seed 002).',
  values: Object.fromEntries(
    TRACE_COMPONENTS.map((c) => [c, { description: COMPONENT_DESCRIPTIONS[c] }]),
  ) as Record<TraceComponent, { description: string }>,
});

const TraceNodeRef = builder.objectRef<IndexedTraceNode>('AgentTraceNode');

TraceNodeRef.implement({
  description:
    'One component of an execution’s trace, with its place on the execution’s time axis.',
  fields: (t) => ({
    index: t.exposeInt('index', {
      description: 'Position in the trace, parents before their children (pre-order).',
    }),
    parentIndex: t.exposeInt('parentIndex', {
      nullable: true,
      description: 'The index of the enclosing component; null for the root.',
    }),
    depth: t.exposeInt('depth', { description: 'Nesting depth: 0 for the root.' }),
    kind: t.exposeString('kind', {
      description: 'The component kind as the trace names it (LlmNode, ToolNode, Agent round, …).',
    }),
    component: t.field({
      type: TraceComponentRef,
      description: 'The category of the kind.',
      resolve: (span) => span.component,
    }),
    name: t.exposeString('name', { nullable: true, description: 'The component’s name.' }),
    startTime: t.expose('startTime', {
      type: 'DateTime',
      nullable: true,
      description: 'When the component started; null when the trace gives no start.',
    }),
    offsetMs: t.exposeFloat('offsetMs', {
      nullable: true,
      description: 'Milliseconds from the start of the execution to the start of the component.',
    }),
    durationMs: t.exposeFloat('durationMs', {
      nullable: true,
      description: 'How long the component ran, in milliseconds.',
    }),
    inputTokens: t.exposeInt('inputTokens', {
      nullable: true,
      description: 'LLM input tokens the component reports.',
    }),
    outputTokens: t.exposeInt('outputTokens', {
      nullable: true,
      description: 'LLM output tokens the component reports.',
    }),
    branch: t.exposeString('branch', {
      nullable: true,
      description:
        'BranchingNode: the branch it selected ("default" counts in branchDefaultCallCount).',
    }),
    children: t.field({
      type: [TraceNodeRef],
      description: 'The components it encloses, in the order the trace lists them.',
      resolve: (node) => node.children,
    }),
  }),
});

const isWhole = (kind: string) => kind === 'count' || kind === 'tokens';

const TotalsRef = builder
  .objectRef<Readonly<Record<string, number>>>('AgentTraceTotals')
  .implement({
    description:
      'The trace summed as V$AGENT_EXEC_STAT sums an execution (seed 002), field for field with ExecStat: what the statistics view records for this one execution, which the view itself cannot tie to a call when several run at once. Builtin-operation times are not in the trace and are not listed.',
    fields: (t) => ({
      ...Object.fromEntries(
        TRACE_MEASURES.map((m) => [
          m.field,
          isWhole(m.kind)
            ? t.int({
                description: `As ${m.column}: ${m.description}`,
                resolve: (s) => s[m.field] ?? 0,
              })
            : t.float({
                description: `As ${m.column}: ${m.description}`,
                resolve: (s) => s[m.field] ?? 0,
              }),
        ]),
      ),
      llmTimePct: t.float({
        nullable: true,
        description:
          'LLM time as a percentage of total time, one decimal; null when total time is 0.',
        resolve: (s) => percent(s.totalTimeLlmMs, s.totalTimeExecMs),
      }),
      toolTimePct: t.float({
        nullable: true,
        description:
          'ToolNode time as a percentage of total time, one decimal; null when total time is 0.',
        resolve: (s) => percent(s.totalTimeToolMs, s.totalTimeExecMs),
      }),
    }),
  });

const percent = (part = 0, total = 0) =>
  total === 0 ? null : Math.round((1000 * part) / total) / 10;

const UNRECOGNISED =
  'Null when the trace’s shape is not recognised (nested components that each name a kind and a start or duration, or a flat list of spans with parent ids); raw still holds it then.';

const TraceRef = builder.objectRef<AgentExecutionTrace>('AgentExecutionTrace').implement({
  description:
    'The TRACES output of the call (seed 002: the trace is returned to the caller that requested it, so it belongs to this execution alone).',
  fields: (t) => ({
    raw: t.field({
      type: 'JSON',
      description:
        'The trace as EXECUTE_AGENT returned it (JSON, or its text when it is not JSON): everything the tree does not model.',
      resolve: (trace) => trace.raw,
    }),
    root: t.field({
      type: TraceNodeRef,
      nullable: true,
      description: `The trace as a tree of components: the top-level one, its children below it. ${UNRECOGNISED}`,
      resolve: (trace) => trace.nodes?.[0] ?? null,
    }),
    nodes: t.field({
      type: [TraceNodeRef],
      nullable: true,
      description: `The same tree flattened, parents before children (pre-order), with index, parentIndex and depth: drawn on a time axis at any depth without nesting the selection. ${UNRECOGNISED}`,
      resolve: (trace) => trace.nodes,
    }),
    totals: t.field({
      type: TotalsRef,
      nullable: true,
      description:
        'The trace’s totals, as the statistics row of the execution has them; null when root is.',
      resolve: (trace) => trace.totals,
    }),
  }),
});

const ExecutionRef = builder.objectRef<AgentExecution>('AgentExecution').implement({
  description: 'One finished DBMS_AI_AGENT.EXECUTE_AGENT call.',
  fields: (t) => ({
    agentName: t.exposeString('agentName', { description: 'The executed agent (AGENT_NAME).' }),
    owner: t.exposeString('owner', { description: 'The agent’s owner.' }),
    output: t.field({
      type: 'JSON',
      nullable: true,
      description:
        'The output EXECUTE_AGENT returned, as JSON (its text when it is not JSON); null when it returned none.',
      resolve: (execution) => execution.output,
    }),
    startedAt: t.expose('startedAt', {
      type: 'DateTime',
      description: 'When agent-graph called EXECUTE_AGENT.',
    }),
    durationMs: t.exposeInt('durationMs', {
      description: 'How long the call took, round trip included, as agent-graph measured it.',
    }),
    trace: t.field({
      type: TraceRef,
      nullable: true,
      description: 'The execution’s trace; null unless trace: true was asked.',
      resolve: (execution) => execution.trace,
    }),
  }),
});

builder.mutationFields((t) => ({
  executeAgent: t.field({
    ...ACTION,
    type: ExecutionRef,
    description:
      'Runs a stored Agent Spec with DBMS_AI_AGENT.EXECUTE_AGENT and waits for its output. The inputs are checked against the agent’s call contract first (every required input present, names exactly inputs[].title, none unknown or repeated, values of the declared type): BAD_USER_INPUT names each offending input (extensions.problems) and the accepted titles (extensions.acceptedInputs), and the database is not called. TIMEOUT after EXECUTE_AGENT_TIMEOUT_MS, the call then cancelled on the database, as it is when the client goes away. NOT_FOUND for an agent the caller cannot see; FORBIDDEN for anyone but its owner or an administrator, and where this database’s EXECUTE_AGENT cannot be called (the message names what is missing). Audit-logged (never the values).',
    args: {
      name: t.arg.string({
        required: true,
        ...bounded(ORACLE_NAME, 'AGENT_NAME, exact and case-sensitive.'),
      }),
      inputs: t.arg({
        type: [AgentInputRef],
        required: true,
        ...bounded(
          null,
          `The inputs, at most ${MAX_INPUTS_BYTES.toLocaleString('en')} bytes as a JSON array (BAD_USER_INPUT beyond, before the agent is read).`,
          { maxItems: MAX_AGENT_INPUTS },
        ),
      }),
      trace: t.arg.boolean({
        defaultValue: false,
        description: 'Also return the execution’s trace (the TRACES overload of EXECUTE_AGENT).',
      }),
    },
    resolve: (_root, args, context) =>
      context.repositories.executions.execute(
        args.name,
        args.inputs.map((input) => ({ name: input.name, value: input.value ?? null })),
        args.trace ?? false,
        context.usage.stopped?.signal,
      ),
  }),
}));
