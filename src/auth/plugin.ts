import type { Plugin } from 'graphql-yoga';
import { AppError } from '../errors.js';
import type { Viewer } from '../model/viewer.js';
import { requestIdOf } from '../request-id.js';
import type { RecordAuthFailure } from './failures.js';
import type { Authenticate } from './jwt.js';

/**
 * Authenticates every GraphQL request before any parsing or database work; a failure is an
 * HTTP 401 with a GraphQL-shaped UNAUTHENTICATED error. The GraphiQL page itself (a GET for
 * HTML) carries no data and loads without a token.
 */
export function useAuthentication(
  authenticate: Authenticate,
  viewers: WeakMap<Request, Viewer>,
  recordFailure: RecordAuthFailure,
): Plugin {
  return {
    // Every request yoga sees, whatever its path: the HTTP server hands yoga /graphql only,
    // and a path variant must never be a way past this check.
    async onRequest({ request, endResponse, fetchAPI }) {
      if (request.method === 'GET' && request.headers.get('accept')?.includes('text/html')) return;
      try {
        viewers.set(request, await authenticate(request.headers.get('authorization')));
      } catch (error) {
        if (!(error instanceof AppError)) throw error;
        recordFailure('http', error, requestIdOf(request));
        endResponse(
          new fetchAPI.Response(
            JSON.stringify({
              errors: [{ message: error.message, extensions: { code: error.code } }],
            }),
            {
              status: 401,
              headers: { 'content-type': 'application/json', 'www-authenticate': 'Bearer' },
            },
          ),
        );
      }
    },
  };
}
