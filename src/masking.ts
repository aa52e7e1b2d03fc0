import { randomUUID } from 'node:crypto';
import { GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Logger } from 'pino';
import type { Context } from './context.js';
import { AppError, type ErrorCode, isErrorCode } from './errors.js';
import { onSingleResults } from './hardening/result-hooks.js';
import type { Metrics } from './metrics.js';

export type MaskError = (error: unknown) => GraphQLError;

/** A new error like `error` (same place, extensions and cause), with these changes. */
export function copyError(
  error: GraphQLError,
  changes: {
    readonly message?: string;
    readonly extensions?: GraphQLError['extensions'];
    /** `undefined` drops the cause (what clients see must not carry a driver error). */
    readonly originalError?: Error | undefined;
  } = {},
): GraphQLError {
  return new GraphQLError(changes.message ?? error.message, {
    nodes: error.nodes,
    source: error.source,
    positions: error.positions,
    path: error.path,
    originalError: 'originalError' in changes ? changes.originalError : error.originalError,
    extensions: changes.extensions ?? error.extensions,
  });
}

/** What was thrown, as a GraphQL error whose cause it is. */
export const asGraphQLError = (raw: unknown): GraphQLError =>
  raw instanceof GraphQLError
    ? raw
    : new GraphQLError(raw instanceof Error ? raw.message : String(raw), {
        originalError: raw instanceof Error ? raw : undefined,
      });

/** The request (or subscription event) each error came from, for the id INTERNAL carries. */
const errorRequests = new WeakMap<GraphQLError, string>();

/** `error`, tagged with the request id that maskError gives it if it turns out INTERNAL. */
export function withRequestId(error: GraphQLError, requestId: string): GraphQLError {
  errorRequests.set(error, requestId);
  return error;
}

/** Errors that maskError made: masking one again returns it as it is, counted once. */
const masked = new WeakSet<GraphQLError>();

/**
 * The one place where errors become what clients see, for every transport: yoga's
 * `maskedErrors.maskError` (execution results, context errors and what yoga throws before
 * execution, over HTTP, SSE and WebSocket), the events of subscriptions
 * (src/subscription-events.ts), and the error bodies answered before yoga parses a request
 * (maskedReply). Typed AppErrors keep their code and message; GraphQL's own parse, validation
 * and variable errors are BAD_USER_INPUT; anything else (driver errors with ORA- text, SQL,
 * stacks) is logged and sent as INTERNAL with the request id. Each error a client receives is
 * counted once in agentgraph_graphql_errors_total.
 */
export function createMaskError(logger: Logger, metrics: Metrics): MaskError {
  return (raw) => {
    if (raw instanceof GraphQLError && masked.has(raw)) return raw;
    const error = asGraphQLError(raw);
    const original = error.originalError;
    const withCode = (code: ErrorCode, message = error.message, requestId?: string) =>
      copyError(error, {
        message,
        extensions: { ...clientExtensions(error), code, ...(requestId ? { requestId } : {}) },
        originalError: undefined,
      });
    let mapped: GraphQLError;
    if (original instanceof AppError) {
      mapped = withCode(original.code, original.message);
    } else if (original instanceof GraphQLError && isErrorCode(original.extensions.code)) {
      mapped = withCode(original.extensions.code, original.message);
    } else if (
      original &&
      !(original instanceof GraphQLError) &&
      original.name !== 'PothosValidationError'
    ) {
      const requestId = errorRequests.get(error) ?? randomUUID();
      logger.error({ err: original, requestId, path: error.path }, 'internal error');
      mapped = withCode('INTERNAL', 'Internal server error', requestId);
    } else {
      // GraphQL's own parse, validation and coercion errors (yoga labels them
      // GRAPHQL_PARSE_FAILED / GRAPHQL_VALIDATION_FAILED) are the caller's input.
      const code = error.extensions.code;
      mapped = withCode(isErrorCode(code) ? code : 'BAD_USER_INPUT');
    }
    metrics.errors.inc({ code: String(mapped.extensions.code) });
    masked.add(mapped);
    return mapped;
  };
}

/**
 * An error's extensions as a client may see them: without `originalError`, where yoga puts
 * the cause of a request it could not parse (`{ name, message }`), and JSON.parse's message
 * quotes the body it refused.
 */
function clientExtensions(error: GraphQLError): GraphQLError['extensions'] {
  if (!('originalError' in error.extensions)) return error.extensions;
  const extensions = { ...error.extensions };
  delete extensions.originalError;
  return extensions;
}

/** A response's parts, for a fetch `Response` or node's `writeHead`/`end`. */
export interface HttpReply {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/**
 * The one builder of the error responses answered before yoga has parsed a request (the
 * refused token, Host, path and preflight): the error goes through maskError, so it has the
 * code and message every transport gives it and is counted once in
 * agentgraph_graphql_errors_total, tagged with the request's id (what INTERNAL would carry),
 * in the shape GraphQL clients read.
 */
export function maskedReply(
  maskError: MaskError,
  error: AppError,
  init: {
    readonly status: number;
    readonly requestId: string;
    readonly headers?: Readonly<Record<string, string>>;
  },
): HttpReply {
  const { message, extensions } = maskError(
    withRequestId(new GraphQLError(error.message, { originalError: error }), init.requestId),
  );
  return {
    status: init.status,
    headers: { 'content-type': 'application/json; charset=utf-8', ...init.headers },
    body: JSON.stringify({ errors: [{ message, extensions }] }),
  };
}

/**
 * maskError sees an error but not its request, and yoga adds its masking plugin after ours:
 * this hands maskError each error of a result with its request id. Subscription events carry
 * the id of the event instead (src/subscription-events.ts), so only the errors a subscribe
 * request answers at once are tagged here.
 */
export function useErrorRequestIds(): Plugin<Context> {
  return onSingleResults((result, context) => {
    for (const error of result.errors ?? []) withRequestId(error, context.requestId);
    return undefined;
  });
}
