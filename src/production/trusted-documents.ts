import { readFileSync } from 'node:fs';
import {
  defaultExtractPersistedOperationId,
  usePersistedOperations,
} from '@graphql-yoga/plugin-persisted-operations';
import { type GraphQLSchema, parse, validate } from 'graphql';
import { createGraphQLError, type Plugin, type YogaInitialContext } from 'graphql-yoga';
import type { ProductionConfig } from '../config.js';
import { AppError, StartupError } from '../errors.js';

/** hash → document, as @graphql-codegen/client-preset's `persistedDocuments` writes it. */
export type Manifest = ReadonlyMap<string, string>;

/**
 * The client preset names documents `sha256:<hex>` (and clients send that as `documentId`);
 * Apollo-style clients send the bare hex as extensions.persistedQuery.sha256Hash. Both name
 * the same document.
 */
const bareHash = (hash: string) => hash.replace(/^sha256:/, '');

/**
 * Reads a manifest and checks every document against the schema, so that a stale or broken
 * file stops start-up instead of failing its clients one request at a time.
 */
export function readManifest(
  path: string,
  schema: GraphQLSchema,
  label = `TRUSTED_DOCUMENTS=${path}`,
): Manifest {
  const fail = (why: string): never => {
    throw new StartupError(`${label}: ${why}`);
  };
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    fail(
      error instanceof SyntaxError
        ? `not JSON (${error.message})`
        : `cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`,
    );
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    fail('must be a JSON object of hash → document, as the client preset writes it');
  }
  const manifest = new Map<string, string>();
  const problems: string[] = [];
  for (const [hash, document] of Object.entries(raw as Record<string, unknown>)) {
    if (typeof document !== 'string') {
      problems.push(`${hash}: the document is not a string`);
      continue;
    }
    const problem = documentProblem(schema, document);
    if (problem !== undefined) problems.push(`${hash}: ${problem}`);
    manifest.set(bareHash(hash), document);
  }
  if (problems.length > 0) {
    const more = problems.length > 3 ? ` (and ${problems.length - 3} more)` : '';
    fail(
      `${problems.length} document(s) do not match the schema: ${problems.slice(0, 3).join('; ')}${more}`,
    );
  }
  return manifest;
}

/** By schema, then document: why it does not match, or undefined when it does. */
const checked = new WeakMap<GraphQLSchema, Map<string, string | undefined>>();

/**
 * Why `document` does not match `schema`, checked once per schema and document in a process:
 * every server a process creates reads the console's manifest (readManifest), and validating
 * its documents took 16-18 ms of CPU each time (20 in a row, load 17), and a process of the
 * tests creates dozens of servers over the same schema.
 */
function documentProblem(schema: GraphQLSchema, document: string): string | undefined {
  let documents = checked.get(schema);
  if (!documents) {
    documents = new Map();
    checked.set(schema, documents);
  }
  if (documents.has(document)) return documents.get(document);
  let problem: string | undefined;
  try {
    problem = validate(schema, parse(document))[0]?.message;
  } catch (error) {
    problem = (error as Error).message;
  }
  documents.set(document, problem);
  return problem;
}

/** The console's manifest (src/console/serve.ts names it) and TRUSTED_DOCUMENTS' one, as one look-up. */
export function trustedManifest(
  config: ProductionConfig,
  schema: GraphQLSchema,
  consoleManifest: string,
): Manifest {
  const manifest = new Map(
    readManifest(consoleManifest, schema, `the console's manifest ${consoleManifest}`),
  );
  if (config.trustedDocuments) {
    for (const [hash, document] of readManifest(config.trustedDocuments, schema)) {
      manifest.set(hash, document);
    }
  }
  return manifest;
}

/** The request parameter, besides GraphQL's own, that names a trusted document. */
export const DOCUMENT_ID_PARAM = 'documentId';

/**
 * Trusted documents through @graphql-yoga/plugin-persisted-operations: a request names a
 * document by `documentId` (the client preset's `sha256:<hex>`) or by
 * `extensions.persistedQuery.sha256Hash` (the shape Apollo and urql clients send);
 * in TRUSTED_DOCUMENTS_ONLY mode a document sent as text is refused. The plugin works in
 * yoga's onParams, which HTTP (GET, POST, SSE) runs and graphql-ws reaches through
 * socket-params.ts.
 */
export function trustedDocuments(config: ProductionConfig, manifest: Manifest): Plugin {
  const only = config.trustedDocumentsOnly;
  return usePersistedOperations<YogaInitialContext>({
    getPersistedOperation: (hash) => manifest.get(bareHash(hash)) ?? null,
    extractPersistedOperationId: (params, request, context) => {
      const documentId = (params as Record<string, unknown>)[DOCUMENT_ID_PARAM];
      if (typeof documentId === 'string') return documentId;
      return defaultExtractPersistedOperationId(params, request, context);
    },
    allowArbitraryOperations: !only,
    customErrors: {
      notFound: () =>
        new AppError(
          'PERSISTED_QUERY_NOT_FOUND',
          'No trusted document has this hash: the manifest the server loaded (TRUSTED_DOCUMENTS) does not list it',
        ),
      persistedQueryOnly: () =>
        new AppError(
          'PERSISTED_QUERY_REQUIRED',
          'This server runs trusted documents only (TRUSTED_DOCUMENTS_ONLY=true): send the hash of a document in its manifest (documentId, or extensions.persistedQuery.sha256Hash), not the document text',
        ),
      keyNotFound: () =>
        only
          ? new AppError(
              'PERSISTED_QUERY_REQUIRED',
              'Send the hash of a trusted document (documentId, or extensions.persistedQuery.sha256Hash)',
            )
          : createGraphQLError('Must provide query string.', {
              extensions: { code: 'BAD_USER_INPUT', http: { status: 400 } },
            }),
    },
  });
}
