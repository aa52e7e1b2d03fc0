import type { AgentParameter } from './agent.js';
import { nearestName } from './names.js';

/**
 * The call contract of a stored Agent Spec (seed 000): EXECUTE_AGENT takes a JSON array of
 * `{name, value}` pairs whose names match `inputs[].title` exactly. Checked here, before the
 * database is called, so that a caller learns of a mismatch from one BAD_USER_INPUT naming
 * every offending input instead of from an ORA- error after the agent has started.
 */

export interface AgentInput {
  readonly name: string;
  readonly value: unknown;
}

/**
 * Bounds on the arguments: the count and the name's size are declared on the schema's
 * arguments (schema/agent-execution.ts, enforced before execution); the JSON's size here.
 */
export const MAX_AGENT_INPUTS = 100;
export const MAX_INPUT_NAME_BYTES = 512;
/**
 * The inputs array as JSON text. Bound as a PL/SQL string, whose implicit conversion into
 * the CLOB argument holds 32,767 bytes; a margin stays for the surrounding JSON.
 */
export const MAX_INPUTS_BYTES = 32_000;

export type ContractProblemKind = 'missing' | 'unknown' | 'misspelled' | 'duplicate' | 'type';

export interface ContractProblem {
  /** The input's name (the title, for a missing one). */
  readonly input: string;
  readonly kind: ContractProblemKind;
  readonly message: string;
}

/** The inputs array EXECUTE_AGENT receives: `[{"name": …, "value": …}, …]`, in the caller's order. */
export const inputsJson = (inputs: readonly AgentInput[]): string =>
  JSON.stringify(inputs.map(({ name, value }) => ({ name, value })));

/** Whether the inputs, as the JSON EXECUTE_AGENT receives, are too large: checked first. */
export function sizeProblem(inputs: readonly AgentInput[]): string | null {
  const bytes = Buffer.byteLength(inputsJson(inputs));
  if (bytes > MAX_INPUTS_BYTES) {
    return `Argument "inputs" is ${bytes} bytes as JSON; at most ${MAX_INPUTS_BYTES} are accepted (EXECUTE_AGENT's inputs are bound as one PL/SQL string)`;
  }
  return null;
}

/** What a JSON Schema type word admits; null for a type this check does not know. */
function typeAdmits(type: string, value: unknown): boolean | null {
  switch (type.toLowerCase()) {
    case 'string':
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'array':
      return Array.isArray(value);
    case 'object':
      return typeof value === 'object' && value !== null && !Array.isArray(value);
    case 'null':
      return value === null;
    default:
      return null;
  }
}

const describe = (value: unknown) =>
  value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`;

/**
 * Every way the inputs break the contract: each required title present, every name one of
 * the titles (exact, case included), none given twice, each value of its declared type.
 */
export function contractProblems(
  declared: readonly AgentParameter[],
  inputs: readonly AgentInput[],
): ContractProblem[] {
  const titles = declared.map((p) => p.title);
  const problems: ContractProblem[] = [];
  const seen = new Set<string>();
  for (const input of inputs) {
    if (seen.has(input.name)) {
      problems.push({
        input: input.name,
        kind: 'duplicate',
        message: `"${input.name}" is given more than once`,
      });
      continue;
    }
    seen.add(input.name);
    const parameter = declared.find((p) => p.title === input.name);
    if (!parameter) {
      const near = nearestName(input.name, titles);
      problems.push(
        near
          ? {
              input: input.name,
              kind: 'misspelled',
              message: `"${input.name}" is not an input; did you mean "${near}"? (names match exactly, case included)`,
            }
          : { input: input.name, kind: 'unknown', message: `"${input.name}" is not an input` },
      );
      continue;
    }
    if (parameter.type !== null && typeAdmits(parameter.type, input.value) === false) {
      problems.push({
        input: input.name,
        kind: 'type',
        message: `"${input.name}" must be of type ${parameter.type}, got ${describe(input.value)}`,
      });
    }
  }
  for (const parameter of declared) {
    if (parameter.required && !seen.has(parameter.title)) {
      problems.push({
        input: parameter.title,
        kind: 'missing',
        message: `"${parameter.title}" is required and missing`,
      });
    }
  }
  return problems;
}
