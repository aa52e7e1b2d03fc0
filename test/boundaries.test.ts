import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';

/**
 * The layering of docs/architecture.md ("Layers"), read from the import statements of every file
 * under src/: schema → loaders → repositories → driver, and the poller below GraphQL.
 */
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SRC = join(ROOT, 'src');

const DRIVERS = ['oracledb', '@electric-sql/pglite'];
const GRAPHQL = [
  'graphql',
  'graphql-yoga',
  'graphql-ws',
  '@pothos/',
  '@graphql-yoga/',
  '@envelop/',
];
/** Folders that sit below the schema and must not know a GraphQL library. */
const BELOW_GRAPHQL = ['db/', 'repositories/', 'live/'];

interface SourceImport {
  /** Path relative to src/, e.g. `live/hub.ts`. */
  readonly file: string;
  readonly specifier: string;
  /** For a relative specifier, the imported file relative to src/. */
  readonly target: string | null;
}

function sourceFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

// Static imports and re-exports (`import x from`, `import type … from`, `export … from`, bare
// `import '…'`) and dynamic `import('…')`.
const STATIC = /^\s*(?:import|export)\s+(?:type\s+)?(?:[^'"();]*?\s+from\s+)?(['"])([^'"]+)\1/gm;
const DYNAMIC = /\bimport\s*\(\s*(['"])([^'"]+)\1\s*\)/g;

function importsOf(path: string): SourceImport[] {
  const text = readFileSync(path, 'utf8');
  const file = relative(SRC, path);
  return [...text.matchAll(STATIC), ...text.matchAll(DYNAMIC)].map((match) => {
    const specifier = match[2] as string;
    const target = specifier.startsWith('.')
      ? relative(SRC, resolve(dirname(path), specifier)).replace(/\.js$/, '.ts')
      : null;
    return { file, specifier, target };
  });
}

const IMPORTS = sourceFiles(SRC).flatMap(importsOf);

const isPackage = (specifier: string, names: readonly string[]) =>
  names.some((name) =>
    name.endsWith('/')
      ? specifier.startsWith(name)
      : specifier === name || specifier.startsWith(`${name}/`),
  );

const edge = ({ file, specifier }: SourceImport) => `${file} → ${specifier}`;

function cycles(): string[][] {
  const graph = new Map<string, string[]>();
  for (const { file, target } of IMPORTS) {
    if (target === null) continue;
    graph.set(file, [...(graph.get(file) ?? []), target]);
  }
  const found: string[][] = [];
  const done = new Set<string>();
  const path: string[] = [];
  const visit = (file: string) => {
    const at = path.indexOf(file);
    if (at >= 0) {
      found.push([...path.slice(at), file]);
      return;
    }
    if (done.has(file)) return;
    path.push(file);
    for (const target of graph.get(file) ?? []) visit(target);
    path.pop();
    done.add(file);
  };
  for (const file of graph.keys()) visit(file);
  return found;
}

describe('import boundaries', () => {
  test('the reader sees the imports it judges', () => {
    // Without this, a reader that finds nothing would make every rule below pass.
    expect(IMPORTS.map(edge)).toEqual(
      expect.arrayContaining([
        'db/oracle/driver.ts → oracledb',
        'db/embedded/database.ts → @electric-sql/pglite',
        'builder.ts → @pothos/core',
        'live/hub.ts → ./poller.js',
      ]),
    );
    expect(IMPORTS.find(({ file }) => file === 'context.ts')?.target).toBeTruthy();
  });

  test('database drivers are imported only under src/db/', () => {
    const offending = IMPORTS.filter(
      ({ file, specifier }) => isPackage(specifier, DRIVERS) && !file.startsWith('db/'),
    );
    expect(offending.map(edge)).toEqual([]);
  });

  test('nothing under src/db/, src/repositories/ or src/live/ imports a GraphQL library', () => {
    const offending = IMPORTS.filter(
      ({ file, specifier }) =>
        BELOW_GRAPHQL.some((folder) => file.startsWith(folder)) && isPackage(specifier, GRAPHQL),
    );
    expect(offending.map(edge)).toEqual([]);
  });

  test('no import cycle between files', () => {
    expect(cycles().map((cycle) => cycle.join(' → '))).toEqual([]);
  });
});
