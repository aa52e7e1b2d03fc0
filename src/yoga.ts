import { randomUUID } from 'node:crypto';
import { type ExecutionResult, GraphQLError, type GraphQLSchema } from 'graphql';
import { createYoga, type Plugin, type YogaServerInstance } from 'graphql-yoga';
import type { Logger } from 'pino';
import type { Context, Repositories } from './context.js';
import { AppError, type ErrorCode, isErrorCode } from './errors.js';
import type { LiveHub } from './live/hub.js';
import { mapAsyncIterable } from './live/iterables.js';
import { useContextPerEvent } from './live/per-event-context.js';
import { createLoaders } from './loaders.js';
import type { Metrics } from './metrics.js';

export const EXAMPLE_QUERY = `# agent-graph: Oracle AI Database agents, their statistics and team history.
# Press the run button (or Ctrl-Enter) to try it.

query Overview {
  agents(first: 5) {
    totalCount
    nodes { name owner createTime description inputs { title type } callContract { inputFormat requiredKeys } }
  }
  slowExecutions: execStats(first: 5, filter: { minTotalTimeMs: 2000 }, orderBy: { field: TOTAL_TIME, direction: DESC }) {
    nodes { conId totalTimeExecMs totalTimeLlmMs totalTimeToolMs llmTimePct toolTimePct llmCallCount toolCallCount inputTokens outputTokens }
  }
  execStatSummary { executionCount totalTimeP50Ms totalTimeP95Ms totalTimeP99Ms totalTimeMaxMs totals { inputTokens outputTokens } }
}
`;

const requestIds = new WeakMap<Request, string>();

/** The caller's X-Request-Id when it is sane, else a new one; stable for the request. */
export function requestIdOf(request: Request): string {
  let id = requestIds.get(request);
  if (!id) {
    const header = request.headers.get('x-request-id');
    id = header && /^[\w.-]{1,128}$/.test(header) ? header : randomUUID();
    requestIds.set(request, id);
  }
  return id;
}

function withCode(
  error: GraphQLError,
  code: ErrorCode,
  message = error.message,
  requestId?: string,
) {
  return new GraphQLError(message, {
    nodes: error.nodes,
    source: error.source,
    positions: error.positions,
    path: error.path,
    extensions: { ...error.extensions, code, ...(requestId ? { requestId } : {}) },
  });
}

export interface ErrorMapper {
  mapError(error: GraphQLError, requestId: string): GraphQLError;
  mapResult(result: ExecutionResult, requestId: string): ExecutionResult;
}

/**
 * The one place where errors become what clients see, over HTTP, SSE and WebSocket alike.
 * Typed AppErrors keep their code and message; GraphQL's own parse, validation and variable
 * errors are BAD_USER_INPUT; anything else (driver errors with ORA- text, SQL, stacks) is
 * logged here and sent as INTERNAL.
 */
export function createErrorMapper(logger: Logger, metrics: Metrics): ErrorMapper {
  const mapError = (error: GraphQLError, requestId: string): GraphQLError => {
    const original = error.originalError;
    let mapped: GraphQLError;
    if (original instanceof AppError) {
      mapped = withCode(error, original.code, original.message);
    } else if (original instanceof GraphQLError && isErrorCode(original.extensions.code)) {
      mapped = withCode(error, original.extensions.code, original.message);
    } else if (
      original &&
      !(original instanceof GraphQLError) &&
      original.name !== 'PothosValidationError'
    ) {
      logger.error({ err: original, requestId, path: error.path }, 'internal error');
      mapped = withCode(error, 'INTERNAL', 'Internal server error', requestId);
    } else {
      // GraphQL's own parse, validation and coercion errors (yoga labels them
      // GRAPHQL_PARSE_FAILED / GRAPHQL_VALIDATION_FAILED) are the caller's input.
      const code = error.extensions.code;
      mapped = withCode(error, isErrorCode(code) ? code : 'BAD_USER_INPUT');
    }
    metrics.errors.inc({ code: String(mapped.extensions.code) });
    return mapped;
  };
  const mapResult = (result: ExecutionResult, requestId: string): ExecutionResult =>
    result.errors?.length
      ? { ...result, errors: result.errors.map((e) => mapError(e, requestId)) }
      : result;
  return { mapError, mapResult };
}

/** Applies the error mapping to everything yoga sends over HTTP and SSE. */
export function errorMapping(mapper: ErrorMapper): Plugin {
  return {
    // The last stop before serialisation: parse and validation failures, execution results
    // and subscription events all pass here.
    onResultProcess({ result, setResult, request }) {
      const requestId = requestIdOf(request);
      if (Array.isArray(result)) {
        setResult(result.map((r) => mapper.mapResult(r, requestId)));
      } else if (Symbol.asyncIterator in result) {
        setResult(mapAsyncIterable(result, (value) => mapper.mapResult(value, requestId)));
      } else {
        setResult(mapper.mapResult(result, requestId));
      }
    },
  };
}

export interface YogaOptions {
  readonly schema: GraphQLSchema;
  readonly repositories: Repositories;
  readonly live: LiveHub;
  readonly errors: ErrorMapper;
}

export type AgentGraphYoga = YogaServerInstance<Record<string, unknown>, Context>;

export function createAgentGraphYoga(options: YogaOptions): AgentGraphYoga {
  return createYoga<Record<string, unknown>, Context>({
    schema: options.schema,
    graphqlEndpoint: '/graphql',
    landingPage: false,
    // Masking happens in errorMapping, which needs the original errors to keep their codes.
    maskedErrors: false,
    logging: false,
    graphiql: { title: 'agent-graph', defaultQuery: EXAMPLE_QUERY },
    context: ({ request }): Context => ({
      requestId: requestIdOf(request),
      repositories: options.repositories,
      loaders: createLoaders(options.repositories),
      live: options.live,
    }),
    plugins: [errorMapping(options.errors), useContextPerEvent()],
  });
}
