import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { parseCommand } from './command-line.js';

/**
 * The schema as clients see it (schema.graphql), and as a supergraph composes it with
 * FEDERATION=true (schema.subgraph.graphql, with its entity keys). `--write` regenerates
 * both; `--check` fails when either differs from the code. The schema takes seconds to load,
 * so the command reads its line first (src/command-line.ts).
 */
export async function printedSchemas() {
  const [{ printSubgraphSchema }, { printSchema }, { schema, subgraphSchema }] = await Promise.all([
    import('@apollo/subgraph'),
    import('graphql'),
    import('./schema/index.js'),
  ]);
  return [
    { file: 'schema.graphql', print: () => `${printSchema(schema)}\n` },
    { file: 'schema.subgraph.graphql', print: () => `${printSubgraphSchema(subgraphSchema())}\n` },
  ] as const;
}

const pathOf = (file: string) => new URL(`../${file}`, import.meta.url);

async function run(): Promise<void> {
  const { values } = parseCommand({
    name: 'tsx src/print-schema.ts',
    synopsis: '[--write | --check]',
    about: `Prints the schema as clients see it (schema.graphql). npm run schema (--write) rewrites
schema.graphql and schema.subgraph.graphql from the code; npm run schema:check (--check)
fails when either differs from it.`,
    options: {
      write: { type: 'boolean', description: 'rewrite both files' },
      check: { type: 'boolean', description: 'exit 1 when either file is out of date' },
    },
  });
  const printed = await printedSchemas();
  if (values.check) {
    for (const { file, print } of printed) {
      const current = await readFile(pathOf(file), 'utf8').catch(() => '');
      if (current !== print()) {
        process.stderr.write(`${file} is out of date: run \`npm run schema\`\n`);
        process.exit(1);
      }
    }
  } else if (values.write) {
    for (const { file, print } of printed) await writeFile(pathOf(file), print());
  } else {
    process.stdout.write(printed[0].print());
  }
}

// test/schema-file.test.ts imports printedSchemas; `npm run schema` runs this file.
if (process.argv[1] === fileURLToPath(import.meta.url)) await run();
