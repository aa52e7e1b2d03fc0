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

/**
 * Every file of src/ in one layer, lowest first (docs/architecture.md, "Layers"): a file
 * imports only from its own layer or a lower one. A new top-level file or folder must be
 * placed here, so none escapes the rules.
 */
const LAYERS: readonly (readonly string[])[] = [
  [
    'config.ts',
    'errors.ts',
    'model/',
    'request-id.ts',
    'logger.ts',
    'iterables.ts',
    'command-line.ts',
  ],
  ['db/', 'metrics.ts'],
  ['repositories/', 'a2a/', 'live/', 'auth/', 'oracle-check/'],
  ['loaders.ts', 'context.ts'],
  ['builder.ts', 'schema/'],
  [
    'hardening/',
    'production/',
    'live-queries/',
    'tracing/',
    'masking.ts',
    'subscription-events.ts',
    'request-log.ts',
    'graphiql.ts',
    'compiled-queries.ts',
    'statement-log.ts',
    'yoga.ts',
  ],
  ['transport/'],
  ['server.ts', 'listen.ts', 'home.ts', 'console/', 'main.ts', 'mint-token.ts', 'print-schema.ts'],
];

/** The layer of a file relative to src/, by its folder or its own name; -1 when it has none. */
const layerOf = (file: string) => {
  const unit = file.includes('/') ? `${file.split('/')[0]}/` : file;
  return LAYERS.findIndex((layer) => layer.includes(unit));
};

const unitOf = (file: string) => (file.includes('/') ? `${file.split('/')[0]}/` : file);

/** The rules, each a predicate on one import; `test/boundaries.test.ts` plants a breach of each. */
const RULES: Record<string, (edge: SourceImport) => boolean> = {
  'database drivers are imported only under src/db/': ({ file, specifier }) =>
    isPackage(specifier, DRIVERS) && !file.startsWith('db/'),
  'nothing under src/db/, src/repositories/ or src/live/ imports a GraphQL library': ({
    file,
    specifier,
  }) => BELOW_GRAPHQL.some((folder) => file.startsWith(folder)) && isPackage(specifier, GRAPHQL),
  'a file imports only from its own layer or a lower one': ({ file, target }) =>
    target !== null && layerOf(target) > layerOf(file),
  'schema/ does not import db/ (resolvers never see SQL)': ({ file, target }) =>
    file.startsWith('schema/') && Boolean(target?.startsWith('db/')),
  'config.ts imports nothing of the project': ({ file, target }) =>
    file === 'config.ts' && target !== null,
  'a2a/ and repositories/ do not depend on each other': ({ file, target }) =>
    target !== null &&
    ((file.startsWith('a2a/') && target.startsWith('repositories/')) ||
      (file.startsWith('repositories/') && target.startsWith('a2a/'))),
  'outside live/, only its public entry live/hub.ts is imported': ({ file, target }) =>
    Boolean(target?.startsWith('live/')) && !file.startsWith('live/') && target !== 'live/hub.ts',
};

/** Planted imports, one breach of each rule, to show that the rule can fail. */
const PLANTED: Record<keyof typeof RULES, SourceImport> = {
  'database drivers are imported only under src/db/': {
    file: 'schema/agent.ts',
    specifier: 'oracledb',
    target: null,
  },
  'nothing under src/db/, src/repositories/ or src/live/ imports a GraphQL library': {
    file: 'live/hub.ts',
    specifier: 'graphql',
    target: null,
  },
  'a file imports only from its own layer or a lower one': {
    file: 'repositories/teams.ts',
    specifier: '../loaders.js',
    target: 'loaders.ts',
  },
  'schema/ does not import db/ (resolvers never see SQL)': {
    file: 'schema/pagination.ts',
    specifier: '../db/sql/fragment.js',
    target: 'db/sql/fragment.ts',
  },
  'config.ts imports nothing of the project': {
    file: 'config.ts',
    specifier: './a2a/paths.js',
    target: 'a2a/paths.ts',
  },
  'a2a/ and repositories/ do not depend on each other': {
    file: 'a2a/start.ts',
    specifier: '../repositories/teams.js',
    target: 'repositories/teams.ts',
  },
  'outside live/, only its public entry live/hub.ts is imported': {
    file: 'transport/shared-delivery.ts',
    specifier: '../live/channel.js',
    target: 'live/channel.ts',
  },
};

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

  test('every file of src/ has a layer', () => {
    const files = sourceFiles(SRC).map((path) => relative(SRC, path));
    expect(files.filter((file) => layerOf(file) < 0).map(unitOf)).toEqual([]);
  });

  for (const [rule, breaks] of Object.entries(RULES)) {
    test(rule, () => {
      expect(IMPORTS.filter(breaks).map(edge)).toEqual([]);
      // The rule can fail: a planted breach of it is caught.
      expect(breaks(PLANTED[rule] as SourceImport)).toBe(true);
    });
  }

  test('no import cycle between files', () => {
    expect(cycles().map((cycle) => cycle.join(' → '))).toEqual([]);
  });
});
