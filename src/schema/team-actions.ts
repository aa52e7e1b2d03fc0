import { builder } from '../builder.js';
import { badUserInput } from '../errors.js';
import type { Submitted } from '../repositories/actions.js';
import { IDEMPOTENCY_WINDOW_MS } from '../repositories/idempotent-calls.js';
import { ACTION } from './action.js';
import { bounded, boundProblem, IDEMPOTENCY_KEY, KEY, ORACLE_NAME } from './bounds.js';
import { HISTORY } from './descriptions.js';
import { TeamRunRef } from './team-run.js';

builder.mutationType({
  description:
    'Actions on agent teams through DBMS_CLOUD_AI_AGENT.RUN_TEAM, handed to the database as a one-off scheduler job: the call returns once the job is committed, the team works on in the database. Owner or admin only; without authentication, on the embedded database only. Audit-logged (never the text).',
});

const SubmittedRef = builder.objectRef<Submitted>('RunTeamSubmission').implement({
  description:
    'A RUN_TEAM call accepted by the database (its scheduler job is committed); the run’s progress shows in the history views and the subscriptions.',
  fields: (t) => ({
    execId: t.exposeID('execId', {
      nullable: true,
      description: `${HISTORY.teamExecId} The answered run; null for runTeam, whose run gets its id when it starts (find it by conversationId).`,
    }),
    teamName: t.exposeString('teamName', { description: HISTORY.teamName }),
    conversationId: t.exposeString('conversationId', {
      nullable: true,
      description:
        'The conversation RUN_TEAM continues (respondToHuman) or starts (runTeam): teamRuns(filter: { conversationId }) finds the run once the history shows it.',
    }),
    submittedAt: t.expose('submittedAt', {
      type: 'DateTime',
      description: 'When the database accepted the call.',
    }),
    run: t.field({
      type: TeamRunRef,
      nullable: true,
      description:
        'The answered run as the history shows it right after the call (RESUMING once the job has started); null for runTeam.',
      resolve: (submitted, _args, context) =>
        submitted.execId === null ? null : context.loaders.runById.load(submitted.execId),
    }),
  }),
});

builder.mutationFields((t) => ({
  respondToHuman: t.field({
    ...ACTION,
    type: SubmittedRef,
    description:
      'Answers a run paused in WAITING_FOR_HUMAN: RUN_TEAM is called again for the run’s conversation with the response as user_prompt, and the run goes RESUMING, then RUNNING. CONFLICT (extensions.state) when the run does not wait, or when this wait has already been answered; NOT_FOUND for a run the caller cannot see; FORBIDDEN for anyone but its owner or an administrator.',
    args: {
      execId: t.arg.id({ required: true, ...bounded(KEY, HISTORY.teamExecId) }),
      response: t.arg.string({
        required: true,
        description:
          'The person’s answer, given to the team as the user prompt (at most 3,000 bytes of UTF-8).',
      }),
    },
    resolve: (_root, args, context) =>
      context.repositories.actions.respondToHuman(String(args.execId), args.response),
  }),
  runTeam: t.field({
    ...ACTION,
    type: SubmittedRef,
    description:
      'Starts a run of a team with a prompt (RUN_TEAM in a new conversation) and returns the conversation id; the run appears in teamRuns(filter: { conversationId }) once the database has started it. Owner or admin only.',
    args: {
      teamName: t.arg.string({
        required: true,
        ...bounded(
          ORACLE_NAME,
          'The team (AGENT_TEAM_NAME), exact and case-sensitive; NOT_FOUND naming the near miss when no visible team has it.',
        ),
      }),
      prompt: t.arg.string({
        required: true,
        description: 'The request for the team (at most 3,000 bytes of UTF-8).',
      }),
      idempotencyKey: t.arg.string({
        required: false,
        ...bounded(
          IDEMPOTENCY_KEY,
          `Makes a retry safe (or the request's Idempotency-Key header, which must then agree): within ${IDEMPOTENCY_WINDOW_MS / 60_000} minutes the same caller's same key returns the first call's RunTeamSubmission and starts no second run, a duplicate sent while the first is running shares its result, and a key reused with another teamName or prompt is BAD_USER_INPUT. A call that failed may be retried with its key.`,
        ),
      }),
    },
    resolve: (_root, args, context) =>
      context.repositories.actions.runTeam(
        args.teamName,
        args.prompt,
        idempotencyKeyOf(args.idempotencyKey, context.idempotencyKey),
      ),
  }),
}));

/**
 * runTeam's key: the argument (bounded by its declaration) or the Idempotency-Key header,
 * held to the same bound here, as no declaration covers a header.
 */
function idempotencyKeyOf(
  argument: string | null | undefined,
  header: string | null,
): string | null {
  if (header !== null) {
    const problem = boundProblem(IDEMPOTENCY_KEY, header);
    if (problem) throw badUserInput(`Header "Idempotency-Key" ${problem}`);
    if (argument != null && argument !== header) {
      throw badUserInput(
        'Argument "idempotencyKey" and header "Idempotency-Key" differ: send one of them, or the same key in both',
      );
    }
  }
  return argument ?? header;
}
