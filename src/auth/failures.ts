import type { Logger } from 'pino';
import type { AppError } from '../errors.js';
import type { Metrics } from '../metrics.js';

export type AuthTransport = 'http' | 'websocket';

/** Records one refused caller: a warn line and agentgraph_auth_failures_total. */
export type RecordAuthFailure = (
  transport: AuthTransport,
  error: AppError,
  requestId?: string,
) => void;

/**
 * A JWKS outage or a clock problem locks everyone out at once; counting refusals by reason
 * makes that visible. The reason is the authenticator's message, which never repeats the
 * token and comes from a fixed set (see auth/jwt.ts), so it is safe as a metric label.
 */
export function authFailureRecorder(logger: Logger, metrics: Metrics): RecordAuthFailure {
  return (transport, error, requestId) => {
    const reason = error.message.startsWith('missing bearer token')
      ? 'missing bearer token'
      : error.message;
    metrics.authFailures.inc({ transport, reason });
    logger.warn({ requestId, transport, reason }, 'authentication failed');
  };
}
