import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type TypeScript from 'typescript';
import { parseCommand } from '../command-line.js';
import { documentHash } from '../production/document-hash.js';
import { CONSOLE_MANIFEST } from './serve.js';

/**
 * The console's GraphQL documents, as its script sends them, and their manifest
 * (static/persisted-documents.json, in the client preset's format) that the server loads
 * and the console reads to send hashes instead of text, so that it keeps working when
 * TRUSTED_DOCUMENTS_ONLY=true. `npm run console:documents` rewrites the manifest;
 * test/console-documents.test.ts fails while it differs from the script. A development
 * tool (TypeScript parses the script): the server only reads the manifest.
 */

/** The console's modules that send documents. */
export const CONSOLE_SCRIPTS = ['console.js', 'agent.js'] as const;

const scriptText = (file: string) =>
  readFileSync(new URL(`./static/${file}`, import.meta.url), 'utf8');

// TypeScript's compiler (several seconds of loading) is required when a script is first
// read, not when the module loads, so that `--help` answers at once (src/command-line.ts).
const require = createRequire(import.meta.url);
let compiler: typeof TypeScript | undefined;
const typescript = () => (compiler ??= require('typescript') as typeof TypeScript);

export interface ConsoleDocument {
  /** The top-level constant that holds it (`WAITING`, `TEAM`, …). */
  readonly name: string;
  readonly text: string;
}

/**
 * One of the console's scripts, parsed, and its documents: the top-level `const` string and
 * template literals that start with an operation keyword, with `${NAME}` parts resolved from
 * the other top-level constants, as the browser evaluates them.
 */
export function readConsoleScript(
  file: (typeof CONSOLE_SCRIPTS)[number] = 'console.js',
  text = scriptText(file),
): {
  readonly source: TypeScript.SourceFile;
  readonly documents: readonly ConsoleDocument[];
} {
  const ts = typescript();
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true, ts.ScriptKind.JS);
  const constants = new Map<string, TypeScript.Expression>();
  for (const statement of source.statements) {
    if (!ts.isVariableStatement(statement)) continue;
    for (const declaration of statement.declarationList.declarations) {
      if (ts.isIdentifier(declaration.name) && declaration.initializer) {
        constants.set(declaration.name.text, declaration.initializer);
      }
    }
  }
  const textOf = (expression: TypeScript.Expression): string | undefined => {
    if (ts.isStringLiteral(expression) || ts.isNoSubstitutionTemplateLiteral(expression)) {
      return expression.text;
    }
    if (!ts.isTemplateExpression(expression)) return undefined;
    let resolved = expression.head.text;
    for (const span of expression.templateSpans) {
      const part = ts.isIdentifier(span.expression)
        ? constants.get(span.expression.text)
        : undefined;
      const value = part && textOf(part);
      if (value === undefined) return undefined;
      resolved += value + span.literal.text;
    }
    return resolved;
  };
  const documents = [...constants].flatMap(([name, expression]) => {
    const value = textOf(expression);
    return value !== undefined && /^\s*(query|mutation|subscription|fragment)\b/.test(value)
      ? [{ name, text: value }]
      : [];
  });
  return { source, documents };
}

/** hash → document, sorted by hash so that the file changes only when a document does. */
export function consoleManifest(
  documents = CONSOLE_SCRIPTS.flatMap((file) => readConsoleScript(file).documents),
): Record<string, string> {
  const entries = documents.map(({ text }) => [documentHash(text), text] as const);
  return Object.fromEntries(entries.sort(([a], [b]) => a.localeCompare(b)));
}

export const printManifest = (manifest: Record<string, string>) =>
  `${JSON.stringify(manifest, null, 2)}\n`;

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseCommand({
    name: 'npm run console:documents --',
    synopsis: '[--check]',
    about: `Rewrites src/console/static/persisted-documents.json, the console's trusted-document
manifest, from the operations in console.js.`,
    options: { check: { type: 'boolean', description: 'exit 1 when the file is out of date' } },
  });
  const printed = printManifest(consoleManifest());
  if (values.check) {
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
