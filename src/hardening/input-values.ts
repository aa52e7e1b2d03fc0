import { type DocumentNode, GraphQLError, Kind, visit } from 'graphql';
import type { Plugin } from 'graphql-yoga';

const MESSAGE = 'Strings may not contain NUL (U+0000)';

/**
 * NUL cannot be stored or compared by either database (PostgreSQL refuses it in text, Oracle
 * cuts strings at it in places), so a string carrying one is refused before execution, in
 * the document's literals and in the variables, whatever the field. The per-type checks
 * (DateTime range, ID shape) live with their scalars; this one is for every string.
 */
export function rejectNulInStrings(): Plugin {
  const check = (document: DocumentNode, variables: unknown): GraphQLError | undefined =>
    hasNulLiteral(document) || hasNul(variables, 0)
      ? new GraphQLError(MESSAGE, { extensions: { code: 'BAD_USER_INPUT' } })
      : undefined;
  return {
    onExecute: ({ args, setResultAndStopExecution }) => {
      const error = check(args.document, args.variableValues);
      if (error) setResultAndStopExecution({ errors: [error] });
    },
    onSubscribe: ({ args, setResultAndStopExecution }) => {
      const error = check(args.document, args.variableValues);
      if (error) setResultAndStopExecution({ errors: [error] });
    },
  };
}

/** Yoga's parser cache hands out the same DocumentNode for a repeated text: visit it once. */
const literalVerdicts = new WeakMap<DocumentNode, boolean>();

function hasNulLiteral(document: DocumentNode): boolean {
  const known = literalVerdicts.get(document);
  if (known !== undefined) return known;
  let found = false;
  visit(document, {
    [Kind.STRING]: (node) => {
      if (node.value.includes('\u0000')) found = true;
    },
  });
  literalVerdicts.set(document, found);
  return found;
}

function hasNul(value: unknown, depth: number): boolean {
  if (typeof value === 'string') return value.includes('\u0000');
  if (value === null || typeof value !== 'object' || depth > 32) return false;
  const children = Array.isArray(value) ? value : Object.values(value);
  return children.some((child) => hasNul(child, depth + 1));
}
