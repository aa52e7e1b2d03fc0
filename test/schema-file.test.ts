import { readFile } from 'node:fs/promises';
import { expect, test } from 'vitest';
import { printedSchemas } from '../src/print-schema.js';

test.each(await printedSchemas())(
  '$file is the schema printed from the code (run `npm run schema` after a change)',
  async ({ file, print }) => {
    expect(await readFile(new URL(`../${file}`, import.meta.url), 'utf8')).toBe(print());
  },
);
