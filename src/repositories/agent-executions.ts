import type { Catalog } from '../db/catalog.js';
import { CallInterrupted, type Driver } from '../db/driver.js';
import { jsonOrNull } from '../db/rows.js';
import {
  decodeExecuteAgent,
  type ExecuteAgentCall,
  type ExecuteAgentProcedure,
  executeAgentBinds,
  executeAgentBlock,
} from '../db/sql/execute-agent.js';
import { AppError, badUserInput, notFound } from '../errors.js';
import type { Agent } from '../model/agent.js';
import {
  type IndexedTraceNode,
  indexTrace,
  parseTrace,
  traceTotals,
} from '../model/agent-trace.js';
import {
  type AgentInput,
  type ContractProblem,
  contractProblems,
  inputsJson,
  sizeProblem,
} from '../model/call-contract.js';
import { ownerAdmits, type Viewer, visibleOwner } from '../model/viewer.js';
import { type ActionOptions, type ActionOutcome, actionForbidden, outcomeOf } from './actions.js';
import type { AgentRepository } from './agents.js';

/** One finished EXECUTE_AGENT call. */
export interface AgentExecution {
  readonly agentName: string;
  readonly owner: string;
  /** The output CLOB as JSON, or as the text itself when it is not JSON. */
  readonly output: unknown;
  readonly startedAt: Date;
  /** Wall time of the call, as this server measured it. */
  readonly durationMs: number;
  /** Null when no trace was asked for. */
  readonly trace: AgentExecutionTrace | null;
}

export interface AgentExecutionTrace {
  /** The TRACES CLOB as JSON (or its text, when it is not JSON). */
  readonly raw: unknown;
  /**
   * The tree's nodes, root first (pre-order); null when the trace's shape is not one
   * src/model/agent-trace.ts recognises.
   */
  readonly nodes: readonly IndexedTraceNode[] | null;
  /** The V$AGENT_EXEC_STAT measures the tree accounts for; null without a tree. */
  readonly totals: Readonly<Record<string, number>> | null;
}

/**
 * executeAgent: the caller's right to act, the arguments' bounds and the call contract are
 * all checked before EXECUTE_AGENT is called, in one round trip, with the call built at
 * start-up from ALL_ARGUMENTS (src/db/sql/execute-agent.ts).
 */
export class AgentExecutions {
  constructor(
    private readonly driver: Driver,
    private readonly catalog: Catalog,
    private readonly viewer: Viewer,
    private readonly agents: AgentRepository,
    private readonly options: ActionOptions,
  ) {}

  async execute(
    name: string,
    inputs: readonly AgentInput[],
    trace: boolean,
    signal: AbortSignal | undefined,
  ): Promise<AgentExecution> {
    let outcome: ActionOutcome = 'error';
    try {
      const tooLarge = sizeProblem(inputs);
      if (tooLarge) throw badUserInput(tooLarge);
      const call = this.callFor(trace);
      const agent = await this.agent(name);
      this.checkOwner(agent.owner);
      const problems = contractProblems(agent.inputs, inputs);
      if (problems.length > 0) throw contractError(agent, problems);
      const execution = await this.call(agent, call, inputsJson(inputs), trace, signal);
      outcome = 'succeeded';
      return execution;
    } catch (error) {
      outcome =
        error instanceof CallInterrupted
          ? error.reason
          : error instanceof AppError && error.code === 'TIMEOUT'
            ? 'timeout'
            : outcomeOf(error);
      throw error instanceof CallInterrupted ? interruptedError(error) : error;
    } finally {
      this.options.audit({
        action: 'executeAgent',
        viewer: this.viewer,
        execId: null,
        teamName: null,
        agentName: name,
        inputCount: inputs.length,
        textLength: inputs.length === 0 ? 0 : inputsJson(inputs).length,
        outcome,
      });
    }
  }

  /** The call for this execution, or FORBIDDEN naming what the database lacks. */
  private callFor(trace: boolean): ExecuteAgentCall {
    const reason = actionForbidden(this.driver.kind, this.options.authenticated);
    if (reason) throw new AppError('FORBIDDEN', reason);
    const procedure: ExecuteAgentProcedure = this.options.executeAgent;
    if (!procedure.plain) {
      throw new AppError('FORBIDDEN', `executeAgent cannot run here: ${procedure.missing}`);
    }
    if (!trace) return procedure.plain;
    if (!procedure.traced) {
      throw new AppError(
        'FORBIDDEN',
        `No overload of DBMS_AI_AGENT.EXECUTE_AGENT on this database has a TRACES OUT argument (found ${procedure.signatures.join(', ')}): execute without trace`,
      );
    }
    return procedure.traced;
  }

  private async agent(name: string): Promise<Agent> {
    const [agent] = await this.agents.byNames([name]);
    if (!agent) throw notFound(`No stored agent named "${name}"`);
    return agent;
  }

  /**
   * The owner of the agent, or an administrator. On Oracle EXECUTE_AGENT runs as the
   * connected user, whose schema it resolves the agent name in (assumed, as for RUN_TEAM).
   */
  private checkOwner(owner: string): void {
    if (!ownerAdmits(visibleOwner(this.viewer), owner)) {
      throw new AppError('FORBIDDEN', `Only ${owner} or an administrator may execute this agent`);
    }
    if (this.driver.kind === 'oracle' && owner !== this.catalog.sessionUser) {
      throw new AppError(
        'FORBIDDEN',
        `EXECUTE_AGENT runs as the connected database user ${this.catalog.sessionUser}, which cannot execute ${owner}'s agents: connect as ${owner} (ORACLE_USER)`,
      );
    }
  }

  private async call(
    agent: Agent,
    call: ExecuteAgentCall,
    inputs: string,
    trace: boolean,
    signal: AbortSignal | undefined,
  ): Promise<AgentExecution> {
    const startedAt = new Date();
    const started = performance.now();
    const result = decodeExecuteAgent(
      await this.driver.runBlock(executeAgentBlock(call), executeAgentBinds(agent.name, inputs), {
        timeoutMs: this.options.executeAgentTimeoutMs,
        ...(signal ? { signal } : {}),
      }),
    );
    const durationMs = Math.round(performance.now() - started);
    return {
      agentName: agent.name,
      owner: agent.owner,
      output: jsonOrNull(result.output),
      startedAt,
      durationMs,
      trace: trace ? readTrace(result.traces) : null,
    };
  }
}

function readTrace(text: string | null): AgentExecutionTrace {
  const raw = jsonOrNull(text);
  const root = parseTrace(raw);
  return { raw, nodes: root ? indexTrace(root) : null, totals: root ? traceTotals(root) : null };
}

function contractError(agent: Agent, problems: readonly ContractProblem[]): AppError {
  const accepted = agent.inputs.map((p) => (p.type ? `${p.title} (${p.type})` : p.title));
  return new AppError(
    'BAD_USER_INPUT',
    `The inputs do not match the call contract of ${agent.name}: ${problems
      .map((p) => p.message)
      .join('; ')}. Accepted inputs: ${accepted.length > 0 ? accepted.join(', ') : 'none'}`,
    {
      extensions: {
        problems: problems.map(({ input, kind }) => ({ input, problem: kind })),
        acceptedInputs: agent.inputs.map((p) => p.title),
      },
    },
  );
}

function interruptedError(error: CallInterrupted): AppError {
  return new AppError(
    'TIMEOUT',
    error.reason === 'timeout'
      ? `The agent did not finish within ${error.timeoutMs} ms (EXECUTE_AGENT_TIMEOUT_MS); the call was cancelled on the database`
      : 'The execution was cancelled: the client went away or the operation ran out of time',
    { cause: error },
  );
}
