import { describe, expect, test } from 'vitest';
import { contractProblems } from '../src/model/call-contract.js';

const declared = [
  { title: 'report_text', type: 'string', required: true },
  { title: 'max_words', type: 'integer', required: true },
  { title: 'language', type: 'string', required: false },
  { title: 'options', type: 'object', required: false },
  { title: 'anything', type: null, required: false },
];

describe('the call contract (seed 000)', () => {
  test('an input with a default may be left out; one without may not', () => {
    expect(
      contractProblems(declared, [
        { name: 'report_text', value: 'x' },
        { name: 'max_words', value: 20 },
      ]),
    ).toEqual([]);
    expect(contractProblems(declared, [{ name: 'report_text', value: 'x' }])).toMatchObject([
      { input: 'max_words', kind: 'missing' },
    ]);
  });

  test('JSON Schema types: integer is whole, object is not an array, no type admits anything', () => {
    const problems = contractProblems(declared, [
      { name: 'report_text', value: 'x' },
      { name: 'max_words', value: 2.5 },
      { name: 'options', value: [1] },
      { name: 'anything', value: { any: ['thing'] } },
    ]);
    expect(problems.map((p) => [p.input, p.kind, p.message])).toEqual([
      ['max_words', 'type', '"max_words" must be of type integer, got a number'],
      ['options', 'type', '"options" must be of type object, got an array'],
    ]);
  });
});
