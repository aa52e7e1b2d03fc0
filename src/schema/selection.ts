import {
  type FieldNode,
  type GraphQLResolveInfo,
  Kind,
  type OperationDefinitionNode,
  type SelectionSetNode,
  TypeInfo,
  visit,
  visitWithTypeInfo,
} from 'graphql';
import type { Reading } from '../model/reading.js';

/**
 * Whether the operation asks this field's object (or each object of its list) for any of
 * `fields`, directly or through fragments. Decides which column groups a batch selects: one
 * field node set is shared by every object of a list level, so all of them pick the same
 * statement and the level stays one statement. Conservative: a field under @skip/@include
 * counts as asked. graphql-js's resolve info is the standard way to see the selection;
 * Pothos has no plugin for column selection outside Prisma/Drizzle.
 */
export function selectsAny(info: GraphQLResolveInfo, fields: ReadonlySet<string>): boolean {
  // The executor hands every object of a list level the same fieldNodes array: decide once.
  let verdicts = decided.get(info.fieldNodes);
  if (!verdicts) {
    verdicts = new Map();
    decided.set(info.fieldNodes, verdicts);
  }
  const known = verdicts.get(fields);
  if (known !== undefined) return known;
  const visit = (set: SelectionSetNode | undefined, seen: Set<string>): boolean =>
    set?.selections.some((selection) => {
      switch (selection.kind) {
        case Kind.FIELD:
          return fields.has(selection.name.value);
        case Kind.INLINE_FRAGMENT:
          return visit(selection.selectionSet, seen);
        case Kind.FRAGMENT_SPREAD: {
          const name = selection.name.value;
          if (seen.has(name)) return false;
          seen.add(name);
          return visit(info.fragments[name]?.selectionSet, seen);
        }
        default:
          return true;
      }
    }) ?? false;
  const verdict = info.fieldNodes.some((node) => visit(node.selectionSet, new Set()));
  verdicts.set(fields, verdict);
  return verdict;
}

const decided = new WeakMap<readonly FieldNode[], Map<ReadonlySet<string>, boolean>>();

/** Per operation: the field names it selects on each object type, fragments included. */
const selectedByType = new WeakMap<OperationDefinitionNode, Map<string, Set<string>>>();

function fieldsByType(info: GraphQLResolveInfo): Map<string, Set<string>> {
  let byType = selectedByType.get(info.operation);
  if (byType) return byType;
  const found = new Map<string, Set<string>>();
  const typeInfo = new TypeInfo(info.schema);
  const visitor = visitWithTypeInfo(typeInfo, {
    Field(node) {
      const parent = typeInfo.getParentType();
      if (!parent) return;
      const fields = found.get(parent.name) ?? new Set<string>();
      fields.add(node.name.value);
      found.set(parent.name, fields);
    },
  });
  visit(info.operation, visitor);
  // Every fragment of the document, spread or not: an unused one only widens a selection.
  for (const fragment of Object.values(info.fragments)) visit(fragment, visitor);
  byType = found;
  selectedByType.set(info.operation, byType);
  return byType;
}

/**
 * Whether the operation selects `field` on `typeName` anywhere, fragments included: decided
 * per operation, as readingOf is, so every list level of the operation decides alike.
 */
export function selectedOn(info: GraphQLResolveInfo, typeName: string, field: string): boolean {
  return fieldsByType(info).get(typeName)?.has(field) ?? false;
}

const readings = new WeakMap<OperationDefinitionNode, Map<string, Reading<never>>>();

/**
 * The properties of `typeName`'s rows that the operation reads, wherever in it that type is
 * selected: the union of what each selected field `needs`. Every list level of the type in
 * one operation therefore asks for the same set, so the shapes that two parts of an operation
 * ask for the same rows merge into one statement (one loader per set). A field absent from
 * `needs` (one another module adds, an interface field) reads every property: conservative,
 * never wrong. Decided once per operation (yoga's parse cache reuses the document).
 */
export function readingOf<T>(
  info: GraphQLResolveInfo,
  typeName: string,
  needs: Readonly<Record<string, readonly (keyof T)[]>>,
): Reading<T> {
  let byType = readings.get(info.operation);
  if (!byType) {
    byType = new Map();
    readings.set(info.operation, byType);
  }
  const known = byType.get(typeName) as Reading<T> | undefined;
  if (known) return known;
  const wanted = new Set<keyof T>();
  let all = false;
  for (const field of fieldsByType(info).get(typeName) ?? []) {
    if (field.startsWith('__')) continue;
    const properties = needs[field];
    if (!properties) {
      all = true;
      break;
    }
    for (const property of properties) wanted.add(property);
  }
  const reading: Reading<T> = all
    ? { wanted: undefined, key: '*' }
    : { wanted, key: [...wanted].map(String).sort().join(',') };
  byType.set(typeName, reading as Reading<never>);
  return reading;
}
