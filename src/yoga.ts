import {
  type ASTNode,
  type DocumentNode,
  type ExecutionArgs,
  GraphQLError,
  type GraphQLSchema,
  Kind,
  type ValidationRule,
  visit,
} from 'graphql';
import { createYoga, type Plugin, type YogaServerInstance } from 'graphql-yoga';
import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import type { A2ACards } from './a2a/client.js';
import { authFailureRecorder } from './auth/failures.js';
import type { Authenticate } from './auth/jwt.js';
import { useAuthentication } from './auth/plugin.js';
import { compiledExecutor, useCompiledExecution } from './compiled-queries.js';
import type { HttpConfig, LimitsConfig, RateLimitConfig } from './config.js';
import { type Context, operationState, type RepositoriesFor } from './context.js';
import { AppError } from './errors.js';
import type { GraphiqlPage } from './graphiql.js';
import { corsOptions, hardeningPlugins } from './hardening/index.js';
import { withTimeout } from './hardening/request-timeout.js';
import type { LiveHub } from './live/hub.js';
import { createLiveQueries } from './live-queries/index.js';
import { copyError, type MaskError, maskedReply, useErrorRequestIds } from './masking.js';
import type { Metrics } from './metrics.js';
import type { Viewer } from './model/viewer.js';
import type { Production } from './production/index.js';
import { requestIdOf } from './request-id.js';
import { createRequestLog } from './request-log.js';
import { useStatementLog } from './statement-log.js';
import { useSubscriptionEvents } from './subscription-events.js';
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
        // useValidationCache keeps validation results with this hook's changes, so a repeated
        // document comes back named and masked: a copy is masked (and counted) for this request.
        const named = (error: GraphQLError) => {
          if (error.message.startsWith('Argument "')) return copyError(error);
          const node = error.nodes?.[0];
          const path = node && paths.get(node);
          return path
            ? copyError(error, {
                message: `Argument "${path}": ${error.message}`,
                originalError: undefined,
              })
            : error;
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

/** Documents kept parsed across requests, as many as yoga's own parse cache keeps. */
const MAX_DOCUMENTS = 1_024;

/**
 * Yoga's parse and validation caches are lru-cache LRUs with a time to live: a TTL cache
 * reads the clock through a 1 ms timer it arms on a read (lru-cache's ttlResolution), so a
 * request at a time armed one, whose firing woke the event loop and removed its timer list
 * (2-3 % of the serving thread on `{ __typename }` and runPage); and the validation cache keys
 * each request on a string of every rule's name, joined anew (another 2-3 %). The parsed
 * documents are kept by yoga in LRUs of our own without a TTL (its `documentCache` and
 * `errorCache`), and validation results here: yoga has no option for its validation cache's
 * key.
 */
function parseCaches() {
  return {
    documentCache: new LRUCache<string, DocumentNode>({ max: MAX_DOCUMENTS }),
    errorCache: new LRUCache<string, Error>({ max: MAX_DOCUMENTS }),
    validationCache: false,
  };
}

/**
 * A document's validation result, kept on the document (yoga's parse cache hands every request
 * of a text the same one) with the schema and rules it was checked against: the rules differ
 * when a plugin adds one for some requests only (introspection's, for HTTP requests alone), and
 * such a request is validated again. Last of the plugins that validate: what it keeps is the
 * result their hooks made, as yoga's own cache kept it, and they see it again on a hit.
 */
function useValidationCache(): Plugin {
  const results = new WeakMap<
    DocumentNode,
    {
      readonly schema: GraphQLSchema;
      readonly rules: readonly ValidationRule[];
      readonly result: readonly Error[];
    }
  >();
  return {
    onValidate({ params: { schema, documentAST, rules }, setResult }) {
      const known = results.get(documentAST);
      if (known && known.schema === schema && sameRules(known.rules, rules ?? [])) {
        setResult(known.result);
        return;
      }
      return ({ result }) => {
        results.set(documentAST, { schema, rules: [...(rules ?? [])], result });
      };
    },
  };
}

function sameRules(known: readonly ValidationRule[], rules: readonly ValidationRule[]): boolean {
  if (rules.length !== known.length) return false;
  for (let i = 0; i < rules.length; i++) if (rules[i] !== known[i]) return false;
  return true;
}

export interface YogaOptions {
  readonly schema: GraphQLSchema;
  /** Repositories limited to what one viewer may see. */
  readonly repositoriesFor: RepositoriesFor;
  readonly authenticate: Authenticate;
  /** Each authenticated request's viewer (HTTP requests here, WebSocket ones in transport/websocket.ts). */
  readonly viewers: WeakMap<Request, Viewer>;
  readonly statsPublic: boolean;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly live: LiveHub;
  /** POLL_INTERVAL_MS: how often live queries may run again on actions alone. */
  readonly pollIntervalMs: number;
  readonly a2a: A2ACards;
  readonly maskError: MaskError;
  readonly limits: LimitsConfig;
  readonly rateLimit: RateLimitConfig;
  readonly http: HttpConfig;
  /** Trusted documents and the response cache (src/production/). */
  readonly production: Production;
  /** GraphiQL's page and files (src/server.ts serves the files). */
  readonly graphiql: GraphiqlPage;
  /** NODE_ENV=development: administrators' responses show their statements. */
  readonly development: boolean;
  /** Absent unless OTEL_EXPORTER_OTLP_ENDPOINT is set, and then its plugin comes last. */
  readonly tracing?: Tracing | undefined;
}

export type AgentGraphYoga = YogaServerInstance<Record<string, unknown>, Context>;

export function createAgentGraphYoga(options: YogaOptions): AgentGraphYoga {
  const { viewers } = options;
  const requestLog = createRequestLog(options.logger, options.metrics);
  const { graphiql } = options;
  // The one executor of queries, mutations and subscription events (src/compiled-queries.ts).
  const execute = compiledExecutor();
  const events = {
    execute: (args: ExecutionArgs) =>
      withTimeout(execute, args, options.limits.requestTimeoutMs, options.logger),
    repositoriesFor: options.repositoriesFor,
    maskError: options.maskError,
    maxResponseBytes: options.limits.maxResponseBytes,
    record: requestLog.event,
  };
  const liveQueries = createLiveQueries(options.schema, {
    hub: options.live,
    events,
    limits: options.limits,
    pollIntervalMs: options.pollIntervalMs,
    metrics: options.metrics,
    logger: options.logger,
  });
  return createYoga<Record<string, unknown>, Context>({
    schema: liveQueries.schema,
    graphqlEndpoint: '/graphql',
    landingPage: false,
    maskedErrors: { maskError: options.maskError },
    logging: false,
    graphiql: {
      title: 'agent-graph',
      defaultQuery: options.production.graphiqlQuery ?? EXAMPLE_QUERY,
    },
    renderGraphiQL: (graphiqlOptions) => graphiql.render(graphiqlOptions, liveQueries.schema),
    cors: corsOptions(options.http.corsOrigins),
    // hardening/request-body.ts limits the body in the same pass as its UTF-8 check.
    maxRequestBodySize: false,
    parserAndValidationCache: parseCaches(),
    extraParamNames: [...options.production.paramNames],
    context: ({ request }): Context => {
      const viewer = viewers.get(request);
      if (!viewer) throw new AppError('UNAUTHENTICATED', 'request was not authenticated');
      return {
        requestId: requestIdOf(request),
        viewer,
        statsPublic: options.statsPublic,
        ...operationState(options.repositoriesFor, viewer),
        live: options.live,
        a2a: options.a2a,
        idempotencyKey: request.headers.get('idempotency-key'),
      };
    },
    plugins: [
      useCompiledExecution(execute),
      // Yoga runs every onRequest hook (authentication) before any onRequestParse hook,
      // whatever this order; among the rest, cheap rejections (size, tokens, depth) come first.
      ...hardeningPlugins(options),
      // After the hardening plugins: each run of a live query goes through their execute
      // (the timeout); src/live-queries/ keeps @live answers true.
      ...liveQueries.plugins,
      graphiql.plugin,
      useValidationErrors(options.maskError),
      useAuthentication(
        options.authenticate,
        viewers,
        authFailureRecorder(options.logger, options.metrics),
        (error, init) => maskedReply(options.maskError, error, init),
      ),
      // After authentication: the response cache keys on the viewer's scope.
      ...options.production.plugins,
      useErrorRequestIds(),
      useStatementLog(options.development),
      useSubscriptionEvents(events),
      requestLog.plugin,
      ...(options.tracing ? [options.tracing.plugin] : []),
      // After every plugin that adds a validation rule or changes a validation result.
      useValidationCache(),
    ],
  });
}
