import { readFileSync } from 'node:fs';
import { parse, validate } from 'graphql';
import ts from 'typescript';
import { describe, expect, test } from 'vitest';
import { schema } from '../src/schema/index.js';

/**
 * Every GraphQL document of the console, validated against the schema without a browser, so
 * that a schema change that breaks the console fails here (test/browser/console.test.ts
 * drives the page itself in Chromium). The documents are read as the console declares them:
 * top-level `const` template literals, whose `${NAME}` parts are other top-level constants.
 */
const FILES = ['console.js', 'agent.js'];

interface Document {
  readonly name: string;
  readonly text: string;
}

const OPERATION = /^\s*(query|mutation|subscription|fragment)\b/;

/** One module's documents, and the first argument of each call to gql() and subscribe(). */
function read(file: string): { documents: Document[]; sent: string[] } {
  const source = ts.createSourceFile(
    file,
    readFileSync(new URL(`../src/console/static/${file}`, import.meta.url), 'utf8'),
    ts.ScriptTarget.ES2022,
    true,
    ts.ScriptKind.JS,
  );
  const constants = new Map<string, ts.Expression>();
  for (const statement of source.statements) {
    if (!ts.isVariableStatement(statement)) continue;
    for (const declaration of statement.declarationList.declarations) {
      if (ts.isIdentifier(declaration.name) && declaration.initializer) {
        constants.set(declaration.name.text, declaration.initializer);
      }
    }
  }
  /** A constant's text with its substitutions resolved, or undefined when it is not a string. */
  const textOf = (expression: ts.Expression): string | undefined => {
    if (ts.isStringLiteral(expression) || ts.isNoSubstitutionTemplateLiteral(expression)) {
      return expression.text;
    }
    if (!ts.isTemplateExpression(expression)) return undefined;
    let text = expression.head.text;
    for (const span of expression.templateSpans) {
      const part = ts.isIdentifier(span.expression)
        ? constants.get(span.expression.text)
        : undefined;
      const value = part && textOf(part);
      if (value === undefined) return undefined;
      text += value + span.literal.text;
    }
    return text;
  };
  const documents = [...constants]
    .map(([name, expression]) => ({ name, text: textOf(expression) }))
    .filter((entry): entry is Document => Boolean(entry.text && OPERATION.test(entry.text)));
  const sent: string[] = [];
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
  return { documents, sent };
}

const modules = FILES.map(read);
const documents = modules.flatMap((m) => m.documents);
const sent = modules.flatMap((m) => m.sent);

describe('the console’s GraphQL documents', () => {
  test('the reader finds every document the console sends', () => {
    expect(documents.map((d) => d.name)).toEqual(
      expect.arrayContaining([
        'WAITING',
        'RESPOND',
        'CHANGES',
        'RUN',
        'TEAM',
        'STATS',
        'AGENTS',
        'AGENT',
        'EXECUTE',
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

  test('a document that no longer matches the schema is caught', () => {
    const broken = parse('query Broken { teams(first: 1) { nodes { nameThatIsNot } } }');
    expect(validate(schema, broken).map((error) => error.message)).toEqual([
      'Cannot query field "nameThatIsNot" on type "Team".',
    ]);
  });
});
