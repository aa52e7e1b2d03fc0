import { GraphQLError } from 'graphql';

/**
 * A document, subscription or rate limit exceeded: BAD_USER_INPUT, HTTP 400 for
 * `application/graphql-response+json` clients and 200 for JSON ones.
 */
export function limitExceeded(message: string): GraphQLError {
  return new GraphQLError(message, {
    extensions: { code: 'BAD_USER_INPUT', http: { status: 400, spec: true } },
  });
}
