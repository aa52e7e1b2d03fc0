import { expect, test } from 'vitest';
import type { Catalog, ViewInfo } from '../../src/db/catalog.js';
import { runTeamJobName, runTeamSql } from '../../src/db/sql/run-team.js';

const view = (name: string): ViewInfo => ({ name, columns: new Set(['TEAM_EXEC_ID']), grant: '' });
const catalog = { teamHistory: view('USER_AI_AGENT_TEAM_HISTORY') } as Catalog;

test('the RUN_TEAM block takes every value as a bind, on both databases', () => {
  const { block, binds } = runTeamSql(catalog);
  const request = {
    jobName: runTeamJobName('ANSWER', 'EXEC-1', 'CALL-1'),
    execId: 'EXEC-1',
    teamOwner: 'ANALYST',
    teamName: "O'BRIEN_TEAM",
    prompt: "It's approved; DROP TABLE x; --",
    conversationId: '6f1c2a1e-0d3b-4b8e-9a55-3c2f1e0b7d41',
  };
  const given = binds(request);
  for (const text of [block.oracle.text, block.embedded.text]) {
    for (const value of Object.values(request)) expect(text).not.toContain(String(value));
  }
  expect(new Set(block.oracle.placeholders)).toEqual(
    new Set([...Object.keys(given), ...block.outputs]),
  );
  expect(new Set(block.embedded.placeholders)).toEqual(new Set(Object.keys(given)));
  expect(block.oracle.text).toContain('DBMS_SCHEDULER.CREATE_JOB');
  expect(block.oracle.text).toContain('FROM USER_AI_AGENT_TEAM_HISTORY');
});

test('a job name is an Oracle identifier, the same for the same wait, another for another', () => {
  const name = runTeamJobName('ANSWER', 'EXEC-1', 'CALL-1');
  expect(name).toMatch(/^[A-Z][A-Z0-9_]{0,127}$/);
  expect(runTeamJobName('ANSWER', 'EXEC-1', 'CALL-1')).toBe(name);
  expect(runTeamJobName('ANSWER', 'EXEC-1', 'CALL-2')).not.toBe(name);
});
