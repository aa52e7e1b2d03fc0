import { type DocumentNode, type FieldNode, type OperationDefinitionNode, parse } from 'graphql';
import { describe, expect, test } from 'vitest';
import { schema } from '../src/schema/index.js';
import { subscriptionShape } from '../src/subscription-shape.js';

const shapeOf = (source: string, variables: Record<string, unknown> = {}, name?: string) =>
  subscriptionShape(schema, parse(source), name, variables);

const TEAM = 'ORDER_SUPPORT_TEAM';

describe('the canonical shape of a subscription', () => {
  const variants = [
    `subscription A { teamRunChanged(filter: { teamName: "${TEAM}" }) { state run { execId tasks { taskName state } } } }`,
    `subscription B { teamRunChanged(filter: { teamName: "${TEAM}" }) { state run { execId tasks { taskName state } } } }`,
    `subscription { changed: teamRunChanged(filter: { teamName: "${TEAM}" }) { now: state run { id: execId steps: tasks { taskName state } } } }`,
    `subscription { teamRunChanged(filter: { teamName: "${TEAM}" }) { run { tasks { state taskName } execId } state } }`,
    `subscription($f: TeamRunChangeFilter) { teamRunChanged(filter: $f) { ...Change } }
     fragment Change on TeamRunChange { state run { execId tasks { taskName state } } }`,
    `subscription($full: Boolean!) { teamRunChanged(filter: { teamName: "${TEAM}" }) { state run { execId tasks { taskName state } previousState: state @include(if: $full) } } }`,
  ];

  test('is the same for the same data asked differently: names, aliases, order, fragments, variables, @include', () => {
    const keys = variants.map(
      (source) => shapeOf(source, { f: { teamName: TEAM }, full: false })?.key,
    );
    expect(keys.every((key) => key !== undefined)).toBe(true);
    expect(new Set(keys).size).toBe(1);
  });

  test('differs when the data differs: another filter, another field', () => {
    const base = shapeOf(variants[0] as string)?.key;
    expect(shapeOf(variants[0]?.replace(TEAM, 'OTHER_TEAM') as string)?.key).not.toBe(base);
    expect(shapeOf(variants[0]?.replace('taskName', 'agentName') as string)?.key).not.toBe(base);
  });

  test('projects the canonical data into each subscription’s own keys and order', () => {
    const canonical = shapeOf(variants[0] as string);
    const aliased = shapeOf(variants[2] as string);
    const reordered = shapeOf(variants[3] as string);
    expect(aliased?.key).toBe(canonical?.key);
    // The canonical data, as execution of the canonical document returns it.
    const canonicalData = {
      [rootKey(canonical?.document)]: {
        run: { execId: 'X1', tasks: [{ state: 'SUCCEEDED', taskName: 'plan' }] },
        state: 'RUNNING',
      },
    };
    const projectedAlias = aliased?.project(canonicalData);
    expect(projectedAlias).toEqual({
      changed: {
        now: 'RUNNING',
        run: { id: 'X1', steps: [{ taskName: 'plan', state: 'SUCCEEDED' }] },
      },
    });
    expect(JSON.stringify(projectedAlias)).toBe(
      '{"changed":{"now":"RUNNING","run":{"id":"X1","steps":[{"taskName":"plan","state":"SUCCEEDED"}]}}}',
    );
    expect(JSON.stringify(reordered?.project(canonicalData))).toBe(
      '{"teamRunChanged":{"run":{"tasks":[{"state":"SUCCEEDED","taskName":"plan"}],"execId":"X1"},"state":"RUNNING"}}',
    );
  });

  test('is not worked out for selections it cannot canonicalise', () => {
    expect(shapeOf('subscription { teamsWaitingForHuman @deprecated { execId } }')).toBeUndefined();
    expect(shapeOf('query { __typename }')).toBeUndefined();
  });
});

/** The response key of the canonical document's root field. */
function rootKey(document: DocumentNode | undefined): string {
  const operation = document?.definitions[0] as OperationDefinitionNode;
  const field = operation.selectionSet.selections[0] as FieldNode;
  return field.alias?.value ?? field.name.value;
}
