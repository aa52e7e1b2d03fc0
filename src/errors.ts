/**
 * Errors that carry a code of the API contract (docs/architecture.md, "Error codes"). They are plain errors so that layers
 * below the schema can raise them without knowing GraphQL; the yoga error mask turns them
 * into GraphQL errors with `extensions.code` and hides everything else.
 */

export const ERROR_CODES = [
  'NOT_FOUND',
  'BAD_USER_INPUT',
  'UNAUTHENTICATED',
  'FORBIDDEN',
  /** An action on something no longer in the state it needs (answering a run that no longer waits). */
  'CONFLICT',
  'UPSTREAM_UNAVAILABLE',
  'TIMEOUT',
  /** A trusted-document hash that no manifest lists (src/production/trusted-documents.ts). */
  'PERSISTED_QUERY_NOT_FOUND',
  /** A document sent as text to a server that runs trusted documents only. */
  'PERSISTED_QUERY_REQUIRED',
  /**
   * A live query over MAX_LIVE_QUERIES_PER_VIEWER or MAX_LIVE_QUERIES (extensions.limit names
   * which): end one, or ask without @live.
   */
  'LIVE_QUERY_LIMIT',
  'INTERNAL',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

export const isErrorCode = (value: unknown): value is ErrorCode =>
  (ERROR_CODES as readonly unknown[]).includes(value);

export class AppError extends Error {
  /** Extra members of the GraphQL error's extensions (graphql-js copies them over). */
  readonly extensions: Readonly<Record<string, unknown>> | undefined;

  constructor(
    readonly code: ErrorCode,
    message: string,
    options?: { cause?: unknown; extensions?: Readonly<Record<string, unknown>> },
  ) {
    super(message, options);
    this.name = 'AppError';
    this.extensions = options?.extensions;
  }
}

/**
 * A failure to start that the operator can fix (unreachable database, wrong credentials). Its
 * message is written for the operator and printed alone: no stack trace, no cause chain.
 */
export class StartupError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StartupError';
  }
}

export const notFound = (message: string) => new AppError('NOT_FOUND', message);

/** CONFLICT, with the state the thing is in (extensions.state) when known. */
export const conflict = (message: string, state?: string | null) =>
  new AppError('CONFLICT', message, state === undefined ? {} : { extensions: { state } });

export const badUserInput = (message: string) => new AppError('BAD_USER_INPUT', message);
