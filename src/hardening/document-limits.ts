import { maxAliasesPlugin } from '@escape.tech/graphql-armor-max-aliases';
import { maxDepthPlugin } from '@escape.tech/graphql-armor-max-depth';
import { maxDirectivesPlugin } from '@escape.tech/graphql-armor-max-directives';
import { maxTokensPlugin } from '@escape.tech/graphql-armor-max-tokens';
import { createComplexityRule } from '@pothos/plugin-complexity';
import { type ExecutionArgs, GraphQLError, validate } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { LimitsConfig } from '../config.js';

/** A request error: 400 for `application/graphql-response+json` clients, 200 for JSON ones. */
function limitError(message: string): GraphQLError {
  return new GraphQLError(message, {
    extensions: { code: 'BAD_USER_INPUT', http: { status: 400, spec: true } },
  });
}

/**
 * GraphQL Armor reports a violation as "Syntax Error: <limit message>" and then throws it;
 * throwing our own error first keeps the early exit (validation stops at the operation, before
 * the quadratic overlapping-fields rule) and gives clients a plain BAD_USER_INPUT.
 */
const rejectWithLimitError = [
  (_context: unknown, error: GraphQLError) => {
    throw limitError(error.message.replace(/^Syntax Error: /, ''));
  },
];

/**
 * Bounds on the shape and cost of a document: tokens while parsing, depth, aliases and
 * directives while validating, cost just before execution. A violation never reaches a
 * resolver or the database.
 */
export function documentLimits(limits: LimitsConfig): Plugin[] {
  return [
    maxTokensPlugin({ n: limits.maxTokens, onReject: rejectWithLimitError }),
    maxDepthPlugin({ n: limits.maxQueryDepth, onReject: rejectWithLimitError }),
    maxAliasesPlugin({ n: limits.maxAliases, onReject: rejectWithLimitError }),
    maxDirectivesPlugin({ n: limits.maxDirectives, onReject: rejectWithLimitError }),
    queryCostLimit(limits.maxQueryCost),
  ];
}

/**
 * The Pothos complexity estimate (a connection costs its selection times its page size, see
 * schema/pagination.ts) checked against MAX_QUERY_COST just before execution starts. Not a
 * validation rule: yoga caches validation results by document, and the cost depends on the
 * request's variables (`first: $n`).
 */
function queryCostLimit(maxCost: number): Plugin {
  const check = (args: ExecutionArgs): GraphQLError | undefined => {
    let error: GraphQLError | undefined;
    const rule = createComplexityRule({
      context: args.contextValue ?? {},
      variableValues: args.variableValues ?? {},
      operationName: args.operationName,
      validate: ({ complexity }) => {
        if (complexity > maxCost) {
          error = limitError(
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
  return {
    onExecute({ args, setResultAndStopExecution }) {
      const error = check(args);
      if (error) setResultAndStopExecution({ errors: [error] });
    },
    onSubscribe({ args, setResultAndStopExecution }) {
      const error = check(args);
      if (error) setResultAndStopExecution({ errors: [error] });
    },
  };
}
