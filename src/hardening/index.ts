import { useCSRFPrevention } from '@graphql-yoga/plugin-csrf-prevention';
import { useDisableIntrospection } from '@graphql-yoga/plugin-disable-introspection';
import { GraphQLError } from 'graphql';
import { isAsyncIterable, type Plugin, type YogaServerOptions } from 'graphql-yoga';
import type { Logger } from 'pino';
import type { HttpConfig, LimitsConfig } from '../config.js';
import { documentLimits } from './document-limits.js';
import { rejectNulInStrings } from './input-values.js';
import { strictUtf8Body } from './request-body.js';
import { requestTimeout } from './request-timeout.js';

/**
 * What a GET or a form/multipart POST must carry: browsers send those cross-site without a
 * CORS preflight, and a custom header forces one. Any value will do.
 */
export const CSRF_HEADER = 'x-graphql-yoga-csrf';

export interface HardeningOptions {
  readonly limits: LimitsConfig;
  readonly http: HttpConfig;
  readonly logger: Logger;
}

/** The yoga plugins that bound what a request may cost; see docs/security-hardening.md. */
export function hardeningPlugins({ limits, http, logger }: HardeningOptions): Plugin[] {
  return [
    useCSRFPrevention({ requestHeaders: [CSRF_HEADER] }),
    strictUtf8Body(),
    ...(http.introspection ? [] : hideSchema()),
    ...documentLimits(limits),
    rejectNulInStrings(),
    requestTimeout(limits.requestTimeoutMs, logger),
  ];
}

/**
 * Without introspection a client could still map the schema from graphql-js's "Did you
 * mean …?" hints: validation adds them for unknown fields, arguments, types and enum
 * literals, variable coercion for enum values. (GraphQL Armor's block-field-suggestions
 * misses the enum form, "Did you mean the enum value …?".)
 */
function hideSchema(): Plugin[] {
  const strip = <T extends { errors?: readonly Error[] }>(result: T): T =>
    result.errors ? { ...result, errors: result.errors.map(withoutSuggestion) } : result;
  return [
    useDisableIntrospection(),
    {
      onValidate:
        () =>
        ({ valid, result, setResult }) => {
          if (!valid) setResult(result.map(withoutSuggestion));
        },
      // Variable errors come back as a plain result, before any event stream exists.
      onExecute: () => ({
        onExecuteDone: ({ result, setResult }) => {
          if (!isAsyncIterable(result)) setResult(strip(result));
        },
      }),
      onSubscribe: () => ({
        onSubscribeResult: ({ result, setResult }) => {
          if (!isAsyncIterable(result)) setResult(strip(result));
        },
      }),
    },
  ];
}

function withoutSuggestion(error: Error): Error {
  if (!(error instanceof GraphQLError)) return error;
  const message = error.message.replace(/ Did you mean [^?]*\?/g, '');
  return message === error.message
    ? error
    : new GraphQLError(message, {
        nodes: error.nodes,
        source: error.source,
        positions: error.positions,
        path: error.path,
        originalError: error.originalError,
        extensions: error.extensions,
      });
}

/**
 * Yoga answers every origin by default; here only the configured ones, and none when
 * CORS_ORIGINS is unset. Credentials stay off: callers authenticate with a bearer token in
 * `Authorization`, never with cookies.
 */
export function corsOptions(origins: readonly string[]): YogaServerOptions<object, object>['cors'] {
  if (origins.length === 0) return false;
  return { origin: [...origins], credentials: false, methods: ['GET', 'POST'], maxAge: 600 };
}
