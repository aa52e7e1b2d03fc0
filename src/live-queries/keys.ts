import { decodeGlobalID } from '@pothos/plugin-relay';
import type { CycleMessage } from '../live/hub.js';
import { teamIds, teamKey as teamKeyOf } from '../model/team.js';

/**
 * What a live query's answer is made of, and what a change makes stale, as one set of keys
 * (the in-memory store's resource identifiers): `TeamRun:<execId>` for a run and everything
 * of it (its tasks, tool calls, wait), `Team:<id>` for a team and what it lists (its runs,
 * its waiting set, its statistics), and the store's own `Query.<field>` for each root field.
 * The response cache keys the same changes by global id (src/production/response-cache.ts).
 */
export const runKey = (execId: string) => `TeamRun:${execId}`;
/** A team's key: `Team:` and its id (Team.id, src/model/team.ts). */
const teamIdKey = (teamId: string) => `Team:${teamId}`;

/**
 * The keys a change to a team makes stale: its id is its name (USER_ views) or its owner and
 * name (DBA_ views, where two owners may each have a team of one name), so both forms; the
 * form the views do not use names no answer.
 */
export const teamKeys = (owner: string, teamName: string): string[] =>
  teamIds(owner, teamName).map(teamIdKey);

/**
 * The root fields whose answer any run's change may alter without naming it: lists and
 * figures across teams (a new run, a run that ends, the agents' executions it made).
 */
export const HISTORY_ROOTS = [
  'Query.teamRuns',
  'Query.toolCalls',
  'Query.teamRunActivity',
  'Query.execStats',
  'Query.execStatSummary',
] as const;

type Source = Record<string, unknown>;
const text = (value: unknown) => (typeof value === 'string' ? value : null);

/**
 * The key an object of each type stands for, read from its source object, so that an answer
 * is tracked whichever fields it selects (the store alone tracks objects whose `id` is
 * selected). A type not listed here (an agent, a tool) changes only when the catalog does,
 * which nothing observes; its `id`, where selected, is tracked all the same.
 */
export const KEY_OF_TYPE: Readonly<Record<string, (source: Source) => string | null>> = {
  TeamRun: (run) => keyOf(runKey, run.execId),
  WaitingRun: (waiting) => keyOf(runKey, waiting.execId),
  TaskRun: (task) => keyOf(runKey, task.teamExecId),
  ToolCall: (call) => keyOf(runKey, call.teamExecId),
  HumanWait: (wait) => keyOf(runKey, (wait.run as Source | null)?.execId),
  TaskFailure: (failure) => keyOf(runKey, failure.teamExecId),
  Team: (team) => keyOf(teamIdKey, team.id),
  TeamStats: (stats) =>
    typeof stats.teamOwner === 'string' && typeof stats.teamName === 'string'
      ? teamIdKey(teamKeyOf(stats.teamOwner, stats.teamName))
      : null,
};

function keyOf(make: (id: string) => string, id: unknown): string | null {
  const value = text(id);
  return value === null ? null : make(value);
}

/** The store's key of a selected `id` field (a relay global id), in the form of KEY_OF_TYPE. */
export function keyOfGlobalId({ typename, id }: { typename: string; id: string | number }) {
  try {
    return `${typename}:${decodeGlobalID(String(id)).id}`;
  } catch {
    return `${typename}:${id}`;
  }
}

/** The keys an action's result names (RunTeamSubmission: the answered run and its team). */
export function keysOfAction(result: unknown): string[] {
  const keys: string[] = [...HISTORY_ROOTS];
  if (typeof result !== 'object' || result === null) return keys;
  const source = result as Source;
  const run = text(source.execId);
  const team = text(source.teamName);
  const owner = text(source.teamOwner);
  if (run) keys.push(runKey(run));
  if (team && owner) keys.push(...teamKeys(owner, team));
  return keys;
}

/** The keys a poll cycle makes stale: each changed run, its team, and the history roots. */
export function keysOfCycle(message: CycleMessage): string[] {
  if (message.transitions.length === 0) return [];
  const keys = new Set<string>(HISTORY_ROOTS);
  for (const { run } of message.transitions) {
    keys.add(runKey(run.execId));
    for (const key of teamKeys(run.owner, run.teamName)) keys.add(key);
  }
  return [...keys];
}
