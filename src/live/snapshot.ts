import { randomUUID } from 'node:crypto';
import {
  ACTIVE_STATES,
  type PolledRun,
  TEAM_RUN_STATES,
  type TeamRun,
  type TeamRunState,
} from '../model/team.js';

/**
 * What the poller keeps between cycles and what it publishes. Everything here is plain JSON
 * (dates as ISO text) because snapshots and messages travel through Redis between instances.
 */

export interface WireRun {
  readonly execId: string;
  readonly teamName: string;
  readonly owner: string;
  readonly state: TeamRunState;
  readonly startDate: string | null;
  readonly endDate: string | null;
  readonly instanceId: number | null;
  readonly waitingSince: string | null;
}

export interface Snapshot {
  /** One unbroken sequence of messages; a baseline (no previous snapshot) starts a new one. */
  readonly epoch: string;
  /** Sequence number of the last message published in this epoch. */
  readonly seq: number;
  /** When the cycle that read these runs started, on the poller's clock. */
  readonly polledAt: string;
  readonly runs: readonly WireRun[];
}

export interface Transition {
  readonly run: WireRun;
  /** Null for a run that was not seen before. */
  readonly previousState: TeamRunState | null;
}

export interface CycleMessage {
  readonly epoch: string;
  readonly seq: number;
  readonly polledAt: string;
  readonly transitions: readonly Transition[];
  /** The whole set of runs waiting for a human after this cycle. */
  readonly waiting: readonly WireRun[];
}

/**
 * What an action (a mutation: an answer, a new run, an agent execution) changed, as the keys
 * of the live queries to run again (`TeamRun:<execId>`, `Team:<id>`, `Query.<field>`). It
 * travels on the poller's channel, so that every instance's live queries see what any
 * instance's mutation did.
 */
export interface InvalidationMessage {
  readonly kind: 'invalidate';
  readonly keys: readonly string[];
}

/** What the coordinator's channel carries: the poller's cycles and the actions' invalidations. */
export type LiveMessage = CycleMessage | InvalidationMessage;

export const isInvalidation = (message: LiveMessage): message is InvalidationMessage =>
  'kind' in message && message.kind === 'invalidate';

export interface Diff {
  /** The runs of this cycle, with waitingSince filled in where it can be. */
  readonly runs: WireRun[];
  readonly transitions: Transition[];
  /**
   * Runs that were active in the previous snapshot but are missing now. They ended earlier
   * than the window reaches (a commit later than the overlap), so their end is looked up.
   */
  readonly vanished: WireRun[];
}

/**
 * A stored snapshot (Redis) → the Snapshot, checked field by field; throws naming the first
 * problem. The text crossed a process boundary and may have been written by another version,
 * by hand, or cut short, and a bad date in it would fail every later cycle.
 */
export function parseSnapshot(text: string): Snapshot {
  const raw: unknown = JSON.parse(text);
  const problem = snapshotProblem(raw);
  if (problem) throw new Error(problem);
  return raw as Snapshot;
}

const STATES: ReadonlySet<string> = new Set(TEAM_RUN_STATES);
const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const isInstant = (value: unknown) => typeof value === 'string' && !Number.isNaN(Date.parse(value));
const isOptionalInstant = (value: unknown) => value === null || isInstant(value);

function snapshotProblem(raw: unknown): string | null {
  if (!isRecord(raw)) return 'not an object';
  if (typeof raw.epoch !== 'string' || raw.epoch === '') return 'epoch is not a string';
  if (!Number.isSafeInteger(raw.seq) || (raw.seq as number) < 0) return 'seq is not a count';
  if (!isInstant(raw.polledAt)) return 'polledAt is not a date';
  if (!Array.isArray(raw.runs)) return 'runs is not an array';
  for (const [i, run] of raw.runs.entries()) {
    const ok =
      isRecord(run) &&
      typeof run.execId === 'string' &&
      typeof run.teamName === 'string' &&
      typeof run.owner === 'string' &&
      typeof run.state === 'string' &&
      STATES.has(run.state) &&
      isOptionalInstant(run.startDate) &&
      isOptionalInstant(run.endDate) &&
      isOptionalInstant(run.waitingSince) &&
      (run.instanceId === null || Number.isSafeInteger(run.instanceId));
    if (!ok) return `runs[${i}] is not a run`;
  }
  return null;
}

const ACTIVE: ReadonlySet<string> = new Set(ACTIVE_STATES);

export const isActive = (state: TeamRunState) => ACTIVE.has(state);

const iso = (date: Date | null) => (date ? date.toISOString() : null);

export function toWire(run: TeamRun, waitingSince: Date | string | null = null): WireRun {
  return {
    execId: run.execId,
    teamName: run.teamName,
    owner: run.owner,
    state: run.state,
    startDate: iso(run.startDate),
    endDate: iso(run.endDate),
    instanceId: run.instanceId,
    waitingSince: waitingSince instanceof Date ? waitingSince.toISOString() : waitingSince,
  };
}

const dateOf = (text: string | null) => (text === null ? null : new Date(text));

export function fromWire(run: WireRun): TeamRun {
  return {
    execId: run.execId,
    teamName: run.teamName,
    owner: run.owner,
    state: run.state,
    startDate: dateOf(run.startDate),
    endDate: dateOf(run.endDate),
    instanceId: run.instanceId,
    waitingSince: dateOf(run.waitingSince),
  };
}

/**
 * Compares a cycle's rows with the previous snapshot, by TEAM_EXEC_ID. With no previous
 * snapshot the rows are the baseline and nothing is a transition.
 *
 * waitingSince comes from the database (the open human tool call, else the waiting task);
 * when the database has neither, it is the poll time at which this poller saw the run enter
 * WAITING_FOR_HUMAN, kept from snapshot to snapshot, or null for a run already waiting at
 * the baseline.
 */
export function diff(
  previous: Snapshot | null,
  polled: readonly PolledRun[],
  polledAt: Date,
): Diff {
  const before = new Map(previous?.runs.map((run) => [run.execId, run]));
  const seen = new Set<string>();
  const runs: WireRun[] = [];
  const transitions: Transition[] = [];
  for (const row of polled) {
    if (seen.has(row.execId)) continue;
    seen.add(row.execId);
    const old = before.get(row.execId);
    let waitingSince: string | null = null;
    if (row.state === 'WAITING_FOR_HUMAN') {
      waitingSince =
        iso(row.waitingSince) ??
        (old?.state === 'WAITING_FOR_HUMAN'
          ? old.waitingSince
          : previous
            ? polledAt.toISOString()
            : null);
    }
    const run = toWire(row, waitingSince);
    runs.push(run);
    if (!previous) continue;
    if (!old) transitions.push({ run, previousState: null });
    else if (old.state !== run.state) transitions.push({ run, previousState: old.state });
  }
  const vanished = (previous?.runs ?? []).filter(
    (run) => !seen.has(run.execId) && isActive(run.state),
  );
  return { runs: sortById(runs), transitions: sortByRunId(transitions), vanished };
}

/** Transitions for vanished runs found again by id; runs no longer in the history are dropped. */
export function vanishedTransitions(
  vanished: readonly WireRun[],
  found: readonly (TeamRun | null)[],
): Transition[] {
  const transitions: Transition[] = [];
  vanished.forEach((old, i) => {
    const run = found[i];
    if (run && run.state !== old.state) {
      transitions.push({ run: toWire(run), previousState: old.state });
    }
  });
  return transitions;
}

export function waitingOf(runs: readonly WireRun[]): WireRun[] {
  return runs.filter((run) => run.state === 'WAITING_FOR_HUMAN');
}

/** Identity of a waiting set: members and when each began waiting. */
export function waitingKey(runs: readonly WireRun[]): string {
  return runs.map((run) => `${run.execId}@${run.waitingSince ?? ''}`).join(',');
}

/**
 * The snapshot after a good cycle, and the message to publish: always for a baseline (it
 * carries the first waiting set), otherwise only when something changed.
 */
export function advance(
  previous: Snapshot | null,
  runs: WireRun[],
  transitions: readonly Transition[],
  polledAt: Date,
): { snapshot: Snapshot; message: CycleMessage | null } {
  const waiting = waitingOf(runs);
  const changed =
    !previous ||
    transitions.length > 0 ||
    waitingKey(waiting) !== waitingKey(waitingOf(previous.runs));
  const epoch = previous?.epoch ?? randomUUID();
  const seq = previous ? previous.seq + (changed ? 1 : 0) : 0;
  const snapshot: Snapshot = { epoch, seq, polledAt: polledAt.toISOString(), runs };
  const message = changed
    ? {
        epoch,
        seq,
        polledAt: snapshot.polledAt,
        transitions: sortByRunId([...transitions]),
        waiting,
      }
    : null;
  return { snapshot, message };
}

function sortById(runs: WireRun[]): WireRun[] {
  return runs.sort((a, b) => (a.execId < b.execId ? -1 : a.execId > b.execId ? 1 : 0));
}

function sortByRunId(transitions: Transition[]): Transition[] {
  return transitions.sort((a, b) =>
    a.run.execId < b.run.execId ? -1 : a.run.execId > b.run.execId ? 1 : 0,
  );
}
