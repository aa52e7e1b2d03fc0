import type { TeamTool } from '../model/team.js';
import type { AgentCard } from './normalize.js';

/** A team's tool as the database catalog defines it. */
export interface CatalogTool {
  /** The generated tool id, which seed 001 maps to skills[].id. */
  readonly toolId: string;
  readonly name: string;
  /** The tool's `instruction` attribute, which seed 001 maps to skills[].description. */
  readonly instruction: string | null;
}

/** Where the catalog view has no tool id column, the tool name stands in for it. */
export function catalogTool(tool: TeamTool): CatalogTool {
  return { toolId: tool.toolId ?? tool.name, name: tool.name, instruction: tool.instruction };
}

export type CardDriftKind =
  | 'TOOL_MISSING_FROM_CARD'
  | 'SKILL_WITHOUT_TOOL'
  | 'SKILL_DESCRIPTION_DIFFERS'
  | 'SKILL_ID_DIFFERS'
  | 'CARD_NAME_DIFFERS'
  | 'CARD_DESCRIPTION_DIFFERS';

/** One difference between what the database defines and what the A2A card publishes. */
export interface CardDrift {
  readonly kind: CardDriftKind;
  /** The tool or skill concerned; absent for card-level differences. */
  readonly toolName?: string;
  /** What seed 001's mapping gives from the catalog. */
  readonly expected?: string | null;
  /** What the card says. */
  readonly actual?: string | null;
}

/**
 * Compares a card with the catalog by seed 001's mapping: name ← team name, description ←
 * team description (the team name when unset), and per tool a skill with name ← tool name,
 * id ← tool id, description ← instruction. Skills and tools are matched by name, because the
 * name is the one value a reader recognises on both sides. Catalog order first, then the
 * card's extra skills.
 */
export function cardDrift(
  card: AgentCard,
  tools: readonly CatalogTool[],
  team: { readonly name: string; readonly description: string | null },
): CardDrift[] {
  const drift: CardDrift[] = [];
  if (card.name !== team.name) {
    drift.push({ kind: 'CARD_NAME_DIFFERS', expected: team.name, actual: card.name });
  }
  const expectedDescription = team.description ?? team.name;
  if (card.description !== expectedDescription) {
    drift.push({
      kind: 'CARD_DESCRIPTION_DIFFERS',
      expected: expectedDescription,
      actual: card.description,
    });
  }
  const toolNames = new Set<string>();
  for (const tool of tools) {
    // A tool that two of the team's tasks use is still one skill.
    if (toolNames.has(tool.name)) continue;
    toolNames.add(tool.name);
    const skill = card.skills.find((s) => s.name === tool.name);
    if (!skill) {
      drift.push({ kind: 'TOOL_MISSING_FROM_CARD', toolName: tool.name, expected: tool.name });
      continue;
    }
    if (skill.id !== tool.toolId) {
      drift.push({
        kind: 'SKILL_ID_DIFFERS',
        toolName: tool.name,
        expected: tool.toolId,
        actual: skill.id,
      });
    }
    if (skill.description !== (tool.instruction ?? '')) {
      drift.push({
        kind: 'SKILL_DESCRIPTION_DIFFERS',
        toolName: tool.name,
        expected: tool.instruction,
        actual: skill.description,
      });
    }
  }
  for (const skill of card.skills) {
    if (!toolNames.has(skill.name)) {
      drift.push({ kind: 'SKILL_WITHOUT_TOOL', toolName: skill.name, actual: skill.name });
    }
  }
  return drift;
}
