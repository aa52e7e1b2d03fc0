import { readFile, writeFile } from 'node:fs/promises';
import { printSchema } from 'graphql';
import { schema } from './schema/index.js';

/** `--write` regenerates schema.graphql; `--check` fails when it differs from the code. */
const path = new URL('../schema.graphql', import.meta.url);
const printed = `${printSchema(schema)}\n`;

if (process.argv.includes('--check')) {
  const current = await readFile(path, 'utf8').catch(() => '');
  if (current !== printed) {
    process.stderr.write('schema.graphql is out of date: run `npm run schema`\n');
    process.exit(1);
  }
} else if (process.argv.includes('--write')) {
  await writeFile(path, printed);
} else {
  process.stdout.write(printed);
}
