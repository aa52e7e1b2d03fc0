import {
  type ExecutionArgs,
  type ExecutionResult,
  GraphQLError,
  NoSchemaIntrospectionCustomRule,
  type ValidationRule,
} from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import type { Logger } from 'pino';
import type { HttpConfig, LimitsConfig, RateLimitConfig } from '../config.js';
import type { Context } from '../context.js';
import { copyError, type MaskError } from '../masking.js';
import type { Metrics } from '../metrics.js';
import { actionCap } from './actions.js';
import { argumentBounds } from './argument-bounds.js';
import { refuseForgery, unlistedOrigins } from './cross-origin.js';
import { documentLimits } from './document-limits.js';
import { endAt } from './expiry.js';
import { inputValuesProblem } from './input-values.js';
import { rateLimit } from './rate-limit.js';
import { requestBodyLimit } from './request-body.js';
import { withTimeout } from './request-timeout.js';
import { noReservedAliases } from './reserved-aliases.js';
import { boundedResult } from './response-size.js';
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

/**
 * The yoga plugins that bound what a request may cost; see docs/security-hardening.md. One
 * plugin runs every rule, each kept in its own module, in the order below: envelop runs each
 * hook of each plugin through promise helpers of its own (about a kilobyte of closures and
 * fake promises per hook and request), so a rule is a step of this plugin's hooks rather
 * than a plugin of its own.
 *
 * - a request: cross-site request forgery (cross-origin.ts), then the body's size and
 *   encoding (request-body.ts); its response: unlisted origins (cross-origin.ts);
 * - its document: tokens while parsing, then the rules of validation (introspection and the
 *   subgraph SDL when introspection is off, reserved aliases, depth, aliases, directives:
 *   document-limits.ts);
 * - an operation, before it runs, on every transport: the values it carries
 *   (input-values.ts), its cost (document-limits.ts), its arguments' bounds
 *   (argument-bounds.ts), then for a query or mutation its actions (actions.ts), for a
 *   subscription the open subscriptions (subscriptions.ts), then the viewer's budgets
 *   (rate-limit.ts); the first refusal is the answer;
 * - its execution: under the request timeout (request-timeout.ts);
 * - its result: without schema hints when introspection is off, bounded in size
 *   (response-size.ts); a stream (a subscription's, a live query's) ends at the token's expiry
 *   (expiry.ts).
 */
export function hardeningPlugins(options: HardeningOptions): (Plugin | Plugin<Context>)[] {
  const { limits, http, logger } = options;
  const hidden = !http.introspection;
  const bodyLimit = requestBodyLimit(limits.maxBodyBytes);
  const document = documentLimits(limits);
  const rules: readonly ValidationRule[] = [
    // graphql-js's rule, which @graphql-yoga/plugin-disable-introspection adds only to the
    // requests it has seen in onRequestParse: graphql-ws operations never pass that hook, so a
    // socket could introspect. A rule here applies to every transport.
    ...(hidden ? [NoSchemaIntrospectionCustomRule, noServiceSdl] : []),
    noReservedAliases,
    ...document.rules,
  ];
  const bounds = argumentBounds();
  const actions = actionCap(limits.maxActionsPerOperation);
  const caps = subscriptionCaps(limits);
  const budgets = rateLimit(options.rateLimit, options.metrics, logger);
  /** The refusal of an operation before it runs, by the rules every operation passes. */
  const problem = (args: ExecutionArgs) =>
    inputValuesProblem(args) ?? document.cost(args) ?? bounds(args);
  /** A result that is one result, as the client gets it: HTTP and graphql-ws alike. */
  const single = (result: ExecutionResult) =>
    boundedResult(hidden ? withoutSuggestions(result) : result, limits.maxResponseBytes);
  const executed: ReturnType<NonNullable<Plugin<Context>['onExecute']>> = {
    onExecuteDone({ args, result, setResult }) {
      // A live query (src/live-queries/) is a stream from execute.
      if (!isAsyncIterable(result)) setResult(single(result));
      else if (args.contextValue.viewer.expiry)
        setResult(endAt(result, args.contextValue.viewer.expiry));
    },
  };
  const plugin: Plugin<Context> = {
    onRequestParse(payload) {
      refuseForgery(payload.request);
      return bodyLimit(payload);
    },
    onResponse: unlistedOrigins(http.corsOrigins, options.maskError),
    onParse: document.onParse,
    onValidate({ addValidationRule }) {
      for (const rule of rules) addValidationRule(rule);
      if (!hidden) return;
      return ({ valid, result, setResult }) => {
        if (!valid) setResult(result.map((error) => withoutSuggestion(error)));
      };
    },
    onExecute({ args, executeFn, setExecuteFn, setResultAndStopExecution }) {
      const error = problem(args) ?? actions(args);
      const refused = error ? { errors: [error] } : budgets?.execute(args);
      if (refused) setResultAndStopExecution(refused);
      else setExecuteFn((run) => withTimeout(executeFn, run, limits.requestTimeoutMs, logger));
      return executed;
    },
    onSubscribe({ args, setResultAndStopExecution }) {
      const error = problem(args);
      const opened = error ? { errors: [error] } : caps(args.contextValue);
      const refused = typeof opened === 'function' ? budgets?.subscribe(args) : opened;
      const release = typeof opened === 'function' ? opened : () => {};
      if (refused) {
        release();
        setResultAndStopExecution(refused);
      }
      return {
        onSubscribeResult({ result, setResult }) {
          if (!isAsyncIterable(result)) {
            // Variable errors come back as a single result, before any event stream exists.
            release();
            setResult(single(result));
            return undefined;
          }
          const { expiry } = args.contextValue.viewer;
          if (expiry) setResult(endAt(result, expiry));
          // envelop's own end and error hooks on the stream (finalAsyncIterator and
          // errorAsyncIterator): it ends, fails or is returned by its consumer.
          return { onEnd: release };
        },
        onSubscribeError: release,
      };
    },
  };
  return [plugin];
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
 * literals, variable coercion for enum values (whose errors come back as a single result,
 * before any event stream exists). GraphQL Armor's block-field-suggestions misses the enum
 * form, "Did you mean the enum value …?".
 */
function withoutSuggestions(result: ExecutionResult): ExecutionResult {
  return result.errors
    ? { ...result, errors: result.errors.map((error) => withoutSuggestion(error)) }
    : result;
}

function withoutSuggestion(error: GraphQLError): GraphQLError;
function withoutSuggestion(error: Error): Error;
function withoutSuggestion(error: Error): Error {
  if (!(error instanceof GraphQLError)) return error;
  const message = error.message.replace(/ Did you mean [^?]*\?/g, '');
  return message === error.message ? error : copyError(error, { message });
}
