import { describe, expect, test } from 'vitest';
import { indexTrace, parseTrace, traceTotals } from '../src/model/agent-trace.js';

/** What a TRACES document may look like: the reader's shapes (src/model/agent-trace.ts). */
describe('reading a TRACES document', () => {
  test('a flat list of spans with parent ids becomes the same tree as nested children', () => {
    const flat = [
      {
        span_id: 'r',
        kind: 'Agent',
        name: 'assistant',
        start_time: '2026-09-01T10:00:00.000Z',
        end_time: '2026-09-01T10:00:01.500Z',
      },
      {
        span_id: 'a',
        parent_span_id: 'r',
        kind: 'Agent round',
        start_time: '2026-09-01T10:00:00.010Z',
        duration_ms: 1400,
      },
      {
        span_id: 'l',
        parent_span_id: 'a',
        span_type: 'LLM',
        name: 'gpt',
        start_time: '2026-09-01T10:00:00.020Z',
        duration_ms: 900,
        usage: { prompt_tokens: 640, completion_tokens: 120 },
      },
      {
        span_id: 't',
        parent_span_id: 'a',
        kind: 'ToolNode',
        name: 'lookup',
        start_time: '2026-09-01T10:00:00.950Z',
        duration_ms: 280,
      },
      {
        span_id: 'b',
        parent_span_id: 'r',
        kind: 'BranchingNode',
        start_time: '2026-09-01T10:00:01.420Z',
        duration_ms: 4,
        attributes: { selected_branch: 'default' },
      },
    ];
    const root = parseTrace(flat);
    expect(root).not.toBeNull();
    const nodes = indexTrace(root as NonNullable<typeof root>);
    expect(nodes.map((n) => [n.component, n.depth, n.parentIndex, n.offsetMs])).toEqual([
      ['AGENT', 0, null, 0],
      ['AGENT_ROUND', 1, 0, 10],
      ['LLM_NODE', 2, 1, 20],
      ['TOOL_NODE', 2, 1, 950],
      ['BRANCHING_NODE', 1, 0, 1420],
    ]);
    const totals = traceTotals(root as NonNullable<typeof root>);
    expect(totals).toMatchObject({
      totalTimeExecMs: 1500,
      llmCallCount: 1,
      totalTimeLlmMs: 900,
      toolCallCount: 1,
      totalTimeToolMs: 280,
      branchCallCount: 1,
      branchDefaultCallCount: 1,
      inputTokens: 640,
      outputTokens: 120,
    });
  });

  test('a shape it does not know reads as null (the raw JSON is then all there is)', () => {
    expect(parseTrace({ events: [{ at: 1, what: 'llm' }] })).toBeNull();
    expect(parseTrace('not json at all')).toBeNull();
    // A node without a kind, or without any time, is not a trace component.
    expect(parseTrace({ root: { name: 'x', duration_ms: 3 } })).toBeNull();
    expect(parseTrace({ kind: 'Flow', children: [{ kind: 'LlmNode' }] })).toBeNull();
    // Two roots in a flat list: no one tree.
    expect(
      parseTrace([
        { id: 1, kind: 'Flow', duration_ms: 1 },
        { id: 2, kind: 'Flow', duration_ms: 1 },
      ]),
    ).toBeNull();
  });
});
