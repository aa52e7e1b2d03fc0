import {
  type ExecutionArgs,
  GraphQLError,
  GraphQLIncludeDirective,
  GraphQLSkipDirective,
  getDirectiveValues,
  getOperationAST,
  Kind,
  type SelectionSetNode,
} from 'graphql';
import { isAction } from '../schema/action.js';

/**
 * The actions (mutation fields declared with schema/action.ts's ACTION) an execution would
 * run: each root field of the operation, through fragments, aliases counted, @skip/@include
 * applied with the request's variables. Zero for queries and subscriptions.
 */
export function actionsOf(args: ExecutionArgs): number {
  const operation = getOperationAST(args.document, args.operationName);
  const root = operation && args.schema.getRootType(operation.operation);
  if (!operation || !root || operation.operation !== 'mutation') return 0;
  const fields = root.getFields();
  const fragments = new Map(
    args.document.definitions.flatMap((d) =>
      d.kind === Kind.FRAGMENT_DEFINITION ? [[d.name.value, d] as const] : [],
    ),
  );
  const variables = args.variableValues ?? undefined;
  const included = (node: Parameters<typeof getDirectiveValues>[1]) =>
    getDirectiveValues(GraphQLSkipDirective, node, variables)?.if !== true &&
    getDirectiveValues(GraphQLIncludeDirective, node, variables)?.if !== false;
  // graphql-js runs the fields of one response key once, however many times it is selected.
  const keys = new Set<string>();
  const visited = new Set<string>();
  const collect = (selections: SelectionSetNode): void => {
    for (const selection of selections.selections) {
      if (!included(selection)) continue;
      if (selection.kind === Kind.FIELD) {
        if (isAction(fields[selection.name.value])) {
          keys.add(selection.alias?.value ?? selection.name.value);
        }
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        collect(selection.selectionSet);
      } else if (!visited.has(selection.name.value)) {
        visited.add(selection.name.value);
        const fragment = fragments.get(selection.name.value);
        if (fragment) collect(fragment.selectionSet);
      }
    }
  };
  collect(operation.selectionSet);
  return keys.size;
}

/**
 * At most `max` actions in one operation (MAX_ACTIONS_PER_OPERATION): one request of 15
 * aliased runTeam fields would otherwise start 15 scheduler jobs at once.
 */
export function actionCap(max: number): (args: ExecutionArgs) => GraphQLError | undefined {
  return (args) => {
    const actions = actionsOf(args);
    if (actions <= max) return undefined;
    return new GraphQLError(
      `An operation may run at most ${max} action${max === 1 ? '' : 's'} (runTeam, respondToHuman, …; MAX_ACTIONS_PER_OPERATION); this one has ${actions}: send them in separate operations`,
      { extensions: { code: 'BAD_USER_INPUT' } },
    );
  };
}
