import { type FieldNode, type GraphQLResolveInfo, Kind, type SelectionSetNode } from 'graphql';

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
