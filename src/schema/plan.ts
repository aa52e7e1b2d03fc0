import {
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLField,
  type GraphQLObjectType,
  type GraphQLResolveInfo,
  type GraphQLSchema,
  getNamedType,
  isAbstractType,
  isObjectType,
  Kind,
  type SelectionSetNode,
} from 'graphql';
import type { Context } from '../context.js';
import {
  type ChildPlan,
  type ListPlan,
  plannedChild,
  type Relation,
  type RowType,
} from '../model/plan.js';
import { NEEDS, type Needs, PLANNED_TYPES } from './needs.js';

/**
 * The planner: the selection below a history root field, turned once per operation into a
 * plan by field name (src/model/plan.ts), from the needs each field declares
 * (src/schema/needs.ts), as Pothos' prisma plugin maps a selection to one query
 * (map-query.ts) and grafast plans a pgSelect per field. The plan is canonical: aliases,
 * field order and fragments do not change it (a field's aliases read one list, since no
 * planned relation takes arguments), so selections that need the same rows have equal plans,
 * one SQL text and one loader (the forms of one subscription event share one statement).
 * What one path selects never widens another path: each relation field below the root is a
 * list of its own, with the columns its own selection reads. Fragments count where their type
 * condition holds; a field under
 * @skip/@include counts as selected (the plan is made once per document, whatever the
 * variables). A relation whose rows a plan cannot read (an Agent with a DESCRIBE_AGENT field)
 * is left out, and its field falls back to its loader.
 */

interface Walk {
  readonly schema: GraphQLSchema;
  readonly fragments: Readonly<Record<string, FragmentDefinitionNode>>;
}

/** The fields selected on `type` by these selection sets, by field name (aliases merged). */
function collect(
  walk: Walk,
  type: GraphQLObjectType,
  sets: readonly (SelectionSetNode | undefined)[],
): Map<string, FieldNode[]> {
  const fields = new Map<string, FieldNode[]>();
  const applies = (condition: string | undefined) => {
    if (condition === undefined || condition === type.name) return true;
    const named = walk.schema.getType(condition);
    return named !== undefined && isAbstractType(named) && walk.schema.isSubType(named, type);
  };
  const visit = (set: SelectionSetNode | undefined, seen: Set<string>) => {
    for (const selection of set?.selections ?? []) {
      if (selection.kind === Kind.FIELD) {
        const name = selection.name.value;
        const nodes = fields.get(name) ?? [];
        nodes.push(selection);
        fields.set(name, nodes);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        if (applies(selection.typeCondition?.name.value)) visit(selection.selectionSet, seen);
      } else if (!seen.has(selection.name.value)) {
        seen.add(selection.name.value);
        const fragment = walk.fragments[selection.name.value];
        if (fragment && applies(fragment.typeCondition.name.value)) {
          visit(fragment.selectionSet, seen);
        }
      }
    }
  };
  for (const set of sets) visit(set, new Set());
  return fields;
}

const needsOf = (field: GraphQLField<unknown, unknown>): Needs | undefined =>
  field.extensions?.[NEEDS] as Needs | undefined;

const objectTypeOf = (field: GraphQLField<unknown, unknown>): GraphQLObjectType | undefined => {
  const named = getNamedType(field.type);
  return isObjectType(named) ? named : undefined;
};

/** A plan under construction: what one list reads. */
class Draft {
  readonly columns = new Set<string>();
  readonly children = new Map<string, ChildDraft>();
  constructor(readonly type: RowType) {}
}

type ChildDraft =
  | { readonly kind: 'relation'; readonly relation: Relation; readonly draft: Draft }
  | { readonly kind: 'self'; readonly draft: Draft }
  | {
      readonly kind: 'group';
      readonly members: Map<string, { readonly relation: Relation; readonly draft: Draft }>;
    };

/**
 * Adds to `draft` what the fields selected on `type` read. `members` is set while walking a
 * derived object (HumanWait): its fields read the members of the group being planned.
 */
function plan(
  walk: Walk,
  type: GraphQLObjectType,
  sets: readonly (SelectionSetNode | undefined)[],
  draft: Draft,
  members?: Map<string, { readonly relation: Relation; readonly draft: Draft }>,
): boolean {
  const fieldMap = type.getFields();
  for (const [name, nodes] of collect(walk, type, sets)) {
    if (name.startsWith('__')) continue;
    const field = fieldMap[name];
    if (!field) continue;
    const needs = needsOf(field);
    // Nothing declared (test/plan.test.ts fails on it for a planned type): not plannable.
    if (!needs) return false;
    const below = nodes.map((node) => node.selectionSet);
    switch (needs.kind) {
      case 'columns':
        for (const column of needs.columns) draft.columns.add(column);
        break;
      case 'unplanned':
        return false;
      case 'items':
      case 'self': {
        const target = objectTypeOf(field);
        if (!target) break;
        if (needs.kind === 'items') {
          if (!plan(walk, target, below, draft, members)) return false;
          break;
        }
        const self = new Draft(draft.type);
        if (plan(walk, target, below, self))
          draft.children.set(name, { kind: 'self', draft: self });
        break;
      }
      case 'relation': {
        const target = objectTypeOf(field);
        for (const column of needs.relation.from) draft.columns.add(column);
        if (!target) break;
        const child = new Draft(needs.relation.target);
        for (const column of needs.relation.to) child.columns.add(column);
        // A relation the plan cannot read is left to the field's loader; the rest stays planned.
        if (plan(walk, target, below, child)) {
          draft.children.set(name, { kind: 'relation', relation: needs.relation, draft: child });
        }
        break;
      }
      case 'group': {
        const target = objectTypeOf(field);
        if (!target) break;
        const group = new Map<string, { relation: Relation; draft: Draft }>();
        for (const column of needs.parent) draft.columns.add(column);
        for (const [member, relation] of Object.entries(needs.members)) {
          for (const column of relation.from) draft.columns.add(column);
          const child = new Draft(relation.target);
          for (const column of [...relation.to, ...(needs.always[member] ?? [])]) {
            child.columns.add(column);
          }
          group.set(member, { relation, draft: child });
        }
        if (plan(walk, target, below, new Draft(draft.type), group)) {
          draft.children.set(name, { kind: 'group', members: group });
        }
        break;
      }
      case 'members':
        for (const [member, columns] of Object.entries(needs.columns)) {
          const into = members?.get(member)?.draft;
          for (const column of columns) into?.columns.add(column);
        }
        break;
      case 'member': {
        const target = objectTypeOf(field);
        const into = members?.get(needs.member)?.draft;
        if (!target || !into) break;
        // What the member's field selects is read by the member's list, children included.
        if (!plan(walk, target, below, into)) return false;
        break;
      }
    }
  }
  return true;
}

/** The plan of a draft, its children in field-name order: selection order changes nothing. */
function finish(draft: Draft): ListPlan {
  const children = new Map<string, ChildPlan>();
  const sorted = [...draft.children].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  for (const [key, child] of sorted) {
    if (child.kind === 'relation') {
      children.set(key, { kind: 'relation', relation: child.relation, plan: finish(child.draft) });
    } else if (child.kind === 'self') {
      children.set(key, { kind: 'self', plan: finish(child.draft) });
    } else {
      const members = new Map(
        [...child.members].map(([member, { relation, draft: d }]) => [
          member,
          { relation, plan: finish(d) },
        ]),
      );
      children.set(key, { kind: 'group', members });
    }
  }
  const columns = new Set([...draft.columns].sort());
  const described = [...children]
    .map(([key, child]) => {
      if (child.kind === 'group') {
        const members = [...child.members].map(([m, { plan: p }]) => `${m}=${p.key}`);
        return `${key}:group(${members.join(',')})`;
      }
      return `${key}:${child.kind === 'self' ? 'self' : child.relation.name}(${child.plan.key})`;
    })
    .join(';');
  return { type: draft.type, columns, children, key: `${[...columns].join(',')}|${described}` };
}

const plans = new WeakMap<readonly FieldNode[], Map<string, ListPlan>>();

/**
 * The plan of the rows of `rowType` (GraphQL type `typeName`, TeamRun by default for a run's
 * wrappers) below the field `info` resolves: made once per operation and field (graphql-jit and
 * yoga's parse cache hand every request of a document the same field nodes), through the
 * field's own type when it is a planned type, else through its connection's edges and nodes.
 */
export function planOf(info: GraphQLResolveInfo, typeName?: string): ListPlan {
  let byType = plans.get(info.fieldNodes);
  if (!byType) {
    byType = new Map();
    plans.set(info.fieldNodes, byType);
  }
  const returned = getNamedType(info.returnType);
  const name = typeName ?? returned.name;
  const known = byType.get(name);
  if (known) return known;
  const walk: Walk = { schema: info.schema, fragments: info.fragments };
  const sets = info.fieldNodes.map((node) => node.selectionSet);
  const made = finish(draftBelow(walk, returned.name, name, sets));
  byType.set(name, made);
  return made;
}

/** The draft of `name`'s rows reached from a field of type `from` (itself, a connection, Node). */
function draftBelow(
  walk: Walk,
  from: string,
  name: string,
  sets: readonly (SelectionSetNode | undefined)[],
): Draft {
  const rowType = PLANNED_TYPES[name];
  const type = walk.schema.getType(name);
  if (!rowType || rowType === 'derived' || !isObjectType(type)) {
    throw new Error(`${name} is not a planned row type`);
  }
  const draft = new Draft(rowType);
  const start = walk.schema.getType(from);
  if (from === name || (start && isAbstractType(start))) {
    if (!plan(walk, type, sets, draft)) return new Draft(rowType);
    return draft;
  }
  if (!isObjectType(start) || !plan(walk, start, sets, draft)) return new Draft(rowType);
  return draft;
}

/**
 * The resolver of a field a plan may read: what the plan read for it along with the parent
 * (src/db/sql/history-plan.ts sets it under the field's name), as it is, with no promise; else
 * what `load` loads for the parent: a row no plan reached (a loader's), or a relation the plan
 * left to its loader. Made once per field: a request makes no function per parent.
 */
export function plannedOr<P extends object, T>(
  load: (parent: P, context: Context, info: GraphQLResolveInfo) => T | Promise<T>,
): (parent: P, args: unknown, context: Context, info: GraphQLResolveInfo) => T | Promise<T> {
  return (parent, _args, context, info) => {
    const child = plannedChild(parent, info.fieldName);
    return child === undefined ? load(parent, context, info) : (child as T);
  };
}

const unplannedByType = new WeakMap<GraphQLSchema, Map<string, ReadonlySet<string>>>();

/**
 * The fields of `typeName` no plan reads (needs `unplanned`: an Agent's DESCRIBE_AGENT
 * fields): what a loader falling back for a relation checks the selection for.
 */
export function unplannedFields(schema: GraphQLSchema, typeName: string): ReadonlySet<string> {
  let byType = unplannedByType.get(schema);
  if (!byType) {
    byType = new Map();
    unplannedByType.set(schema, byType);
  }
  let fields = byType.get(typeName);
  if (!fields) {
    const type = schema.getType(typeName);
    fields = new Set(
      isObjectType(type)
        ? Object.values(type.getFields())
            .filter((field) => needsOf(field)?.kind === 'unplanned')
            .map((field) => field.name)
        : [],
    );
    byType.set(typeName, fields);
  }
  return fields;
}
