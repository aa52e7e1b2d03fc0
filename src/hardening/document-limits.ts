import { maxAliasesRule } from '@escape.tech/graphql-armor-max-aliases';
import { maxDepthRule } from '@escape.tech/graphql-armor-max-depth';
import { maxDirectivesRule } from '@escape.tech/graphql-armor-max-directives';
import { maxTokensPlugin } from '@escape.tech/graphql-armor-max-tokens';
import { createComplexityRule } from '@pothos/plugin-complexity';
import {
  type DocumentNode,
  type ExecutionArgs,
  type GraphQLError,
  type ValidationRule,
  validate,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { LimitsConfig } from '../config.js';
import { limitExceeded } from './limit-error.js';

/**
 * GraphQL Armor reports a violation as "Syntax Error: <limit message>" and then throws it;
 * throwing our own error first keeps the early exit (validation stops at the operation, before
 * the quadratic overlapping-fields rule) and gives clients a plain BAD_USER_INPUT.
 */
const rejectWithLimitError = [
  (_context: unknown, error: GraphQLError) => {
    throw limitExceeded(error.message.replace(/^Syntax Error: /, ''));
  },
];

/** Bounds on the shape and cost of a document, as hardening/index.ts runs them. */
export interface DocumentLimits {
  /** Yoga's parse hook: tokens, counted while parsing. */
  readonly onParse: NonNullable<Plugin['onParse']>;
  /** Depth, aliases and directives, while validating. */
  readonly rules: readonly ValidationRule[];
  /** The cost, just before execution. */
  readonly cost: (args: ExecutionArgs) => GraphQLError | undefined;
}

/**
 * Bounds on the shape and cost of a document: tokens while parsing, depth, aliases and
 * directives while validating, cost just before execution. A violation never reaches a
 * resolver or the database.
 */
export function documentLimits(limits: LimitsConfig): DocumentLimits {
  const tokens = maxTokensPlugin({ n: limits.maxTokens, onReject: rejectWithLimitError });
  return {
    onParse: tokens.onParse as NonNullable<Plugin['onParse']>,
    rules: [
      maxDepthRule({ n: limits.maxQueryDepth, onReject: rejectWithLimitError }),
      maxAliasesRule({ n: limits.maxAliases, onReject: rejectWithLimitError }),
      maxDirectivesRule({ n: limits.maxDirectives, onReject: rejectWithLimitError }),
    ],
    cost: queryCostLimit(limits.maxQueryCost),
  };
}

/**
 * The Pothos complexity estimate (a connection costs its selection times its page size, see
 * schema/pagination.ts) checked against MAX_QUERY_COST just before execution starts. Not a
 * validation rule: yoga caches validation results by document, and the cost depends on the
 * request's variables (`first: $n`).
 */
/** Costs computed per document (yoga's parse cache hands back the same DocumentNode). */
const MAX_COSTS_PER_DOCUMENT = 64;

function queryCostLimit(maxCost: number): (args: ExecutionArgs) => GraphQLError | undefined {
  // The cost rule re-walks the whole document with a TypeInfo on every request (about 60 µs
  // of a `{ __typename }` request's 670 µs here). Every complexity in this schema is a
  // function of field arguments only, so the verdict depends on the document, the operation
  // and the variables alone and is reused for them; a document with ever-new variables keeps
  // at most MAX_COSTS_PER_DOCUMENT verdicts.
  const verdicts = new WeakMap<DocumentNode, Map<string, GraphQLError | null>>();
  const cachedCheck = (args: ExecutionArgs): GraphQLError | undefined => {
    let ofDocument = verdicts.get(args.document);
    if (!ofDocument) {
      ofDocument = new Map();
      verdicts.set(args.document, ofDocument);
    }
    const key = `${args.operationName ?? ''}\u0000${JSON.stringify(args.variableValues ?? {})}`;
    const known = ofDocument.get(key);
    if (known !== undefined) return known ?? undefined;
    const error = check(args);
    if (ofDocument.size >= MAX_COSTS_PER_DOCUMENT) ofDocument.clear();
    ofDocument.set(key, error ?? null);
    return error;
  };
  const check = (args: ExecutionArgs): GraphQLError | undefined => {
    let error: GraphQLError | undefined;
    const rule = createComplexityRule({
      context: args.contextValue ?? {},
      variableValues: args.variableValues ?? {},
      operationName: args.operationName,
      validate: ({ complexity }) => {
        if (complexity > maxCost) {
          error = limitExceeded(
            `Query cost ${complexity} exceeds the limit of ${maxCost}; ` +
              'a connection costs its selection times its page size (first/last), so ask for smaller pages',
          );
        }
      },
    });
    // Other errors the rule reports (bad variables, unknown operation) are left to the
    // executor, which rejects them in its own words before running anything.
    validate(args.schema, args.document, [rule]);
    return error;
  };
  return cachedCheck;
}
