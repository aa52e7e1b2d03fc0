import { AgentCard as SdkAgentCard } from '@a2a-js/sdk';
import { describe, expect, test } from 'vitest';
import { cardDrift } from '../../src/a2a/drift.js';
import { type AgentCard, normalizeAgentCard } from '../../src/a2a/normalize.js';
import { v1Card } from './support/cards.js';

const TEAM = {
  name: 'REPORT_SUMMARY_AGENT_TEAM',
  description: 'Summarizes uploaded reports and answers follow-up questions',
};
const SUMMARIZE = {
  toolId: '5001',
  name: 'SUMMARIZE_REPORT',
  instruction: 'Summarize uploaded reports and answer follow-up questions',
};

function card(change: (card: ReturnType<typeof v1Card>) => void = () => {}): AgentCard {
  const sdkCard = v1Card(TEAM.name, TEAM.description);
  change(sdkCard);
  return normalizeAgentCard(SdkAgentCard.toJSON(sdkCard), 'card');
}

describe('cardDrift', () => {
  test('a card built by seed 001’s mapping has no drift', () => {
    expect(cardDrift(card(), [SUMMARIZE], TEAM)).toEqual([]);
  });

  test('the description defaults to the team name', () => {
    const undescribed = card((c) => {
      c.description = TEAM.name;
    });
    expect(cardDrift(undescribed, [SUMMARIZE], { name: TEAM.name, description: null })).toEqual([]);
    expect(cardDrift(card(), [SUMMARIZE], { name: TEAM.name, description: null })).toEqual([
      { kind: 'CARD_DESCRIPTION_DIFFERS', expected: TEAM.name, actual: TEAM.description },
    ]);
  });

  test('lists every kind of difference, catalog order first', () => {
    const drifted = card((c) => {
      c.name = 'RENAMED_TEAM';
      const [skill] = c.skills;
      if (!skill) throw new Error('fixture has a skill');
      skill.id = '9999';
      skill.description = 'An older instruction';
      c.skills.push({ ...skill, id: '7000', name: 'RETIRED_TOOL' });
    });
    const tools = [
      SUMMARIZE,
      { toolId: '5002', name: 'HUMAN_REVIEW', instruction: 'Ask a person to approve' },
      SUMMARIZE,
    ];
    expect(cardDrift(drifted, tools, TEAM)).toEqual([
      { kind: 'CARD_NAME_DIFFERS', expected: TEAM.name, actual: 'RENAMED_TEAM' },
      { kind: 'SKILL_ID_DIFFERS', toolName: 'SUMMARIZE_REPORT', expected: '5001', actual: '9999' },
      {
        kind: 'SKILL_DESCRIPTION_DIFFERS',
        toolName: 'SUMMARIZE_REPORT',
        expected: SUMMARIZE.instruction,
        actual: 'An older instruction',
      },
      { kind: 'TOOL_MISSING_FROM_CARD', toolName: 'HUMAN_REVIEW', expected: 'HUMAN_REVIEW' },
      { kind: 'SKILL_WITHOUT_TOOL', toolName: 'RETIRED_TOOL', actual: 'RETIRED_TOOL' },
    ]);
  });

  test('a tool without an instruction matches an empty skill description', () => {
    const empty = card((c) => {
      (c.skills[0] as { description: string }).description = '';
    });
    expect(cardDrift(empty, [{ ...SUMMARIZE, instruction: null }], TEAM)).toEqual([]);
    expect(cardDrift(card(), [{ ...SUMMARIZE, instruction: null }], TEAM)).toEqual([
      {
        kind: 'SKILL_DESCRIPTION_DIFFERS',
        toolName: 'SUMMARIZE_REPORT',
        expected: null,
        actual: SUMMARIZE.instruction,
      },
    ]);
  });
});
