import {
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  GraphQLError,
  type GraphQLSchema,
  getOperationAST,
  getVariableValues,
  type OperationDefinitionNode,
  type Source,
  type SourceLocation,
} from 'graphql';
import { type CompiledQuery, compileQuery, isCompiledQuery } from 'graphql-jit';
import type { Plugin } from 'graphql-yoga';

type Compiled = CompiledQuery | ExecutionResult;

/** How an operation is executed: the one function every path calls. */
export type Execute = (args: ExecutionArgs) => ExecutionResult | Promise<ExecutionResult>;

/**
 * The one executor: queries, mutations and the executions of subscription events all run as
 * graphql-jit compiles their document, once per parsed document and operation (yoga's parse
 * cache hands every request of the same text the same document object; a subscription keeps
 * its document for its life). So a resolver, and whatever wraps resolvers, is written for
 * one executor, and cancellation reaches resolvers one way on every path: the operation's
 * stop in its context (`context.usage.stopped`, src/context.ts), which the timeout aborts
 * (hardening/request-timeout.ts) and under which no further statement is sent. graphql-jit
 * hands resolvers no `info.signal` and keeps calling resolvers once aborted; their statements
 * are refused, and a long call listens to the stop's signal (executeAgent).
 *
 * Why graphql-jit: a dashboard's 4,000 fields cost half the serving thread's CPU under
 * graphql-tools' executor, which allocates closures, promises and argument objects for every
 * field (docs/architecture.md, "One executor, compiled").
 *
 * Own code rather than @envelop/graphql-jit, whose executor hands on what graphql-jit makes
 * of bad variables (its own messages, a thrown scalar error as no GraphQL error at all) and
 * errors that carry locations but no source: masking (src/masking.ts) and yoga's writer copy
 * an error from its source and positions, and would drop them. Here variables are coerced by
 * graphql-js first, with the errors graphql-tools' executor gives, and each error of a result
 * is a graphql-js error located in the document.
 *
 * A compiled document lives as long as its document (yoga's parse cache is an LRU of 1,024
 * documents; a compiled dashboard adds ~15 KB to its 16 KB document), and compiling one costs
 * one to two times what validating it does (dashboard 2.4 ms against 1.1 ms): a document never
 * seen before costs parse, validation and compilation, within the same document limits
 * (hardening/document-limits.ts).
 */
export function compiledExecutor(): Execute {
  const cache = new WeakMap<
    DocumentNode,
    Map<string, { schema: GraphQLSchema; query: Compiled }>
  >();
  const compiled = (args: ExecutionArgs): Compiled => {
    let byOperation = cache.get(args.document);
    if (!byOperation) {
      byOperation = new Map();
      cache.set(args.document, byOperation);
    }
    const name = args.operationName ?? '';
    const known = byOperation.get(name);
    if (known?.schema === args.schema) return known.query;
    const query = compileQuery(args.schema, args.document, args.operationName ?? undefined, {
      // An error keeps its resolver's stack (originalError); the compiled code's is noise.
      disablingCapturingStackErrors: true,
    });
    byOperation.set(name, { schema: args.schema, query });
    return query;
  };
  return (args) => run(args, getOperationAST(args.document, args.operationName), compiled(args));
}

/**
 * Queries and mutations take the one executor in yoga (subscriptions take theirs in
 * src/subscription-events.ts, which executes each event with it). First in yoga's plugin
 * list: the execute wrappers of later plugins (request-timeout.ts, response-size.ts) wrap it.
 */
export function useCompiledExecution(execute: Execute): Plugin {
  return {
    onExecute({ args, setExecuteFn }) {
      const operation = getOperationAST(args.document, args.operationName);
      if (operation?.operation === 'subscription') return;
      setExecuteFn(execute);
    },
  };
}

function run(
  args: ExecutionArgs,
  operation: OperationDefinitionNode | null | undefined,
  query: Compiled,
): ExecutionResult | Promise<ExecutionResult> {
  const variables = args.variableValues ?? {};
  if (operation?.variableDefinitions?.length) {
    const coerced = getVariableValues(args.schema, operation.variableDefinitions, variables, {
      maxErrors: 50,
    });
    if (coerced.errors) return { errors: coerced.errors };
  }
  // A document the compiler rejects (an operation name it does not hold) answers its errors.
  if (!isCompiledQuery(query)) return query;
  const source = args.document.loc?.source;
  const result = query.query(args.rootValue, args.contextValue, variables);
  return result instanceof Promise
    ? result.then((done) => located(done, source))
    : located(result, source);
}

/** The result with its errors as graphql-js errors at their places in the document. */
function located(result: ExecutionResult, source: Source | undefined): ExecutionResult {
  if (!result.errors?.length || !source) return result;
  return {
    ...result,
    errors: result.errors.map((error) =>
      error.nodes || !error.locations
        ? error
        : new GraphQLError(error.message, {
            source,
            positions: error.locations.map((location) => positionOf(source.body, location)),
            path: error.path,
            originalError: error.originalError,
            extensions: error.extensions,
          }),
    ),
  };
}

/** The offset of a line and column in the text (graphql-js counts lines as getLocation does). */
function positionOf(body: string, { line, column }: SourceLocation): number {
  const newline = /\r\n|[\n\r]/g;
  let start = 0;
  for (let current = 1; current < line; current++) {
    const match = newline.exec(body);
    if (!match) break;
    start = match.index + match[0].length;
  }
  return start + column - 1;
}
