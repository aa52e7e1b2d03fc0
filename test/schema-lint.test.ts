import { execFile } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import SchemaBuilder from '@pothos/core';
import {
  buildSchema,
  type GraphQLSchema,
  isInputObjectType,
  isInterfaceType,
  isObjectType,
  Kind,
  lexicographicSortSchema,
  parse,
  print,
  printSchema,
  visit,
} from 'graphql';
import { describe, expect, test } from 'vitest';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../src/schema/pagination.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const cli = fileURLToPath(
  new URL('../node_modules/graphql-schema-linter/lib/cli.js', import.meta.url),
);
const schemaFile = new URL('../schema.graphql', import.meta.url);

interface Finding {
  readonly message: string;
  readonly rule: string;
}

/**
 * graphql-schema-linter's CLI with the repository's rule set (.graphql-schema-linterrc.json),
 * as `npm run lint:schema` runs it: over schema.graphql, or over `sdl` given on stdin, with
 * the configured rules or only `rules`.
 */
function lint(sdl?: string, rules?: readonly string[]): Promise<Finding[]> {
  return new Promise((resolve, reject) => {
    const args = [
      cli,
      '--format',
      'json',
      ...(sdl === undefined ? [] : ['--stdin']),
      ...(rules ? ['--rules', rules.join(',')] : []),
    ];
    const child = execFile(process.execPath, args, { cwd: root }, (error, stdout, stderr) => {
      // Exit code 1 means findings; any other failure means the linter did not run.
      if (error && error.code !== 1) {
        reject(new Error(`graphql-schema-linter failed: ${stderr || error.message}`));
        return;
      }
      const findings = (JSON.parse(stdout) as { errors: Finding[] }).errors;
      resolve(findings.map(({ message, rule }) => ({ message, rule })));
    });
    child.stdin?.end(sdl ?? '');
  });
}

describe('schema lint (graphql-schema-linter)', () => {
  test('schema.graphql has no finding under the configured rule set', async () => {
    expect(await lint()).toEqual([]);
  });

  test('the rule set is the linter’s whole default set, less rules disabled with a reason', async () => {
    const config = JSON.parse(
      await readFile(new URL('../.graphql-schema-linterrc.json', import.meta.url), 'utf8'),
    ) as { rules: string[]; disabled: Record<string, string> };
    const builtIn = (
      await readdir(new URL('../node_modules/graphql-schema-linter/lib/rules', import.meta.url))
    )
      .filter((file) => file.endsWith('.js'))
      .map((file) => file.slice(0, -3).replaceAll('_', '-'))
      .sort();
    expect([...config.rules, ...Object.keys(config.disabled)].sort()).toEqual(builtIn);
    for (const [rule, reason] of Object.entries(config.disabled)) {
      expect(reason.trim(), `reason for disabling ${rule}`).not.toBe('');
    }
  });

  test('a field that loses its description is reported', async () => {
    const sdl = await readFile(schemaFile, 'utf8');
    const stripped = visit(parse(sdl), {
      ObjectTypeDefinition(type) {
        if (type.name.value !== 'TeamRun') return undefined;
        return {
          ...type,
          fields: type.fields?.map((field) =>
            field.name.value === 'endDate' ? { ...field, description: undefined } : field,
          ),
        };
      },
    });
    expect(await lint(print(stripped))).toEqual([
      {
        rule: 'fields-have-descriptions',
        message: 'The field `TeamRun.endDate` is missing a description.',
      },
    ]);
  });

  test('the connection arguments state the page sizes the server enforces', async () => {
    const schema = buildSchema(await readFile(schemaFile, 'utf8'));
    const first = schema
      .getQueryType()
      ?.getFields()
      .teams?.args.find((a) => a.name === 'first');
    expect(first?.description).toContain(`at most ${MAX_PAGE_SIZE} items`);
    expect(first?.description).toContain(`a page holds ${DEFAULT_PAGE_SIZE} items`);
  });
});

/** Every deprecation names its replacement, `Use \`field\``, and that field exists. */
function deprecationProblems(schema: GraphQLSchema): { deprecated: string[]; problems: string[] } {
  const deprecated: string[] = [];
  const problems: string[] = [];
  for (const type of Object.values(schema.getTypeMap())) {
    if (type.name.startsWith('__')) continue;
    if (!isObjectType(type) && !isInterfaceType(type) && !isInputObjectType(type)) continue;
    const fields = type.getFields();
    for (const field of Object.values(fields)) {
      if (!field.deprecationReason) continue;
      deprecated.push(`${type.name}.${field.name}`);
      const replacement = /Use `(\w+)`/.exec(field.deprecationReason)?.[1];
      if (!replacement || !(replacement in fields)) {
        problems.push(`${type.name}.${field.name}: "${field.deprecationReason}"`);
      }
    }
  }
  return { deprecated, problems };
}

describe('deprecation instead of removal', () => {
  /** A renamed field as the README's policy asks for it, built and printed like schema.graphql. */
  function renamedFieldSchema(): GraphQLSchema {
    const builder = new SchemaBuilder<{ DefaultFieldNullability: false }>({
      defaultFieldNullability: false,
      // Required by the type augmentation of @pothos/plugin-scope-auth, which src/ loads.
      scopeAuth: { authScopes: () => ({}) },
    });
    builder.queryType({
      description: 'Example root.',
      fields: (t) => ({
        name: t.string({ description: 'The team name.', resolve: () => 'T' }),
        teamName: t.string({
          description: 'The team name.',
          deprecationReason: 'Use `name`.',
          resolve: () => 'T',
        }),
      }),
    });
    return lexicographicSortSchema(builder.toSchema());
  }

  test('the printed schema keeps the renamed field, with @deprecated naming the replacement', async () => {
    const printed = printSchema(renamedFieldSchema());
    const query = parse(printed).definitions.find(
      (d) => d.kind === Kind.OBJECT_TYPE_DEFINITION && d.name.value === 'Query',
    );
    expect(query && 'fields' in query ? query.fields?.map((f) => f.name.value) : []).toEqual([
      'name',
      'teamName',
    ]);
    expect(printed).toContain('teamName: String! @deprecated(reason: "Use `name`.")');
    // The toy schema has no connection, so only this rule of the set applies to it.
    expect(await lint(printed, ['deprecations-have-a-reason'])).toEqual([]);
    expect(deprecationProblems(buildSchema(printed))).toEqual({
      deprecated: ['Query.teamName'],
      problems: [],
    });
  });

  test('every deprecated field of schema.graphql names a replacement that exists', async () => {
    const schema = buildSchema(await readFile(schemaFile, 'utf8'));
    expect(deprecationProblems(schema).problems).toEqual([]);
  });
});
