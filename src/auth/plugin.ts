import type { Plugin } from 'graphql-yoga';
import { AppError } from '../errors.js';
import type { Viewer } from '../model/viewer.js';
import { requestIdOf } from '../request-id.js';
import type { RecordAuthFailure } from './failures.js';
import type { Authenticate } from './jwt.js';

/**
 * The response parts of a refusal: src/masking.ts `maskedReply`, bound to the error mask by
 * src/yoga.ts (auth/ sits below the mask's layer, docs/architecture.md "Layers"), so that the
 * body is masked and counted as every error a client receives.
 */
export type Refuse = (
  error: AppError,
  init: { status: number; requestId: string; headers: Record<string, string> },
) => {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
};

/**
 * Authenticates every GraphQL request before any parsing or database work; a failure is an
 * HTTP 401 with a GraphQL-shaped UNAUTHENTICATED error (`refuse`), and the refusal is
 * recorded (its warn line and agentgraph_auth_failures_total). The GraphiQL page itself (a
 * GET for HTML) carries no data and loads without a token.
 */
export function useAuthentication(
  authenticate: Authenticate,
  viewers: WeakMap<Request, Viewer>,
  recordFailure: RecordAuthFailure,
  refuse: Refuse,
): Plugin {
  const refused = (
    request: Request,
    endResponse: (response: Response) => void,
    fetchAPI: { Response: typeof Response },
    error: unknown,
  ) => {
    if (!(error instanceof AppError)) throw error;
    const requestId = requestIdOf(request);
    recordFailure('http', error, requestId);
    const { body, ...init } = refuse(error, {
      status: 401,
      requestId,
      headers: { 'www-authenticate': 'Bearer' },
    });
    endResponse(new fetchAPI.Response(body, init));
  };
  return {
    // Every request yoga sees, whatever its path: the HTTP server hands yoga /graphql only,
    // and a path variant must never be a way past this check.
    onRequest({ request, endResponse, fetchAPI }) {
      if (request.method === 'GET' && request.headers.get('accept')?.includes('text/html')) return;
      const viewer = authenticate(request.headers.get('authorization'));
      // A viewer known at once is set at once: a promise from this hook would make yoga's
      // remaining request hooks, and the request, wait a turn of microtasks.
      if (!(viewer instanceof Promise)) {
        viewers.set(request, viewer);
        return;
      }
      return viewer.then(
        (known) => {
          viewers.set(request, known);
        },
        (error: unknown) => refused(request, endResponse, fetchAPI, error),
      );
    },
  };
}
