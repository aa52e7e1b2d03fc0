import { MEASURES } from '../../model/exec-stat.js';
import { TEAM_RUN_STATES, type TeamRunState } from '../../model/team.js';
import { pgColumn } from './ddl.js';

/**
 * Deterministic demo data for the embedded database: the same rows on every machine, so
 * tests can name them. Generated from a seeded PRNG; the history spans the 30 days before
 * DEMO_PRESENT, busier in its last day, with the unfinished runs started in its last hours.
 * The database opens with every history date moved by the time from DEMO_PRESENT to the
 * moment it opens (DEMO_DATE_COLUMNS, database.ts), so the newest runs are minutes old.
 */

export const DEMO_EPOCH = Date.UTC(2026, 8, 1, 8, 0, 0);
/** The moment the demo history was generated up to: its runs ended, or wait, before it. */
export const DEMO_PRESENT = DEMO_EPOCH + 30 * 24 * 3600 * 1000;

/**
 * The history dates moved to the present when the database opens: every date of a run, a
 * task, a tool call and what Select AI records beside them. The agent specs' CREATE_TIME is
 * not history and stays as generated.
 */
export const DEMO_DATE_COLUMNS: Readonly<Record<string, readonly string[]>> = {
  dba_ai_agent_team_history: ['start_date', 'end_date'],
  dba_ai_agent_task_history: ['start_date', 'end_date'],
  dba_ai_agent_tool_history: ['start_date', 'end_date'],
  dba_scheduler_job_run_details: ['log_date', 'actual_start_date'],
  dba_cloud_ai_conversation_prompts: ['created'],
};
export const OWNERS = ['APP_USER', 'ANALYST', 'OPS'] as const;

type Tables = Record<string, Record<string, unknown>[]>;

export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

class Random {
  private readonly next: () => number;
  constructor(seed: number) {
    this.next = mulberry32(seed);
  }
  float(): number {
    return this.next();
  }
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)] as T;
  }
  /** A SYS_GUID()-style identifier: 32 upper-case hex digits. */
  guid(): string {
    let hex = '';
    for (let i = 0; i < 4; i++) hex += this.int(0, 0xffffffff).toString(16).padStart(8, '0');
    return hex.toUpperCase();
  }
}

const iso = (ms: number) => new Date(ms).toISOString();

/** 32 hex digits as a bare (lower-case, unbraced) UUID, as Select AI conversation ids are. */
export const asUuid = (hex: string) =>
  hex.toLowerCase().replace(/^(.{8})(.{4})(.{4})(.{4})(.{12})$/, '$1-$2-$3-$4-$5');
const param = (title: string, type: string) => ({ title, type });

interface AgentSpecDef {
  owner: string;
  name: string;
  created: string;
  description: string | null;
  inputs: { title: string; type: string }[];
  outputs: { title: string; type: string }[];
}

const AGENT_SPECS: AgentSpecDef[] = [
  {
    owner: 'APP_USER',
    name: 'ORDER_REQUEST_FLOW',
    created: '2026-08-20T12:34:56Z',
    description: null,
    inputs: [param('order_id', 'string')],
    outputs: [param('order_id', 'string')],
  },
  {
    owner: 'APP_USER',
    name: 'ORDER_ASSISTANT',
    created: '2026-08-21T09:15:00Z',
    description: 'Answers customer questions about an order using the order history.',
    inputs: [param('order_id', 'string'), param('question', 'string')],
    outputs: [param('answer', 'string')],
  },
  {
    owner: 'APP_USER',
    name: 'REFUND_CHECKER',
    created: '2026-08-22T14:02:11Z',
    description: 'Decides whether a refund request meets the refund policy.',
    inputs: [param('order_id', 'string'), param('amount', 'number'), param('reason', 'string')],
    outputs: [param('approved', 'boolean'), param('explanation', 'string')],
  },
  {
    owner: 'ANALYST',
    name: 'REPORT_SUMMARIZER',
    created: '2026-08-18T16:40:00Z',
    description: 'Summarizes a report in a given number of words.',
    inputs: [
      param('report_text', 'string'),
      param('max_words', 'integer'),
      param('language', 'string'),
    ],
    outputs: [param('summary', 'string')],
  },
  {
    owner: 'ANALYST',
    name: 'SALES_FORECASTER',
    created: '2026-08-25T08:00:00Z',
    description: 'Forecasts next quarter sales for a region.',
    inputs: [param('region', 'string'), param('quarter', 'string')],
    outputs: [param('forecast', 'number'), param('confidence', 'number')],
  },
  {
    owner: 'OPS',
    name: 'INCIDENT_TRIAGE',
    created: '2026-08-19T22:10:05Z',
    description: 'Classifies an incident and proposes a first response.',
    inputs: [
      param('incident_id', 'string'),
      param('severity', 'string'),
      param('summary', 'string'),
    ],
    outputs: [param('category', 'string'), param('next_step', 'string')],
  },
  {
    owner: 'OPS',
    name: 'ONCALL_NOTIFIER',
    created: '2026-08-27T11:11:11Z',
    description: null,
    inputs: [param('team', 'string'), param('message', 'string')],
    outputs: [param('delivered', 'boolean')],
  },
];

type ToolType = 'HUMAN' | 'HTTP' | 'RAG' | 'SQL' | 'WEBSEARCH' | 'NOTIFICATION';

interface TeamDef {
  owner: string;
  name: string;
  description: string | null;
  /** Each member: the agent, its task, and the tools the task may call. */
  members: { agent: string; task: string; tools: [string, ToolType, string][] }[];
}

const tool = (name: string, type: ToolType, instruction: string): [string, ToolType, string] => [
  name,
  type,
  instruction,
];

const HANDCRAFTED_TEAMS: TeamDef[] = [
  {
    owner: 'APP_USER',
    name: 'REPORT_SUMMARY_AGENT_TEAM',
    description: 'Summarizes uploaded reports and answers follow-up questions',
    members: [
      {
        agent: 'SUMMARIZER',
        task: 'SUMMARIZE_TASK',
        tools: [
          tool(
            'SUMMARIZE_REPORT',
            'RAG',
            'Summarize uploaded reports and answer follow-up questions',
          ),
        ],
      },
      {
        agent: 'REVIEWER',
        task: 'REVIEW_SUMMARY_TASK',
        tools: [tool('HUMAN_REVIEW', 'HUMAN', 'Ask a person to approve or correct the summary')],
      },
    ],
  },
  {
    owner: 'APP_USER',
    name: 'ORDER_SUPPORT_TEAM',
    description: 'Answers order questions and handles refunds',
    members: [
      {
        agent: 'ORDER_ASSISTANT',
        task: 'ANSWER_ORDER_QUESTION',
        tools: [tool('ORDER_LOOKUP', 'SQL', 'Look up the order and its shipments by order id')],
      },
      {
        agent: 'REFUND_CHECKER',
        task: 'PROCESS_REFUND',
        tools: [
          tool('REFUND_APPROVAL', 'HUMAN', 'Ask a supervisor to approve refunds above 100 USD'),
          tool('NOTIFY_CUSTOMER', 'NOTIFICATION', 'Email the customer the outcome of the request'),
        ],
      },
    ],
  },
  {
    owner: 'APP_USER',
    name: 'MOVIE_RECOMMENDER_TEAM',
    description: null,
    members: [
      {
        agent: 'MOVIE_AGENT',
        task: 'RECOMMEND_MOVIES',
        tools: [tool('MOVIE_SEARCH', 'WEBSEARCH', 'Search the web for films matching the request')],
      },
    ],
  },
  {
    owner: 'ANALYST',
    name: 'SALES_INSIGHT_TEAM',
    description: 'Builds weekly sales insights from the warehouse',
    members: [
      {
        agent: 'SALES_ANALYST',
        task: 'QUERY_SALES',
        tools: [tool('SALES_SQL', 'SQL', 'Query the SALES schema with Select AI')],
      },
      {
        agent: 'REPORT_SUMMARIZER',
        task: 'WRITE_INSIGHTS',
        tools: [tool('CHART_BUILDER', 'HTTP', 'Render a chart through the charting service')],
      },
    ],
  },
  {
    owner: 'OPS',
    name: 'INCIDENT_RESPONSE_TEAM',
    description: 'Triages incidents and pages the on-call engineer',
    members: [
      {
        agent: 'INCIDENT_TRIAGE',
        task: 'TRIAGE_INCIDENT',
        tools: [tool('RUNBOOK_SEARCH', 'RAG', 'Find the runbook section for the incident')],
      },
      {
        agent: 'ONCALL_NOTIFIER',
        task: 'PAGE_ONCALL',
        tools: [
          tool(
            'APPROVE_REMEDIATION',
            'HUMAN',
            'Ask the on-call engineer to approve the remediation',
          ),
          tool('PAGE_ONCALL_TOOL', 'NOTIFICATION', 'Page the on-call engineer'),
        ],
      },
    ],
  },
];

/**
 * Another owner's team of a name ANALYST's team has: TEAM_OWNER tells them apart in the DBA_
 * views (seed 003), and each has its own tools, runs, windows, totals and stats. Last in the
 * list, so the other teams' generated rows are what they were without it.
 */
const SAME_NAMED_TEAM: TeamDef = {
  owner: 'OPS',
  name: 'SALES_INSIGHT_TEAM',
  description: 'Checks the sales figures the operations dashboards publish',
  members: [
    {
      agent: 'OPS_SALES_CHECKER',
      task: 'CHECK_SALES_FEED',
      tools: [
        tool('SALES_FEED_SQL', 'SQL', 'Compare the sales feed with the warehouse totals'),
        tool('SALES_FEED_SIGNOFF', 'HUMAN', 'Ask an operator to sign off a gap in the feed'),
      ],
    },
  ],
};

const GENERATED_TEAM_TOPICS = [
  ['DATA_QUALITY', 'Checks nightly loads for data quality problems'],
  ['CONTRACT_REVIEW', 'Reviews supplier contracts for risky clauses'],
  ['HR_ONBOARDING', 'Prepares onboarding plans for new hires'],
  ['INVOICE_MATCHING', 'Matches invoices to purchase orders'],
  ['CHURN_ANALYSIS', null],
  ['SUPPLIER_RISK', 'Scores suppliers for delivery and financial risk'],
  ['LOG_ANALYSIS', 'Explains error spikes in application logs'],
  ['RELEASE_NOTES', 'Drafts release notes from merged changes'],
  ['SECURITY_AUDIT', 'Audits database privileges against policy'],
  ['TICKET_ROUTING', 'Routes support tickets to the right queue'],
  ['DOC_QA', 'Answers questions over the product documentation'],
  ['TRAVEL_BOOKING', 'Books travel within the travel policy'],
  ['EXPENSE_AUDIT', 'Flags expense claims that break policy'],
  ['CAPACITY_PLANNER', 'Forecasts storage and CPU capacity'],
  ['MARKET_RESEARCH', 'Collects market research on competitors'],
  ['CODE_REVIEW', 'Reviews PL/SQL changes for common mistakes'],
  ['SURVEY_INSIGHTS', 'Summarizes customer survey answers'],
] as const;

const TOOL_TYPES: ToolType[] = ['SQL', 'RAG', 'HTTP', 'WEBSEARCH', 'NOTIFICATION'];

function generatedTeams(random: Random): TeamDef[] {
  return GENERATED_TEAM_TOPICS.map(([topic, description], i) => {
    const owner = OWNERS[i % OWNERS.length] as string;
    const memberCount = random.int(1, 3);
    const members = Array.from({ length: memberCount }, (_, m) => {
      const type = m === memberCount - 1 && i % 3 === 0 ? 'HUMAN' : random.pick(TOOL_TYPES);
      const tools = [
        tool(
          `${topic}_${type === 'HUMAN' ? 'APPROVAL' : `STEP${m + 1}`}_TOOL`,
          type,
          type === 'HUMAN'
            ? `Ask a reviewer to confirm the ${topic.toLowerCase().replace('_', ' ')} result`
            : `Run step ${m + 1} of ${topic.toLowerCase().replace('_', ' ')} with ${type}`,
        ),
      ];
      return { agent: `${topic}_AGENT_${m + 1}`, task: `${topic}_TASK_${m + 1}`, tools };
    });
    return { owner, name: `${topic}_TEAM`, description, members };
  });
}

const PROMPTS = [
  'Summarize the Q3 report and list three risks',
  'Where is order 10442 and when will it arrive?',
  'Refund order 20981, the item arrived damaged',
  'What changed in last night’s load?',
  'Recommend two films like Arrival',
  'Explain the error spike at 02:00',
  'Draft the weekly update for the sales team',
];

/**
 * What a HUMAN tool asks, as its call's INPUT: a summary to approve, a refund above the limit,
 * a missing order id, a remediation to confirm. Derived from the tool and the run's request
 * only, so the demo's random sequence stays as it was.
 */
export function humanQuestion(toolName: string, prompt: string): Record<string, unknown> {
  const order = /order (\d+)/i.exec(prompt)?.[1];
  if (toolName === 'REFUND_APPROVAL') {
    return order
      ? {
          question: `Refund of 129.90 USD for order ${order} is above the 100 USD limit. Approve it?`,
          order_id: order,
          amount: 129.9,
          currency: 'USD',
          options: ['approve', 'reject'],
        }
      : {
          question: 'Which order is this about? The request gives no order id.',
          missing: ['order_id'],
        };
  }
  if (toolName === 'HUMAN_REVIEW') {
    return {
      question: 'Approve this summary before it is sent?',
      summary: `Draft answer to "${prompt}": revenue up 4% on Q2, margin flat, three open risks (supplier delay, FX, churn in EMEA).`,
      options: ['approve', 'edit', 'reject'],
    };
  }
  if (toolName === 'APPROVE_REMEDIATION') {
    return {
      question: 'Restart the ingest service on db-node-2 to clear the stuck queue?',
      runbook: 'RB-112: queue backlog above 10k messages',
      options: ['approve', 'reject'],
    };
  }
  return { question: `Please confirm the result for: ${prompt}`, options: ['confirm', 'reject'] };
}

/** What the person answered, for the demo's answered HUMAN calls. */
export function humanAnswer(toolName: string): Record<string, unknown> {
  if (toolName === 'HUMAN_REVIEW') return { answer: 'approve', comment: 'Add the Q3 figures' };
  if (toolName === 'REFUND_APPROVAL') return { answer: 'approve', approved_by: 'supervisor' };
  return { answer: 'approve' };
}

/** Errors a failed task's scheduler job reports (ADDITIONAL_INFO); the history drops them. */
const TASK_ERRORS = [
  'ORA-20404: Tool ORDER_LOOKUP returned no rows for the given order id',
  'ORA-29273: HTTP request failed\nORA-12535: TNS:operation timed out',
  'ORA-20050: LLM call failed: 429 Too Many Requests from the AI provider',
  'ORA-40441: JSON syntax error in the tool output at position 118',
  'ORA-20001: The task exceeded its maximum of 10 tool calls without an answer',
];

export function demoData(): Tables {
  const random = new Random(20260901);
  const tables: Tables = {
    emb_agent_specs: AGENT_SPECS.map((spec, i) => ({
      agent_id: 1001 + i,
      owner: spec.owner,
      agent_name: spec.name,
      create_time: spec.created,
      description: spec.description,
      inputs: JSON.stringify(spec.inputs),
      outputs: JSON.stringify(spec.outputs),
    })),
    dba_ai_agent_teams: [],
    dba_ai_agent_team_attributes: [],
    dba_ai_agent_tools: [],
    dba_ai_agent_tool_attributes: [],
    dba_ai_agent_tasks: [],
    dba_ai_agent_task_attributes: [],
    dba_ai_agent_team_history: [],
    dba_ai_agent_task_history: [],
    dba_ai_agent_tool_history: [],
    dba_scheduler_job_run_details: [],
    dba_cloud_ai_conversation_prompts: [],
    gv$agent_exec_stat: execStats(random),
  };
  const teams = [...HANDCRAFTED_TEAMS, ...generatedTeams(random), SAME_NAMED_TEAM];
  let toolId = 5001;
  for (const team of teams) {
    const { owner } = team;
    tables.dba_ai_agent_teams?.push({
      owner,
      agent_team_name: team.name,
      description: team.description,
      status: 'ENABLED',
    });
    tables.dba_ai_agent_team_attributes?.push(
      {
        owner,
        agent_team_name: team.name,
        attribute_name: 'agents',
        attribute_value: JSON.stringify(team.members.map((m) => ({ name: m.agent, task: m.task }))),
      },
      {
        owner,
        agent_team_name: team.name,
        attribute_name: 'process',
        attribute_value: 'sequential',
      },
    );
    for (const member of team.members) {
      tables.dba_ai_agent_tasks?.push({ owner, task_name: member.task, description: null });
      tables.dba_ai_agent_task_attributes?.push(
        {
          owner,
          task_name: member.task,
          attribute_name: 'instruction',
          attribute_value: `Carry out ${member.task.toLowerCase().replaceAll('_', ' ')} for: {query}`,
        },
        {
          owner,
          task_name: member.task,
          attribute_name: 'tools',
          attribute_value: JSON.stringify(member.tools.map(([name]) => name)),
        },
        {
          owner,
          task_name: member.task,
          attribute_name: 'enable_human_tool',
          attribute_value: member.tools.some(([, type]) => type === 'HUMAN') ? 'true' : 'false',
        },
      );
      for (const [name, type, instruction] of member.tools) {
        tables.dba_ai_agent_tools?.push({
          owner,
          tool_id: toolId++,
          tool_name: name,
          description: null,
        });
        tables.dba_ai_agent_tool_attributes?.push(
          { owner, tool_name: name, attribute_name: 'instruction', attribute_value: instruction },
          { owner, tool_name: name, attribute_name: 'tool_type', attribute_value: type },
        );
      }
    }
    teamRuns(random, team, tables);
  }
  return tables;
}

/** Final state of a run, weighted like a healthy system, with every state present. */
function runState(random: Random, index: number): TeamRunState {
  const first = TEAM_RUN_STATES[index];
  if (first) return first;
  const r = random.float();
  if (r < 0.62) return 'SUCCEEDED';
  if (r < 0.8) return 'FAILED';
  if (r < 0.88) return 'RUNNING';
  if (r < 0.95) return 'WAITING_FOR_HUMAN';
  return 'RESUMING';
}

function callOutput(toolName: string, toolType: ToolType, rows: number): string {
  return JSON.stringify(toolType === 'HUMAN' ? humanAnswer(toolName) : { rows });
}

const HOUR = 3600 * 1000;
/** How long after its failed attempt a retried task starts again (less than any first call). */
const RETRY_AFTER_MS = 200;
const isHuman = ([, type]: [string, ToolType, string]) => type === 'HUMAN';

/**
 * How long before DEMO_PRESENT a run's last moment lies: a third of the finished runs in the
 * last day (so an hourly chart of it has bars), the rest over 30 days; unfinished runs got
 * to where they are in the last four hours.
 */
function timeBeforePresent(random: Random, ended: boolean): number {
  if (!ended) return random.int(30, 4 * 3600) * 1000;
  return random.float() < 0.35
    ? random.int(60, 24 * 3600) * 1000
    : random.int(24 * 3600, 29 * 24 * 3600) * 1000;
}

/**
 * The runs of a team. Each run is laid out on its own clock from 0 and then placed so that
 * its last moment lies before DEMO_PRESENT: every tool call falls inside its task's window,
 * every task inside its run's, and a run's state agrees with its tasks and calls. A run in
 * WAITING_FOR_HUMAN has one open call, of a HUMAN tool, in its last task (also
 * WAITING_FOR_HUMAN); a RESUMING run's HUMAN call has just been answered; a RUNNING run's
 * open call, if any, is not a HUMAN one. Teams without a HUMAN tool never wait for a person.
 */
function teamRuns(random: Random, team: TeamDef, tables: Tables): void {
  const runCount = random.int(11, 14);
  const humanIndex = team.members.findIndex((member) => member.tools.some(isHuman));
  for (let r = 0; r < runCount; r++) {
    const drawn = runState(random, r);
    const state: TeamRunState =
      humanIndex === -1 && (drawn === 'WAITING_FOR_HUMAN' || drawn === 'RESUMING')
        ? 'RUNNING'
        : drawn;
    const ended = state === 'SUCCEEDED' || state === 'FAILED';
    const paused = state === 'WAITING_FOR_HUMAN' || state === 'RESUMING';
    const teamExecId = random.guid();
    const conversationId = asUuid(random.guid());
    const prompt = random.pick(PROMPTS);
    // A paused run stops in its HUMAN member's task; the rest may stop in any.
    const taskCount = paused ? humanIndex + 1 : random.int(1, 5);
    const tasks: Record<string, unknown>[] = [];
    const calls: Record<string, unknown>[] = [];
    const prompts: Record<string, unknown>[] = [];
    const failures: Record<string, unknown>[] = [];
    let clock = 0;
    for (let order = 1; order <= taskCount; order++) {
      const member = team.members[Math.min(order - 1, team.members.length - 1)];
      if (!member) continue;
      const last = order === taskCount;
      const open = last && !ended;
      const taskState = last ? state : 'SUCCEEDED';
      const taskStart = clock;
      const input = order === 1 ? prompt : `Continue with the result of task ${order - 1}`;
      // The model plans first, then calls the tools one after another.
      let callClock = taskStart + random.int(300, 3_000);
      const drawnCalls = random.int(0, 4);
      const callCount = paused && last ? Math.max(1, drawnCalls) : drawnCalls;
      for (let c = 0; c < callCount; c++) {
        const lastCall = last && c === callCount - 1;
        const humanTool = member.tools.find(isHuman);
        const otherTool = member.tools.find((t) => !isHuman(t));
        let picked = random.pick(member.tools);
        // A paused run's last call is its HUMAN one; a running run's open call is not.
        if (paused && lastCall && humanTool) picked = humanTool;
        else if (state === 'RUNNING' && lastCall && otherTool) picked = otherTool;
        const [toolName, toolType] = picked;
        const human = toolType === 'HUMAN';
        const duration = human ? random.int(60_000, HOUR) : random.int(40, 8_000);
        const openCall =
          lastCall && (state === 'WAITING_FOR_HUMAN' || (state === 'RUNNING' && !human));
        const callEnd = openCall ? null : callClock + duration;
        calls.push({
          invocation_id: random.guid(),
          team_exec_id: teamExecId,
          task_order: order,
          tool_owner: team.owner,
          tool_name: toolName,
          agent_name: member.agent,
          task_name: member.task,
          start_date: callClock,
          end_date: callEnd,
          input: JSON.stringify(
            human ? humanQuestion(toolName, prompt) : { query: prompt, step: c + 1 },
          ),
          output: callEnd === null ? null : callOutput(toolName, toolType, random.int(0, 25)),
          tool_output: human
            ? callEnd === null
              ? 'waiting for a response from the reviewer'
              : 'reviewer answered: approved'
            : `${toolType} call completed in ${duration} ms`,
        });
        callClock = (callEnd ?? callClock) + random.int(10, 500);
      }
      // After its last tool call the model writes the task's result.
      const taskEnd = open ? null : callClock + random.int(300, 4_000);
      const row = {
        team_exec_id: teamExecId,
        team_name: team.name,
        task_owner: team.owner,
        agent_name: member.agent,
        task_name: member.task,
        task_order: order,
        coversation_param: JSON.stringify({
          conversation_id: conversationId,
          title: prompt.slice(0, 40),
        }),
      };
      // A retried first task: a succeeded run of every third (r = 1, 4, 7, …) logged its
      // first task twice under the same TASK_ORDER, a failed attempt before the one that made
      // the calls, as seed 003 allows (it documents no key). The lists' order then ties
      // (src/db/sql/json-lists.ts, jsonArraySelect); no draw of the generator is spent, so
      // every other row stays as it was.
      const retried = order === 1 && state === 'SUCCEEDED' && r % 3 === 1;
      if (retried) {
        tasks.push({
          ...row,
          input,
          result: 'ORA-20404: tool returned no rows',
          state: 'FAILED',
          start_date: taskStart,
          end_date: taskStart + RETRY_AFTER_MS / 2,
        });
      }
      const started = retried ? taskStart + RETRY_AFTER_MS : taskStart;
      tasks.push({
        ...row,
        input,
        result:
          taskState === 'SUCCEEDED'
            ? JSON.stringify({ status: 'ok', answer: `${member.task} done for "${prompt}"` })
            : taskState === 'FAILED'
              ? 'ORA-20404: tool returned no rows'
              : null,
        state: taskState,
        start_date: started,
        end_date: taskEnd,
      });
      if (taskEnd !== null || taskState === 'WAITING_FOR_HUMAN') {
        prompts.push({
          owner: team.owner,
          conversation_id: conversationId,
          prompt: `${member.task}: ${input}`,
          prompt_response:
            taskState === 'FAILED'
              ? null
              : `Plan: call ${member.tools.map(([name]) => name).join(', ')} and report back on "${prompt}".`,
          created: taskStart + 20,
        });
      }
      if (taskState === 'FAILED' && taskEnd !== null) {
        failures.push({
          owner: team.owner,
          job_name: `${team.name}$${member.task}`,
          status: 'FAILED',
          log_date: taskEnd,
          actual_start_date: taskStart + 10,
        });
      }
      clock = (taskEnd ?? callClock) + random.int(100, 2_000);
    }
    const runEnd = ended ? clock : null;
    // The run's last moment: its end, or the latest thing that happened in it.
    const lastMoment = Math.max(
      runEnd ?? 0,
      ...calls.map((call) => (call.end_date ?? call.start_date) as number),
      ...tasks.map((task) => (task.end_date ?? task.start_date) as number),
    );
    const start = DEMO_PRESENT - timeBeforePresent(random, ended) - lastMoment;
    const at = (offset: unknown) => (offset === null ? null : iso(start + (offset as number)));
    for (const row of [...tasks, ...calls]) {
      row.start_date = at(row.start_date);
      row.end_date = at(row.end_date);
    }
    for (const row of prompts) row.created = at(row.created);
    const jobRuns = tables.dba_scheduler_job_run_details as Record<string, unknown>[];
    for (const failure of failures) {
      jobRuns.push({
        log_id: 7001 + jobRuns.length,
        log_date: at(failure.log_date),
        owner: failure.owner,
        job_name: failure.job_name,
        status: failure.status,
        actual_start_date: at(failure.actual_start_date),
        additional_info: TASK_ERRORS[jobRuns.length % TASK_ERRORS.length],
      });
    }
    tables.dba_ai_agent_task_history?.push(...tasks);
    tables.dba_ai_agent_tool_history?.push(...calls);
    tables.dba_cloud_ai_conversation_prompts?.push(...prompts);
    tables.dba_ai_agent_team_history?.push({
      team_exec_id: teamExecId,
      team_name: team.name,
      team_owner: team.owner,
      start_date: iso(start),
      end_date: at(runEnd),
      state,
      team_instance_id: random.int(1, 2),
    });
  }
}

function execStats(random: Random): Record<string, unknown>[] {
  const zero = Object.fromEntries(MEASURES.map((m) => [pgColumn(m.column), 0]));
  const seedRows = [
    {
      ...zero,
      inst_id: 1,
      con_id: 3,
      agent_executor_llm_call_count: 2,
      agent_executor_tool_call_count: 1,
      agent_executor_branch_call_count: 1,
      agent_executor_total_time_exec: 1840,
      agent_executor_input_tokens: 640,
      agent_executor_output_tokens: 120,
    },
    {
      ...zero,
      inst_id: 1,
      con_id: 3,
      agent_executor_total_time_exec: 4200,
      agent_executor_total_time_llm: 3500,
      agent_executor_total_time_tool: 280,
      agent_executor_llm_call_count: 5,
      agent_executor_tool_call_count: 2,
      agent_executor_input_tokens: 8200,
      agent_executor_output_tokens: 640,
    },
    // An execution too short to register: the percentages must come out null, not fail.
    {
      ...zero,
      inst_id: 2,
      con_id: 4,
      agent_executor_start_node_call_count: 1,
      agent_executor_end_node_call_count: 1,
    },
  ];
  const rows: Record<string, unknown>[] = [...seedRows];
  for (let i = 0; i < 320; i++) {
    const row: Record<string, unknown> = {
      ...zero,
      inst_id: i % 3 === 0 ? 2 : 1,
      con_id: random.pick([3, 3, 4]),
    };
    const total = random.int(300, 9_000);
    const llmShare = random.float() * 0.6 + 0.25;
    const toolShare = random.float() * 0.3;
    const llmCalls = random.int(1, 8);
    const toolCalls = random.int(0, 5);
    Object.assign(row, {
      agent_executor_total_time_exec: total,
      agent_executor_total_time_llm: Math.round(total * llmShare),
      agent_executor_total_time_tool: Math.round(total * toolShare),
      agent_executor_total_time_start_node: random.int(1, 15),
      agent_executor_total_time_end_node: random.int(1, 10),
      agent_executor_total_time_flow_node: random.int(5, 60),
      agent_executor_total_time_branch_node: random.int(0, 40),
      agent_executor_llm_call_count: llmCalls,
      agent_executor_tool_call_count: toolCalls,
      agent_executor_branch_call_count: random.int(0, 3),
      agent_executor_branch_default_call_count: random.int(0, 1),
      agent_executor_start_node_call_count: 1,
      agent_executor_end_node_call_count: 1,
      agent_executor_flow_node_call_count: random.int(1, 3),
      agent_executor_map_node_call_count: random.int(0, 2),
      agent_executor_input_tokens: llmCalls * random.int(300, 1_800),
      agent_executor_output_tokens: llmCalls * random.int(40, 250),
    });
    if (toolCalls > 0 && random.float() < 0.5) {
      row.agent_executor_total_time_builtin_vector_search = random.int(20, 400);
      row.agent_executor_total_time_builtin_merge_retrieved_context = random.int(1, 30);
      row.agent_executor_total_time_builtin_plsql_exec = random.int(5, 200);
    }
    rows.push(row);
  }
  return rows;
}
