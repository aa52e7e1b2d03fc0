/**
 * A plan: what one operation reads below one history root, by field name, made once per
 * operation by src/schema/plan.ts from the needs each field declares (src/schema/needs.ts),
 * and rendered as ONE statement by src/db/sql/history-plan.ts (docs/architecture.md, "How an
 * operation is planned"). Plain data: no GraphQL, no SQL.
 */

/** The row types a plan reads: each has a view, columns and a decoder in src/db/sql/. */
export type RowType = 'TeamRun' | 'TaskRun' | 'ToolCall' | 'Agent' | 'Team';

/**
 * How a child row type hangs off its parent: the parent's properties `from` equal the
 * child's `to`, one child (`many: false`) or a list in the child type's order.
 */
export interface Relation {
  readonly name: string;
  readonly target: RowType;
  readonly many: boolean;
  readonly from: readonly string[];
  readonly to: readonly string[];
}

/** Every relation between the history types: one home, read by the fields and the SQL builder. */
export const RELATIONS = {
  runTasks: {
    name: 'TeamRun.tasks',
    target: 'TaskRun',
    many: true,
    from: ['execId'],
    to: ['teamExecId'],
  },
  runToolCalls: {
    name: 'TeamRun.toolCalls',
    target: 'ToolCall',
    many: true,
    from: ['execId'],
    to: ['teamExecId'],
  },
  taskToolCalls: {
    name: 'TaskRun.toolCalls',
    target: 'ToolCall',
    many: true,
    from: ['teamExecId', 'taskOrder'],
    to: ['teamExecId', 'taskOrder'],
  },
  taskTeamRun: {
    name: 'TaskRun.teamRun',
    target: 'TeamRun',
    many: false,
    from: ['teamExecId'],
    to: ['execId'],
  },
  callTaskRun: {
    name: 'ToolCall.taskRun',
    target: 'TaskRun',
    many: false,
    from: ['teamExecId', 'taskOrder'],
    to: ['teamExecId', 'taskOrder'],
  },
  runTeam: {
    name: 'TeamRun.team',
    target: 'Team',
    many: false,
    // By owner too: in DBA_ views two owners may each have a team of one name.
    from: ['owner', 'teamName'],
    to: ['owner', 'name'],
  },
  taskAgent: {
    name: 'TaskRun.agent',
    target: 'Agent',
    many: false,
    from: ['agentName'],
    to: ['name'],
  },
} as const satisfies Record<string, Relation>;

/** What one list (or one row) of a plan reads, and the children read along with it. */
export interface ListPlan {
  readonly type: RowType;
  /** The properties its fields read (the keys its relations need included). */
  readonly columns: ReadonlySet<string>;
  /**
   * By field name, in name order: canonical (aliases, field order and fragments change
   * nothing), so equal needs make equal plans and one SQL text.
   */
  readonly children: ReadonlyMap<string, ChildPlan>;
  /** A text naming this plan: equal texts, equal plans (loaders are made per plan). */
  readonly key: string;
}

export type ChildPlan =
  /** Rows of another type, related to each row of the parent. */
  | { readonly kind: 'relation'; readonly relation: Relation; readonly plan: ListPlan }
  /** The parent row itself seen through another field (a subscription event's `run`). */
  | { readonly kind: 'self'; readonly plan: ListPlan }
  /**
   * Several relations of the parent read together, each under its member name, for a field
   * derived from them (TeamRun.waitingFor reads the run's tasks and tool calls).
   */
  | {
      readonly kind: 'group';
      readonly members: ReadonlyMap<
        string,
        { readonly relation: Relation; readonly plan: ListPlan }
      >;
    };

/**
 * A plan of `type` reading every column, with these children: what the registry checks every
 * list of a statement with (src/oracle-check/statements.ts), and the contract tests read.
 */
export function everyColumn(type: RowType, children: [string, ChildPlan][] = []): ListPlan {
  return {
    type,
    columns: new Set(['*']),
    children: new Map(children),
    key: `every column of ${type} ${children.map(([key]) => key).join(' ')}`,
  };
}

/**
 * Where a planned row keeps its children, by field name: a key only the plan sets. The rows
 * of one statement serve every form that planned them, whatever its aliases.
 */
export const PLANNED: unique symbol = Symbol('planned children');

export type Planned<T> = T & { [PLANNED]?: Readonly<Record<string, unknown>> };

/** The child a plan read for `fieldName` along with `row`; undefined when none was planned. */
export function plannedChild(row: object, fieldName: string): unknown {
  return (row as Planned<object>)[PLANNED]?.[fieldName];
}

/** Sets the child `fieldName` of `row`, read along with it by a plan. */
export function setPlannedChild(row: object, fieldName: string, value: unknown): void {
  const planned = row as { [PLANNED]?: Record<string, unknown> };
  planned[PLANNED] ??= {};
  planned[PLANNED][fieldName] = value;
}

/**
 * A relation to the catalog (a run's team, a task's agent) that a plan's statement leaves to
 * the cross-request catalog cache: the rows whose child `key` is read from it
 * (src/repositories/team-history.ts).
 */
export interface CatalogEdge {
  readonly key: string;
  readonly relation: Relation;
  readonly parents: readonly object[];
}

/** The members a group child holds, per parent row: each a list in its type's order. */
export type GroupValue = Readonly<Record<string, readonly unknown[]>>;

/** Whether the plan reads any rows below its own: a relation or a group, at any depth. */
export function readsBelow(plan: ListPlan): boolean {
  for (const child of plan.children.values()) {
    if (child.kind !== 'self' || readsBelow(child.plan)) return true;
  }
  return false;
}
