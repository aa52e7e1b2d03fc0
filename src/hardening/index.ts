import { useDisableIntrospection } from '@graphql-yoga/plugin-disable-introspection';
import { GraphQLError, type ValidationRule } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Logger } from 'pino';
import type { HttpConfig, LimitsConfig, RateLimitConfig } from '../config.js';
import type { Context } from '../context.js';
import { copyError, type MaskError } from '../masking.js';
import type { Metrics } from '../metrics.js';
import { actionCap } from './actions.js';
import { argumentBounds } from './argument-bounds.js';
import { csrfPrevention, unlistedOrigins } from './cross-origin.js';
import { documentLimits } from './document-limits.js';
import { endSubscriptionsAtExpiry } from './expiry.js';
import { checkInputValues } from './input-values.js';
import { rateLimit } from './rate-limit.js';
import { requestBodyLimit } from './request-body.js';
import { requestTimeout } from './request-timeout.js';
import { reservedAliases } from './reserved-aliases.js';
import { responseSizeLimit } from './response-size.js';
import { onSingleResults } from './result-hooks.js';
import { subscriptionCaps } from './subscriptions.js';

export { CSRF_HEADER, corsOptions } from './cross-origin.js';

export interface HardeningOptions {
  readonly limits: LimitsConfig;
  readonly http: HttpConfig;
  readonly rateLimit: RateLimitConfig;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly maskError: MaskError;
}

/** The yoga plugins that bound what a request may cost; see docs/security-hardening.md. */
export function hardeningPlugins(options: HardeningOptions): (Plugin | Plugin<Context>)[] {
  const { limits, http, logger } = options;
  return [
    csrfPrevention(),
    unlistedOrigins(http.corsOrigins, options.maskError),
    requestBodyLimit(limits.maxBodyBytes),
    ...(http.introspection ? [] : hideSchema()),
    reservedAliases(),
    // Before the cost verdict, whose cache keys on the variables: they are bounded first.
    checkInputValues(),
    ...documentLimits(limits),
    argumentBounds(),
    actionCap(limits.maxActionsPerOperation),
    requestTimeout(limits.requestTimeoutMs, logger),
    responseSizeLimit(limits.maxResponseBytes),
    endSubscriptionsAtExpiry(),
    subscriptionCaps(limits),
    ...rateLimit(options.rateLimit, options.metrics, logger),
  ];
}

/**
 * Federation's `_service { sdl }` prints the whole schema, as introspection would: refused
 * alike. A gateway composes this subgraph from schema.subgraph.graphql then (README,
 * "Federation subgraph").
 */
const noServiceSdl: ValidationRule = (context) => ({
  Field(node) {
    if (
      node.name.value === '_service' &&
      context.getParentType() === context.getSchema().getQueryType()
    ) {
      context.reportError(
        new GraphQLError(
          'GraphQL introspection has been disabled, and _service (the subgraph SDL) with it',
          { nodes: [node] },
        ),
      );
    }
  },
});

/**
 * Without introspection a client could still map the schema from graphql-js's "Did you
 * mean …?" hints: validation adds them for unknown fields, arguments, types and enum
 * literals, variable coercion for enum values. (GraphQL Armor's block-field-suggestions
 * misses the enum form, "Did you mean the enum value …?".)
 */
function hideSchema(): [Plugin, Plugin<Context>] {
  const withoutHints: Plugin<Context> = {
    onValidate: ({ addValidationRule }) => {
      addValidationRule(noServiceSdl);
      return ({ valid, result, setResult }) => {
        if (!valid) setResult(result.map((error) => withoutSuggestion(error)));
      };
    },
    // Variable errors come back as a single result, before any event stream exists.
    ...onSingleResults((result) =>
      result.errors
        ? { ...result, errors: result.errors.map((error) => withoutSuggestion(error)) }
        : undefined,
    ),
  };
  return [useDisableIntrospection(), withoutHints];
}

function withoutSuggestion(error: GraphQLError): GraphQLError;
function withoutSuggestion(error: Error): Error;
function withoutSuggestion(error: Error): Error {
  if (!(error instanceof GraphQLError)) return error;
  const message = error.message.replace(/ Did you mean [^?]*\?/g, '');
  return message === error.message ? error : copyError(error, { message });
}
