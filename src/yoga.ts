import {
  type ASTNode,
  type DocumentNode,
  type ExecutionResult,
  GraphQLError,
  type GraphQLSchema,
  Kind,
  visit,
} from 'graphql';
import { createYoga, type Plugin, type YogaServerInstance } from 'graphql-yoga';
import type { Logger } from 'pino';
import { authFailureRecorder } from './auth/failures.js';
import type { Authenticate } from './auth/jwt.js';
import { useAuthentication } from './auth/plugin.js';
import type { HttpConfig, LimitsConfig, RateLimitConfig } from './config.js';
import type { Context, Repositories } from './context.js';
import { AppError, type ErrorCode, isErrorCode } from './errors.js';
import { corsOptions, hardeningPlugins } from './hardening/index.js';
import type { LiveHub } from './live/hub.js';
import { mapAsyncIterable } from './live/iterables.js';
import { useContextPerEvent } from './live/per-event-context.js';
import { createLoaders } from './loaders.js';
import type { Metrics } from './metrics.js';
import type { Viewer } from './model/viewer.js';
import { requestIdOf } from './request-id.js';
import { useRequestLog } from './request-log.js';
import type { Tracing } from './tracing/index.js';

export const EXAMPLE_QUERY = `# agent-graph: Oracle AI Database agents, their statistics and team history.
# Press the run button (or Ctrl-Enter) to try it. For live updates, run this in a new tab:
#   subscription { teamsWaitingForHuman { execId teamName waitingSince } }

query Overview {
  agents(first: 5) {
    totalCount
    nodes { name owner createTime description inputs { title type } callContract { inputFormat requiredKeys } }
  }
  teams(first: 3) {
    nodes {
      name description tools { name toolType }
      stats { runCount successRate durationP50Ms humanWaitAvgMs }
      waitingForHuman { execId startDate }
      runs(first: 3) { nodes { execId state startDate durationMs tasks { taskOrder taskName state toolCalls { toolName } } } }
      agentCard { name skills { id name description } }
    }
  }
  slowExecutions: execStats(first: 5, filter: { minTotalTimeMs: 2000 }, orderBy: { field: TOTAL_TIME, direction: DESC }) {
    nodes { conId totalTimeExecMs totalTimeLlmMs totalTimeToolMs llmTimePct toolTimePct llmCallCount toolCallCount inputTokens outputTokens }
  }
  execStatSummary { executionCount totalTimeP50Ms totalTimeP95Ms totalTimeP99Ms totalTimeMaxMs totals { inputTokens outputTokens } }
}
`;

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

/** Each value node of the document that sits in an argument, with that argument's path. */
function argumentPaths(document: DocumentNode): Map<ASTNode, string> {
  const paths = new Map<ASTNode, string>();
  const stack: string[] = [];
  visit(document, {
    enter(node) {
      if (stack.length > 0) paths.set(node, stack.join('.'));
      if (node.kind === Kind.ARGUMENT || node.kind === Kind.OBJECT_FIELD)
        stack.push(node.name.value);
    },
    leave(node) {
      if (node.kind === Kind.ARGUMENT || node.kind === Kind.OBJECT_FIELD) stack.pop();
    },
  });
  return paths;
}

/**
 * GraphQL's validation names a bad literal by its type only ("Value \"GALAXY\" does not
 * exist in \"ExecStatScope\" enum."); the client needs to know which argument to fix.
 */
function argumentNamesInValidationErrors(): Plugin {
  return {
    onValidate({ params }) {
      return ({ result, setResult }) => {
        if (result.length === 0) return;
        const paths = argumentPaths(params.documentAST);
        setResult(
          result.map((error: Error) => {
            if (!(error instanceof GraphQLError)) return error;
            // Yoga caches validation results with this hook's changes, so a repeated
            // document comes back already named.
            if (error.message.startsWith('Argument "')) return error;
            const node = error.nodes?.[0];
            const path = node && paths.get(node);
            if (!path) return error;
            return new GraphQLError(`Argument "${path}": ${error.message}`, {
              nodes: error.nodes,
              source: error.source,
              positions: error.positions,
              extensions: error.extensions,
            });
          }),
        );
      };
    },
  };
}

export interface YogaOptions {
  readonly schema: GraphQLSchema;
  /** Repositories limited to what one viewer may see. */
  readonly repositoriesFor: (viewer: Viewer, usage: { statements: number }) => Repositories;
  readonly authenticate: Authenticate;
  /** Each authenticated request's viewer (HTTP requests here, WebSocket ones in live/). */
  readonly viewers: WeakMap<Request, Viewer>;
  readonly statsPublic: boolean;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly live: LiveHub;
  readonly errors: ErrorMapper;
  readonly limits: LimitsConfig;
  readonly rateLimit: RateLimitConfig;
  readonly http: HttpConfig;
  /** Absent unless OTEL_EXPORTER_OTLP_ENDPOINT is set, and then its plugin comes last. */
  readonly tracing?: Tracing | undefined;
}

export type AgentGraphYoga = YogaServerInstance<Record<string, unknown>, Context>;

export function createAgentGraphYoga(options: YogaOptions): AgentGraphYoga {
  const { viewers } = options;
  return createYoga<Record<string, unknown>, Context>({
    schema: options.schema,
    graphqlEndpoint: '/graphql',
    landingPage: false,
    // Masking happens in errorMapping, which needs the original errors to keep their codes.
    maskedErrors: false,
    logging: false,
    graphiql: { title: 'agent-graph', defaultQuery: EXAMPLE_QUERY },
    cors: corsOptions(options.http.corsOrigins),
    maxRequestBodySize: options.limits.maxBodyBytes,
    context: ({ request }): Context => {
      const viewer = viewers.get(request);
      if (!viewer) throw new AppError('UNAUTHENTICATED', 'request was not authenticated');
      const usage = { statements: 0 };
      const repositories = options.repositoriesFor(viewer, usage);
      return {
        usage,
        requestId: requestIdOf(request),
        viewer,
        statsPublic: options.statsPublic,
        repositories,
        loaders: createLoaders(repositories),
        live: options.live,
      };
    },
    plugins: [
      // Cheap rejections (size, tokens, depth) come before signature checks.
      ...hardeningPlugins(options),
      argumentNamesInValidationErrors(),
      useAuthentication(
        options.authenticate,
        viewers,
        authFailureRecorder(options.logger, options.metrics),
      ),
      errorMapping(options.errors),
      useContextPerEvent(),
      useRequestLog(options.logger, options.metrics),
      ...(options.tracing ? [options.tracing.plugin] : []),
    ],
  });
}
