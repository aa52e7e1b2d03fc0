import { AsyncLocalStorage } from 'node:async_hooks';
import {
  type Context as OtelContext,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type TextMapGetter,
  trace,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { type ExecutionArgs, type ExecutionResult, GraphQLError, getOperationAST } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Logger } from 'pino';
import type { Context } from '../context.js';
import type { Driver, Row } from '../db/driver.js';
import { AppError, isErrorCode } from '../errors.js';

/** OpenTelemetry tracing, present only when OTEL_EXPORTER_OTLP_ENDPOINT is set. */
export interface Tracing {
  /** The driver with one span per round trip, named after the statement. */
  traceDriver(driver: Driver): Driver;
  /**
   * One span per GraphQL operation; the statements it runs are its children. Its onDispose
   * sends the spans not yet exported, when the server disposes of yoga, last as it stops.
   */
  readonly plugin: Plugin<Context>;
}

export interface OtelOptions {
  /** Base URL of the OTLP/HTTP collector. */
  readonly endpoint: string;
  readonly serviceName: string;
  readonly logger: Logger;
}

const headerGetter: TextMapGetter<Headers> = {
  get: (headers, key) => headers.get(key) ?? undefined,
  keys: (headers) => [...headers.keys()],
};

/**
 * Spans through a tracer provider of this server's own, never the process-global one, so
 * that several servers in one process (tests, benchmarks) each export to their own
 * collector. The operation span is handed to the statement spans through our own
 * AsyncLocalStorage for the same reason: no global context manager is registered.
 */
export function createTracing(options: OtelOptions): Tracing {
  const exporter = new OTLPTraceExporter({
    url: `${options.endpoint.replace(/\/+$/, '')}/v1/traces`,
  });
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': options.serviceName }),
    spanProcessors: [new BatchSpanProcessor({ exporter })],
  });
  const tracer = provider.getTracer('agent-graph');
  // Timers and promises started by an operation keep its store after it ends (the poller
  // that the first subscription starts, say), so statements look at `open`, not just the span.
  const operations = new AsyncLocalStorage<{ readonly span: Span; open: boolean }>();
  // A caller that sends `traceparent` sees this server's spans inside its own trace.
  const propagator = new W3CTraceContextPropagator();

  const parentOf = (context: Context & { request?: Request }): OtelContext =>
    context.request
      ? propagator.extract(ROOT_CONTEXT, context.request.headers, headerGetter)
      : ROOT_CONTEXT;

  const startOperation = (args: ExecutionArgs): Span => {
    const context = args.contextValue as Context & { request?: Request };
    const operation = getOperationAST(args.document, args.operationName);
    const type = operation?.operation ?? 'query';
    const name = operation?.name?.value;
    return tracer.startSpan(
      name ? `${type} ${name}` : type,
      {
        kind: SpanKind.SERVER,
        attributes: {
          'graphql.operation.type': type,
          ...(name ? { 'graphql.operation.name': name } : {}),
          'agentgraph.request_id': context.requestId,
        },
      },
      parentOf(context),
    );
  };

  /** Runs an execute or subscribe function with the operation's span current, and ends it. */
  const traced =
    <A extends ExecutionArgs, R>(run: (args: A) => R | Promise<R>) =>
    (args: A): Promise<R> => {
      const span = startOperation(args);
      const current = { span, open: true };
      return operations.run(current, async () => {
        try {
          const result = await run(args);
          if (isExecutionResult(result)) recordErrors(span, result);
          return result;
        } catch (error) {
          span.setStatus({ code: SpanStatusCode.ERROR, message: codeOf(error) });
          throw error;
        } finally {
          const { usage } = args.contextValue as Context;
          span.setAttribute('agentgraph.statements', usage.statements);
          current.open = false;
          span.end();
        }
      });
    };

  const statementSpan = <T>(system: string, name: string, run: () => Promise<T>): Promise<T> => {
    const operation = operations.getStore();
    const span = tracer.startSpan(
      name,
      {
        kind: SpanKind.CLIENT,
        // The statement name, never its text with binds nor the bind values.
        attributes: { 'db.system.name': system, 'agentgraph.statement': name },
      },
      operation?.open ? trace.setSpan(ROOT_CONTEXT, operation.span) : ROOT_CONTEXT,
    );
    return run().then(
      (result) => {
        if (Array.isArray(result)) span.setAttribute('db.response.returned_rows', result.length);
        span.end();
        return result;
      },
      (error: unknown) => {
        // Driver messages can quote a bound value ("invalid input syntax … \"abc\""), so the
        // span keeps only the kind of error.
        span.setAttribute('error.type', errorType(error));
        span.setStatus({ code: SpanStatusCode.ERROR });
        span.end();
        throw error;
      },
    );
  };

  return {
    traceDriver(driver: Driver): Driver {
      const system = driver.kind === 'oracle' ? 'oracle.db' : 'postgresql';
      return {
        kind: driver.kind,
        query: (statement, binds, options) =>
          statementSpan<Row[]>(system, statement.name, () =>
            driver.query(statement, binds, options),
          ),
        queryWithAgentDetails: (statement, binds, options) =>
          statementSpan<Row[]>(system, statement.name, () =>
            driver.queryWithAgentDetails(statement, binds, options),
          ),
        probeAgentDetails: () =>
          statementSpan(system, 'agents.describeProbe', () => driver.probeAgentDetails()),
        runBlock: (block, binds, options) =>
          statementSpan<Row>(system, block.name, () => driver.runBlock(block, binds, options)),
        columnsOf: (views) =>
          statementSpan(system, 'dictionary.columns', () => driver.columnsOf(views)),
        // Readiness probes would add a trace every few seconds and say nothing new.
        ping: () => driver.ping(),
        close: (drainSeconds) => driver.close(drainSeconds),
      };
    },
    plugin: {
      // Last in the plugin list, so these wrap what other plugins set (the request timeout,
      // the per-event subscribe) and the span covers all of it.
      onExecute({ executeFn, setExecuteFn }) {
        setExecuteFn(traced(executeFn));
      },
      onSubscribe({ subscribeFn, setSubscribeFn }) {
        setSubscribeFn(traced(subscribeFn));
      },
      async onDispose() {
        try {
          await provider.shutdown();
        } catch (error) {
          options.logger.warn({ err: error }, 'could not export the last spans');
        }
      },
    },
  };
}

function isExecutionResult(value: unknown): value is ExecutionResult {
  return typeof value === 'object' && value !== null && !(Symbol.asyncIterator in value);
}

/** The first error's code: messages can echo what the client sent, codes cannot. */
function recordErrors(span: Span, result: ExecutionResult): void {
  const first = result.errors?.[0];
  if (!first) return;
  span.setAttribute('agentgraph.error_count', result.errors?.length ?? 0);
  span.setStatus({ code: SpanStatusCode.ERROR, message: codeOf(first) });
}

function codeOf(error: unknown): string {
  const original = error instanceof GraphQLError ? (error.originalError ?? error) : error;
  if (original instanceof AppError) return original.code;
  const code = original instanceof GraphQLError ? original.extensions.code : undefined;
  return isErrorCode(code) ? code : 'INTERNAL';
}

function errorType(error: unknown): string {
  if (error instanceof AppError) return error.code;
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : error instanceof Error ? error.name : 'unknown';
}
