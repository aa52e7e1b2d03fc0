import { readFile } from 'node:fs/promises';
import { printSchema } from 'graphql';
import { expect, test } from 'vitest';
import { schema } from '../src/schema/index.js';

test('schema.graphql is the schema printed from the code (run `npm run schema` after a change)', async () => {
  const file = await readFile(new URL('../schema.graphql', import.meta.url), 'utf8');
  expect(file).toBe(`${printSchema(schema)}\n`);
});
