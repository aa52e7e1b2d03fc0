/** Select AI agent teams (DBMS_CLOUD_AI_AGENT) and their execution history (seed 003). */

export const TEAM_RUN_STATES = [
  'RUNNING',
  'WAITING_FOR_HUMAN',
  'RESUMING',
  'SUCCEEDED',
  'FAILED',
] as const;

export type TeamRunState = (typeof TEAM_RUN_STATES)[number];

/** States of a run that has not ended yet (END_DATE is NULL). */
export const ACTIVE_STATES: readonly TeamRunState[] = ['RUNNING', 'WAITING_FOR_HUMAN', 'RESUMING'];

export interface Team {
  /**
   * Its key in the GraphQL id: the name where the teams view is one owner's (USER_), which
   * keeps those ids as they were; teamKey(owner, name) where it lists every owner's (DBA_),
   * in which two owners may each have a team of one name.
   */
  readonly id: string;
  readonly name: string;
  readonly owner: string;
  readonly description: string | null;
  readonly status: string | null;
}

export interface TeamTool {
  readonly teamName: string;
  /** The owner of the team (not of the tool): what tells same-named teams' tools apart. */
  readonly teamOwner: string;
  readonly toolId: string | null;
  readonly name: string;
  readonly owner: string;
  readonly instruction: string | null;
  readonly toolType: string | null;
  /** The agent and task through which the team uses the tool. */
  readonly agentName: string | null;
  readonly taskName: string | null;
}

/**
 * A team as the loaders key it (src/loaders.ts): owner and name, since the DBA_ views list
 * every owner's teams and two owners may each have one of a name (seed 003: TEAM_OWNER). The
 * same text is the id of a Team read from such a view.
 */
export const teamKey = (owner: string, name: string): string => JSON.stringify([owner, name]);

/** The ids a team of `owner` may have (Team.id): its name (USER_ views), its key (DBA_ views). */
export const teamIds = (owner: string, name: string): string[] => [name, teamKey(owner, name)];

/** What a team key or a bare team name asks for: a bare name is that name of any owner. */
export interface TeamRef {
  readonly owner: string | null;
  readonly name: string;
}

export function teamRefOf(key: string): TeamRef {
  if (key.startsWith('[')) {
    try {
      const pair: unknown = JSON.parse(key);
      if (
        Array.isArray(pair) &&
        pair.length === 2 &&
        typeof pair[0] === 'string' &&
        typeof pair[1] === 'string'
      ) {
        return { owner: pair[0], name: pair[1] };
      }
    } catch {
      // Not a key: a name that begins with a bracket (a quoted identifier may).
    }
  }
  return { owner: null, name: key };
}

/**
 * The items of each team key, in the keys' order, from rows read by the keys' names: a key
 * takes its owner's rows of its name, a bare name every owner's (in the rows' order).
 */
export function perTeamKey<T>(
  keys: readonly string[],
  items: readonly T[],
  teamOf: (item: T) => { readonly owner: string; readonly name: string },
): T[][] {
  const byKey = new Map<string, T[]>();
  const add = (key: string, item: T) => {
    const group = byKey.get(key);
    if (group) group.push(item);
    else byKey.set(key, [item]);
  };
  const byName = keys.some((key) => teamRefOf(key).owner === null);
  for (const item of items) {
    const { owner, name } = teamOf(item);
    add(teamKey(owner, name), item);
    if (byName) add(name, item);
  }
  return keys.map((key) => byKey.get(key) ?? []);
}

/** The distinct names of team keys: what a statement's IN list reads. */
export const namesOfTeamKeys = (keys: readonly string[]): string[] => [
  ...new Set(keys.map((key) => teamRefOf(key).name)),
];

export interface TeamFilter {
  readonly nameContains?: string | null;
  readonly owner?: string | null;
}

export interface TeamRun {
  readonly execId: string;
  readonly teamName: string;
  readonly owner: string;
  readonly state: TeamRunState;
  readonly startDate: Date | null;
  readonly endDate: Date | null;
  readonly instanceId: number | null;
  /**
   * When the live poller saw the run begin waiting for a human, where the history rows do
   * not say (see PolledRun); absent on runs read by queries.
   */
  readonly waitingSince?: Date | null;
}

/** A run as the live poller reads it: the history row plus when it began waiting for a human. */
export interface PolledRun extends TeamRun {
  /**
   * For a run in WAITING_FOR_HUMAN: the start of its open tool call (the human tool call it
   * is blocked on), else the start of its task in WAITING_FOR_HUMAN; null otherwise.
   */
  readonly waitingSince: Date | null;
}

export interface TeamRunFilter {
  readonly teamName?: string | null;
  readonly states?: readonly TeamRunState[] | null;
  readonly startedAfter?: Date | null;
  readonly startedBefore?: Date | null;
  readonly owner?: string | null;
  /** Runs whose task history records this conversation_id. */
  readonly conversationId?: string | null;
}

export type TeamRunOrderField = 'START_DATE' | 'END_DATE' | 'TEAM_NAME' | 'STATE';

export interface TeamRunOrder {
  readonly field: TeamRunOrderField;
  readonly direction: 'ASC' | 'DESC';
}

export interface TaskRun {
  readonly teamExecId: string;
  readonly teamName: string;
  readonly owner: string | null;
  readonly agentName: string;
  readonly taskName: string | null;
  readonly taskOrder: number;
  readonly conversationParams: unknown;
  readonly conversationId: string | null;
  readonly input: string | null;
  readonly result: string | null;
  readonly state: TeamRunState;
  readonly startDate: Date | null;
  readonly endDate: Date | null;
}

export interface ToolCall {
  readonly invocationId: string;
  readonly teamExecId: string;
  readonly taskOrder: number | null;
  readonly toolOwner: string | null;
  readonly toolName: string | null;
  readonly agentName: string | null;
  readonly taskName: string | null;
  readonly startDate: Date | null;
  readonly endDate: Date | null;
  readonly input: string | null;
  readonly output: string | null;
  readonly toolOutput: string | null;
}

export interface ToolCallFilter {
  readonly toolName?: string | null;
  readonly agentName?: string | null;
  readonly teamExecId?: string | null;
}

export interface TeamStats {
  readonly teamName: string;
  readonly teamOwner: string;
  readonly runCount: number;
  readonly runsByState: Readonly<Record<TeamRunState, number>>;
  /** Succeeded runs over finished runs; null before any run has finished. */
  readonly successRate: number | null;
  readonly durationP50Ms: number | null;
  readonly durationP95Ms: number | null;
  /** Derived from the calls of HUMAN tools: how long runs waited for a person. */
  readonly humanWaitCount: number;
  readonly humanWaitTotalMs: number | null;
  readonly humanWaitAvgMs: number | null;
}

/** Milliseconds between two instants, or null while the second is unknown. */
export function durationMs(start: Date | null, end: Date | null): number | null {
  return start && end ? end.getTime() - start.getTime() : null;
}

/** The scheduler job run behind a failed task: the error the history views drop. */
export interface TaskFailure {
  readonly teamExecId: string;
  readonly taskOrder: number;
  readonly jobName: string;
  readonly status: string | null;
  readonly startDate: Date | null;
  readonly logDate: Date | null;
  readonly additionalInfo: string | null;
}

/** One LLM prompt and its response in a Select AI conversation. */
export interface LlmPrompt {
  readonly conversationId: string;
  readonly prompt: string | null;
  readonly response: string | null;
  readonly created: Date | null;
}
