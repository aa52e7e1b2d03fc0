import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import { SIMULATE_PERIOD_MS_DEFAULT } from '../../config.js';
import type { TeamRunState } from '../../model/team.js';
import type { EmbeddedPg, EmbeddedStatements } from './database.js';
import { asUuid, humanQuestion, mulberry32 } from './demo-data.js';

/**
 * Moves team runs along in the embedded tables, the way DBMS_CLOUD_AI_AGENT.RUN_TEAM would
 * fill the history views: RUNNING → WAITING_FOR_HUMAN (a HUMAN tool call opens) → RESUMING
 * (it closes with the answer) → RUNNING → SUCCEEDED or FAILED, plus new runs. The Oracle API
 * has no such writes, so this works below GraphQL, in PostgreSQL's own SQL. Tests drive the
 * same functions directly instead of waiting for random moves.
 */

type Db = EmbeddedStatements;

interface Tool {
  readonly name: string;
  readonly type: string | null;
}

interface Member {
  readonly agent: string;
  readonly task: string;
  readonly tools: readonly Tool[];
}

interface TaskRow {
  readonly task_order: number;
  readonly task_name: string | null;
  readonly agent_name: string;
  readonly state: string;
  readonly end_date: Date | null;
}

interface RunRow {
  readonly team_exec_id: string;
  readonly team_name: string;
  readonly team_owner: string;
  readonly state: TeamRunState;
  readonly end_date: Date | null;
}

/** The members of a team in order, with each task's tools and their types. */
async function membersOf(db: Db, owner: string, teamName: string): Promise<Member[]> {
  const { rows } = await db.query<{ agent: string; task: string; tools: Tool[] }>(
    `SELECT m.member->>'name' AS agent, m.member->>'task' AS task,
       COALESCE((
         SELECT json_agg(json_build_object('name', tool.name, 'type', typ.attribute_value) ORDER BY tool.ord)
         FROM dba_ai_agent_task_attributes k
         CROSS JOIN LATERAL json_array_elements_text(k.attribute_value::json) WITH ORDINALITY AS tool(name, ord)
         LEFT JOIN dba_ai_agent_tool_attributes typ
           ON typ.owner = k.owner AND typ.tool_name = tool.name AND typ.attribute_name = 'tool_type'
         WHERE k.owner = a.owner AND k.task_name = m.member->>'task' AND k.attribute_name = 'tools'
       ), '[]'::json) AS tools
     FROM dba_ai_agent_team_attributes a
     CROSS JOIN LATERAL json_array_elements(a.attribute_value::json) WITH ORDINALITY AS m(member, ord)
     WHERE a.owner = $1 AND a.agent_team_name = $2 AND a.attribute_name = 'agents'
     ORDER BY m.ord`,
    [owner, teamName],
  );
  return rows;
}

const humanMember = (members: readonly Member[]) =>
  members.find((member) => member.tools.some((tool) => tool.type === 'HUMAN'));

/** SYS_GUID-like and reproducible: the same run and call number give the same id. */
function invocationId(execId: string, n: number): string {
  return createHash('md5').update(`${execId}:${n}`).digest('hex').toUpperCase();
}

async function openCall(
  db: Db,
  run: RunRow,
  task: { task_order: number; task_name: string | null; agent_name: string },
  tool: Tool,
  at: Date,
): Promise<void> {
  const { rows } = await db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM dba_ai_agent_tool_history WHERE team_exec_id = $1',
    [run.team_exec_id],
  );
  const human = tool.type === 'HUMAN';
  const request = human
    ? (
        await db.query<{ input: string | null }>(
          `SELECT input FROM dba_ai_agent_task_history WHERE team_exec_id = $1 ORDER BY task_order LIMIT 1`,
          [run.team_exec_id],
        )
      ).rows[0]?.input
    : null;
  await db.query(
    `INSERT INTO dba_ai_agent_tool_history (invocation_id, team_exec_id, task_order, tool_owner,
       tool_name, agent_name, task_name, start_date, end_date, input, output, tool_output)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, NULL, $9, NULL, $10)`,
    [
      invocationId(run.team_exec_id, (rows[0]?.n ?? 0) + 1),
      run.team_exec_id,
      task.task_order,
      run.team_owner,
      tool.name,
      task.agent_name,
      task.task_name,
      at,
      JSON.stringify(human ? humanQuestion(tool.name, request ?? '') : { step: task.task_order }),
      human ? 'waiting for a response from the reviewer' : `${tool.type ?? 'TOOL'} call started`,
    ],
  );
}

/** Ends the run's open tool calls: a human answers, other tools return a result. */
async function closeOpenCalls(db: Db, execId: string, at: Date, failed: boolean): Promise<void> {
  await db.query(
    `UPDATE dba_ai_agent_tool_history c SET end_date = $2,
       output = CASE WHEN $3 THEN NULL
                     WHEN typ.attribute_value = 'HUMAN' THEN '{"answer":"approved"}'
                     ELSE '{"rows":1}' END,
       tool_output = CASE WHEN $3 THEN 'call aborted: the run failed'
                          WHEN typ.attribute_value = 'HUMAN' THEN 'reviewer answered: approved'
                          ELSE COALESCE(typ.attribute_value, 'TOOL') || ' call completed' END
     FROM dba_ai_agent_tool_history o
     LEFT JOIN dba_ai_agent_tool_attributes typ
       ON typ.owner = o.tool_owner AND typ.tool_name = o.tool_name AND typ.attribute_name = 'tool_type'
     WHERE c.invocation_id = o.invocation_id AND o.team_exec_id = $1 AND o.end_date IS NULL`,
    [execId, at, failed],
  );
}

async function addTask(
  db: Db,
  run: RunRow,
  member: Member,
  order: number,
  state: TeamRunState,
  at: Date,
): Promise<TaskRow> {
  const { rows } = await db.query<{ coversation_param: string | null; input: string | null }>(
    `SELECT coversation_param, input FROM dba_ai_agent_task_history
     WHERE team_exec_id = $1 ORDER BY task_order LIMIT 1`,
    [run.team_exec_id],
  );
  await db.query(
    `INSERT INTO dba_ai_agent_task_history (team_exec_id, team_name, task_owner, agent_name,
       task_name, task_order, coversation_param, input, result, state, start_date, end_date)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, NULL, $9, $10, NULL)`,
    [
      run.team_exec_id,
      run.team_name,
      run.team_owner,
      member.agent,
      member.task,
      order,
      rows[0]?.coversation_param ?? null,
      order === 1 ? (rows[0]?.input ?? null) : `Continue with the result of task ${order - 1}`,
      state,
      at,
    ],
  );
  return {
    task_order: order,
    task_name: member.task,
    agent_name: member.agent,
    state,
    end_date: null,
  };
}

async function finishTask(
  db: Db,
  execId: string,
  order: number,
  state: 'SUCCEEDED' | 'FAILED',
  at: Date,
): Promise<void> {
  const { rows } = await db.query<{
    task_owner: string;
    team_name: string;
    task_name: string | null;
    input: string | null;
    coversation_param: string | null;
    start_date: Date | null;
  }>(
    `UPDATE dba_ai_agent_task_history SET state = $3, end_date = $4, result = $5
     WHERE team_exec_id = $1 AND task_order = $2
     RETURNING task_owner, team_name, task_name, input, coversation_param, start_date`,
    [
      execId,
      order,
      state,
      at,
      state === 'SUCCEEDED'
        ? JSON.stringify({ status: 'ok', answer: 'done' })
        : 'ORA-20404: tool returned no rows',
    ],
  );
  const task = rows[0];
  if (!task) return;
  // What Select AI records beside the history: the task's LLM exchange, and for a failure
  // its scheduler job's error.
  await db.query(
    `INSERT INTO dba_cloud_ai_conversation_prompts (owner, conversation_id, prompt, prompt_response, created)
     SELECT $1, $2::json->>'conversation_id', $3, $4, $5 WHERE $2::json->>'conversation_id' IS NOT NULL`,
    [
      task.task_owner,
      task.coversation_param,
      `${task.task_name}: ${task.input ?? ''}`,
      state === 'SUCCEEDED' ? 'Done: the tools answered and the result is ready.' : null,
      task.start_date ?? at,
    ],
  );
  if (state === 'FAILED') {
    await db.query(
      `INSERT INTO dba_scheduler_job_run_details (log_id, log_date, owner, job_name, status,
         actual_start_date, additional_info)
       SELECT COALESCE(MAX(log_id), 7000) + 1, $1, $2, $3, 'FAILED', $4, $5
       FROM dba_scheduler_job_run_details`,
      [
        at,
        task.task_owner,
        `${task.team_name}$${task.task_name}`,
        task.start_date ?? at,
        'ORA-20404: Tool returned no rows for the request',
      ],
    );
  }
}

async function setTaskState(db: Db, execId: string, order: number, state: TeamRunState) {
  await db.query(
    'UPDATE dba_ai_agent_task_history SET state = $3 WHERE team_exec_id = $1 AND task_order = $2',
    [execId, order, state],
  );
}

/** Opens a call of the member's first tool that does not need a person, if it has one. */
async function startWork(db: Db, run: RunRow, member: Member | undefined, task: TaskRow, at: Date) {
  const tool = member?.tools.find((t) => t.type !== 'HUMAN');
  if (tool) await openCall(db, run, task, tool, at);
}

/**
 * Moves one run to `state` at `at`, with the task and tool-call rows that go with it. A run
 * that has ended cannot move again.
 */
export async function setRunState(
  pg: EmbeddedPg,
  execId: string,
  state: TeamRunState,
  at: Date = new Date(),
): Promise<void> {
  await pg.transaction(async (tx) => {
    const run = (
      await tx.query<RunRow>(
        `SELECT team_exec_id, team_name, team_owner, state, end_date
         FROM dba_ai_agent_team_history WHERE team_exec_id = $1 FOR UPDATE`,
        [execId],
      )
    ).rows[0];
    if (!run) throw new Error(`No team run ${execId}`);
    if (run.end_date !== null) throw new Error(`Team run ${execId} has ended (${run.state})`);
    if (run.state === state) return;
    const members = await membersOf(tx, run.team_owner, run.team_name);
    const memberOf = (task: TaskRow | undefined) => members.find((m) => m.task === task?.task_name);
    let task = (
      await tx.query<TaskRow>(
        `SELECT task_order::int AS task_order, task_name, agent_name, state, end_date
         FROM dba_ai_agent_task_history WHERE team_exec_id = $1 ORDER BY task_order DESC LIMIT 1`,
        [execId],
      )
    ).rows[0];
    const open = task && task.end_date === null ? task : undefined;
    const nextOrder = (task?.task_order ?? 0) + 1;
    await closeOpenCalls(tx, execId, at, state === 'FAILED');

    switch (state) {
      case 'WAITING_FOR_HUMAN': {
        const human = humanMember(members);
        if (human && open?.task_name !== human.task) {
          if (open) await finishTask(tx, execId, open.task_order, 'SUCCEEDED', at);
          task = await addTask(tx, run, human, nextOrder, state, at);
        } else if (open) {
          await setTaskState(tx, execId, open.task_order, state);
        }
        const tool = human?.tools.find((t) => t.type === 'HUMAN');
        if (task && tool) await openCall(tx, run, task, tool, at);
        break;
      }
      case 'RESUMING':
        if (open) await setTaskState(tx, execId, open.task_order, state);
        break;
      case 'RUNNING': {
        // After a human answered, the team moves on to the next member when there is one.
        const current = memberOf(open);
        const next = current ? members[members.indexOf(current) + 1] : members[0];
        if (open && (open.state !== 'RESUMING' || !next)) {
          await setTaskState(tx, execId, open.task_order, state);
          await startWork(tx, run, current, open, at);
        } else if (next) {
          if (open) await finishTask(tx, execId, open.task_order, 'SUCCEEDED', at);
          task = await addTask(tx, run, next, nextOrder, state, at);
          await startWork(tx, run, next, task, at);
        }
        break;
      }
      case 'SUCCEEDED':
      case 'FAILED':
        if (open) await finishTask(tx, execId, open.task_order, state, at);
        break;
    }
    const ended = state === 'SUCCEEDED' || state === 'FAILED';
    await tx.query(
      'UPDATE dba_ai_agent_team_history SET state = $2, end_date = $3 WHERE team_exec_id = $1',
      [execId, state, ended ? at : null],
    );
  });
}

/** Starts a run of a team in RUNNING, with its first member's task and tool call under way. */
export async function startRun(
  pg: EmbeddedPg,
  run: { owner: string; teamName: string; execId: string; prompt?: string },
  at: Date = new Date(),
): Promise<void> {
  await pg.transaction(async (tx) => {
    const members = await membersOf(tx, run.owner, run.teamName);
    const first = members[0];
    if (!first) throw new Error(`Team ${run.owner}.${run.teamName} has no members`);
    const row: RunRow = {
      team_exec_id: run.execId,
      team_name: run.teamName,
      team_owner: run.owner,
      state: 'RUNNING',
      end_date: null,
    };
    await tx.query(
      `INSERT INTO dba_ai_agent_team_history (team_exec_id, team_name, team_owner, start_date,
         end_date, state, team_instance_id) VALUES ($1, $2, $3, $4, NULL, 'RUNNING', 1)`,
      [run.execId, run.teamName, run.owner, at],
    );
    const prompt = run.prompt ?? 'Simulated request';
    await tx.query(
      `INSERT INTO dba_ai_agent_task_history (team_exec_id, team_name, task_owner, agent_name,
         task_name, task_order, coversation_param, input, result, state, start_date, end_date)
       VALUES ($1, $2, $3, $4, $5, 1, $6, $7, NULL, 'RUNNING', $8, NULL)`,
      [
        run.execId,
        run.teamName,
        run.owner,
        first.agent,
        first.task,
        JSON.stringify({ conversation_id: asUuid(run.execId), title: prompt.slice(0, 40) }),
        prompt,
        at,
      ],
    );
    await startWork(
      tx,
      row,
      first,
      {
        task_order: 1,
        task_name: first.task,
        agent_name: first.agent,
        state: 'RUNNING',
        end_date: null,
      },
      at,
    );
  });
}

export interface SimulatedMove {
  readonly execId: string;
  readonly teamName: string;
  readonly from: TeamRunState | null;
  readonly to: TeamRunState;
}

export interface SimulatorOptions {
  readonly seed?: number;
  /** Time between steps. */
  readonly periodMs?: number;
  /** No new run starts while this many have not ended. */
  readonly maxActive?: number;
  readonly logger?: Logger;
}

const PROMPTS = [
  'Summarize the latest upload',
  'Check order 31337 and refund if damaged',
  'Explain last night’s error spike',
  'Draft the weekly status for the team',
];

/** What the demo holds when the simulator starts, and keeps holding (see Simulator). */
interface SteadyState {
  /** Runs not ended: new runs start while fewer are under way. */
  readonly active: number;
  /** The simulator answers a wait only while more than this many runs wait. */
  readonly minWaiting: number;
  /** Runs go on to wait for a person only while fewer than this many wait. */
  readonly maxWaiting: number;
  /** Runs in all: past it, the oldest ended runs are deleted with their rows. */
  readonly total: number;
}

/**
 * Every few seconds moves one to three unfinished runs one step and starts runs, so that the
 * demo stays as it began for hours (issue 36, item 8): as many runs under way, some always
 * waiting for a person (the simulator answers only the waits above a floor, and leaves the
 * rest to whoever opens the console), and as many runs in all, the oldest ended ones aging
 * out as new ones end. The choices come from a PRNG seeded once, so the same seed on the same
 * data makes the same moves; the times are the step's (the current time on the timer).
 */
export class Simulator {
  private readonly random: () => number;
  private readonly periodMs: number;
  private readonly maxActive: number;
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<unknown> | undefined;
  private running = false;
  private steady: SteadyState | undefined;

  constructor(
    private readonly pg: EmbeddedPg,
    private readonly options: SimulatorOptions = {},
  ) {
    this.random = mulberry32(options.seed ?? 20261130);
    this.periodMs = options.periodMs ?? SIMULATE_PERIOD_MS_DEFAULT;
    this.maxActive = options.maxActive ?? 60;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.schedule();
  }

  async stop(): Promise<void> {
    this.running = false;
    clearTimeout(this.timer);
    await this.inFlight;
  }

  private schedule(): void {
    this.timer = setTimeout(() => {
      this.inFlight = this.step()
        .then((moves) => this.options.logger?.debug({ moves }, 'simulated team-run moves'))
        .catch((error: unknown) =>
          this.options.logger?.warn({ err: error }, 'simulator step failed'),
        )
        .finally(() => {
          this.inFlight = undefined;
          if (this.running) this.schedule();
        });
    }, this.periodMs);
  }

  /** One step at `at`: the moves it made. */
  async step(at: Date = new Date()): Promise<SimulatedMove[]> {
    const moves: SimulatedMove[] = [];
    const { rows: active } = await this.pg.query<RunRow>(
      `SELECT team_exec_id, team_name, team_owner, state, end_date FROM dba_ai_agent_team_history
       WHERE end_date IS NULL ORDER BY team_exec_id`,
    );
    this.steady ??= await this.steadyState(active);
    const steady = this.steady;
    let waiting = active.filter((run) => run.state === 'WAITING_FOR_HUMAN').length;
    const count = Math.min(active.length, 1 + Math.floor(this.random() * 3));
    const picked = new Set<RunRow>();
    while (picked.size < count)
      picked.add(active[Math.floor(this.random() * active.length)] as RunRow);
    for (const run of picked) {
      const to = await this.nextState(run, waiting, steady);
      if (to === run.state) continue;
      await setRunState(this.pg, run.team_exec_id, to, at);
      if (to === 'WAITING_FOR_HUMAN') waiting++;
      if (run.state === 'WAITING_FOR_HUMAN') waiting--;
      moves.push({ execId: run.team_exec_id, teamName: run.team_name, from: run.state, to });
    }
    let underWay =
      active.length - moves.filter((m) => m.to === 'SUCCEEDED' || m.to === 'FAILED').length;
    const { rows: teams } = await this.pg.query<{ owner: string; agent_team_name: string }>(
      'SELECT owner, agent_team_name FROM dba_ai_agent_teams ORDER BY owner, agent_team_name',
    );
    while (underWay < Math.min(steady.active, this.maxActive) && teams.length > 0) {
      const team = teams[Math.floor(this.random() * teams.length)] as (typeof teams)[number];
      const execId = this.guid();
      await startRun(
        this.pg,
        {
          owner: team.owner,
          teamName: team.agent_team_name,
          execId,
          prompt: PROMPTS[Math.floor(this.random() * PROMPTS.length)],
        },
        at,
      );
      moves.push({ execId, teamName: team.agent_team_name, from: null, to: 'RUNNING' });
      underWay++;
    }
    await this.ageOut(steady.total);
    return moves;
  }

  /** The demo as the simulator found it: what it keeps. */
  private async steadyState(active: readonly RunRow[]): Promise<SteadyState> {
    const { rows } = await this.pg.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM dba_ai_agent_team_history',
    );
    const waiting = active.filter((run) => run.state === 'WAITING_FOR_HUMAN').length;
    return {
      active: active.length,
      minWaiting: Math.max(1, Math.ceil(waiting / 2)),
      maxWaiting: Math.max(2, waiting + Math.ceil(waiting / 2)),
      total: rows[0]?.n ?? 0,
    };
  }

  /**
   * Deletes the oldest ended runs beyond `total`, with their tasks and tool calls and what
   * Select AI recorded beside them: their tasks' conversation prompts (a conversation no kept
   * task holds) and their failed tasks' scheduler job runs, found as task-details.ts finds a
   * task's job (name, owner, started within a minute of the task).
   */
  private async ageOut(total: number): Promise<void> {
    await this.pg.transaction(async (tx) => {
      const { rows } = await tx.query<{ team_exec_id: string }>(
        `SELECT team_exec_id FROM dba_ai_agent_team_history WHERE end_date IS NOT NULL
         ORDER BY end_date, team_exec_id
         LIMIT GREATEST(0, (SELECT count(*) FROM dba_ai_agent_team_history) - $1)`,
        [total],
      );
      if (rows.length === 0) return;
      const ids = rows.map((row) => row.team_exec_id);
      await tx.query(
        `DELETE FROM dba_cloud_ai_conversation_prompts p
         WHERE p.conversation_id IN (
             SELECT t.coversation_param::json->>'conversation_id'
             FROM dba_ai_agent_task_history t WHERE t.team_exec_id = ANY($1))
           AND NOT EXISTS (
             SELECT 1 FROM dba_ai_agent_task_history k
             WHERE k.team_exec_id <> ALL($1)
               AND k.coversation_param::json->>'conversation_id' = p.conversation_id)`,
        [ids],
      );
      await tx.query(
        `DELETE FROM dba_scheduler_job_run_details d
         USING dba_ai_agent_task_history t
         WHERE t.team_exec_id = ANY($1) AND d.owner = t.task_owner
           AND d.job_name = t.team_name || '$' || t.task_name
           AND d.actual_start_date >= t.start_date - INTERVAL '1 minute'
           AND (t.end_date IS NULL OR d.actual_start_date <= t.end_date + INTERVAL '1 minute')`,
        [ids],
      );
      for (const table of ['tool', 'task', 'team']) {
        await tx.query(`DELETE FROM dba_ai_agent_${table}_history WHERE team_exec_id = ANY($1)`, [
          ids,
        ]);
      }
    });
  }

  /** Where `run` goes next; its own state when it stays (a wait left for a person). */
  private async nextState(
    run: RunRow,
    waiting: number,
    steady: SteadyState,
  ): Promise<TeamRunState> {
    switch (run.state) {
      case 'WAITING_FOR_HUMAN':
        return waiting > steady.minWaiting && this.random() < 0.5 ? 'RESUMING' : run.state;
      case 'RESUMING':
        return 'RUNNING';
      default: {
        const members = await membersOf(this.pg, run.team_owner, run.team_name);
        if (humanMember(members) && waiting < steady.maxWaiting && this.random() < 0.5) {
          return 'WAITING_FOR_HUMAN';
        }
        return this.random() < 0.85 ? 'SUCCEEDED' : 'FAILED';
      }
    }
  }

  private guid(): string {
    let hex = '';
    for (let i = 0; i < 4; i++) {
      hex += Math.floor(this.random() * 0x100000000)
        .toString(16)
        .padStart(8, '0');
    }
    return hex.toUpperCase();
  }
}
