import type { ExecutionArgs, ExecutionResult } from 'graphql';
import type { Logger } from 'pino';
import type { RateLimitConfig } from '../config.js';
import type { Context } from '../context.js';
import type { Metrics } from '../metrics.js';
import { viewerKey } from '../model/viewer.js';
import { actionsOf } from './actions.js';
import { limitExceeded } from './limit-error.js';

type Kind = 'request' | 'subscription' | 'action';

const BUDGETS: Record<Kind, { variable: string; unit: string }> = {
  request: { variable: 'RATE_LIMIT_REQUESTS', unit: 'operations' },
  subscription: { variable: 'RATE_LIMIT_SUBSCRIPTIONS', unit: 'subscriptions' },
  action: { variable: 'RATE_LIMIT_ACTIONS', unit: 'actions (runTeam, respondToHuman, …)' },
};

/** What the budgets refuse, on hardening/index.ts's one path of every operation. */
export interface Budgets {
  /** An operation's refusal when its viewer's budget of operations or actions is spent. */
  execute(args: ExecutionArgs): ExecutionResult | undefined;
  /** A subscription's refusal when its viewer's budget of subscriptions is spent. */
  subscribe(args: ExecutionArgs): ExecutionResult | undefined;
}

/**
 * Per-viewer budgets of operations, of started subscriptions and of actions (each action
 * field of a mutation, schema/action.ts) per fixed window, counted where every transport
 * meets (execute and subscribe), so HTTP, SSE and WebSocket share them. An operation whose
 * actions do not all fit in what is left is refused whole, before any of them runs. Our own
 * rather than @envelop/rate-limiter: that one limits resolver calls of fields marked with a
 * directive (graphql-rate-limit), one by one as they resolve, not before execution, and
 * would put the budget into the schema instead of the configuration. Nothing when no budget
 * is set.
 */
export function rateLimit(
  config: RateLimitConfig,
  metrics: Metrics,
  logger: Logger,
): Budgets | undefined {
  const budgets: Record<Kind, number> = {
    request: config.requests,
    subscription: config.subscriptions,
    action: config.actions,
  };
  if (Object.values(budgets).every((budget) => budget === 0)) return undefined;
  let windowStart = 0;
  // One map per window: starting a new window forgets every count at once, so the memory
  // held is bounded by the identities seen within one window.
  let counts = new Map<string, Record<Kind, number>>();
  const refuse = (kind: Kind, context: Context, amount = 1): ExecutionResult | undefined => {
    const budget = budgets[kind];
    if (budget === 0 || amount === 0) return undefined;
    const now = Date.now();
    if (now - windowStart >= config.windowMs) {
      windowStart = now;
      counts = new Map();
    }
    const key = viewerKey(context.viewer);
    let count = counts.get(key);
    if (!count) {
      count = { request: 0, subscription: 0, action: 0 };
      counts.set(key, count);
    }
    if (count[kind] + amount <= budget) {
      count[kind] += amount;
      return undefined;
    }
    metrics.rateLimited.inc({ kind });
    const retryAfter = Math.ceil((windowStart + config.windowMs - now) / 1000);
    logger.warn(
      { requestId: context.requestId, viewer: context.viewer.subject ?? undefined, kind },
      'rate limited',
    );
    const { variable, unit } = BUDGETS[kind];
    const left = budget - count[kind];
    const error = limitExceeded(
      `Rate limit: at most ${budget} ${unit} per ${config.windowMs / 1000} s for one identity (${variable})${
        amount > 1 ? `; this operation has ${amount}, ${left} left` : ''
      }; retry in ${retryAfter} s`,
    );
    // 429 whatever the Accept header, with the time left in this window.
    error.extensions.http = { status: 429, headers: { 'retry-after': String(retryAfter) } };
    return { errors: [error] };
  };
  return {
    execute(args) {
      const context = args.contextValue as Context;
      return refuse('request', context) ?? refuse('action', context, actionsOf(args));
    },
    subscribe: (args) => refuse('subscription', args.contextValue as Context),
  };
}
