/**
 * What the scheduler job that carries an answer or a prompt is given to run: the embedded
 * database evaluates the job action's expression of src/db/sql/run-team.ts, the same text the
 * Oracle block hands to DBMS_SCHEDULER.CREATE_JOB, and keeps the result. Read back as Oracle's
 * PL/SQL parser would read it, each literal holds the text exactly, and nothing else runs.
 */
import { describe, expect, test } from 'vitest';
import type { EmbeddedPg } from '../../src/db/embedded/database.js';
import { MAX_PROMPT_BYTES } from '../../src/db/sql/run-team.js';
import type { TestServer } from '../support/server.js';
import { REPORT, waitingRun, withHitlServer } from './support.js';

let t: TestServer;
let pg: EmbeddedPg;
withHitlServer((server) => {
  ({ t, pg } = server);
});

/** A PL/SQL string literal: quotes around, a quote inside written twice. */
const LITERAL = "'(?:[^']|'')*'";
const ACTION = new RegExp(
  `^DECLARE l_result CLOB; BEGIN l_result := DBMS_CLOUD_AI_AGENT\\.RUN_TEAM\\(team_name => (${LITERAL}), user_prompt => (${LITERAL}), params => (${LITERAL})\\); END;$`,
  's',
);
const text = (literal: string) => literal.slice(1, -1).replaceAll("''", "'");

/** The job action's three arguments, or a failure when the action is anything but one call. */
function runTeamArguments(action: string): { team: string; prompt: string; params: unknown } {
  const match = ACTION.exec(action);
  if (!match) throw new Error(`not a single RUN_TEAM call: ${action}`);
  const [, team, prompt, params] = match as unknown as [string, string, string, string];
  return { team: text(team), prompt: text(prompt), params: JSON.parse(text(params)) };
}

async function jobAction(where: string, value: string): Promise<string> {
  const { rows } = await pg.query<{ job_action: string }>(
    `SELECT job_action FROM emb_scheduler_jobs WHERE ${where} = $1`,
    [value],
  );
  expect(rows).toHaveLength(1);
  return (rows[0] as { job_action: string }).job_action;
}

const TEXTS = [
  "'yes'",
  "'",
  "''",
  "q'[approved]'",
  "It's approved'); DBMS_OUTPUT.PUT_LINE('x",
  'first line\nsecond line\r\nthird',
  '-- not a comment',
  '/* not a comment */ yes',
  "'; END; BEGIN NULL; --",
  '"quoted" \\ backslash',
];

describe('the RUN_TEAM job action', () => {
  test.each(TEXTS)('an answer %j reaches RUN_TEAM as that exact text', async (answer) => {
    const execId = await waitingRun(pg);
    const { errors } = await t.post(
      'mutation($e: ID!, $r: String!) { respondToHuman(execId: $e, response: $r) { execId } }',
      { e: execId, r: answer },
    );
    expect(errors).toBeUndefined();
    const action = runTeamArguments(await jobAction('team_exec_id', execId));
    expect(action.prompt).toBe(answer);
    expect(action.team).toBe(REPORT);
    expect(action.params).toEqual({ conversation_id: expect.any(String) });
  });

  test('a prompt that starts a run reaches RUN_TEAM exactly, in the conversation runTeam returns', async () => {
    const prompt = "'Summarize' q'{Q4}' -- all /* of */ it\n'";
    const { data, errors } = await t.post<{ runTeam: { conversationId: string } }>(
      'mutation($p: String!) { runTeam(teamName: "REPORT_SUMMARY_AGENT_TEAM", prompt: $p) { conversationId } }',
      { p: prompt },
    );
    expect(errors).toBeUndefined();
    const conversationId = data?.runTeam.conversationId as string;
    const action = runTeamArguments(await jobAction('conversation_id', conversationId));
    expect(action).toEqual({
      team: REPORT,
      prompt,
      params: { conversation_id: conversationId },
    });
  });

  test('the longest prompt accepted, all quotes, keeps the action within the scheduler’s 4,000 bytes', async () => {
    const prompt = "'".repeat(MAX_PROMPT_BYTES / 2);
    const { data, errors } = await t.post<{ runTeam: { conversationId: string } }>(
      'mutation($p: String!) { runTeam(teamName: "REPORT_SUMMARY_AGENT_TEAM", prompt: $p) { conversationId } }',
      { p: prompt },
    );
    expect(errors).toBeUndefined();
    const action = await jobAction('conversation_id', data?.runTeam.conversationId as string);
    expect(runTeamArguments(action).prompt).toBe(prompt);
    expect(Buffer.byteLength(action)).toBeLessThanOrEqual(4000);

    const longer = await t.post(
      'mutation($p: String!) { runTeam(teamName: "REPORT_SUMMARY_AGENT_TEAM", prompt: $p) { conversationId } }',
      { p: `${prompt}'` },
    );
    expect(longer.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });
});
