import { ORACLE_NAME_MAX_BYTES } from '../model/names.js';

/**
 * What a string argument may hold, declared on the argument or input field itself and
 * enforced before execution, on every transport, by hardening/argument-bounds.ts: so no
 * resolver, loader or suggestion ever sees a value longer than its declaration allows.
 * A new argument joins by spreading one of the helpers below into its options.
 */
export interface ArgumentBound {
  /** What the value is, for the error message ("an Oracle name"). */
  readonly kind: string;
  readonly minBytes: number;
  readonly maxBytes: number;
  /** Characters the value may not contain, as a pattern, and as the message names them. */
  readonly refused?: { readonly pattern: RegExp; readonly description: string };
}

/** Where the bound sits in an argument's or input field's GraphQL extensions. */
export const BOUND_EXTENSION = 'agentGraphBound';
export const MAX_ITEMS_EXTENSION = 'agentGraphMaxItems';
/**
 * On federation's `_entities(representations:)`, whose items are `_Any`: per entity type, the
 * bound of each of its key fields (schema/federation.ts). A representation is then an object
 * whose `__typename` is one of those types, with each key field a string within its bound.
 */
export const REPRESENTATIONS_EXTENSION = 'agentGraphRepresentations';

/** An entity type's key fields and the bound of each. */
export type EntityKeys = Readonly<Record<string, ArgumentBound>>;

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f]/;

/**
 * An Oracle identifier (owner, team, agent, tool): a quoted identifier may hold any
 * character but the double quote (and NUL), within 128 bytes; control characters are
 * refused as well, as no name we serve can hold one usefully.
 */
export const ORACLE_NAME: ArgumentBound = {
  kind: 'an Oracle name',
  minBytes: 1,
  maxBytes: ORACLE_NAME_MAX_BYTES,
  refused: {
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds
    pattern: /["\u0000-\u001f\u007f]/,
    description: 'double quotes or control characters',
  },
};

/**
 * A cursor this server made: base64url of the order's name and up to three values of at most
 * 512 characters each (schema/pagination.ts).
 */
export const CURSOR: ArgumentBound = {
  kind: 'a cursor',
  minBytes: 1,
  maxBytes: 4_096,
  refused: { pattern: /[^A-Za-z0-9_=-]/, description: 'characters outside base64url' },
};

/** Part of an Oracle name (a substring filter): empty allowed, no longer than a name. */
export const ORACLE_NAME_PART: ArgumentBound = {
  ...ORACLE_NAME,
  kind: 'part of an Oracle name',
  minBytes: 0,
};

/**
 * A key the database generated (TEAM_EXEC_ID, a conversation id, a global id): GUIDs and
 * their encodings, far below this.
 */
export const KEY: ArgumentBound = {
  kind: 'an identifier',
  minBytes: 1,
  maxBytes: 256,
  refused: { pattern: CONTROL_CHARACTERS, description: 'control characters' },
};

/** A client's idempotency key (runTeam's argument or Idempotency-Key header): a UUID or the like. */
export const IDEMPOTENCY_KEY: ArgumentBound = {
  kind: 'an idempotency key',
  minBytes: 1,
  maxBytes: 255,
  refused: { pattern: CONTROL_CHARACTERS, description: 'control characters' },
};

/** In words, for descriptions: "at most 128 bytes of UTF-8". */
export const describeBound = (bound: ArgumentBound): string =>
  `${bound.minBytes > 0 ? `${bound.minBytes} to ` : 'At most '}${bound.maxBytes} bytes of UTF-8${
    bound.refused ? `, without ${bound.refused.description}` : ''
  }`;

/**
 * The options that declare a bound on an argument or input field, with the description the
 * schema shows: `t.arg.string({ required: true, ...bounded(ORACLE_NAME, 'The team.') })`.
 * A list argument may bound its length as well (`{ maxItems }`), or only that (bound null).
 */
export function bounded(
  bound: ArgumentBound | null,
  description: string,
  list?: { readonly maxItems: number },
): { description: string; extensions: Record<string, unknown> } {
  const limits = [
    list ? `At most ${list.maxItems} items` : '',
    bound
      ? list
        ? `each ${describeBound(bound).replace(/^At/, 'at')}`
        : describeBound(bound)
      : '',
  ].filter((part) => part !== '');
  return {
    description: `${description} ${limits.join(', ')}; BAD_USER_INPUT otherwise.`,
    extensions: {
      ...(bound ? { [BOUND_EXTENSION]: bound } : {}),
      ...(list ? { [MAX_ITEMS_EXTENSION]: list.maxItems } : {}),
    },
  };
}

type Extensions = { readonly extensions: Readonly<Record<string, unknown>> | null | undefined };

/** The bound declared on an argument or input field, if any. */
export const boundOf = (definition: Extensions): ArgumentBound | undefined =>
  definition.extensions?.[BOUND_EXTENSION] as ArgumentBound | undefined;

/** The length a list argument or input field declares, if any. */
export const maxItemsOf = (definition: Extensions): number | undefined =>
  definition.extensions?.[MAX_ITEMS_EXTENSION] as number | undefined;

/** The key bounds of the entity types a representations argument takes, if any. */
export const representationsOf = (
  definition: Extensions,
): Readonly<Record<string, EntityKeys>> | undefined =>
  definition.extensions?.[REPRESENTATIONS_EXTENSION] as
    | Readonly<Record<string, EntityKeys>>
    | undefined;

/**
 * Why `value` is not a representation of one of `entities` (object, known `__typename`, key
 * fields within their bounds), as the message for `path`, or null. Never echoes the value.
 */
export function representationProblem(
  value: unknown,
  entities: Readonly<Record<string, EntityKeys>>,
  path: string,
): string | null {
  const types = Object.keys(entities).join(', ');
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return `Argument "${path}" must be an entity representation: an object with __typename (${types}) and its key fields`;
  }
  const record = value as Record<string, unknown>;
  const typename = record.__typename;
  const keys =
    typeof typename === 'string' && Object.hasOwn(entities, typename)
      ? entities[typename]
      : undefined;
  if (!keys) return `Argument "${path}.__typename" must be one of ${types}`;
  for (const [field, bound] of Object.entries(keys)) {
    const key = record[field];
    if (typeof key !== 'string') {
      return `Argument "${path}.${field}" must be a string: ${typename} is keyed by ${Object.keys(keys).join(' and ')}`;
    }
    const problem = boundProblem(bound, key);
    if (problem) return `Argument "${path}.${field}" ${problem}`;
  }
  return null;
}

/** Why `value` does not fit `bound`, or null. Never echoes the value. */
export function boundProblem(bound: ArgumentBound, value: string): string | null {
  // Every UTF-16 unit is at least one byte of UTF-8: a long string is refused uncounted.
  const bytes =
    value.length > 4 * bound.maxBytes ? Number.POSITIVE_INFINITY : Buffer.byteLength(value);
  // Blanks alone name nothing, however many bytes they take.
  const blank = bound.minBytes > 0 && bytes <= bound.maxBytes && value.trim() === '';
  if (bytes > bound.maxBytes || bytes < bound.minBytes || blank) {
    const got =
      value.trim() === ''
        ? 'it is blank'
        : Number.isFinite(bytes)
          ? `got ${bytes} bytes`
          : `got ${value.length} characters`;
    return `must be ${bound.kind}: ${describeBound(bound).replace(/^At/, 'at')} (${got})`;
  }
  const refused = bound.refused?.pattern.exec(value);
  if (refused) {
    const code = (refused[0].codePointAt(0) as number).toString(16).toUpperCase().padStart(4, '0');
    return `must be ${bound.kind}, without ${bound.refused?.description} (it holds U+${code})`;
  }
  return null;
}
