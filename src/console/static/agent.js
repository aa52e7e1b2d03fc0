// @ts-check
// The console's agent pages: the stored agents, and one agent with a form generated from its
// call contract, its output and its trace drawn as a tree with bars on a time axis. The DOM
// and GraphQL helpers are console.js's, handed in by agentViews().

const AGENTS = `query ConsoleAgents {
  agents(first: 100) { nodes { name owner description inputs { title type required } outputs { title type } } }
}`;

const AGENT = `query ConsoleAgent($name: String!) {
  agent(name: $name) { name owner description createTime inputs { title type required } outputs { title type } }
}`;

const EXECUTE = `mutation ConsoleExecuteAgent($name: String!, $inputs: [AgentInput!]!, $trace: Boolean) {
  executeAgent(name: $name, inputs: $inputs, trace: $trace) {
    output durationMs startedAt
    trace {
      raw
      nodes { index depth kind component name offsetMs durationMs inputTokens outputTokens branch }
      totals { totalTimeExecMs totalTimeLlmMs totalTimeToolMs llmCallCount toolCallCount branchCallCount inputTokens outputTokens llmTimePct toolTimePct }
    }
  }
}`;

/** The form control for one declared input: its JSON type decides the widget. */
function control(h, parameter, id) {
  const type = (parameter.type ?? 'string').toLowerCase();
  const common = { id, name: parameter.title, 'data-type': type, required: parameter.required };
  if (type === 'boolean') return h('input', { ...common, type: 'checkbox', required: false });
  if (type === 'number' || type === 'integer') {
    return h('input', { ...common, type: 'number', step: type === 'integer' ? '1' : 'any' });
  }
  if (type === 'object' || type === 'array') {
    return h('textarea', { ...common, rows: 3, placeholder: type === 'array' ? '[ … ]' : '{ … }' });
  }
  return h('input', { ...common, type: 'text', autocomplete: 'off' });
}

/** The value a control holds, as the contract's type reads it; undefined when left empty. */
function inputValue(input) {
  const type = input.dataset.type;
  if (type === 'boolean') return input.checked;
  if (input.value === '') return undefined;
  if (type === 'number' || type === 'integer') return Number(input.value);
  if (type === 'object' || type === 'array') {
    try {
      return JSON.parse(input.value);
    } catch {
      return input.value;
    }
  }
  return input.value;
}

/** Milliseconds as a trace reads them: to the ms below a second, to 10 ms above. */
const ms = (value) =>
  value === null || value === undefined
    ? '—'
    : value < 1000
      ? `${Math.round(value)} ms`
      : `${(value / 1000).toFixed(2)} s`;

/** Bars on one time axis, one row per component, indented by depth (the trace's pre-order). */
function traceChart(h, s, nodes) {
  const total = Math.max(1, ...nodes.map((n) => (n.offsetMs ?? 0) + (n.durationMs ?? 0)));
  const row = 22;
  const label = 260;
  const width = 900;
  const axis = width - label - 30;
  const x = (ms) => label + (axis * (ms ?? 0)) / total;
  const ticks = [0, 0.25, 0.5, 0.75, 1].map((f) => f * total);
  const svg = s(
    'svg',
    {
      viewBox: `0 0 ${width} ${nodes.length * row + 24}`,
      role: 'img',
      'aria-label': `Trace: ${nodes.length} components over ${ms(total)}`,
    },
    ...ticks.map((at) =>
      s(
        'text',
        { x: x(at), y: 12, 'text-anchor': 'middle', class: 'tick' },
        document.createTextNode(ms(at)),
      ),
    ),
    ...nodes.map((node, i) => {
      const y = 20 + i * row;
      const tokens =
        node.inputTokens !== null || node.outputTokens !== null
          ? ` · ${node.inputTokens ?? 0}→${node.outputTokens ?? 0} tokens`
          : '';
      const text = `${node.kind}${node.name ? ` ${node.name}` : ''}`;
      return s(
        'g',
        { class: `span ${node.component}`, 'data-index': node.index },
        s('title', {}, document.createTextNode(`${text}: ${ms(node.durationMs)}${tokens}`)),
        s('text', { x: 4 + node.depth * 14, y: y + 14 }, document.createTextNode(text)),
        s('rect', {
          class: 'bar',
          x: x(node.offsetMs),
          y: y + 3,
          width: Math.max(1, x((node.offsetMs ?? 0) + (node.durationMs ?? 0)) - x(node.offsetMs)),
          height: row - 6,
        }),
      );
    }),
  );
  return h(
    'figure',
    { class: 'trace' },
    h('figcaption', {}, 'Trace: components on the execution’s time axis'),
    svg,
  );
}

/**
 * The call's two durations, named: agent-graph's round trip (executeAgent.durationMs) and the
 * time the trace records for its top component, with what lies between them.
 */
function durations(h, execution) {
  const root = execution.trace?.nodes?.find((node) => node.depth === 0);
  const call = execution.durationMs;
  const own = root?.durationMs ?? null;
  const facts = [
    h('dt', {}, 'Call'),
    h(
      'dd',
      { 'data-duration': 'call' },
      h('strong', {}, ms(call)),
      ' — how long agent-graph waited for EXECUTE_AGENT, round trip included (executeAgent.durationMs).',
    ),
  ];
  if (own !== null) {
    const name = `${root.kind}${root.name ? ` ${root.name}` : ''}`;
    facts.push(
      h('dt', {}, 'Agent’s own time'),
      h(
        'dd',
        { 'data-duration': 'trace' },
        h('strong', {}, ms(own)),
        ` — what the trace records for its top component (${name}), by the database’s account.`,
      ),
      h('dt', {}, 'Why they differ'),
      h(
        'dd',
        {},
        own > call
          ? 'The trace records more time than the call took: its times are the agent’s own account, not agent-graph’s clock (on the embedded database they are simulated).'
          : `${ms(call - own)} of the call was spent outside the agent: the round trip, the database session and reading the agent’s definition.`,
      ),
    );
  }
  return h('dl', { class: 'facts durations' }, facts);
}

export function agentViews({
  h,
  s,
  add,
  gql,
  errorBanner,
  number,
  when,
  limits,
  utf8Bytes,
  byteSize,
}) {
  const calls = (n) => `${number(n)} ${n === 1 ? 'call' : 'calls'}`;
  const agentLink = (name) => h('a', { href: `#/agent/${encodeURIComponent(name)}` }, name);

  function agentsView(root) {
    add(root, h('h2', { tabindex: '-1' }, 'Agents'), h('p', { class: 'muted' }, 'Loading…'));
    gql(AGENTS).then(({ data, errors }) => {
      root.lastElementChild.remove();
      if (errors.length) add(root, errorBanner(errors));
      const agents = data?.agents?.nodes ?? [];
      add(
        root,
        agents.length === 0
          ? h('p', { class: 'empty' }, 'No stored agents are visible.')
          : h(
              'div',
              { class: 'scroll' },
              h(
                'table',
                {},
                h(
                  'thead',
                  {},
                  h(
                    'tr',
                    {},
                    ['Agent', 'Owner', 'Inputs', 'Outputs', 'Description'].map((c) =>
                      h('th', {}, c),
                    ),
                  ),
                ),
                h(
                  'tbody',
                  {},
                  agents.map((agent) =>
                    h(
                      'tr',
                      {},
                      h('td', {}, agentLink(agent.name)),
                      h('td', {}, agent.owner),
                      h('td', {}, agent.inputs.map((p) => p.title).join(', ') || '—'),
                      h('td', {}, agent.outputs.map((p) => p.title).join(', ') || '—'),
                      h('td', {}, agent.description ?? ''),
                    ),
                  ),
                ),
              ),
            ),
      );
    });
    return () => {};
  }

  function agentView(root, name) {
    add(root, h('h2', { tabindex: '-1' }, 'Agent ', name), h('p', { class: 'muted' }, 'Loading…'));
    gql(AGENT, { name }).then(({ data, errors }) => {
      root.lastElementChild.remove();
      if (errors.length) add(root, errorBanner(errors));
      const agent = data?.agent;
      if (!agent) return;
      add(
        root,
        h(
          'p',
          { class: 'muted' },
          agent.description ?? '',
          ` · owner ${agent.owner} · created ${when(agent.createTime)}`,
        ),
        executeForm(agent),
      );
    });
    return () => {};
  }

  function executeForm(agent) {
    const result = h('div', { class: 'execution', 'aria-live': 'polite' });
    const fields = agent.inputs.map((parameter, i) => {
      const id = `input-${i}`;
      return h(
        'div',
        { class: 'field' },
        h(
          'label',
          { for: id },
          parameter.title,
          h(
            'span',
            { class: 'muted' },
            ` ${parameter.type ?? 'any'}${parameter.required ? ', required' : ''}`,
          ),
        ),
        control(h, parameter, id),
      );
    });
    const trace = h('input', { type: 'checkbox', id: 'execute-trace', checked: true });
    const button = h('button', { type: 'submit' }, 'Execute');
    const size = h('span', { class: 'count' });
    const form = h(
      'form',
      { class: 'execute', 'aria-label': `Execute ${agent.name}` },
      h('h3', {}, 'Execute'),
      fields.length === 0 ? h('p', { class: 'muted' }, 'This agent declares no inputs.') : fields,
      h(
        'div',
        { class: 'field inline' },
        trace,
        h('label', { for: 'execute-trace' }, 'Return the trace'),
      ),
      h(
        'p',
        { class: 'muted limits' },
        size,
        ` · a request is at most ${byteSize(limits.bodyBytes)}`,
      ),
      button,
    );
    // Text that is only spaces is no value: refused by the browser, as an empty required one.
    for (const input of form.querySelectorAll('input[type="text"], textarea')) {
      const box = /** @type {HTMLInputElement} */ (input);
      box.addEventListener('input', () =>
        box.setCustomValidity(
          box.value !== '' && box.value.trim() === ''
            ? `${box.name} is only spaces: enter a value${box.required ? '' : ', or leave it empty'}.`
            : '',
        ),
      );
    }
    /** The inputs as EXECUTE_AGENT receives them, and their size as the server counts it. */
    const collect = () => {
      const inputs = [];
      for (const input of form.querySelectorAll('[data-type]')) {
        const value = inputValue(input);
        if (value !== undefined) inputs.push({ name: input.getAttribute('name'), value });
      }
      return { inputs, bytes: utf8Bytes(JSON.stringify(inputs)) };
    };
    const measure = () => {
      const { bytes } = collect();
      const over = bytes - limits.inputsBytes;
      size.textContent = `Inputs: ${number(bytes)} of ${number(limits.inputsBytes)} bytes as JSON${over > 0 ? `, ${number(over)} too many` : ''}`;
      size.classList.toggle('over', over > 0);
      return over > 0 ? bytes : null;
    };
    form.addEventListener('input', measure);
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      for (const input of form.querySelectorAll('[data-type]'))
        input.removeAttribute('aria-invalid');
      const tooLarge = measure();
      if (tooLarge !== null) {
        result.replaceChildren(
          h(
            'div',
            { class: 'banner', role: 'alert' },
            h(
              'p',
              {},
              `Not executed: the inputs are ${number(tooLarge)} bytes as JSON; EXECUTE_AGENT takes at most ${number(limits.inputsBytes)}.`,
            ),
          ),
        );
        return;
      }
      const { inputs } = collect();
      button.disabled = true;
      result.replaceChildren(h('p', { class: 'muted' }, 'Executing…'));
      const { data, errors } = await gql(EXECUTE, {
        name: agent.name,
        inputs,
        trace: trace.checked,
      });
      button.disabled = false;
      result.replaceChildren();
      if (errors.length) {
        for (const problem of errors[0]?.extensions?.problems ?? []) {
          form
            .querySelector(`[name="${CSS.escape(problem.input)}"]`)
            ?.setAttribute('aria-invalid', 'true');
        }
        add(
          result,
          h(
            'div',
            { class: 'banner', role: 'alert' },
            errors.map((error) =>
              h('p', {}, `${error.message} (${error.extensions?.code ?? 'ERROR'})`),
            ),
          ),
        );
        return;
      }
      const execution = data.executeAgent;
      add(
        result,
        h('h3', {}, 'Output'),
        h('p', { class: 'muted' }, `Started ${when(execution.startedAt)}`),
        durations(h, execution),
        h('pre', { class: 'output' }, JSON.stringify(execution.output, null, 2)),
        execution.trace ? traceSection(execution.trace) : null,
      );
    });
    measure();
    return h('div', {}, form, result);
  }

  function traceSection(trace) {
    const totals = trace.totals;
    return [
      trace.nodes
        ? traceChart(h, s, trace.nodes)
        : h(
            'p',
            { class: 'muted' },
            'The trace’s shape is not one the console can draw; its JSON follows.',
          ),
      totals
        ? h(
            'dl',
            { class: 'facts totals' },
            h('dt', {}, 'Total time (statistics)'),
            h('dd', {}, ms(totals.totalTimeExecMs)),
            h('dt', {}, 'LLM'),
            h(
              'dd',
              {},
              `${calls(totals.llmCallCount)}, ${ms(totals.totalTimeLlmMs)} (${totals.llmTimePct ?? '—'} %)`,
            ),
            h('dt', {}, 'Tools'),
            h(
              'dd',
              {},
              `${calls(totals.toolCallCount)}, ${ms(totals.totalTimeToolMs)} (${totals.toolTimePct ?? '—'} %)`,
            ),
            h('dt', {}, 'Tokens'),
            h('dd', {}, `${number(totals.inputTokens)} in, ${number(totals.outputTokens)} out`),
          )
        : null,
      h(
        'details',
        {},
        h('summary', {}, 'Raw trace JSON'),
        h('pre', {}, JSON.stringify(trace.raw, null, 2)),
      ),
    ];
  }

  return { agents: agentsView, agent: agentView };
}
