import { createHash } from 'node:crypto';
import {
  type ArgumentNode,
  astFromValue,
  type DirectiveNode,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLField,
  type GraphQLObjectType,
  type GraphQLSchema,
  getNamedType,
  getOperationAST,
  isAbstractType,
  isObjectType,
  Kind,
  print,
  type SelectionNode,
  type SelectionSetNode,
  valueFromAST,
} from 'graphql';

type Data = Record<string, unknown>;
type Variables = Readonly<Record<string, unknown>>;

/**
 * What subscriptions that ask for the same data have in common, whatever their operation
 * name, aliases, field order, fragments, variable names or @skip/@include: one canonical
 * document to execute per event, and a projection of its data into each one's own response.
 */
export interface SubscriptionShape {
  /** The printed canonical document: equal keys execute once per event. */
  readonly key: string;
  readonly document: DocumentNode;
  /** The canonical result's data in the shape (keys and order) this subscription asked for. */
  project(data: Data): Data;
}

/** A field after merging: its canonical response key, name, literal arguments and selections. */
interface CanonicalField {
  readonly key: string;
  readonly name: string;
  readonly args: readonly ArgumentNode[];
  readonly type: GraphQLObjectType | undefined;
  readonly selections: SelectionNode[];
}

/**
 * The canonical shape of a subscription, or undefined when it selects something this does
 * not canonicalise (an interface or union, a directive other than @skip/@include, a variable
 * that is not set): such a subscription is then shared only with identical documents.
 */
export function subscriptionShape(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  variables: Variables | null | undefined,
): SubscriptionShape | undefined {
  const operation = getOperationAST(document, operationName);
  const root = schema.getSubscriptionType();
  if (operation?.operation !== 'subscription' || !root) return undefined;
  const walker = new Walker(fragmentsOf(document), variables ?? {});
  try {
    const selectionSet = walker.canonical(operation.selectionSet, root);
    const canonicalDocument: DocumentNode = {
      kind: Kind.DOCUMENT,
      definitions: [
        { kind: Kind.OPERATION_DEFINITION, operation: operation.operation, selectionSet },
      ],
    };
    return {
      key: print(canonicalDocument),
      document: canonicalDocument,
      project: (data) => walker.project(operation.selectionSet, root, data),
    };
  } catch (error) {
    if (error instanceof NotCanonical) return undefined;
    throw error;
  }
}

/** The fragment definitions of a document, by name. */
export function fragmentsOf(document: DocumentNode): Map<string, FragmentDefinitionNode> {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) {
      fragments.set(definition.name.value, definition);
    }
  }
  return fragments;
}

class NotCanonical extends Error {}

class Walker {
  constructor(
    private readonly fragments: ReadonlyMap<string, FragmentDefinitionNode>,
    private readonly variables: Variables,
  ) {}

  /** The merged, sorted, alias-free (but for argument variants) selection set. */
  canonical(selectionSet: SelectionSetNode, type: GraphQLObjectType): SelectionSetNode {
    const merged = new Map<string, CanonicalField>();
    for (const { node, field } of this.fields(selectionSet, type)) {
      const key = this.keyOf(node, field);
      let entry = merged.get(key);
      if (!entry) {
        entry = {
          key,
          name: node.name.value,
          args: this.literalArgs(node, field),
          type: field ? objectTypeOf(field) : undefined,
          selections: [],
        };
        merged.set(key, entry);
      }
      if (node.selectionSet) entry.selections.push(...node.selectionSet.selections);
    }
    const selections = [...merged.values()]
      .sort((a, b) => a.key.localeCompare(b.key))
      .map((entry): FieldNode => {
        if (entry.selections.length > 0 && !entry.type) throw new NotCanonical();
        return {
          kind: Kind.FIELD,
          ...(entry.key === entry.name ? {} : { alias: { kind: Kind.NAME, value: entry.key } }),
          name: { kind: Kind.NAME, value: entry.name },
          arguments: entry.args,
          ...(entry.type && entry.selections.length > 0
            ? {
                selectionSet: this.canonical(
                  { kind: Kind.SELECTION_SET, selections: entry.selections },
                  entry.type,
                ),
              }
            : {}),
        };
      });
    return { kind: Kind.SELECTION_SET, selections };
  }

  /** `data` (of the canonical document) as this selection set asked for it. */
  project(selectionSet: SelectionSetNode, type: GraphQLObjectType, data: Data): Data {
    const result: Data = {};
    for (const { node, field } of this.fields(selectionSet, type)) {
      const value = data[this.keyOf(node, field)];
      const responseKey = node.alias?.value ?? node.name.value;
      const objectType = field ? objectTypeOf(field) : undefined;
      const projected =
        node.selectionSet && objectType
          ? this.projectValue(node.selectionSet, objectType, value)
          : value;
      result[responseKey] = merge(result[responseKey], projected);
    }
    return result;
  }

  private projectValue(
    selectionSet: SelectionSetNode,
    type: GraphQLObjectType,
    value: unknown,
  ): unknown {
    if (value === null || value === undefined) return value;
    if (Array.isArray(value))
      return value.map((item) => this.projectValue(selectionSet, type, item));
    return this.project(selectionSet, type, value as Data);
  }

  /** The fields a selection set selects on `type`, fragments expanded, @skip/@include applied. */
  private *fields(
    selectionSet: SelectionSetNode,
    type: GraphQLObjectType,
  ): Generator<{ node: FieldNode; field: GraphQLField<unknown, unknown> | undefined }> {
    for (const selection of selectionSet.selections) {
      if (!this.included(selection.directives)) continue;
      if (selection.kind === Kind.FIELD) {
        const name = selection.name.value;
        if (name === '__typename') {
          yield { node: selection, field: undefined };
          continue;
        }
        const field = type.getFields()[name];
        if (!field) throw new NotCanonical();
        yield { node: selection, field };
      } else {
        const fragment =
          selection.kind === Kind.FRAGMENT_SPREAD
            ? this.fragments.get(selection.name.value)
            : selection;
        if (!fragment) throw new NotCanonical();
        const condition = fragment.typeCondition?.name.value;
        // On an object type, validation allows only that type's own name here.
        if (condition !== undefined && condition !== type.name) throw new NotCanonical();
        yield* this.fields(fragment.selectionSet, type);
      }
    }
  }

  private included(directives: readonly DirectiveNode[] | undefined): boolean {
    for (const directive of directives ?? []) {
      const name = directive.name.value;
      if (name !== 'skip' && name !== 'include') throw new NotCanonical();
      const condition = directive.arguments?.find((a) => a.name.value === 'if')?.value;
      if (!condition) throw new NotCanonical();
      const value =
        condition.kind === Kind.VARIABLE
          ? this.variables[condition.name.value]
          : condition.kind === Kind.BOOLEAN
            ? condition.value
            : undefined;
      if (typeof value !== 'boolean') throw new NotCanonical();
      if (name === 'skip' ? value : !value) return false;
    }
    return true;
  }

  /** Arguments as literals (variables substituted), sorted by name. */
  private literalArgs(
    node: FieldNode,
    field: GraphQLField<unknown, unknown> | undefined,
  ): ArgumentNode[] {
    const args: ArgumentNode[] = [];
    for (const argument of node.arguments ?? []) {
      const definition = field?.args.find((a) => a.name === argument.name.value);
      if (!definition) throw new NotCanonical();
      const value = valueFromAST(argument.value, definition.type, this.variables);
      // A variable left unset means "argument absent".
      if (value === undefined) continue;
      const literal = astFromValue(value, definition.type);
      if (!literal) throw new NotCanonical();
      args.push({ kind: Kind.ARGUMENT, name: argument.name, value: literal });
    }
    return args.sort((a, b) => a.name.value.localeCompare(b.name.value));
  }

  /** The field's name, or its name and a digest of its arguments when it has any. */
  private keyOf(node: FieldNode, field: GraphQLField<unknown, unknown> | undefined): string {
    const args = this.literalArgs(node, field);
    if (args.length === 0) return node.name.value;
    const printed = args.map((a) => `${a.name.value}:${print(a.value)}`).join(',');
    return `${node.name.value}_${createHash('sha256').update(printed).digest('hex').slice(0, 16)}`;
  }
}

function objectTypeOf(field: GraphQLField<unknown, unknown>): GraphQLObjectType | undefined {
  const named = getNamedType(field.type);
  if (isObjectType(named)) return named;
  // An interface or union would need each object's runtime type; scalars and enums have no
  // selection.
  if (isAbstractType(named)) throw new NotCanonical();
  return undefined;
}

/** Two selections of one response key (fields merge in GraphQL): their objects merged. */
function merge(existing: unknown, value: unknown): unknown {
  if (existing === undefined) return value;
  if (Array.isArray(existing) && Array.isArray(value)) {
    return existing.map((item, i) => merge(item, value[i]));
  }
  if (isPlainObject(existing) && isPlainObject(value)) {
    const merged: Data = { ...existing };
    for (const [key, item] of Object.entries(value)) merged[key] = merge(merged[key], item);
    return merged;
  }
  return existing;
}

const isPlainObject = (value: unknown): value is Data =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
