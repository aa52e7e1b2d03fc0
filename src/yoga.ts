import { randomUUID } from 'node:crypto';
import {
  type ASTNode,
  type DocumentNode,
  type ExecutionResult,
  GraphQLError,
  type GraphQLSchema,
  Kind,
  visit,
} from 'graphql';
import { createYoga, isAsyncIterable, type Plugin, type YogaServerInstance } from 'graphql-yoga';
import type { Logger } from 'pino';
import type { A2ACards } from './a2a/client.js';
import { authFailureRecorder } from './auth/failures.js';
import type { Authenticate } from './auth/jwt.js';
import { useAuthentication } from './auth/plugin.js';
import type { HttpConfig, LimitsConfig, RateLimitConfig } from './config.js';
import type { Context } from './context.js';
import { AppError, type ErrorCode, isErrorCode } from './errors.js';
import { graphiqlPage } from './graphiql.js';
import { corsOptions, hardeningPlugins } from './hardening/index.js';
import type { LiveHub } from './live/hub.js';
import { createLoaders } from './loaders.js';
import type { Metrics } from './metrics.js';
import type { Viewer } from './model/viewer.js';
import { useContextPerEvent } from './per-event-context.js';
import type { Production } from './production/index.js';
import type { Repositories } from './repositories/create.js';
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

export type MaskError = (error: unknown) => GraphQLError;

/** A new error like `error` (same message, place and cause), with these extensions. */
export function copyError(
  error: GraphQLError,
  extensions: GraphQLError['extensions'] = error.extensions,
): GraphQLError {
  return new GraphQLError(error.message, {
    nodes: error.nodes,
    source: error.source,
    positions: error.positions,
    path: error.path,
    originalError: error.originalError,
    extensions,
  });
}

/**
 * The one place where errors become what clients see: yoga's `maskedErrors.maskError`, which
 * runs inside getEnveloped() (execution and subscription results, context errors) and on what
 * yoga throws before execution, so over HTTP, SSE and WebSocket alike. Typed AppErrors keep
 * their code and message; GraphQL's own parse, validation and variable errors are
 * BAD_USER_INPUT; anything else (driver errors with ORA- text, SQL, stacks) is logged and
 * sent as INTERNAL with the request id.
 */
export function createMaskError(logger: Logger, metrics: Metrics): MaskError {
  return (raw) => {
    const error =
      raw instanceof GraphQLError
        ? raw
        : new GraphQLError(raw instanceof Error ? raw.message : String(raw), {
            originalError: raw instanceof Error ? raw : undefined,
          });
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
      const requestId = errorRequests.get(error) ?? randomUUID();
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
}

/** The request each error of a result came from, for the id an INTERNAL error carries. */
const errorRequests = new WeakMap<GraphQLError, string>();

/**
 * maskError sees an error but not its request, and yoga adds its masking plugin after ours:
 * this hands maskError each error of a result with its request id. It tags copies, because
 * subscribers share an event's result (per-event-context.ts) but not their request ids.
 */
function useErrorRequestIds(): Plugin<Context> {
  const tagged = (result: ExecutionResult, requestId: string): ExecutionResult => {
    if (!result.errors?.length) return result;
    const errors = result.errors.map((error) => {
      const copy = copyError(error);
      errorRequests.set(copy, requestId);
      return copy;
    });
    return { ...result, errors };
  };
  const onDone =
    (requestId: string) =>
    ({
      result,
      setResult,
    }: {
      result: ExecutionResult | AsyncIterable<ExecutionResult>;
      setResult: (result: ExecutionResult) => void;
    }) => {
      if (!isAsyncIterable(result)) return setResult(tagged(result, requestId));
      return {
        onNext: (next: { result: ExecutionResult; setResult: (r: ExecutionResult) => void }) =>
          next.setResult(tagged(next.result, requestId)),
      };
    };
  return {
    onExecute: ({ args }) => ({ onExecuteDone: onDone(args.contextValue.requestId) }),
    onSubscribe: ({ args }) => ({
      onSubscribeResult: onDone(args.contextValue.requestId),
    }),
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
 * Yoga returns validation errors without masking them, so they pass maskError here (before
 * yoga's own hook adds the HTTP status). GraphQL's validation also names a bad literal by its
 * type only ("Value \"GALAXY\" does not exist in \"ExecStatScope\" enum."); the client
 * needs to know which argument to fix.
 */
function useValidationErrors(maskError: MaskError): Plugin {
  return {
    onValidate({ params }) {
      return ({ result, setResult }) => {
        if (result.length === 0) return;
        const paths = argumentPaths(params.documentAST);
        const named = (error: GraphQLError) => {
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
        };
        setResult(
          result.map((error: Error) =>
            maskError(error instanceof GraphQLError ? named(error) : error),
          ),
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
  /** Each authenticated request's viewer (HTTP requests here, WebSocket ones in transport/websocket.ts). */
  readonly viewers: WeakMap<Request, Viewer>;
  readonly statsPublic: boolean;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly live: LiveHub;
  readonly a2a: A2ACards;
  readonly maskError: MaskError;
  readonly limits: LimitsConfig;
  readonly rateLimit: RateLimitConfig;
  readonly http: HttpConfig;
  /** Trusted documents and the response cache (src/production/). */
  readonly production: Production;
  /** Absent unless OTEL_EXPORTER_OTLP_ENDPOINT is set, and then its plugin comes last. */
  readonly tracing?: Tracing | undefined;
}

export type AgentGraphYoga = YogaServerInstance<Record<string, unknown>, Context>;

export function createAgentGraphYoga(options: YogaOptions): AgentGraphYoga {
  const { viewers } = options;
  const graphiql = graphiqlPage();
  return createYoga<Record<string, unknown>, Context>({
    schema: options.schema,
    graphqlEndpoint: '/graphql',
    landingPage: false,
    maskedErrors: { maskError: options.maskError },
    logging: false,
    graphiql: {
      title: 'agent-graph',
      defaultQuery: options.production.graphiqlQuery ?? EXAMPLE_QUERY,
    },
    renderGraphiQL: graphiql.render,
    cors: corsOptions(options.http.corsOrigins),
    // hardening/request-body.ts limits the body in the same pass as its UTF-8 check.
    maxRequestBodySize: false,
    extraParamNames: [...options.production.paramNames],
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
        a2a: options.a2a,
      };
    },
    plugins: [
      // Yoga runs every onRequest hook (authentication) before any onRequestParse hook,
      // whatever this order; among the rest, cheap rejections (size, tokens, depth) come first.
      ...hardeningPlugins(options),
      graphiql.plugin,
      useValidationErrors(options.maskError),
      useAuthentication(
        options.authenticate,
        viewers,
        authFailureRecorder(options.logger, options.metrics),
      ),
      // After authentication: the response cache keys on the viewer's scope.
      ...options.production.plugins,
      useErrorRequestIds(),
      useContextPerEvent(),
      useRequestLog(options.logger, options.metrics),
      ...(options.tracing ? [options.tracing.plugin] : []),
    ],
  });
}
