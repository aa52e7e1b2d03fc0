import type { Catalog } from '../db/catalog.js';
import type { Driver } from '../db/driver.js';
import type { ExecuteAgentProcedure } from '../db/sql/execute-agent.js';
import {
  MAX_PROMPT_BYTES,
  promptBytes,
  type RunTeamRequest,
  runTeamJobName,
  runTeamSql,
} from '../db/sql/run-team.js';
import { AppError, badUserInput, conflict, notFound } from '../errors.js';
import type { TeamRun } from '../model/team.js';
import { ownerAdmits, type Viewer, viewerKey, visibleOwner } from '../model/viewer.js';
import type { IdempotentCalls } from './idempotent-calls.js';
import type { TeamHistoryRepository } from './team-history.js';
import type { TeamRepository } from './teams.js';

export type ActionOutcome =
  | 'submitted'
  | 'replayed'
  | 'succeeded'
  | 'timeout'
  | 'cancelled'
  | 'conflict'
  | 'forbidden'
  | 'not_found'
  | 'bad_input'
  | 'error';

/** One line per action, for the audit log: who, what, how it ended; never the text itself. */
export interface AuditEntry {
  readonly action: 'respondToHuman' | 'runTeam' | 'executeAgent';
  readonly viewer: Viewer;
  readonly execId: string | null;
  readonly teamName: string | null;
  /** executeAgent: the agent, and how many inputs it was given (never their values). */
  readonly agentName?: string;
  readonly inputCount?: number;
  readonly textLength: number;
  readonly outcome: ActionOutcome;
}

export interface ActionOptions {
  /** AUTH_JWT_SECRET or AUTH_JWKS_URL is set: callers are identified. */
  readonly authenticated: boolean;
  readonly audit: (entry: AuditEntry) => void;
  /** How EXECUTE_AGENT is called here, as start-up discovered it (src/db/discover.ts). */
  readonly executeAgent: ExecuteAgentProcedure;
  /** EXECUTE_AGENT_TIMEOUT_MS. */
  readonly executeAgentTimeoutMs: number;
  /** runTeam calls made with an idempotency key, shared by every request of the process. */
  readonly runTeamCalls: IdempotentCalls<Submitted>;
}

/**
 * Without authentication every caller is an anonymous administrator. Reading is fine on
 * a loopback address; acting on a production database as nobody in particular is not, so
 * there answering and starting need a token. The embedded database is a demo.
 */
export function actionForbidden(driverKind: Driver['kind'], authenticated: boolean): string | null {
  return driverKind === 'oracle' && !authenticated
    ? 'Answering and starting team runs and executing agents on Oracle needs authentication: set AUTH_JWT_SECRET or AUTH_JWKS_URL (callers then act as their token’s db_user, or as admin).'
    : null;
}

export const outcomeOf = (error: unknown): ActionOutcome => {
  if (!(error instanceof AppError)) return 'error';
  switch (error.code) {
    case 'CONFLICT':
      return 'conflict';
    case 'FORBIDDEN':
    case 'UNAUTHENTICATED':
      return 'forbidden';
    case 'NOT_FOUND':
      return 'not_found';
    case 'BAD_USER_INPUT':
      return 'bad_input';
    default:
      return 'error';
  }
};

export interface Submitted {
  readonly execId: string | null;
  readonly teamName: string;
  /** The team's owner: with the name, what tells two owners' teams of one name apart. */
  readonly teamOwner: string;
  readonly conversationId: string | null;
  readonly submittedAt: Date;
}

/**
 * respondToHuman and runTeam: checks who may act, then hands the RUN_TEAM call to the
 * database in one round trip (src/db/sql/run-team.ts) and returns.
 */
export class TeamActions {
  private readonly sql;

  constructor(
    private readonly driver: Driver,
    private readonly catalog: Catalog,
    private readonly viewer: Viewer,
    private readonly history: TeamHistoryRepository,
    private readonly teams: TeamRepository,
    private readonly options: ActionOptions,
  ) {
    this.sql = runTeamSql(catalog);
  }

  async respondToHuman(execId: string, response: string): Promise<Submitted> {
    let run: TeamRun | null = null;
    try {
      this.checkText('response', response);
      this.checkAllowed();
      run = (await this.history.runsByIds([execId]))[0] ?? null;
      if (!run) throw notFound(`No team run with execId "${execId}"`);
      this.checkOwner(run.owner);
      if (run.state !== 'WAITING_FOR_HUMAN') throw notWaiting(run.state);
      const [[tasks], [calls]] = await Promise.all([
        this.history.tasksOf([execId]),
        this.history.toolCallsOf([execId]),
      ]);
      const open = (calls ?? []).filter((call) => call.endDate === null).at(-1);
      const conversationId = (tasks ?? []).find((t) => t.conversationId)?.conversationId ?? null;
      if (!conversationId) {
        throw conflict(
          `Team run "${execId}" records no conversation_id in its task history, so RUN_TEAM cannot address it`,
        );
      }
      const submitted = await this.submit({
        // One job name per wait: the open call, else the start of the waiting task.
        jobName: runTeamJobName(
          'ANSWER',
          execId,
          open?.invocationId ??
            String((tasks ?? []).findLast((t) => t.state === 'WAITING_FOR_HUMAN')?.startDate),
        ),
        execId,
        teamOwner: run.owner,
        teamName: run.teamName,
        prompt: response,
        conversationId,
      });
      this.audit('respondToHuman', execId, run.teamName, response, 'submitted');
      return submitted;
    } catch (error) {
      this.audit('respondToHuman', execId, run?.teamName ?? null, response, outcomeOf(error));
      throw error;
    }
  }

  /**
   * With an idempotency key, the same caller's same key within the window returns the first
   * call's submission and starts nothing (audited as `replayed`).
   */
  async runTeam(teamName: string, prompt: string, key: string | null = null): Promise<Submitted> {
    try {
      this.checkText('prompt', prompt);
      this.checkAllowed();
      const start = () => this.startRun(teamName, prompt);
      const claim = key
        ? this.options.runTeamCalls.claim(viewerKey(this.viewer), key, [teamName, prompt], start)
        : { result: start(), replayed: false };
      const submitted = await claim.result;
      this.audit('runTeam', null, teamName, prompt, claim.replayed ? 'replayed' : 'submitted');
      return submitted;
    } catch (error) {
      this.audit('runTeam', null, teamName, prompt, outcomeOf(error));
      throw error;
    }
  }

  private async startRun(teamName: string, prompt: string): Promise<Submitted> {
    const [team] = await this.teams.byKeys([teamName]);
    if (!team) throw await this.teams.unknown(teamName);
    this.checkOwner(team.owner);
    return this.submit({
      jobName: runTeamJobName('START', teamName, crypto.randomUUID()),
      execId: null,
      teamOwner: team.owner,
      teamName,
      prompt,
      conversationId: null,
    });
  }

  private async submit(request: RunTeamRequest): Promise<Submitted> {
    const outcome = this.sql.decode(
      await this.driver.runBlock(this.sql.block, this.sql.binds(request)),
    );
    switch (outcome.kind) {
      case 'not_waiting':
        throw notWaiting(outcome.state);
      case 'duplicate':
        throw conflict(
          `Team run "${request.execId}" has already been answered for this wait; the answer is being processed`,
          'WAITING_FOR_HUMAN',
        );
      default:
        return {
          execId: request.execId,
          teamName: request.teamName,
          teamOwner: request.teamOwner,
          conversationId: outcome.conversationId ?? request.conversationId,
          submittedAt: new Date(),
        };
    }
  }

  private checkText(argument: string, text: string): void {
    if (text.trim() === '') throw badUserInput(`Argument "${argument}" is empty`);
    if (promptBytes(text) > MAX_PROMPT_BYTES) {
      throw badUserInput(
        `Argument "${argument}" is longer than ${MAX_PROMPT_BYTES} bytes (UTF-8, quotes counted twice): the scheduler job that carries it holds at most 4,000`,
      );
    }
  }

  private checkAllowed(): void {
    const reason = actionForbidden(this.driver.kind, this.options.authenticated);
    if (reason) throw new AppError('FORBIDDEN', reason);
  }

  /**
   * The owner of the run or team, or an administrator. On Oracle the job runs as the
   * connected user, whose schema RUN_TEAM resolves the team name in.
   */
  private checkOwner(owner: string): void {
    if (!ownerAdmits(visibleOwner(this.viewer), owner)) {
      throw new AppError('FORBIDDEN', `Only ${owner} or an administrator may act on this run`);
    }
    if (this.driver.kind === 'oracle' && owner !== this.catalog.sessionUser) {
      throw new AppError(
        'FORBIDDEN',
        `RUN_TEAM runs as the connected database user ${this.catalog.sessionUser}, which cannot act on ${owner}'s teams: connect as ${owner} (ORACLE_USER)`,
      );
    }
  }

  private audit(
    action: AuditEntry['action'],
    execId: string | null,
    teamName: string | null,
    text: string,
    outcome: ActionOutcome,
  ): void {
    this.options.audit({
      action,
      viewer: this.viewer,
      execId,
      teamName,
      textLength: text.length,
      outcome,
    });
  }
}

function notWaiting(state: string | null): AppError {
  return conflict(
    state === null
      ? 'The team run is no longer in the team history'
      : `The team run is ${state}, not WAITING_FOR_HUMAN: there is nothing to answer`,
    state,
  );
}
