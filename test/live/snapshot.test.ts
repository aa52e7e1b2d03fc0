import { describe, expect, test } from 'vitest';
import { advance, diff, type Snapshot, vanishedTransitions } from '../../src/live/snapshot.js';
import type { PolledRun, TeamRunState } from '../../src/model/team.js';

const T0 = new Date('2026-11-30T12:00:00.000Z');
const T1 = new Date('2026-11-30T12:00:02.000Z');

function run(execId: string, state: TeamRunState, waitingSince: Date | null = null): PolledRun {
  const ended = state === 'SUCCEEDED' || state === 'FAILED';
  return {
    execId,
    teamName: 'TEAM',
    owner: 'APP_USER',
    state,
    startDate: new Date('2026-11-30T11:00:00.000Z'),
    endDate: ended ? T1 : null,
    instanceId: 1,
    waitingSince,
  };
}

function baseline(rows: PolledRun[]): Snapshot {
  const found = diff(null, rows, T0);
  return advance(null, found.runs, found.transitions, T0).snapshot;
}

describe('diff', () => {
  test('a baseline has no transitions and is always published, with the waiting set', () => {
    const found = diff(null, [run('A', 'RUNNING'), run('B', 'WAITING_FOR_HUMAN')], T0);
    expect(found.transitions).toEqual([]);
    const { snapshot, message } = advance(null, found.runs, found.transitions, T0);
    expect(message?.transitions).toEqual([]);
    expect(message?.waiting.map((r) => r.execId)).toEqual(['B']);
    expect(snapshot.seq).toBe(0);
  });

  test('new runs and changed states are transitions; unchanged runs are not', () => {
    const previous = baseline([run('A', 'RUNNING'), run('B', 'RUNNING')]);
    const found = diff(
      previous,
      [run('A', 'RUNNING'), run('B', 'SUCCEEDED'), run('C', 'RUNNING')],
      T1,
    );
    expect(found.transitions.map((t) => [t.run.execId, t.previousState, t.run.state])).toEqual([
      ['B', 'RUNNING', 'SUCCEEDED'],
      ['C', null, 'RUNNING'],
    ]);
    const { snapshot, message } = advance(previous, found.runs, found.transitions, T1);
    expect(snapshot.seq).toBe(1);
    expect(message?.seq).toBe(1);
    expect(snapshot.epoch).toBe(previous.epoch);
  });

  test('a quiet cycle publishes nothing and keeps the sequence', () => {
    const previous = baseline([run('A', 'RUNNING')]);
    const found = diff(previous, [run('A', 'RUNNING')], T1);
    const { snapshot, message } = advance(previous, found.runs, found.transitions, T1);
    expect(message).toBeNull();
    expect(snapshot.seq).toBe(previous.seq);
    expect(snapshot.polledAt).toBe(T1.toISOString());
  });

  test('an active run missing from the window is looked up; an ended one is forgotten', () => {
    const previous = baseline([run('A', 'RUNNING'), run('B', 'SUCCEEDED')]);
    const found = diff(previous, [], T1);
    expect(found.vanished.map((r) => r.execId)).toEqual(['A']);
    const transitions = vanishedTransitions(found.vanished, [run('A', 'FAILED')]);
    expect(transitions.map((t) => [t.run.execId, t.previousState, t.run.state])).toEqual([
      ['A', 'RUNNING', 'FAILED'],
    ]);
    expect(vanishedTransitions(found.vanished, [null])).toEqual([]);
  });

  test('waitingSince: the database’s value, else kept, else the poll that saw the change', () => {
    const opened = new Date('2026-11-30T11:59:00.000Z');
    const previous = baseline([
      run('A', 'WAITING_FOR_HUMAN'),
      run('B', 'WAITING_FOR_HUMAN', opened),
      run('C', 'RUNNING'),
    ]);
    expect(previous.runs.map((r) => r.waitingSince)).toEqual([null, opened.toISOString(), null]);
    const found = diff(
      previous,
      [run('A', 'WAITING_FOR_HUMAN'), run('B', 'WAITING_FOR_HUMAN'), run('C', 'WAITING_FOR_HUMAN')],
      T1,
    );
    expect(found.runs.map((r) => r.waitingSince)).toEqual([
      null,
      opened.toISOString(),
      T1.toISOString(),
    ]);
  });

  test('a change of waitingSince alone republishes the waiting set', () => {
    const previous = baseline([run('A', 'WAITING_FOR_HUMAN')]);
    const found = diff(previous, [run('A', 'WAITING_FOR_HUMAN', T0)], T1);
    const { message } = advance(previous, found.runs, found.transitions, T1);
    expect(message?.transitions).toEqual([]);
    expect(message?.waiting[0]?.waitingSince).toBe(T0.toISOString());
  });
});
