import { builder } from '../builder.js';
import { badUserInput } from '../errors.js';
import {
  type ActivityBucket,
  type ActivityBucketFigures,
  activityWindow,
  BUCKET_MS,
  MAX_ACTIVITY_BUCKETS,
  type TeamRunActivity,
} from '../model/activity.js';
import { TEAM_RUN_STATES } from '../model/team.js';
import { bounded, ORACLE_NAME } from './bounds.js';
import { NULL_WHEN_VIEW_NOT_GRANTED, OWNER_FILTER, VISIBILITY } from './descriptions.js';
import { ownerFilterScope, rootList } from './pagination.js';
import { StateCountRef } from './team.js';

const ActivityBucketRef = builder.enumType('ActivityBucket', {
  description: 'The length of a teamRunActivity bucket, aligned to UTC.',
  values: {
    HOUR: { description: 'One clock hour (UTC), as Oracle’s TRUNC(date, ’HH’).' },
    DAY: { description: 'One day from midnight UTC, as Oracle’s TRUNC(date, ’DD’).' },
  } as const,
});

const WAITS_NULL =
  'Null when the tool history or the tool attributes (which say which tools are HUMAN) cannot be read.';

const ActivityBucketFiguresRef = builder
  .objectRef<ActivityBucketFigures>('TeamRunActivityBucket')
  .implement({
    description:
      'What happened to team runs in one bucket [start, end). A run counts where it started (startedByState) and where it ended (durations); a wait for a person is a call of a HUMAN tool (tool_type attribute), from its start to its answer.',
    fields: (t) => ({
      start: t.expose('start', { type: 'DateTime', description: 'The bucket’s first instant.' }),
      end: t.expose('end', {
        type: 'DateTime',
        description: 'The instant after the bucket (the next bucket’s start).',
      }),
      startedCount: t.exposeInt('startedCount', {
        description: 'Runs that started (START_DATE) in the bucket.',
      }),
      startedByState: t.field({
        type: [StateCountRef],
        description:
          'Those runs by the state they are in now (their final state once ended): every state, in the order RUNNING, WAITING_FOR_HUMAN, RESUMING, SUCCEEDED, FAILED.',
        resolve: (b) => TEAM_RUN_STATES.map((state) => ({ state, count: b.startedByState[state] })),
      }),
      endedCount: t.exposeInt('endedCount', {
        description: 'Runs that ended (END_DATE) in the bucket, succeeded or failed.',
      }),
      durationP50Ms: t.exposeFloat('durationP50Ms', {
        nullable: true,
        description:
          'Median duration (END_DATE − START_DATE, PERCENTILE_CONT) of the runs that ended in the bucket; null when none did.',
      }),
      durationP95Ms: t.exposeFloat('durationP95Ms', {
        nullable: true,
        description:
          '95th percentile duration of the runs that ended in the bucket; null when none did.',
      }),
      waitingAtEnd: t.exposeInt('waitingAtEnd', {
        nullable: true,
        description: `Runs waiting for a person at the bucket’s end (a HUMAN call begun before it and not answered by then; for the current bucket, now). ${WAITS_NULL}`,
      }),
      waitsBegun: t.exposeInt('waitsBegun', {
        nullable: true,
        description: `Waits for a person that began in the bucket (runs that entered WAITING_FOR_HUMAN). ${WAITS_NULL}`,
      }),
      humanWaitCount: t.exposeInt('humanWaitCount', {
        nullable: true,
        description: `Waits for a person answered in the bucket. ${WAITS_NULL}`,
      }),
      humanWaitMs: t.exposeFloat('humanWaitMs', {
        nullable: true,
        description: `Time those answered waits lasted, in milliseconds, summed (0 when none was answered). ${WAITS_NULL}`,
      }),
    }),
  });

const TeamRunActivityRef = builder.objectRef<TeamRunActivity>('TeamRunActivity').implement({
  description:
    'Team runs over time, bucket by bucket, computed by the database in one statement (USER_/DBA_AI_AGENT_TEAM_HISTORY, human waits from the tool history).',
  fields: (t) => ({
    bucket: t.field({
      type: ActivityBucketRef,
      description: 'The bucket length.',
      resolve: (a) => a.bucket,
    }),
    from: t.expose('from', { type: 'DateTime', description: 'The start asked for.' }),
    to: t.expose('to', { type: 'DateTime', description: 'The end asked for.' }),
    buckets: t.field({
      type: [ActivityBucketFiguresRef],
      // teamRunActivity's price multiplies by the bucket count already.
      complexity: { field: 1, multiplier: 1 },
      description:
        'Every bucket from the one holding `from` to the one holding the instant before `to`, oldest first, empty ones included.',
      resolve: (a) => a.buckets,
    }),
  }),
});

const TeamRunActivityFilterRef = builder.inputType('TeamRunActivityFilter', {
  description: 'Which runs teamRunActivity counts; all given conditions apply.',
  fields: (t) => ({
    teamName: t.string(bounded(ORACLE_NAME, 'Only runs of this team (TEAM_NAME, exact).')),
    owner: t.string(bounded(ORACLE_NAME, `TEAM_OWNER. ${OWNER_FILTER}`)),
  }),
});

/** The default span when `from` is not given: a day of hours, a month of days. */
const DEFAULT_BUCKETS: Readonly<Record<ActivityBucket, number>> = { HOUR: 24, DAY: 30 };

interface ActivityArgs {
  readonly bucket: ActivityBucket;
  readonly from?: Date | null;
  readonly to?: Date | null;
}

/** The span asked for, defaults filled in: what the resolver reads, and what prices it. */
function spanOf(args: ActivityArgs): { from: Date; to: Date } {
  const to = args.to ?? new Date();
  const from =
    args.from ?? new Date(to.getTime() - DEFAULT_BUCKETS[args.bucket] * BUCKET_MS[args.bucket]);
  return { from, to };
}

/**
 * How many buckets come back, known from the arguments before execution: the cost limit
 * multiplies the selection by it, as a connection's by its page size (a span past the limit
 * is priced at the limit, and the resolver refuses it in its own words).
 */
function bucketCount(args: ActivityArgs): number {
  const { from, to } = spanOf(args);
  if (from >= to) return 1;
  return Math.min(activityWindow(args.bucket, from, to).count, MAX_ACTIVITY_BUCKETS);
}

builder.queryFields((t) => ({
  teamRunActivity: t.field({
    ...rootList,
    type: TeamRunActivityRef,
    authScopes: ownerFilterScope,
    description: `Runs started by state, runs ended with their duration percentiles, and waits for a person, per hour or day (UTC) from \`from\` to \`to\`: one statement, whatever the number of buckets (at most ${MAX_ACTIVITY_BUCKETS}; BAD_USER_INPUT beyond). ${VISIBILITY} ${NULL_WHEN_VIEW_NOT_GRANTED}`,
    args: {
      bucket: t.arg({
        type: ActivityBucketRef,
        required: true,
        defaultValue: 'HOUR',
        description: 'The bucket length.',
      }),
      from: t.arg({
        type: 'DateTime',
        description:
          'The first instant to count; the first bucket is the hour or day that holds it. Default: 24 hours (HOUR) or 30 days (DAY) before `to`.',
      }),
      to: t.arg({
        type: 'DateTime',
        description: 'The instant the last bucket ends at or after. Default: now.',
      }),
      filter: t.arg({ type: TeamRunActivityFilterRef, description: 'Conditions on the runs.' }),
    },
    // The whole selection once per bucket: `buckets` multiplies it by the count (and not by
    // the default list multiplier), the few fields beside it are counted with it.
    complexity: (args) => ({ field: 1, multiplier: bucketCount(args) }),
    resolve: (_root, args, context) => {
      const { from, to } = spanOf(args);
      if (from >= to) throw badUserInput('Argument "from" must be earlier than "to"');
      const window = activityWindow(args.bucket, from, to);
      if (window.count > MAX_ACTIVITY_BUCKETS) {
        throw badUserInput(
          `From "from" to "to" is ${window.count} ${args.bucket === 'HOUR' ? 'hours' : 'days'}: at most ${MAX_ACTIVITY_BUCKETS} buckets (use DAY buckets or a shorter span)`,
        );
      }
      return context.repositories.activity.activity(args.filter ?? {}, window, from, to);
    },
  }),
}));
