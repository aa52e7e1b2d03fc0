import { readFileSync } from 'node:fs';
import { parse, validate } from 'graphql';
import ts from 'typescript';
import { describe, expect, test } from 'vitest';
import {
  CONSOLE_SCRIPTS,
  consoleManifest,
  printManifest,
  readConsoleScript,
} from '../src/console/documents.js';
import { CONSOLE_MANIFEST } from '../src/console/serve.js';
import { schema } from '../src/schema/index.js';

/**
 * Every GraphQL document of the console, validated against the schema without a browser, so
 * that a schema change that breaks the console fails here (test/browser/console.test.ts
 * drives the page itself in Chromium). The documents are read as the console declares them:
 * top-level `const` template literals, whose `${NAME}` parts are other top-level constants.
 */
const scripts = CONSOLE_SCRIPTS.map((file) => readConsoleScript(file));
const documents = scripts.flatMap((script) => script.documents);

/** The first argument of each call to the console's gql() and subscribe(). */
const sent: string[] = [];
for (const { source } of scripts) {
  const visit = (node: ts.Node) => {
    if (
      ts.isCallExpression(node) &&
      ts.isIdentifier(node.expression) &&
      (node.expression.text === 'gql' || node.expression.text === 'subscribe') &&
      node.arguments[0]
    ) {
      sent.push(node.arguments[0].getText(source));
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
}

describe('the console’s GraphQL documents', () => {
  test('the reader finds every document the console sends', () => {
    expect(documents.map((d) => d.name)).toEqual(
      expect.arrayContaining([
        ...['WAITING', 'RESPOND', 'CHANGES', 'RUN', 'TEAM', 'STATS'],
        ...['AGENTS', 'AGENT', 'EXECUTE'],
      ]),
    );
    // Each call sends one of those constants, so no document escapes this test inline.
    expect(sent.length).toBeGreaterThanOrEqual(documents.length);
    expect(sent.filter((argument) => !documents.some((d) => d.name === argument))).toEqual([]);
  });

  for (const { name, text } of documents) {
    test(`${name} is valid against the schema`, () => {
      const errors = validate(schema, parse(text)).map((error) => error.message);
      expect(errors).toEqual([]);
    });
  }

  test('their manifest (trusted documents) lists exactly them: npm run console:documents', () => {
    expect(readFileSync(CONSOLE_MANIFEST, 'utf8')).toBe(printManifest(consoleManifest()));
  });

  test('a document that no longer matches the schema is caught', () => {
    const broken = parse('query Broken { teams(first: 1) { nodes { nameThatIsNot } } }');
    expect(validate(schema, broken).map((error) => error.message)).toEqual([
      'Cannot query field "nameThatIsNot" on type "Team".',
    ]);
  });
});
