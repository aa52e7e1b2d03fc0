import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { documentHash } from '../production/trusted-documents.js';
import { CONSOLE_MANIFEST } from './serve.js';

/**
 * The console's GraphQL documents, as its script sends them, and their manifest
 * (static/persisted-documents.json, in the client preset's format) that the server loads
 * and the console reads to send hashes instead of text, so that it keeps working when
 * TRUSTED_DOCUMENTS_ONLY=true. `npm run console:documents` rewrites the manifest;
 * test/production/trusted-documents.test.ts fails while it differs from the script.
 */

const SCRIPT = new URL('./static/console.js', import.meta.url);

/**
 * The script's top-level string constants (`const NAME = '…'` or a template literal whose
 * only substitutions name earlier constants), evaluated; the documents are those that start
 * with an operation keyword. A substitution of anything else fails, rather than yield a
 * document the script would never send.
 */
export function consoleDocuments(script = readFileSync(SCRIPT, 'utf8')): string[] {
  const constants = new Map<string, string>();
  const declaration = /^const ([A-Z][A-Z0-9_]*) =\s*(?:'([^'\\\n]*)'|`([^`\\]*)`);/gm;
  for (const [, name, quoted, template] of script.matchAll(declaration)) {
    const value =
      quoted ??
      (template as string).replace(/\$\{([^}]*)\}/g, (_, ref: string) => {
        const known = constants.get(ref.trim());
        if (known === undefined) {
          throw new Error(
            `console.js: ${name} substitutes \${${ref}}, which is no string constant`,
          );
        }
        return known;
      });
    constants.set(name as string, value);
  }
  return [...constants.values()].filter((value) => /^(query|mutation|subscription)\b/.test(value));
}

/** hash → document, sorted by hash so that the file changes only when a document does. */
export function consoleManifest(documents = consoleDocuments()): Record<string, string> {
  const entries = documents.map((document) => [documentHash(document), document] as const);
  return Object.fromEntries(entries.sort(([a], [b]) => a.localeCompare(b)));
}

export const printManifest = (manifest: Record<string, string>) =>
  `${JSON.stringify(manifest, null, 2)}\n`;

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const printed = printManifest(consoleManifest());
  if (process.argv.includes('--check')) {
    if (readFileSync(CONSOLE_MANIFEST, 'utf8') !== printed) {
      process.stderr.write(
        'src/console/static/persisted-documents.json is out of date: run `npm run console:documents`\n',
      );
      process.exit(1);
    }
  } else {
    await writeFile(CONSOLE_MANIFEST, printed);
  }
}
