/**
 * Every history root of an operation is one statement, whatever the frontend asks below it
 * (src/schema/plan.ts, src/db/sql/history-plan.ts), and every field of a planned type says
 * what it reads (src/schema/needs.ts).
 */
import { buildSchema, type GraphQLObjectType, type GraphQLSchema, isObjectType } from 'graphql';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Statement } from '../src/db/driver.js';
import { type ListPlan, RELATIONS } from '../src/model/plan.js';
import { plansFrom } from '../src/oracle-check/statements.js';
import { schema } from '../src/schema/index.js';
import { NEEDS, type Needs, PLANNED_TYPES } from '../src/schema/needs.js';
import { startTestServer, type TestServer } from './support/server.js';

/** The fields of the planned types that declare no needs: each one a defect. */
function undeclared(schema: GraphQLSchema): string[] {
  return Object.keys(PLANNED_TYPES).flatMap((name) => {
    const type = schema.getType(name);
    if (!isObjectType(type)) return [];
    return Object.values(type.getFields())
      .filter((field) => field.extensions?.[NEEDS] === undefined)
      .map((field) => `${name}.${field.name}`);
  });
}

/**
 * The planned fields that read rows below their parent and take arguments: each a defect, since
 * a plan keeps one child per field name whatever the aliases (src/schema/plan.ts), so two
 * aliases with other arguments would share one list.
 */
function childFieldsWithArguments(schema: GraphQLSchema): string[] {
  const readsRows = new Set(['relation', 'group', 'member', 'self', 'items']);
  return Object.keys(PLANNED_TYPES).flatMap((name) => {
    const type = schema.getType(name);
    if (!isObjectType(type)) return [];
    return Object.values(type.getFields())
      .filter((field) => {
        const declared = field.extensions?.[NEEDS] as { kind?: string } | undefined;
        return readsRows.has(declared?.kind ?? '') && field.args.length > 0;
      })
      .map((field) => `${name}.${field.name}`);
  });
}

/**
 * The edges a plan can take below a row type, as `RowType.field → what it reads`: from the
 * fields the schema declares (relations, groups of relations, the row itself), or from plans.
 */
type Edge = string;

const describedRelation = (relation: { name: string }) => relation.name;

function declaredEdges(schema: GraphQLSchema): Edge[] {
  return Object.entries(PLANNED_TYPES).flatMap(([name, rowType]) => {
    const type = schema.getType(name);
    if (rowType === 'derived' || !isObjectType(type)) return [];
    return Object.values(type.getFields()).flatMap((field) => {
      const declared = field.extensions?.[NEEDS] as Needs | undefined;
      if (declared?.kind === 'relation') {
        return [`${rowType}.${field.name} → ${describedRelation(declared.relation)}`];
      }
      if (declared?.kind === 'group') {
        const members = Object.entries(declared.members)
          .map(([member, relation]) => `${member}=${describedRelation(relation)}`)
          .sort();
        return [`${rowType}.${field.name} → group(${members.join(',')})`];
      }
      if (declared?.kind === 'self') return [`${rowType}.${field.name} → self`];
      return [];
    });
  });
}

function plannedEdges(plan: ListPlan, edges = new Set<Edge>()): Set<Edge> {
  for (const [key, child] of plan.children) {
    if (child.kind === 'relation') {
      edges.add(`${plan.type}.${key} → ${describedRelation(child.relation)}`);
      plannedEdges(child.plan, edges);
    } else if (child.kind === 'self') {
      edges.add(`${plan.type}.${key} → self`);
      plannedEdges(child.plan, edges);
    } else {
      const members = [...child.members]
        .map(([member, { relation }]) => `${member}=${describedRelation(relation)}`)
        .sort();
      edges.add(`${plan.type}.${key} → group(${members.join(',')})`);
      for (const { plan: memberPlan } of child.members.values()) plannedEdges(memberPlan, edges);
    }
  }
  return edges;
}

/** The relation fields no plan of the oracle:check registry (src/oracle-check/statements.ts) reads. */
function unregistered(schema: GraphQLSchema, plans: readonly ListPlan[]): Edge[] {
  const registered = new Set<Edge>();
  for (const plan of plans) plannedEdges(plan, registered);
  return declaredEdges(schema).filter((edge) => !registered.has(edge));
}

const REGISTERED_PLANS = (['TeamRun', 'TaskRun', 'ToolCall'] as const).flatMap(plansFrom);

let t: TestServer;
beforeAll(async () => {
  // The tools catalog is read every time, so the counts do not depend on its cache.
  t = await startTestServer({ TEAM_TOOLS_CACHE_TTL_MS: '0' });
});
afterAll(() => t.stop());

describe('needs', () => {
  test('every field of a planned type declares what it reads', () => {
    expect(Object.keys(PLANNED_TYPES).every((name) => isObjectType(schema.getType(name)))).toBe(
      true,
    );
    expect(undeclared(schema)).toEqual([]);
    // The check fails on a field that declares nothing.
    expect(undeclared(buildSchema('type Query { a: Int } type TeamRun { x: Int }'))).toEqual([
      'TeamRun.x',
    ]);
  });

  test('no field that reads rows below its parent takes arguments (aliases share its list)', () => {
    expect(childFieldsWithArguments(schema)).toEqual([]);
    // The check fails on such a field.
    const withArguments = buildSchema(
      'type Query { a: Int } type TeamRun { tasks(first: Int): Int }',
    );
    const tasks = (withArguments.getType('TeamRun') as GraphQLObjectType).getFields().tasks;
    if (tasks) tasks.extensions = { [NEEDS]: { kind: 'relation' } };
    expect(childFieldsWithArguments(withArguments)).toEqual(['TeamRun.tasks']);
  });

  test('the oracle:check registry plans every relation the schema declares, from every type it leaves', () => {
    expect(declaredEdges(schema).length).toBeGreaterThan(6);
    expect(unregistered(schema, REGISTERED_PLANS)).toEqual([]);
    // The check fails on a relation field the registry's plans do not read.
    const unplanned = buildSchema('type Query { a: Int } type ToolCall { teamRun: Int }');
    const teamRun = (unplanned.getType('ToolCall') as GraphQLObjectType).getFields().teamRun;
    if (teamRun) {
      teamRun.extensions = {
        [NEEDS]: {
          kind: 'relation',
          relation: { ...RELATIONS.taskTeamRun, name: 'ToolCall.teamRun' },
        },
      };
    }
    expect(unregistered(unplanned, REGISTERED_PLANS)).toEqual([
      'ToolCall.teamRun → ToolCall.teamRun',
    ]);
  });
});

const TREE = 'state tasks { taskName agent { name } toolCalls { toolName } }';
const DASHBOARD = (extra = '', root = '') =>
  `{ ${root} teams(first: 20) { nodes { name tools { name } runs(first: 10) { nodes { ${TREE} ${extra} } } } } }`;

interface Shape {
  readonly name: string;
  readonly query: string | (() => Promise<string>);
  /** Statements: one per history root, plus the catalog roots the shape names. */
  readonly statements: number;
  readonly check?: (data: Record<string, unknown>) => void;
}

type Run = {
  execId: string;
  state: string;
  teamName?: string;
  team?: { name: string } | null;
  tasks: {
    taskName: string | null;
    agent: { name: string } | null;
    toolCalls: { toolName: string | null; taskRun?: { taskName: string | null } | null }[];
  }[];
  waitingFor?: { question: string | null; task: { taskName: string | null } | null } | null;
};

const runsOf = (data: Record<string, unknown>): Run[] =>
  (data.teams as { nodes: { runs: { nodes: Run[] } }[] }).nodes.flatMap((team) => team.runs.nodes);

/** A tree that is there: tasks, agents and tool calls read, not all empty. */
function full(runs: readonly Run[]): void {
  expect(runs.length).toBeGreaterThan(10);
  const tasks = runs.flatMap((run) => run.tasks);
  expect(tasks.some((task) => task.agent !== null)).toBe(true);
  expect(tasks.some((task) => task.toolCalls.length > 0)).toBe(true);
}

async function anyId(query: string, pick: (data: Record<string, unknown>) => string) {
  const { data, errors } = await t.gql(query);
  expect(errors).toBeUndefined();
  return pick(data ?? {});
}

const SHAPES: Shape[] = [
  {
    name: 'the dashboard (teams, their tools, then the history tree)',
    query: DASHBOARD(),
    statements: 3,
    check: (data) => full(runsOf(data)),
  },
  {
    name: 'the dashboard plus waitingFor on each run',
    query: DASHBOARD('waitingFor { question task { taskName } }'),
    statements: 3,
    check: (data) => {
      const runs = runsOf(data);
      full(runs);
      const waiting = runs.filter((run) => run.state === 'WAITING_FOR_HUMAN');
      expect(waiting.length).toBeGreaterThan(0);
      for (const run of waiting) expect(run.waitingFor).not.toBeNull();
      for (const run of runs.filter((r) => r.state !== 'WAITING_FOR_HUMAN')) {
        expect(run.waitingFor).toBeNull();
      }
    },
  },
  {
    name: 'the dashboard plus ToolCall.taskRun',
    query: DASHBOARD('toolCalls { toolName taskRun { taskName } }'),
    statements: 3,
    check: (data) => {
      const runs = runsOf(data);
      full(runs);
      const calls = runs.flatMap(
        (run) => (run as unknown as { toolCalls: Run['tasks'][0]['toolCalls'] }).toolCalls,
      );
      expect(calls.some((call) => call.taskRun?.taskName)).toBe(true);
    },
  },
  {
    name: 'the dashboard plus an unrelated root agent(name) { description }',
    query: DASHBOARD('', 'agent(name: "ORDER_REQUEST_FLOW") { description }'),
    // teams, tools, the tree (its agents still read with it), the agent with DESCRIBE_AGENT
    statements: 4,
    check: (data) => full(runsOf(data)),
  },
  {
    name: 'recent runs across teams: teamRuns(first: 50) with team, tasks, agents, tool calls',
    query: `{ teamRuns(first: 50) { totalCount nodes { execId teamName team { name } ${TREE} } } }`,
    statements: 1,
    check: (data) => {
      const runs = (data.teamRuns as { nodes: Run[] }).nodes;
      expect(runs).toHaveLength(50);
      full(runs);
      for (const run of runs) expect(run.team?.name).toBe(run.teamName);
    },
  },
  {
    name: 'teamRuns backwards (last, before) with tasks',
    query: async () => {
      const first = await t.gql<{ teamRuns: { pageInfo: { endCursor: string } } }>(
        '{ teamRuns(first: 30) { pageInfo { endCursor } } }',
      );
      return `{ teamRuns(last: 10, before: "${first.data?.teamRuns.pageInfo.endCursor}") { nodes { ${TREE} } } }`;
    },
    statements: 1,
    check: (data) => expect((data.teamRuns as { nodes: Run[] }).nodes).toHaveLength(10),
  },
  {
    name: 'a team page filtered by state, with tasks',
    query:
      '{ team(name: "ORDER_SUPPORT_TEAM") { name runs(first: 10, filter: { states: [SUCCEEDED, FAILED] }) { totalCount nodes { state tasks { taskName state } } } } }',
    // the team by name, then its runs with their tasks
    statements: 2,
  },
  {
    name: 'teamRun(execId) with its tree and the back-edges',
    query: () =>
      anyId('{ teamRuns(first: 1, filter: { states: [SUCCEEDED] }) { nodes { execId } } }', (d) =>
        String((d.teamRuns as { nodes: { execId: string }[] }).nodes[0]?.execId),
      ).then(
        (id) =>
          `{ teamRun(execId: "${id}") { execId ${TREE} toolCalls { taskRun { teamRun { execId } } } } }`,
      ),
    statements: 1,
    check: (data) => {
      const run = data.teamRun as Run & {
        toolCalls: { taskRun: { teamRun: { execId: string } } }[];
      };
      expect(run.tasks.length).toBeGreaterThan(0);
      for (const call of run.toolCalls) expect(call.taskRun.teamRun.execId).toBe(run.execId);
    },
  },
  {
    name: 'node(id) of a run, and nodes of runs',
    query: () =>
      anyId('{ teamRuns(first: 3) { nodes { id } } }', (d) =>
        JSON.stringify((d.teamRuns as { nodes: { id: string }[] }).nodes.map((n) => n.id)),
      ).then((ids) => `{ nodes(ids: ${ids}) { id ... on TeamRun { ${TREE} } } }`),
    statements: 1,
    check: (data) => expect(data.nodes).toHaveLength(3),
  },
  {
    name: 'Team.waitingForHuman with what each run waits for',
    query:
      '{ teams(first: 20) { nodes { waitingForHuman { execId waitingFor { question since } tasks { taskName } } } } }',
    statements: 2,
    check: (data) => {
      const waiting = (data.teams as { nodes: { waitingForHuman: Run[] }[] }).nodes.flatMap(
        (team) => team.waitingForHuman,
      );
      expect(waiting.length).toBeGreaterThan(0);
      for (const run of waiting) expect(run.waitingFor).not.toBeNull();
    },
  },
  {
    name: 'toolCalls with their task and run',
    query:
      '{ toolCalls(first: 20) { totalCount nodes { toolName taskRun { taskName agent { name } teamRun { state team { name } } } } } }',
    statements: 1,
    check: (data) => {
      const calls = (data.toolCalls as { nodes: { taskRun: unknown }[] }).nodes;
      expect(calls).toHaveLength(20);
      expect(calls.some((call) => call.taskRun !== null)).toBe(true);
    },
  },
];

describe('a canonical plan', () => {
  test('forms differing in aliases, field order and fragments send the same SQL text, each answered in its own shape', async () => {
    const driver = t.server.database.driver;
    const texts: string[] = [];
    const query = driver.query.bind(driver);
    driver.query = (statement, binds) => {
      texts.push(statement.text);
      return query(statement, binds);
    };
    const forms = [
      `{ teamRuns(first: 20) { nodes { execId ${TREE} } } }`,
      `{ teamRuns(first: 20) { nodes { steps: tasks { toolCalls { tool: toolName } agent { name } taskName } now: state id: execId } } }`,
      `{ teamRuns(first: 20) { nodes { ...Run } } }
       fragment Run on TeamRun { state ... on TeamRun { execId tasks { ...Task } } }
       fragment Task on TaskRun { taskName agent { name } toolCalls { toolName } }`,
    ];
    type Runs = { teamRuns: { nodes: Record<string, unknown>[] } };
    const answers: Runs[] = [];
    try {
      for (const form of forms) {
        const { data, errors } = await t.gql<Runs>(form);
        expect(errors).toBeUndefined();
        answers.push(data as Runs);
      }
    } finally {
      driver.query = query;
    }
    expect(texts).toHaveLength(forms.length);
    expect(new Set(texts).size).toBe(1);
    const [plain, aliased, fragments] = answers.map((a) => a.teamRuns.nodes) as Run[][];
    expect(fragments).toEqual(plain);
    expect(aliased).toEqual(
      (plain ?? []).map((run) => ({
        steps: run.tasks.map((task) => ({
          toolCalls: task.toolCalls.map((call) => ({ tool: call.toolName })),
          agent: task.agent,
          taskName: task.taskName,
        })),
        now: run.state,
        id: run.execId,
      })),
    );
    full(plain ?? []);
  });

  test('two aliases of one relation read one list, each with its own fields', async () => {
    type Runs = {
      teamRuns: {
        nodes: {
          named: { taskName: string | null }[];
          states: { state: string }[];
          tasks: { taskName: string | null; state: string }[];
        }[];
      };
    };
    const got: { data?: Runs | null } = {};
    const count = await t.countStatements(async () => {
      const result = await t.gql<Runs>(
        '{ teamRuns(first: 20) { nodes { named: tasks { taskName } states: tasks { state } tasks { taskName state } } } }',
      );
      expect(result.errors).toBeUndefined();
      got.data = result.data;
    });
    expect(count).toBe(1);
    const runs = got.data?.teamRuns.nodes ?? [];
    expect(runs.flatMap((run) => run.tasks).length).toBeGreaterThan(0);
    for (const run of runs) {
      expect(run.named).toEqual(run.tasks.map(({ taskName }) => ({ taskName })));
      expect(run.states).toEqual(run.tasks.map(({ state }) => ({ state })));
    }
  });

  test('a shape is built once: a later page sends the same statement with its own binds, and answers with its own rows', async () => {
    const driver = t.server.database.driver;
    const sent: Statement[] = [];
    const query = driver.query.bind(driver);
    driver.query = (statement, binds) => {
      sent.push(statement);
      return query(statement, binds);
    };
    type Calls = {
      toolCalls: { pageInfo: { endCursor: string }; nodes: Record<string, unknown>[] };
    };
    const page = async (first: number, after?: string) => {
      const { data, errors } = await t.gql<Calls>(
        `query($first: Int, $after: String) { toolCalls(first: $first, after: $after) {
          pageInfo { endCursor } nodes { invocationId taskRun { taskName teamRun { execId } } } } }`,
        { first, after },
      );
      expect(errors).toBeUndefined();
      return (data as Calls).toolCalls;
    };
    try {
      const all = await page(15);
      const first = await page(5);
      const second = await page(5, first.pageInfo.endCursor);
      const third = await page(5, second.pageInfo.endCursor);
      expect([...first.nodes, ...second.nodes, ...third.nodes]).toEqual(all.nodes);
      expect(all.nodes.some((call) => call.taskRun !== null)).toBe(true);
    } finally {
      driver.query = query;
    }
    expect(sent).toHaveLength(4);
    // One statement value per shape: the first page's is the whole list's, the later pages' one.
    expect(sent[1]).toBe(sent[0]);
    expect(sent[3]).toBe(sent[2]);
    expect(sent[2]).not.toBe(sent[1]);
  });
});

describe('statements per operation', () => {
  test.each(SHAPES)('$name: $statements', async ({ query, statements, check }) => {
    const text = typeof query === 'string' ? query : await query();
    const got: { data?: Record<string, unknown> | null } = {};
    const count = await t.countStatements(async () => {
      const { data, errors } = await t.gql(text);
      expect(errors).toBeUndefined();
      got.data = data;
    });
    expect(count).toBe(statements);
    check?.(got.data ?? {});
  });
});
