import type { Binds, Block, Row } from '../driver.js';
import { num, str, strOrNull } from '../rows.js';
import {
  argumentsDecoder,
  discoveredOverload,
  type ListedArgument,
  type Overload,
  sql,
} from './fragment.js';
import { blockStatement, query, statement } from './query.js';

/**
 * DBMS_AI_AGENT.EXECUTE_AGENT is in neither seed; the reference gives its shape as
 * unconfirmed (a function of the agent name and the inputs CLOB returning a CLOB, with an
 * overload that also returns TRACES). So nothing here hard-wires it: start-up reads the
 * package's overloads from ALL_ARGUMENTS, and the call is written from the argument names
 * found, in named notation, with every value a bind. What is confirmed and what is
 * discovered is listed in docs/oracle.md ("Executing a stored agent").
 */

/** One top-level argument of one overload, as ALL_ARGUMENTS lists it. */
export interface ProcedureArgument {
  /** Null when the subprogram is not overloaded. */
  readonly overload: string | null;
  /** 0 for a function's return value. */
  readonly position: number;
  /** Null for a function's return value. */
  readonly argumentName: string | null;
  readonly dataType: string;
  /** IN, OUT or IN/OUT. */
  readonly inOut: string;
  readonly defaulted: boolean;
}

/** A ProcedureArgument that executeAgentArguments decoded: what a call is made from. */
export type ListedProcedureArgument = ProcedureArgument & ListedArgument;

/**
 * ALL_ARGUMENTS of the package the call's unqualified `DBMS_AI_AGENT` reaches, resolved as
 * PL/SQL resolves it: a package of that name in the current schema first (the contract
 * suite's fixture makes one), then a private synonym there, then the PUBLIC synonym, else
 * SYS. Reading only the PUBLIC synonym's target would list SYS's overloads while the call
 * runs the schema's own package.
 */
const packageName = sql.bind('package_name', 'DBMS_AI_AGENT');
const currentSchema = sql`SYS_CONTEXT('USERENV', 'CURRENT_SCHEMA')`;

export const executeAgentArguments = query(
  'executeAgent.arguments',
  sql`SELECT a.OVERLOAD, a.POSITION, a.ARGUMENT_NAME, a.DATA_TYPE, a.IN_OUT, a.DEFAULTED
    FROM ALL_ARGUMENTS a
    WHERE a.PACKAGE_NAME = ${packageName}
      AND a.OBJECT_NAME = ${sql.bind('object_name', 'EXECUTE_AGENT')}
      AND a.DATA_LEVEL = 0
      AND a.OWNER = COALESCE(
        (SELECT MAX(o.OWNER) FROM ALL_OBJECTS o WHERE o.OWNER = ${currentSchema}
          AND o.OBJECT_NAME = ${packageName} AND o.OBJECT_TYPE = 'PACKAGE'),
        (SELECT MAX(s.TABLE_OWNER) FROM ALL_SYNONYMS s WHERE s.OWNER = ${currentSchema}
          AND s.SYNONYM_NAME = ${packageName}),
        (SELECT MAX(s.TABLE_OWNER) FROM ALL_SYNONYMS s WHERE s.OWNER = 'PUBLIC'
          AND s.SYNONYM_NAME = ${packageName}),
        'SYS')
    ORDER BY a.OVERLOAD, a.POSITION`,
  argumentsDecoder(
    (row: Row): ProcedureArgument => ({
      overload: strOrNull(row.overload),
      position: num(row.position),
      argumentName: strOrNull(row.argumentName),
      dataType: str(row.dataType),
      inOut: str(row.inOut),
      defaulted: row.defaulted === 'Y',
    }),
  ),
);

/** A usable overload: the names to call it with. */
export interface ExecuteAgentCall {
  readonly overload: string | null;
  /** The overload's argument names as ALL_ARGUMENTS listed them: what the call's text may name. */
  readonly listed: Overload;
  readonly agentNameArgument: string;
  readonly inputsArgument: string;
  /** The inputs argument's type, which the bind takes (VARCHAR2, CLOB, NCLOB or JSON). */
  readonly inputsType: string;
  /** The OUT argument holding the output; null when the overload is a function. */
  readonly outputArgument: string | null;
  /** The OUT argument holding the trace; null for an overload without one. */
  readonly tracesArgument: string | null;
}

/** What start-up found: a call for executions with and without a trace, or why not. */
export interface ExecuteAgentProcedure {
  readonly plain: ExecuteAgentCall | null;
  readonly traced: ExecuteAgentCall | null;
  /** Each overload found, as `(AGENT_NAME IN VARCHAR2, INPUTS IN CLOB) RETURN CLOB`. */
  readonly signatures: readonly string[];
  /** What is missing, for FORBIDDEN and oracle:check, when `plain` is null. */
  readonly missing: string | null;
}

const TEXT = new Set(['CLOB', 'NCLOB', 'VARCHAR2', 'NVARCHAR2', 'LONG']);
/** The inputs may also be of the JSON type (26ai), bound as a JSON value. */
const INPUT_TEXT = new Set([...TEXT, 'JSON']);
const NAME_TEXT = new Set(['VARCHAR2', 'NVARCHAR2', 'CHAR']);

const isIn = (a: ProcedureArgument) => a.inOut === 'IN';
const isOut = (a: ProcedureArgument) => a.inOut === 'OUT' || a.inOut === 'IN/OUT';

export function signature(args: readonly ProcedureArgument[]): string {
  const returns = args.find((a) => a.position === 0 && a.argumentName === null);
  const list = args
    .filter((a) => a !== returns)
    .map((a) => `${a.argumentName ?? '?'} ${a.inOut} ${a.dataType}${a.defaulted ? ' DEFAULT' : ''}`)
    .join(', ');
  return `(${list})${returns ? ` RETURN ${returns.dataType}` : ''}`;
}

/**
 * The roles read from the names and types: the agent name is an IN string argument whose
 * name says NAME, the inputs an IN CLOB/VARCHAR2 one saying INPUT, the trace an OUT one saying
 * TRACE, the output the function's return value or an OUT one saying OUTPUT/RESULT/RESPONSE.
 * Any other argument must be an IN argument with a default, or the overload is not usable.
 */
function callOf(args: readonly ListedProcedureArgument[]): ExecuteAgentCall | string {
  let listed: Overload;
  try {
    // Dictionary names go into the call's text: only plain upper-case identifiers do.
    listed = discoveredOverload('DBMS_AI_AGENT.EXECUTE_AGENT', args);
  } catch (error) {
    return (error as Error).message;
  }
  const named = args.filter((a) => a.argumentName !== null);
  const pick = (test: (a: ProcedureArgument) => boolean) => named.find(test);
  const word = (a: ProcedureArgument, pattern: RegExp) => pattern.test(a.argumentName as string);
  const agentName = pick((a) => isIn(a) && NAME_TEXT.has(a.dataType) && word(a, /NAME/));
  const inputs = pick((a) => isIn(a) && INPUT_TEXT.has(a.dataType) && word(a, /INPUT/));
  const traces = pick((a) => isOut(a) && TEXT.has(a.dataType) && word(a, /TRACE/));
  const returns = args.find((a) => a.position === 0 && a.argumentName === null);
  const outArgument = pick(
    (a) => isOut(a) && TEXT.has(a.dataType) && word(a, /OUTPUT|RESULT|RESPONSE|ANSWER/),
  );
  if (!agentName) return 'no IN VARCHAR2 argument for the agent name (…NAME…)';
  if (!inputs) return 'no IN CLOB or JSON argument for the inputs (…INPUT…)';
  if (returns && !TEXT.has(returns.dataType)) return `it returns ${returns.dataType}, not a CLOB`;
  if (!returns && !outArgument) return 'no CLOB return value or OUT argument for the output';
  const used = new Set([agentName, inputs, traces, outArgument]);
  const other = named.find((a) => !used.has(a) && !(isIn(a) && a.defaulted));
  if (other) return `argument ${other.argumentName} (${other.inOut}) has no default`;
  return {
    overload: args[0]?.overload ?? null,
    listed,
    agentNameArgument: agentName.argumentName as string,
    inputsArgument: inputs.argumentName as string,
    inputsType: inputs.dataType,
    outputArgument: returns ? null : (outArgument?.argumentName as string),
    tracesArgument: traces ? (traces.argumentName as string) : null,
  };
}

/** Groups the rows by overload and keeps the first usable call with and without a trace. */
export function resolveExecuteAgent(
  rows: readonly ListedProcedureArgument[],
): ExecuteAgentProcedure {
  const overloads = new Map<string | null, ListedProcedureArgument[]>();
  for (const row of rows)
    overloads.set(row.overload, [...(overloads.get(row.overload) ?? []), row]);
  const signatures: string[] = [];
  const reasons: string[] = [];
  const calls: ExecuteAgentCall[] = [];
  for (const args of overloads.values()) {
    signatures.push(signature(args));
    const call = callOf(args);
    if (typeof call === 'string') reasons.push(`${signature(args)}: ${call}`);
    else calls.push(call);
  }
  const plain = calls.find((c) => c.tracesArgument === null) ?? calls[0] ?? null;
  const traced = calls.find((c) => c.tracesArgument !== null) ?? null;
  const missing =
    plain !== null
      ? null
      : overloads.size === 0
        ? 'DBMS_AI_AGENT.EXECUTE_AGENT is not in ALL_ARGUMENTS: the package is missing (before Oracle AI Database 26ai) or the agent-graph database user lacks EXECUTE ON DBMS_AI_AGENT'
        : `no overload of DBMS_AI_AGENT.EXECUTE_AGENT can be called with an agent name and the inputs JSON: ${reasons.join('; ')}`;
  return { plain, traced, signatures, missing };
}

/** What one call returns: the output CLOB, and the trace CLOB when one was asked for. */
export interface ExecuteAgentResult {
  readonly output: string | null;
  readonly traces: string | null;
}

/** The inputs' formal types that the bind must carry (a string binds as VARCHAR2). */
const BOUND_AS: Readonly<Record<string, 'CLOB' | 'NCLOB' | 'JSON'>> = {
  CLOB: 'CLOB',
  NCLOB: 'NCLOB',
  JSON: 'JSON',
};

/**
 * The call for one discovered overload. Oracle's text names the arguments as the dictionary
 * spells them and binds every value; the embedded database runs its emulation
 * (src/db/embedded/execute-agent.ts), which takes the same binds.
 */
export function executeAgentBlock(call: ExecuteAgentCall): Block {
  const named = (argument: string, bind: string) =>
    sql`${sql.argument(call.listed, argument)} => ${sql.placeholder(bind)}`;
  const args = sql.join(
    [
      named(call.agentNameArgument, 'agent_name'),
      named(call.inputsArgument, 'agent_inputs'),
      ...(call.outputArgument ? [named(call.outputArgument, 'agent_output')] : []),
      ...(call.tracesArgument ? [named(call.tracesArgument, 'agent_traces')] : []),
    ],
    ', ',
  );
  const invoke = sql`DBMS_AI_AGENT.EXECUTE_AGENT(${args})`;
  const boundAs = BOUND_AS[call.inputsType];
  const traced = call.tracesArgument !== null;
  return {
    name: 'agents.execute',
    oracle: blockStatement(
      'agents.execute',
      call.outputArgument
        ? sql`BEGIN ${invoke}; END;`
        : sql`BEGIN ${sql.placeholder('agent_output')} := ${invoke}; END;`,
    ),
    embedded: statement(
      'agents.execute',
      sql`SELECT agent_output, ${traced ? sql`agent_traces` : sql`NULL AS agent_traces`}
        FROM emb_execute_agent(${sql.placeholder('agent_name')}, ${sql.placeholder('agent_inputs')}, ${traced ? sql`TRUE` : sql`FALSE`})`,
    ),
    outputs: traced ? ['agent_output', 'agent_traces'] : ['agent_output'],
    lobOutputs: true,
    // Bound as the discovered overload's type: overloads that differ only in it (INPUTS CLOB
    // and INPUTS JSON) are otherwise ambiguous in named notation (PLS-00307).
    ...(boundAs ? { inputTypes: { agent_inputs: boundAs } } : {}),
    // What the agent's tools wrote (an order inserted by a SQL tool) is kept when the
    // execution succeeds: the mutation reports it done. node-oracledb would otherwise roll it
    // back when the connection is released; a failed, timed-out or broken call still is.
    commits: true,
    privileges: 'EXECUTE ON DBMS_AI_AGENT',
  };
}

export const executeAgentBinds = (agentName: string, inputs: string): Binds => ({
  agent_name: agentName,
  agent_inputs: inputs,
});

export const decodeExecuteAgent = (row: Row): ExecuteAgentResult => ({
  output: strOrNull(row.agentOutput),
  traces: strOrNull(row.agentTraces),
});
