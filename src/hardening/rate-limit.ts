import type { ExecutionResult } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Logger } from 'pino';
import type { RateLimitConfig } from '../config.js';
import type { Context } from '../context.js';
import type { Metrics } from '../metrics.js';
import { limitExceeded, viewerKey } from './subscriptions.js';

type Kind = 'request' | 'subscription';

/**
 * Per-viewer budgets of operations and of started subscriptions per fixed window, counted
 * where every transport meets (execute and subscribe), so HTTP, SSE and WebSocket share
 * them. Our own rather than @envelop/rate-limiter: that one limits resolver calls of
 * fields marked with a directive (graphql-rate-limit), not operations per identity, and
 * would put the budget into the schema instead of the configuration.
 */
export function rateLimit(
  config: RateLimitConfig,
  metrics: Metrics,
  logger: Logger,
): Plugin<Context>[] {
  if (config.requests === 0 && config.subscriptions === 0) return [];
  let windowStart = 0;
  // One map per window: starting a new window forgets every count at once, so the memory
  // held is bounded by the identities seen within one window.
  let counts = new Map<string, Record<Kind, number>>();
  const refuse = (kind: Kind, context: Context): ExecutionResult | undefined => {
    const budget = kind === 'request' ? config.requests : config.subscriptions;
    if (budget === 0) return undefined;
    const now = Date.now();
    if (now - windowStart >= config.windowMs) {
      windowStart = now;
      counts = new Map();
    }
    const key = viewerKey(context.viewer);
    let count = counts.get(key);
    if (!count) {
      count = { request: 0, subscription: 0 };
      counts.set(key, count);
    }
    if (count[kind] < budget) {
      count[kind]++;
      return undefined;
    }
    metrics.rateLimited.inc({ kind });
    const retryAfter = Math.ceil((windowStart + config.windowMs - now) / 1000);
    logger.warn(
      { requestId: context.requestId, viewer: context.viewer.subject ?? undefined, kind },
      'rate limited',
    );
    const variable = kind === 'request' ? 'RATE_LIMIT_REQUESTS' : 'RATE_LIMIT_SUBSCRIPTIONS';
    const error = limitExceeded(
      `Rate limit: at most ${budget} ${kind === 'request' ? 'operations' : 'subscriptions'} per ${config.windowMs / 1000} s for one identity (${variable}); retry in ${retryAfter} s`,
    );
    // 429 whatever the Accept header, with the time left in this window.
    error.extensions.http = { status: 429, headers: { 'retry-after': String(retryAfter) } };
    return { errors: [error] };
  };
  return [
    {
      onExecute({ args, setResultAndStopExecution }) {
        const refused = refuse('request', args.contextValue);
        if (refused) setResultAndStopExecution(refused);
      },
      onSubscribe({ args, setResultAndStopExecution }) {
        const refused = refuse('subscription', args.contextValue);
        if (refused) setResultAndStopExecution(refused);
      },
    },
  ];
}
