import {
  BREAK,
  type DocumentNode,
  type ExecutionArgs,
  type FieldNode,
  type GraphQLArgument,
  GraphQLError,
  type GraphQLField,
  type GraphQLInputField,
  type GraphQLInputType,
  type GraphQLSchema,
  getArgumentValues,
  isInputObjectType,
  isListType,
  isNonNullType,
  isScalarType,
  Kind,
  TypeInfo,
  visit,
  visitWithTypeInfo,
} from 'graphql';
import {
  boundOf,
  boundProblem,
  maxItemsOf,
  representationProblem,
  representationsOf,
} from '../schema/bounds.js';

/** A field of the document that takes at least one bounded argument, directly or nested. */
interface Site {
  readonly field: GraphQLField<unknown, unknown>;
  readonly node: FieldNode;
  /**
   * What a site without variables in its arguments breaks (null: nothing), the same for
   * every request of its document, so found once; undefined until then, and for a site
   * whose arguments take variables, checked request by request.
   */
  verdict?: string | null;
  /** Whether a variable stands in its arguments. */
  readonly variables: boolean;
}

/**
 * Refuses, before execution and on every transport, a string argument that does not fit the
 * bound its schema declaration carries (schema/bounds.ts), whether written in the document
 * or passed in a variable, at any depth of input objects and lists; federation's entity
 * representations, `_Any` to GraphQL, are held to the bounds of their types' key fields. BAD_USER_INPUT names the
 * argument and the limit, never the value.
 */
export function argumentBounds(): (args: ExecutionArgs) => GraphQLError | undefined {
  const containsBound = new WeakMap<GraphQLInputType, boolean>();
  const declares = (definition: GraphQLArgument | GraphQLInputField): boolean =>
    boundOf(definition) !== undefined ||
    maxItemsOf(definition) !== undefined ||
    representationsOf(definition) !== undefined ||
    hasBound(definition.type);
  const hasBound = (type: GraphQLInputType): boolean => {
    const inner = isNonNullType(type) || isListType(type) ? type.ofType : type;
    if (inner !== type) return hasBound(inner);
    if (!isInputObjectType(type)) return false;
    const known = containsBound.get(type);
    if (known !== undefined) return known;
    containsBound.set(type, false); // recursive input types end here
    const found = Object.values(type.getFields()).some(declares);
    containsBound.set(type, found);
    return found;
  };
  const checked = (field: GraphQLField<unknown, unknown>) => field.args.some(declares);

  /** The first value under `value` that breaks its declared bound, as a message. */
  const problemIn = (
    value: unknown,
    type: GraphQLInputType,
    declared: GraphQLArgument | GraphQLInputField | undefined,
    path: string,
  ): string | null => {
    const bound = declared && boundOf(declared);
    const entities = declared && representationsOf(declared);
    if (value === null || value === undefined) return null;
    if (isNonNullType(type)) return problemIn(value, type.ofType, declared, path);
    if (isListType(type)) {
      if (!Array.isArray(value)) return problemIn(value, type.ofType, declared, path);
      const maxItems = declared && maxItemsOf(declared);
      if (maxItems !== undefined && value.length > maxItems) {
        return `Argument "${path}" takes at most ${maxItems} items (got ${value.length})`;
      }
      if (!bound && !entities && !hasBound(type.ofType)) return null;
      for (const [i, item] of value.entries()) {
        const problem = problemIn(item, type.ofType, declared, `${path}[${i}]`);
        if (problem) return problem;
      }
      return null;
    }
    if (entities && isScalarType(type)) return representationProblem(value, entities, path);
    if (bound && typeof value === 'string') {
      const problem = boundProblem(bound, value);
      return problem && `Argument "${path}" ${problem}`;
    }
    if (isInputObjectType(type) && typeof value === 'object') {
      for (const field of Object.values(type.getFields())) {
        if (!declares(field)) continue;
        const problem = problemIn(
          (value as Record<string, unknown>)[field.name],
          field.type,
          field,
          `${path}.${field.name}`,
        );
        if (problem) return problem;
      }
    }
    return null;
  };

  // Yoga's parser cache hands out the same DocumentNode for a repeated text.
  const sitesOf = new WeakMap<DocumentNode, Site[]>();
  const sites = (schema: GraphQLSchema, document: DocumentNode): Site[] => {
    const known = sitesOf.get(document);
    if (known) return known;
    const found: Site[] = [];
    const typeInfo = new TypeInfo(schema);
    visit(
      document,
      visitWithTypeInfo(typeInfo, {
        [Kind.FIELD]: (node) => {
          const field = typeInfo.getFieldDef();
          if (field && node.arguments?.length && checked(field)) {
            found.push({ field, node, variables: takesVariables(node) });
          }
        },
      }),
    );
    sitesOf.set(document, found);
    return found;
  };

  /** The first argument of the site that breaks its bound, as a message, or null. */
  const problemAt = (
    { field, node }: Site,
    variables: Record<string, unknown> | null | undefined,
  ): string | null => {
    let values: Record<string, unknown>;
    try {
      values = getArgumentValues(field, node, variables ?? {});
    } catch {
      return null; // a value of the wrong type: execution reports it
    }
    for (const arg of field.args) {
      if (!declares(arg)) continue;
      const problem = problemIn(values[arg.name], arg.type, arg, arg.name);
      if (problem) return problem;
    }
    return null;
  };

  const check = (
    schema: GraphQLSchema,
    document: DocumentNode,
    variables: Record<string, unknown> | null | undefined,
  ): GraphQLError | undefined => {
    for (const site of sites(schema, document)) {
      let problem: string | null;
      if (site.variables) problem = problemAt(site, variables);
      else {
        if (site.verdict === undefined) site.verdict = problemAt(site, undefined);
        problem = site.verdict;
      }
      if (problem) return new GraphQLError(problem, { extensions: { code: 'BAD_USER_INPUT' } });
    }
    return undefined;
  };

  return (args) => check(args.schema, args.document, args.variableValues);
}

/** Whether a variable stands anywhere in the field's arguments. */
function takesVariables(node: FieldNode): boolean {
  let found = false;
  for (const argument of node.arguments ?? []) {
    visit(argument, {
      Variable() {
        found = true;
        return BREAK;
      },
    });
  }
  return found;
}
