import type { A2ACards } from './a2a/client.js';
import type { LoggedStatement } from './db/statement-log.js';
import type { LiveHub } from './live/hub.js';
import { Loaders } from './loaders.js';
import type { Viewer } from './model/viewer.js';
import type { Repositories } from './repositories/create.js';

/**
 * What every resolver receives: one per request, and one per event of a subscription (see
 * subscription-events.ts), so the loaders (and the dataloaders that Pothos keys on this
 * object) never outlive the operation or event they serve.
 */
export interface Context {
  readonly requestId: string;
  readonly viewer: Viewer;
  /** Runtime statistics have no owner; this says whether non-admins may read them. */
  readonly statsPublic: boolean;
  /** Bound to the viewer. */
  readonly repositories: Repositories;
  readonly loaders: Loaders;
  /** A2A agent list and cards, through the cross-request cache. */
  readonly a2a: A2ACards;
  /** What this request or event cost, for its log line; when it was stopped. */
  readonly usage: OperationUsage;
  /** Live subscriptions of this process. */
  readonly live: LiveHub;
  /** The request's Idempotency-Key header (runTeam's key when its argument is absent). */
  readonly idempotencyKey: string | null;
  /**
   * The graphql-ws socket an operation came on (yoga adds the server context that
   * transport/websocket.ts hands getEnveloped); absent over HTTP and SSE.
   */
  readonly socket?: object;
}

/**
 * What one operation has cost so far, and its stop. Once `stopped` aborts (the operation
 * timed out or its client went away: hardening/request-timeout.ts), the operation sends no
 * further statement.
 */
export interface OperationUsage {
  statements: number;
  /**
   * Whether and why the operation stopped: the one way cancellation reaches a resolver, for a
   * query, a mutation and a subscription event alike (src/compiled-queries.ts). The counted
   * driver asks it before each statement (`throwIfAborted`); a long call passes its `signal`
   * on (executeAgent).
   */
  stopped?: OperationStop;
  /**
   * The statements themselves, when this operation's response shows them (development mode,
   * an administrator: src/statement-log.ts decides and fills it).
   */
  log?: LoggedStatement[];
}

/** An operation's stop, as hardening/request-timeout.ts gives each operation one. */
export interface OperationStop {
  readonly aborted: boolean;
  /** What stopped it: the error its further statements fail with. */
  readonly reason: unknown;
  /** Throws `reason` once the operation has stopped. */
  throwIfAborted(): void;
  /** The stop as an AbortSignal, for a call that listens to one (made when first asked). */
  readonly signal: AbortSignal;
}

/** Repositories limited to what one viewer may see, counting their statements into `usage`. */
export type RepositoriesFor = (viewer: Viewer, usage: OperationUsage) => Repositories;

/**
 * What one operation holds alone, a request or one event of a subscription: its statement
 * count (with the statements themselves when `logged`), repositories that count into it, and
 * loaders over those.
 */
export function operationState(
  repositoriesFor: RepositoriesFor,
  viewer: Viewer,
  logged = false,
): Pick<Context, 'usage' | 'repositories' | 'loaders'> {
  const usage: OperationUsage = logged ? { statements: 0, log: [] } : { statements: 0 };
  const repositories = repositoriesFor(viewer, usage);
  return { usage, repositories, loaders: new Loaders(repositories) };
}
