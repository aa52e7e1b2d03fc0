import { type DocumentNode, type ExecutionResult, getOperationAST } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Logger } from 'pino';
import type { Context } from './context.js';
import type { Metrics } from './metrics.js';
import { requestIdOf } from './request-id.js';

/** Operation names come from clients; past this many distinct ones, metrics say "other". */
const MAX_OPERATION_LABELS = 200;
/** Characters of an operation name that the log line and the metrics label keep. */
const MAX_LOGGED_NAME = 128;

/**
 * What the line needs of a request, never its context: V8's young-generation collections keep
 * a WeakMap's values alive, and a context leads back to its request (the key), so every
 * request, with all it reached, outlived itself into the old generation until a full
 * collection (src/hardening/response-size.ts says the same of results).
 */
interface RequestRecord {
  readonly start: number;
  operation: string;
  usage: Context['usage'] | undefined;
  subject: string | undefined;
  outcome: string;
}

/** The operation's name as the log and the metrics show it. */
export function operationName(
  document: DocumentNode,
  operationName: string | null | undefined,
): string {
  const name = getOperationAST(document, operationName)?.name?.value;
  // A GraphQL name has no length limit of its own but the body's: the log keeps a prefix.
  if (name === undefined) return 'anonymous';
  return name.length > MAX_LOGGED_NAME ? `${name.slice(0, MAX_LOGGED_NAME)}…` : name;
}

/** The outcome label: ok, or the first error's code. */
export const outcomeOf = (result: ExecutionResult): string => {
  const code = result.errors?.[0]?.extensions?.code;
  return typeof code === 'string' ? code : 'ok';
};

/** One subscription event, executed once for a group of identical subscriptions. */
export interface EventRecord {
  readonly requestId: string;
  readonly operation: string;
  readonly startedAt: number;
  readonly statements: number;
  readonly outcome: string;
}

export interface RequestLog {
  /** The log line and metrics sample of each HTTP request. */
  readonly plugin: Plugin<Context>;
  /** The log line (at debug) and metrics sample of each subscription event. */
  event(record: EventRecord): void;
}

/**
 * One structured log line and one metrics sample per GraphQL request and per subscription
 * event: request id, operation, duration, database statements and outcome (ok, or the first
 * error code). An event's line is at debug level: a busy dashboard makes one per group of
 * identical subscriptions every poll interval.
 */
export function createRequestLog(logger: Logger, metrics: Metrics): RequestLog {
  const records = new WeakMap<Request, RequestRecord>();
  const labels = new Set<string>();
  const label = (operation: string) => {
    if (labels.has(operation)) return operation;
    if (labels.size >= MAX_OPERATION_LABELS) return 'other';
    labels.add(operation);
    return operation;
  };
  const event = (record: EventRecord) => {
    metrics.subscriptionEvents.inc({ operation: label(record.operation), outcome: record.outcome });
    logger.debug(
      {
        requestId: record.requestId,
        operation: record.operation,
        durationMs: Math.round((performance.now() - record.startedAt) * 10) / 10,
        statements: record.statements,
        outcome: record.outcome,
      },
      'subscription event',
    );
  };
  const plugin: Plugin<Context> = {
    onRequest({ request, url }) {
      if (url.pathname === '/graphql') {
        records.set(request, {
          start: performance.now(),
          operation: 'unknown',
          usage: undefined,
          subject: undefined,
          outcome: 'ok',
        });
      }
    },
    onExecute({ args }) {
      const record = records.get(args.contextValue.request);
      if (!record) return;
      record.operation = operationName(args.document, args.operationName);
      record.usage = args.contextValue.usage;
      record.subject = args.contextValue.viewer.subject ?? undefined;
    },
    onResultProcess({ request, result }) {
      const record = records.get(request);
      const first = Array.isArray(result) ? result[0] : result;
      const code = first && 'errors' in first ? first.errors?.[0]?.extensions?.code : undefined;
      if (record && typeof code === 'string') record.outcome = code;
    },
    onResponse({ request, response }) {
      const record = records.get(request);
      if (!record) return;
      const seconds = (performance.now() - record.start) / 1000;
      const operation = label(record.operation);
      metrics.requests.inc({ operation, outcome: record.outcome });
      metrics.requestDuration.observe({ operation }, seconds);
      logger.info(
        {
          requestId: requestIdOf(request),
          operation: record.operation,
          durationMs: Math.round(seconds * 10_000) / 10,
          statements: record.usage?.statements ?? 0,
          status: response.status,
          outcome: record.outcome,
          viewer: record.subject,
        },
        'request',
      );
    },
  };
  return { plugin, event };
}
