/** Team runs over time (teamRunActivity): buckets of an hour or a day, in UTC. */
import { TEAM_RUN_STATES, type TeamRunState } from './team.js';

export type ActivityBucket = 'HOUR' | 'DAY';

export const BUCKET_MS: Readonly<Record<ActivityBucket, number>> = {
  HOUR: 3_600_000,
  DAY: 86_400_000,
};

/** A month of hours, two years of days: enough for any chart, bounded before any SQL runs. */
export const MAX_ACTIVITY_BUCKETS = 744;

export interface ActivityFilter {
  readonly teamName?: string | null;
  readonly owner?: string | null;
}

/** The buckets asked for: `count` of them from `start` (the UTC hour or day `from` falls in). */
export interface ActivityWindow {
  readonly bucket: ActivityBucket;
  readonly start: Date;
  readonly count: number;
  /** The end of the last bucket. */
  readonly end: Date;
}

/** The buckets from the one holding `from` to the one holding the instant before `to`. */
export function activityWindow(bucket: ActivityBucket, from: Date, to: Date): ActivityWindow {
  const size = BUCKET_MS[bucket];
  const start = Math.floor(from.getTime() / size) * size;
  const count = Math.max(1, Math.ceil((to.getTime() - start) / size));
  return { bucket, start: new Date(start), count, end: new Date(start + count * size) };
}

/** What the activity statement counts, by the instant that puts an event in a bucket. */
export const ACTIVITY_EVENTS = {
  /** A run ended (END_DATE): its duration. */
  ENDED: 1,
  /** A run started (START_DATE), with its state now. */
  STARTED: 2,
  /** A call of a HUMAN tool began: a run began waiting for a person. */
  WAIT_BEGAN: 3,
  /** A call of a HUMAN tool ended: the person answered; its duration is the wait. */
  WAIT_ANSWERED: 4,
  /** A call of a HUMAN tool began before the first bucket and was open at its start. */
  WAITING_BEFORE: 5,
} as const;

/** One row of the activity statement: the events of one kind in one bucket. */
export interface ActivityEventGroup {
  readonly kind: number;
  /** The bucket's start; null for WAITING_BEFORE. */
  readonly bucketStart: Date | null;
  readonly count: number;
  readonly byState: Readonly<Record<TeamRunState, number>>;
  readonly durationP50Ms: number | null;
  readonly durationP95Ms: number | null;
  readonly durationTotalMs: number | null;
}

export interface ActivityBucketFigures {
  readonly start: Date;
  readonly end: Date;
  /** Runs that started in the bucket, by the state they are in now. */
  readonly startedByState: Readonly<Record<TeamRunState, number>>;
  readonly startedCount: number;
  /** Runs that ended in the bucket, and the percentiles of their durations. */
  readonly endedCount: number;
  readonly durationP50Ms: number | null;
  readonly durationP95Ms: number | null;
  /** Null for the four below when the tool history or the tool attributes cannot be read. */
  readonly waitsBegun: number | null;
  readonly waitingAtEnd: number | null;
  readonly humanWaitCount: number | null;
  readonly humanWaitMs: number | null;
}

export interface TeamRunActivity {
  readonly bucket: ActivityBucket;
  readonly from: Date;
  readonly to: Date;
  readonly buckets: readonly ActivityBucketFigures[];
}

const noStates = (): Record<TeamRunState, number> =>
  Object.fromEntries(TEAM_RUN_STATES.map((state) => [state, 0])) as Record<TeamRunState, number>;

/**
 * Every bucket of the window, empty ones included, from the statement's groups. Runs waiting
 * at a bucket's end are those whose wait began before that end and had not ended by it: the
 * waits open at the window's start, plus those begun, minus those answered, up to the bucket.
 */
export function activityBuckets(
  window: ActivityWindow,
  groups: readonly ActivityEventGroup[],
  waitsReadable: boolean,
): ActivityBucketFigures[] {
  const size = BUCKET_MS[window.bucket];
  const byBucket = new Map<string, ActivityEventGroup>();
  let waiting = 0;
  for (const group of groups) {
    if (group.kind === ACTIVITY_EVENTS.WAITING_BEFORE) waiting += group.count;
    else if (group.bucketStart) {
      const index = Math.floor((group.bucketStart.getTime() - window.start.getTime()) / size);
      byBucket.set(`${group.kind}:${index}`, group);
    }
  }
  return Array.from({ length: window.count }, (_, index) => {
    const of = (kind: number) => byBucket.get(`${kind}:${index}`);
    const started = of(ACTIVITY_EVENTS.STARTED);
    const ended = of(ACTIVITY_EVENTS.ENDED);
    const began = of(ACTIVITY_EVENTS.WAIT_BEGAN)?.count ?? 0;
    const answered = of(ACTIVITY_EVENTS.WAIT_ANSWERED);
    waiting += began - (answered?.count ?? 0);
    const start = window.start.getTime() + index * size;
    return {
      start: new Date(start),
      end: new Date(start + size),
      startedByState: started?.byState ?? noStates(),
      startedCount: started?.count ?? 0,
      endedCount: ended?.count ?? 0,
      durationP50Ms: ended?.durationP50Ms ?? null,
      durationP95Ms: ended?.durationP95Ms ?? null,
      waitsBegun: waitsReadable ? began : null,
      waitingAtEnd: waitsReadable ? waiting : null,
      humanWaitCount: waitsReadable ? (answered?.count ?? 0) : null,
      humanWaitMs: waitsReadable ? (answered?.durationTotalMs ?? 0) : null,
    };
  });
}
