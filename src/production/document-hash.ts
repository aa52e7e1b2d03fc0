import { createHash } from 'node:crypto';

/**
 * The sha256 the console and the client preset (`hashAlgorithm: 'sha256'`) name a document by:
 * a module of its own, so that src/console/documents.ts reads it without loading the server.
 */
export const documentHash = (document: string) =>
  createHash('sha256').update(document).digest('hex');
