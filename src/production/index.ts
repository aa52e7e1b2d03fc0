import type { GraphQLSchema } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { LiveHub } from '../live/hub.js';
import type { Metrics } from '../metrics.js';
import type { Viewer } from '../model/viewer.js';
import { createResponseCache } from './response-cache.js';
import { useSocketParams } from './socket-params.js';
import { DOCUMENT_ID_PARAM, type Manifest, trustedDocuments } from './trusted-documents.js';

export { trustedManifest } from './trusted-documents.js';

/** What GraphiQL opens with when documents outside the manifests are refused. */
export const TRUSTED_ONLY_QUERY = `# This server runs trusted documents only (TRUSTED_DOCUMENTS_ONLY=true):
# ad-hoc queries typed here are refused with PERSISTED_QUERY_REQUIRED.
# Frontends send the hash of a document from their manifest
# (extensions.persistedQuery.sha256Hash); see the README, "Trusted documents".
`;

export interface ProductionOptions {
  readonly config: Config;
  readonly schema: GraphQLSchema;
  /** trustedManifest(): read before anything else starts, so that a bad file fails fast. */
  readonly manifest: Manifest;
  readonly viewers: WeakMap<Request, Viewer>;
  readonly live: LiveHub;
  readonly metrics: Metrics;
  readonly logger: Logger;
}

/** Trusted documents and the response cache: the yoga plugins src/yoga.ts adds after authentication. */
export interface Production {
  readonly plugins: readonly Plugin[];
  /** Request parameters yoga must accept besides GraphQL's own. */
  readonly paramNames: readonly string[];
  /** GraphiQL's opening text, when it must say that ad-hoc queries are off. */
  readonly graphiqlQuery: string | undefined;
  close(): Promise<void>;
}

/** Trusted documents, and the response cache when RESPONSE_CACHE_TTL_MS is set. */
export function createProduction(options: ProductionOptions): Production {
  const { config, manifest } = options;
  const { production } = config;
  const cache = production.responseCacheTtlMs > 0 ? createResponseCache(options) : undefined;
  return {
    // Trusted documents first: the cache keys on the document they resolve to.
    plugins: [trustedDocuments(production, manifest), ...(cache?.plugins ?? []), useSocketParams()],
    paramNames: [DOCUMENT_ID_PARAM],
    graphiqlQuery: production.trustedDocumentsOnly ? TRUSTED_ONLY_QUERY : undefined,
    close: async () => {
      await cache?.close();
    },
  };
}
