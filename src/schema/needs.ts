import type { Relation, RowType } from '../model/plan.js';
import type { TaskRun, TeamRun, ToolCall } from '../model/team.js';

/**
 * What a field reads, declared where the field is defined and kept in its GraphQL extensions
 * (as Pothos' prisma plugin keeps `select` and `t.relation`): the planner (src/schema/plan.ts)
 * reads these and nothing else. A field of a planned type that declares nothing is a test
 * failure (test/plan.test.ts), never a silent "read every column".
 */
export type Needs =
  /** Properties of the row (a scalar; or a field a loader serves by these keys). */
  | { readonly kind: 'columns'; readonly columns: readonly string[] }
  /** Rows of another type along a relation, planned with the field's own selection. */
  | { readonly kind: 'relation'; readonly relation: Relation }
  /**
   * A field derived from several relations of the row (TeamRun.waitingFor): each member read
   * with the columns the derivation always reads, plus what the selection below asks.
   */
  | {
      readonly kind: 'group';
      readonly members: Readonly<Record<string, Relation>>;
      readonly always: Readonly<Record<string, readonly string[]>>;
      /** What the derivation reads of the row itself. */
      readonly parent: readonly string[];
    }
  /** A field of a derived object that reads one member's rows, with its own selection. */
  | { readonly kind: 'member'; readonly member: string }
  /** A field of a derived object that reads these columns of its members. */
  | { readonly kind: 'members'; readonly columns: Readonly<Record<string, readonly string[]>> }
  /** The row itself under another field (a subscription event's `run`). */
  | { readonly kind: 'self' }
  /** The rows pass through (a connection's edges and nodes, an edge's node). */
  | { readonly kind: 'items' }
  /** Read by a call a plan does not make (DESCRIBE_AGENT): the relation is left to its loader. */
  | { readonly kind: 'unplanned' };

/** The GraphQL extension the needs live under. */
export const NEEDS = 'agentGraphNeeds';

const declare = (needs: Needs) => ({ extensions: { [NEEDS]: needs } });

type Props<T> = readonly (keyof T & string)[];

/** Field options declaring what a field reads: spread into the field's options. */
export const needs = {
  run: (...columns: Props<TeamRun>) => declare({ kind: 'columns', columns }),
  task: (...columns: Props<TaskRun>) => declare({ kind: 'columns', columns }),
  call: (...columns: Props<ToolCall>) => declare({ kind: 'columns', columns }),
  /** A field read from the object the resolver already holds (an event's or a wait's). */
  nothing: () => declare({ kind: 'columns', columns: [] }),
  relation: (relation: Relation) => declare({ kind: 'relation', relation }),
  group: (
    members: Readonly<Record<string, Relation>>,
    always: Readonly<Record<string, readonly string[]>>,
    parent: readonly string[],
  ) => declare({ kind: 'group', members, always, parent }),
  member: (member: string) => declare({ kind: 'member', member }),
  members: (columns: Readonly<Record<string, readonly string[]>>) =>
    declare({ kind: 'members', columns }),
  self: () => declare({ kind: 'self' }),
  items: () => declare({ kind: 'items' }),
  unplanned: () => declare({ kind: 'unplanned' }),
};

/**
 * The GraphQL object types a plan reads, with the row type behind each: every field of these
 * declares its needs. A subscription event's objects are keyed by their run.
 */
export const PLANNED_TYPES: Readonly<Record<string, RowType | 'derived'>> = {
  TeamRun: 'TeamRun',
  TaskRun: 'TaskRun',
  ToolCall: 'ToolCall',
  Agent: 'Agent',
  Team: 'Team',
  WaitingRun: 'TeamRun',
  TeamRunChange: 'TeamRun',
  HumanWait: 'derived',
};
