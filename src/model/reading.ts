import type { TaskRun, TeamRun, ToolCall } from './team.js';

/**
 * The properties of a row type that a list statement must fill: those its rows' fields read,
 * plus the keys its batching needs; the other properties read null. All when undefined.
 */
export type Wanted<T> = ReadonlySet<keyof T> | undefined;

/** What a list level reads of its row type (schema/selection.ts readingOf): the properties, and a key naming that set. */
export interface Reading<T> {
  readonly wanted: Wanted<T>;
  readonly key: string;
}

/**
 * What a team's page of runs reads (schema/history-reading.ts runsOfTeamReading): the runs'
 * properties, and the lists read along with them in the same statement.
 */
export interface RunsOfTeamReading {
  readonly runs: Reading<TeamRun>;
  /** Present when the operation selects TeamRun.tasks. */
  readonly tasks?: Reading<TaskRun>;
  /** Present when it selects TeamRun.toolCalls, or TaskRun.toolCalls under TeamRun.tasks. */
  readonly toolCalls?: Reading<ToolCall>;
  /**
   * True when it selects TaskRun.agent (with the tasks) and no Agent field that only
   * DESCRIBE_AGENT answers: the tasks' agents are read with them, without details.
   */
  readonly agents?: boolean;
}
