import { type DocumentNode, type ExecutionArgs, GraphQLError, Kind, visit } from 'graphql';

/**
 * How deep lists and objects may nest in a request's variables. The deepest input type of the
 * schema nests four levels; JSON arguments (executeAgent's input) a few more. A deeper value
 * is refused before anything walks it recursively (the cost verdict's and the response
 * cache's keys, variable coercion): 5,000 levels in 10 kB of body overflowed their stacks.
 */
export const MAX_INPUT_DEPTH = 32;

/**
 * Characters no string argument may hold, whatever the field. NUL cannot be stored or compared
 * by either database (PostgreSQL refuses it in text, Oracle cuts strings at it in places); a
 * lone UTF-16 surrogate (JSON allows `"\ud800"`) is no character at all, and no driver can
 * encode it. The per-type checks (DateTime range, ID shape, name bounds) live with their
 * scalars and declarations (schema/bounds.ts); this one is for every string.
 */
const REFUSED: readonly { readonly pattern: RegExp; readonly message: string }[] = [
  // biome-ignore lint/suspicious/noControlCharactersInRegex: NUL is what it finds
  { pattern: /\u0000/, message: 'Strings may not contain NUL (U+0000)' },
  {
    pattern: /\p{Cs}/u,
    message: 'Strings may not contain a lone UTF-16 surrogate (U+D800 to U+DFFF)',
  },
];

const stringProblem = (value: string): string | undefined =>
  REFUSED.find(({ pattern }) => pattern.test(value))?.message;

const badInput = (message: string) =>
  new GraphQLError(message, { extensions: { code: 'BAD_USER_INPUT' } });

/**
 * The one check of the values a request carries, before any other work on them, in the
 * document's literals and in the variables, on every transport: variables nested at most
 * MAX_INPUT_DEPTH levels, and strings (object keys included) without the characters above.
 * First among the execute hooks that read variables (hardening/index.ts).
 */
export function inputValuesProblem(args: ExecutionArgs): GraphQLError | undefined {
  const problem = literalProblem(args.document) ?? variablesProblem(args.variableValues);
  return problem ? badInput(problem) : undefined;
}

/** Yoga's parser cache hands out the same DocumentNode for a repeated text: visit it once. */
const literalVerdicts = new WeakMap<DocumentNode, string | null>();

function literalProblem(document: DocumentNode): string | undefined {
  const known = literalVerdicts.get(document);
  if (known !== undefined) return known ?? undefined;
  let found: string | null = null;
  visit(document, {
    [Kind.STRING]: (node) => {
      found ??= stringProblem(node.value) ?? null;
    },
  });
  literalVerdicts.set(document, found);
  return found ?? undefined;
}

/** Walked with a stack of its own, so that no nesting overflows the call stack. */
function variablesProblem(variables: unknown): string | undefined {
  const pending: [unknown, number][] = [[variables, 0]];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const [value, depth] = next;
    if (typeof value === 'string') {
      const problem = stringProblem(value);
      if (problem) return problem;
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    // The variables object itself is level 0.
    if (depth > MAX_INPUT_DEPTH) {
      return `Variables may nest lists and objects at most ${MAX_INPUT_DEPTH} levels deep`;
    }
    if (Array.isArray(value)) {
      for (const item of value) pending.push([item, depth + 1]);
      continue;
    }
    for (const [key, item] of Object.entries(value)) {
      const problem = stringProblem(key);
      if (problem) return problem;
      pending.push([item, depth + 1]);
    }
  }
  return undefined;
}
