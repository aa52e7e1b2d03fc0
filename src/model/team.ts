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
  readonly name: string;
  readonly owner: string;
  readonly description: string | null;
  readonly status: string | null;
}

export interface TeamTool {
  readonly teamName: string;
  readonly toolId: string | null;
  readonly name: string;
  readonly owner: string;
  readonly instruction: string | null;
  readonly toolType: string | null;
  /** The agent and task through which the team uses the tool. */
  readonly agentName: string | null;
  readonly taskName: string | null;
}

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
