// @ts-check
// The agent-graph console: plain DOM and the graphql-ws client, nothing else. Every view reads
// the public GraphQL API only (POST /graphql and graphql-ws on the same path). Checked by
// `npm run typecheck` (tsconfig.console.json); test/console-documents.test.ts validates its
// GraphQL documents against the schema.
import { createClient } from 'graphql-ws';
import { agentViews } from './agent.js';

const TOKEN_KEY = 'agent-graph.console.token';
/**
 * An element of index.html, which the console cannot run without.
 * @template {HTMLElement} [E=HTMLElement]
 * @param {string} id
 * @returns {E}
 */
function byId(id) {
  const element = document.getElementById(id);
  if (!element) throw new Error(`index.html has no #${id}`);
  return /** @type {E} */ (element);
}

/**
 * A GraphQL error as the server sends it.
 * @typedef {{ message: string, extensions?: { code?: string, state?: string } }} GraphQLFailure
 */

const view = byId('view');
const connection = byId('connection');

// The token lives in sessionStorage: kept across reloads of this tab, gone with the tab.
let token = sessionStorage.getItem(TOKEN_KEY) ?? '';
/** @returns {Record<string, string>} */
const authorization = () => (token ? { authorization: `Bearer ${token}` } : {});

/**
 * What add() and h() take as children: nodes, text, numbers, nested lists, or nothing.
 * @typedef {Node | string | number | null | undefined | false | readonly any[]} Child
 */

/**
 * Appends nodes or text (never parsed as HTML), skipping null, undefined and false.
 * @template {Element} E
 * @param {E} parent
 * @param {...Child} children
 * @returns {E}
 */
function add(parent, ...children) {
  for (const child of children.flat(Number.POSITIVE_INFINITY)) {
    if (child === undefined || child === null || child === false) continue;
    parent.append(child instanceof Node ? child : String(child));
  }
  return parent;
}

/**
 * An HTML element with attributes (true: present, false/null/undefined: absent) and children.
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Record<string, unknown>} [attributes]
 * @param {...Child} children
 * @returns {HTMLElementTagNameMap[K]}
 */
function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    element.setAttribute(name, value === true ? '' : String(value));
  }
  return add(element, children);
}

const SVG = 'http://www.w3.org/2000/svg';
/**
 * An SVG element, for the statistics charts.
 * @param {string} tag
 * @param {Record<string, string | number>} [attributes]
 * @param {...Node} children
 * @returns {SVGElement}
 */
function s(tag, attributes = {}, ...children) {
  const element = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, String(value));
  for (const child of children) element.append(child);
  return element;
}

// The console's documents are trusted documents (persisted-documents.json, written by
// src/console/documents.ts): it sends their hashes, so it works where the server refuses
// documents sent as text (TRUSTED_DOCUMENTS_ONLY=true).
const TRUSTED = await fetch('/console/persisted-documents.json')
  .then((response) => (response.ok ? response.json() : {}))
  .then((manifest) => new Map(Object.entries(manifest).map(([hash, text]) => [text, hash])))
  .catch(() => new Map());

/**
 * The request for `query`: its hash when the manifest has it, else its text.
 * @param {string} query
 * @param {Record<string, unknown>} variables
 */
function operation(query, variables) {
  const sha256Hash = TRUSTED.get(query);
  return sha256Hash
    ? { variables, extensions: { persistedQuery: { version: 1, sha256Hash } } }
    : { query, variables };
}

/**
 * One query or mutation over HTTP.
 * @param {string} query
 * @param {Record<string, unknown>} [variables]
 * @returns {Promise<{ data: any, errors: GraphQLFailure[] }>}
 */
async function gql(query, variables = {}) {
  const response = await fetch('/graphql', {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/graphql-response+json, application/json',
      ...authorization(),
    },
    body: JSON.stringify(operation(query, variables)),
  });
  const body = await response.json().catch(() => ({
    errors: [{ message: `HTTP ${response.status}`, extensions: { code: 'INTERNAL' } }],
  }));
  return { data: body.data ?? null, errors: body.errors ?? [] };
}

let client;
function ws() {
  client ??= createClient({
    url: `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/graphql`,
    connectionParams: () => authorization(),
    // Connected from the start, so the status line tells whether live views will update.
    lazy: false,
    retryAttempts: Number.POSITIVE_INFINITY,
    on: {
      connected: () => showConnection('Live', 'live'),
      closed: (event) =>
        showConnection(
          /** @type {CloseEvent | undefined} */ (event)?.code === 4401
            ? 'Not signed in'
            : 'Disconnected; retrying…',
          'down',
        ),
    },
  });
  return client;
}

function showConnection(text, state) {
  connection.textContent = text;
  connection.className = state;
}

/**
 * Subscribes; `next` gets each result. Returns the unsubscribe function.
 * @param {string} query
 * @param {Record<string, unknown>} variables
 * @param {(data: any) => void} next
 * @param {(errors: readonly GraphQLFailure[]) => void} fail
 * @returns {() => void}
 */
function subscribe(query, variables, next, fail) {
  // graphql-ws requires a query string: empty, when the hash names the document.
  return ws().subscribe(
    { query: '', ...operation(query, variables) },
    {
      next: (result) => (result.errors?.length ? fail(result.errors) : next(result.data)),
      error: (error) => fail(Array.isArray(error) ? error : [describeClose(error)]),
      complete: () => {},
    },
  );
}

function describeClose(error) {
  if (error && typeof error === 'object' && 'reason' in error) {
    // The server closes with 4401 when the token is missing, invalid or expired.
    const code = error.code === 4401 ? 'UNAUTHENTICATED' : undefined;
    return { message: error.reason || `connection closed (${error.code})`, extensions: { code } };
  }
  return { message: String(error?.message ?? error) };
}

/**
 * What a person should read for an error, by its contract code (docs/architecture.md).
 * @param {GraphQLFailure} error
 * @returns {string}
 */
function explain(error) {
  const code = error.extensions?.code;
  switch (code) {
    case 'CONFLICT':
      return `Not sent: ${error.message} (CONFLICT${error.extensions?.state ? `, run is ${error.extensions.state}` : ''}). Someone may have answered already.`;
    case 'FORBIDDEN':
      return `Not allowed: ${error.message} (FORBIDDEN). Only the run's owner or an administrator may answer.`;
    case 'UNAUTHENTICATED':
      return `Sign-in needed: ${error.message} (UNAUTHENTICATED). Enter an access token above.`;
    default:
      return code ? `${error.message} (${code})` : error.message;
  }
}

const errorBanner = (errors) =>
  h(
    'div',
    { class: 'banner', role: 'alert' },
    errors.map((error) => h('p', {}, explain(error))),
  );

// ---- formatting ----

function duration(ms) {
  if (ms === null || ms === undefined) return '—';
  const seconds = Math.max(0, Math.floor(ms / 1000));
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m ${String(seconds % 60).padStart(2, '0')}s`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours}h ${String(minutes % 60).padStart(2, '0')}m`;
  return `${Math.floor(hours / 24)}d ${hours % 24}h`;
}
const millis = (ms) =>
  ms === null || ms === undefined ? '—' : ms < 1000 ? `${Math.round(ms)} ms` : duration(ms);
const when = (iso) => (iso ? new Date(iso).toLocaleString() : '—');
const number = (n) => (n === null || n === undefined ? '—' : Number(n).toLocaleString());
const percent = (n) => (n === null || n === undefined ? '—' : `${(n * 100).toFixed(1)}%`);
const stateBadge = (state) => h('span', { class: `state ${state}` }, state ?? '—');
const runLink = (execId, text = execId) =>
  h('a', { href: `#/run/${encodeURIComponent(execId)}` }, text);
const teamLink = (name) => h('a', { href: `#/team/${encodeURIComponent(name)}` }, name);

// Every element with data-since shows how long ago that was, updated each second.
setInterval(() => {
  for (const element of document.querySelectorAll('[data-since]')) tick(element);
}, 1000);
function tick(element) {
  element.textContent = duration(Date.now() - Date.parse(element.dataset.since));
}

// ---- views ----

const WAITING = `subscription ConsoleWaiting {
  teamsWaitingForHuman {
    execId teamName waitingSince
    waitingFor { question questionJson agentName since task { taskName taskOrder } }
  }
}`;

const RESPOND = `mutation ConsoleRespond($execId: ID!, $response: String!) {
  respondToHuman(execId: $execId, response: $response) { execId run { state } }
}`;

/**
 * The question as a person reads it: a JSON question's `question` member first and its other
 * members below (HUMAN tools are often given JSON), else the text as it is.
 */
function question(wait) {
  const json = wait?.questionJson;
  if (
    json &&
    typeof json === 'object' &&
    !Array.isArray(json) &&
    typeof json.question === 'string'
  ) {
    const rest = Object.entries(json).filter(([key]) => key !== 'question' && key !== 'options');
    return h(
      'div',
      { class: 'question' },
      h('p', { class: 'asked' }, json.question),
      rest.length > 0 &&
        h(
          'dl',
          { class: 'facts' },
          rest.map(([key, value]) => [
            h('dt', {}, key),
            h('dd', {}, typeof value === 'string' ? value : JSON.stringify(value)),
          ]),
        ),
    );
  }
  return h(
    'div',
    { class: 'question' },
    h('p', { class: 'asked' }, wait?.question ?? '(no question recorded)'),
  );
}

/** A JSON question's `options`, as buttons that put the option in the answer box. */
function choices(json, textarea) {
  const options = json && typeof json === 'object' ? json.options : undefined;
  if (!Array.isArray(options) || !options.every((option) => typeof option === 'string'))
    return null;
  return h(
    'div',
    { class: 'choices', role: 'group', 'aria-label': 'Suggested answers' },
    options.map((option) => {
      const button = h('button', { type: 'button' }, option);
      button.addEventListener('click', () => {
        textarea.value = option;
        textarea.focus();
      });
      return button;
    }),
  );
}

function waitingView(root) {
  const list = h('ul', { class: 'waiting', 'aria-label': 'Runs waiting for a human' });
  const count = h('p', { class: 'muted', 'aria-live': 'polite' }, 'Loading…');
  const problems = h('div');
  const items = new Map();
  const filter = h('input', {
    id: 'waiting-filter',
    type: 'search',
    placeholder: 'team, task, agent or question',
  });
  const applyFilter = () => {
    const words = filter.value.toLowerCase().split(/\s+/).filter(Boolean);
    for (const element of items.values()) {
      const text = element.dataset.search;
      element.hidden = !words.every((word) => text.includes(word));
    }
  };
  filter.addEventListener('input', applyFilter);
  add(
    root,
    h('h2', { tabindex: '-1' }, 'Waiting for a human'),
    h('p', { class: 'filter' }, h('label', { for: 'waiting-filter' }, 'Filter '), filter),
    count,
    problems,
    list,
  );

  function item(run) {
    const since = run.waitingFor?.since ?? run.waitingSince;
    const ticking = since
      ? h('time', { class: 'ticking', datetime: since, 'data-since': since })
      : h('span', { class: 'muted' }, 'unknown');
    if (since) tick(ticking);
    const answerId = `answer-${run.execId}`;
    const textarea = h('textarea', {
      id: answerId,
      name: 'response',
      required: true,
      maxlength: 3000,
    });
    const outcome = h('p', { class: 'outcome', role: 'status' });
    const send = h('button', { type: 'submit' }, 'Send answer');
    const form = h(
      'form',
      { class: 'answer', 'aria-label': `Answer ${run.teamName}` },
      choices(run.waitingFor?.questionJson, textarea),
      h('label', { for: answerId }, `Your answer to ${run.teamName}`),
      textarea,
      h('div', { class: 'actions' }, send, outcome),
    );
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      send.disabled = true;
      outcome.className = 'outcome';
      outcome.textContent = 'Sending…';
      try {
        const { data, errors } = await gql(RESPOND, {
          execId: run.execId,
          response: textarea.value,
        });
        if (errors.length) {
          outcome.className = 'outcome error';
          outcome.setAttribute('role', 'alert');
          outcome.textContent = errors.map(explain).join(' ');
          send.disabled = false;
          return;
        }
        outcome.className = 'outcome ok';
        outcome.textContent = `Answer sent; the run is ${data.respondToHuman.run?.state ?? 'resuming'}. It leaves this list when the database shows it resumed.`;
      } catch (error) {
        outcome.className = 'outcome error';
        outcome.textContent = `Not sent: ${error instanceof Error ? error.message : String(error)}`;
        send.disabled = false;
      }
    });
    const task = run.waitingFor?.task;
    return h(
      'li',
      { class: 'wait', 'data-exec-id': run.execId },
      h(
        'div',
        { class: 'row-head' },
        h('h3', {}, teamLink(run.teamName)),
        h('span', {}, 'task ', h('strong', {}, task?.taskName ?? '—')),
        h('span', {}, 'agent ', h('strong', {}, run.waitingFor?.agentName ?? '—')),
        h('span', {}, 'waiting ', ticking),
        runLink(run.execId, 'run details'),
      ),
      question(run.waitingFor),
      form,
    );
  }

  let shownFirst = false;
  const stop = subscribe(
    WAITING,
    {},
    (data) => {
      problems.replaceChildren();
      const runs = [...data.teamsWaitingForHuman].sort(
        (a, b) =>
          Date.parse(b.waitingFor?.since ?? b.waitingSince ?? 0) -
          Date.parse(a.waitingFor?.since ?? a.waitingSince ?? 0),
      );
      const current = new Set(runs.map((run) => run.execId));
      for (const [execId, element] of items) {
        if (!current.has(execId)) {
          element.remove();
          items.delete(execId);
        }
      }
      // Existing items are moved, not rebuilt, so an answer being typed survives updates.
      for (const run of runs) {
        let element = items.get(run.execId);
        if (!element) {
          element = item(run);
          element.dataset.search = [
            run.teamName,
            run.waitingFor?.task?.taskName,
            run.waitingFor?.agentName,
            run.waitingFor?.question,
          ]
            .join(' ')
            .toLowerCase();
          items.set(run.execId, element);
        }
        list.append(element);
      }
      applyFilter();
      count.textContent = runs.length
        ? `${runs.length} run${runs.length === 1 ? '' : 's'} waiting, newest wait first.`
        : '';
      if (!runs.length && !list.previousElementSibling?.classList.contains('empty')) {
        list.before(h('p', { class: 'empty' }, 'No run is waiting for a person.'));
      }
      if (runs.length) root.querySelector('.empty')?.remove();
      if (runs.length && !shownFirst) {
        shownFirst = true;
        // Read by the browser test: milliseconds from navigation start to the first run shown.
        performance.mark('console:first-waiting-run');
      }
    },
    (errors) => problems.replaceChildren(errorBanner(errors)),
  );
  return stop;
}

const CHANGES = `subscription ConsoleChanges {
  teamRunChanged { observedAt previousState state run { execId teamName owner } }
}`;
const RECENT = `query ConsoleRecentRuns {
  teamRuns(first: 25) { nodes { execId teamName owner state startDate endDate durationMs } }
}`;

function changesView(root) {
  const feed = h('ul', { class: 'feed', 'aria-label': 'Run state changes, newest first' });
  const problems = h('div');
  const recent = h('div', {}, h('p', { class: 'muted' }, 'Loading…'));
  add(
    root,
    h('h2', { tabindex: '-1' }, 'Run changes'),
    h('p', { class: 'muted' }, 'State changes as the server observes them, newest first.'),
    problems,
    feed,
    h('h3', {}, 'Latest runs'),
    recent,
  );
  const stop = subscribe(
    CHANGES,
    {},
    (data) => {
      const change = data.teamRunChanged;
      feed.prepend(
        h(
          'li',
          {},
          h(
            'time',
            { datetime: change.observedAt },
            new Date(change.observedAt).toLocaleTimeString(),
          ),
          h(
            'span',
            {},
            teamLink(change.run.teamName),
            ' ',
            runLink(change.run.execId),
            ': ',
            change.previousState ? stateBadge(change.previousState) : 'new',
            ' → ',
            stateBadge(change.state),
          ),
        ),
      );
      while (feed.children.length > 200) feed.lastElementChild?.remove();
    },
    (errors) => problems.replaceChildren(errorBanner(errors)),
  );
  gql(RECENT).then(({ data, errors }) => {
    recent.replaceChildren(
      errors.length ? errorBanner(errors) : runTable(data?.teamRuns?.nodes ?? [], true),
    );
  });
  return stop;
}

function runTable(runs, withTeam) {
  if (!runs.length) return h('p', { class: 'empty' }, 'No runs.');
  return h(
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
          h('th', { scope: 'col' }, 'Run'),
          withTeam && h('th', { scope: 'col' }, 'Team'),
          h('th', { scope: 'col' }, 'State'),
          h('th', { scope: 'col' }, 'Started'),
          h('th', { scope: 'col' }, 'Duration'),
        ),
      ),
      h(
        'tbody',
        {},
        runs.map((run) =>
          h(
            'tr',
            {},
            h('td', {}, runLink(run.execId)),
            withTeam && h('td', {}, teamLink(run.teamName)),
            h('td', {}, stateBadge(run.state)),
            h('td', {}, when(run.startDate)),
            h('td', {}, millis(run.durationMs)),
          ),
        ),
      ),
    ),
  );
}

const RUN = `query ConsoleRun($execId: ID!) {
  teamRun(execId: $execId) {
    execId teamName owner state startDate endDate durationMs
    waitingFor { question questionJson agentName since }
    tasks {
      taskOrder taskName agentName state startDate durationMs input result
      failure { jobName status logDate message }
      prompts(first: 20) { totalCount nodes { created prompt response } }
      toolCalls { invocationId toolName agentName startDate endDate durationMs input output toolOutput }
    }
  }
}`;

function collapsed(summary, text) {
  if (text === null || text === undefined || text === '') return null;
  return h('details', {}, h('summary', {}, summary), h('pre', {}, text));
}

const RUN_CHANGED = `subscription ConsoleRunChanged($teamName: String!) {
  teamRunChanged(filter: { teamName: $teamName }) { state run { execId } }
}`;

function runView(root, execId) {
  const notice = h('div', { role: 'status' });
  const body = h('div', {}, h('p', { class: 'muted' }, 'Loading…'));
  add(root, h('h2', { tabindex: '-1' }, 'Run ', execId), notice, body);
  let closed = false;
  let stopLive;
  // The page is not redrawn under the reader (opened prompts would close): a change of the
  // run is announced, and the reader chooses when to load it.
  const live = (teamName) =>
    subscribe(
      RUN_CHANGED,
      { teamName },
      ({ teamRunChanged: change }) => {
        if (change.run.execId !== execId) return;
        const refresh = h('button', { type: 'button' }, 'Show the latest');
        refresh.addEventListener('click', () => {
          notice.replaceChildren();
          load();
        });
        notice.replaceChildren(
          h('p', { class: 'changed' }, 'The run is now ', stateBadge(change.state), ' ', refresh),
        );
      },
      (errors) => notice.replaceChildren(errorBanner(errors)),
    );
  const load = () =>
    gql(RUN, { execId }).then(({ data, errors }) => {
      if (closed) return;
      body.replaceChildren();
      if (errors.length) add(body, errorBanner(errors));
      const run = data?.teamRun;
      if (!run) return;
      stopLive ??= live(run.teamName);
      render(run);
    });
  const render = (run) =>
    add(
      body,
      h(
        'dl',
        { class: 'facts' },
        h('dt', {}, 'Team'),
        h('dd', {}, teamLink(run.teamName)),
        h('dt', {}, 'Owner'),
        h('dd', {}, run.owner),
        h('dt', {}, 'State'),
        h('dd', {}, stateBadge(run.state)),
        h('dt', {}, 'Started'),
        h('dd', {}, when(run.startDate)),
        h('dt', {}, 'Duration'),
        h('dd', {}, millis(run.durationMs)),
        run.waitingFor && h('dt', {}, 'Waiting for'),
        run.waitingFor && h('dd', {}, question(run.waitingFor)),
      ),
      h('h3', {}, `Tasks (${run.tasks.length})`),
      run.tasks.length ? null : h('p', { class: 'empty' }, 'No task recorded.'),
      run.tasks.map((task) =>
        h(
          'section',
          { class: 'task', 'aria-label': `Task ${task.taskOrder} ${task.taskName ?? ''}` },
          h(
            'div',
            { class: 'row-head' },
            h('strong', {}, `#${task.taskOrder} ${task.taskName ?? '—'}`),
            h('span', {}, 'agent ', task.agentName),
            stateBadge(task.state),
            h('span', { class: 'muted' }, millis(task.durationMs)),
          ),
          task.failure &&
            h(
              'div',
              { class: 'banner', role: 'note' },
              h('strong', {}, 'Failure: '),
              task.failure.message ?? task.failure.status ?? 'no message recorded',
              h(
                'span',
                { class: 'muted' },
                ` (job ${task.failure.jobName}, ${when(task.failure.logDate)})`,
              ),
            ),
          collapsed('Input', task.input),
          collapsed('Result', task.result),
          task.toolCalls.length
            ? h(
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
                      h('th', { scope: 'col' }, 'Tool'),
                      h('th', { scope: 'col' }, 'Agent'),
                      h('th', { scope: 'col' }, 'Duration'),
                      h('th', { scope: 'col' }, 'Input / output'),
                    ),
                  ),
                  h(
                    'tbody',
                    {},
                    task.toolCalls.map((call) =>
                      h(
                        'tr',
                        {},
                        h('td', {}, call.toolName ?? '—'),
                        h('td', {}, call.agentName ?? '—'),
                        h('td', {}, call.endDate ? millis(call.durationMs) : 'open'),
                        h(
                          'td',
                          {},
                          collapsed('Input', call.input),
                          collapsed('Output', call.output),
                          collapsed('Tool messages', call.toolOutput),
                        ),
                      ),
                    ),
                  ),
                ),
              )
            : h('p', { class: 'muted' }, 'No tool calls.'),
          task.prompts === null
            ? h('p', { class: 'muted' }, 'Prompts are not readable (no grant on the prompts view).')
            : h(
                'details',
                { class: 'prompts' },
                h('summary', {}, `Model prompts (${task.prompts.totalCount})`),
                task.prompts.nodes.map((prompt) =>
                  h(
                    'div',
                    {},
                    h('p', { class: 'muted' }, when(prompt.created)),
                    h('pre', {}, prompt.prompt ?? ''),
                    h('pre', {}, prompt.response ?? ''),
                  ),
                ),
              ),
        ),
      ),
    );
  load();
  return () => {
    closed = true;
    stopLive?.();
  };
}

const STATS_FIELDS =
  'runCount successRate durationP50Ms durationP95Ms humanWaitCount humanWaitTotalMs humanWaitAvgMs runsByState { state count }';
const TEAMS = `query ConsoleTeams {
  teams(first: 100) { nodes { name owner description stats { ${STATS_FIELDS} } } }
}`;

function teamsView(root) {
  add(root, h('h2', { tabindex: '-1' }, 'Teams'), h('p', { class: 'muted' }, 'Loading…'));
  gql(TEAMS).then(({ data, errors }) => {
    root.lastElementChild.remove();
    if (errors.length) add(root, errorBanner(errors));
    const teams = data?.teams?.nodes ?? [];
    add(
      root,
      h(
        'div',
        { class: 'cards' },
        teams.map((team) =>
          h(
            'article',
            { class: 'card' },
            h('h3', {}, teamLink(team.name)),
            h('p', { class: 'muted' }, team.description ?? ''),
            h(
              'p',
              {},
              `${number(team.stats.runCount)} runs · ${percent(team.stats.successRate)} succeeded`,
            ),
            h(
              'p',
              {},
              `p50 ${millis(team.stats.durationP50Ms)} · p95 ${millis(team.stats.durationP95Ms)}`,
            ),
          ),
        ),
      ),
    );
  });
  return () => {};
}

const TEAM = `query ConsoleTeam($name: String!) {
  team(name: $name) {
    name owner description status
    stats { ${STATS_FIELDS} }
    tools { name toolType agentName taskName }
    cardDrift { kind toolName expected actual }
    agentCard { name description version url protocolVersion skills { id name description } }
    runs(first: 20) { nodes { execId teamName state startDate durationMs } }
  }
}`;

function teamView(root, name) {
  add(root, h('h2', { tabindex: '-1' }, 'Team ', name), h('p', { class: 'muted' }, 'Loading…'));
  gql(TEAM, { name }).then(({ data, errors }) => {
    root.lastElementChild.remove();
    if (errors.length) add(root, errorBanner(errors));
    const team = data?.team;
    if (!team) return;
    const stats = team.stats;
    add(
      root,
      h('p', { class: 'muted' }, team.description ?? '', ` · owner ${team.owner}`),
      h(
        'div',
        { class: 'cards' },
        card('Runs', number(stats.runCount)),
        card('Success rate', percent(stats.successRate)),
        card(
          'Duration p50 / p95',
          `${millis(stats.durationP50Ms)} / ${millis(stats.durationP95Ms)}`,
        ),
        card(
          'Waiting for humans',
          millis(stats.humanWaitTotalMs),
          `${number(stats.humanWaitCount)} answered waits, ${millis(stats.humanWaitAvgMs)} on average`,
        ),
      ),
      h(
        'figure',
        {},
        h('figcaption', {}, 'Runs by state'),
        barChart(
          'Runs by state',
          stats.runsByState.map((entry) => ({
            label: entry.state,
            value: entry.count,
            text: number(entry.count),
          })),
        ),
      ),
      h('h3', {}, 'A2A card'),
      team.agentCard
        ? h(
            'dl',
            { class: 'facts' },
            h('dt', {}, 'Name'),
            h('dd', {}, team.agentCard.name),
            h('dt', {}, 'Description'),
            h('dd', {}, team.agentCard.description),
            h('dt', {}, 'URL'),
            h('dd', {}, team.agentCard.url),
            h('dt', {}, 'Version'),
            h('dd', {}, `${team.agentCard.version} (A2A ${team.agentCard.protocolVersion})`),
            h('dt', {}, 'Skills'),
            h('dd', {}, team.agentCard.skills.map((skill) => skill.name).join(', ') || '—'),
          )
        : h('p', { class: 'muted' }, 'No card could be loaded.'),
      h('h3', {}, 'Drift from the catalog'),
      team.cardDrift === null
        ? h('p', { class: 'muted' }, 'Unknown (the card could not be loaded).')
        : team.cardDrift.length === 0
          ? h('p', { class: 'ok' }, 'None: the card matches the catalog.')
          : h(
              'ul',
              { class: 'drift' },
              team.cardDrift.map((drift) =>
                h(
                  'li',
                  {},
                  h('strong', {}, drift.kind),
                  drift.toolName ? ` ${drift.toolName}` : '',
                  drift.expected || drift.actual
                    ? `: expected “${drift.expected ?? '—'}”, card has “${drift.actual ?? '—'}”`
                    : '',
                ),
              ),
            ),
      h('h3', {}, 'Tools'),
      h(
        'p',
        {},
        team.tools.map((tool) => `${tool.name} (${tool.toolType ?? '?'})`).join(', ') || '—',
      ),
      h('h3', {}, 'Latest runs'),
      runTable(team.runs?.nodes ?? [], false),
    );
  });
  return () => {};
}

function card(title, value, detail) {
  return h(
    'div',
    { class: 'card' },
    h('div', { class: 'muted' }, title),
    h('div', { class: 'big' }, value),
    detail && h('div', { class: 'muted' }, detail),
  );
}

/** A horizontal bar chart in plain SVG; the labels and values are text, readable without it. */
function barChart(title, items, className = '') {
  const max = Math.max(1, ...items.map((item) => item.value ?? 0));
  const row = 26;
  // About 7.5 px a character at 12 px: room for the longest label and value, no measuring.
  const labelWidth = Math.max(...items.map((item) => item.label.length)) * 7.5 + 12;
  const valueWidth = Math.max(...items.map((item) => item.text.length)) * 7.5 + 12;
  const width = 400;
  const svg = s('svg', {
    viewBox: `0 0 ${width} ${items.length * row + 4}`,
    role: 'img',
    'aria-label': `${title}: ${items.map((item) => `${item.label} ${item.text}`).join(', ')}`,
  });
  items.forEach((item, index) => {
    const y = index * row + 2;
    const barWidth = ((item.value ?? 0) / max) * (width - labelWidth - valueWidth);
    svg.append(
      s('text', { x: 0, y: y + 16 }, item.label),
      s('rect', {
        class: `bar ${item.class ?? className}`,
        x: labelWidth,
        y: y + 3,
        width: Math.max(barWidth, item.value ? 2 : 0),
        height: row - 8,
        rx: 3,
      }),
      s('text', { x: labelWidth + barWidth + 6, y: y + 16 }, item.text),
    );
  });
  return svg;
}

const STATS = `query ConsoleStats {
  execStatSummary {
    executionCount totalTimeAvgMs totalTimeP50Ms totalTimeP95Ms totalTimeP99Ms totalTimeMaxMs
    llmTimePct toolTimePct
    totals { inputTokens outputTokens totalTimeExecMs totalTimeLlmMs totalTimeToolMs llmCallCount toolCallCount }
  }
}`;

function statsView(root) {
  add(
    root,
    h('h2', { tabindex: '-1' }, 'Runtime statistics'),
    h('p', { class: 'muted' }, 'Loading…'),
  );
  gql(STATS).then(({ data, errors }) => {
    root.lastElementChild.remove();
    if (errors.length) add(root, errorBanner(errors));
    const summary = data?.execStatSummary;
    if (!summary) return;
    const totals = summary.totals;
    const other = Math.max(
      0,
      totals.totalTimeExecMs - totals.totalTimeLlmMs - totals.totalTimeToolMs,
    );
    add(
      root,
      h(
        'div',
        { class: 'cards' },
        card('Executions', number(summary.executionCount)),
        card('LLM calls', number(totals.llmCallCount)),
        card('Tool calls', number(totals.toolCallCount)),
        card('Tokens in / out', `${number(totals.inputTokens)} / ${number(totals.outputTokens)}`),
      ),
      h(
        'div',
        { class: 'charts' },
        h(
          'figure',
          {},
          h('figcaption', {}, 'Execution time'),
          barChart(
            'Execution time',
            [
              ['average', summary.totalTimeAvgMs],
              ['p50', summary.totalTimeP50Ms],
              ['p95', summary.totalTimeP95Ms],
              ['p99', summary.totalTimeP99Ms],
              ['max', summary.totalTimeMaxMs],
            ].map(([label, value]) => ({ label, value, text: millis(value) })),
          ),
        ),
        h(
          'figure',
          {},
          h('figcaption', {}, 'Tokens'),
          barChart('Tokens', [
            { label: 'input', value: totals.inputTokens, text: number(totals.inputTokens) },
            {
              label: 'output',
              value: totals.outputTokens,
              text: number(totals.outputTokens),
              class: 'out',
            },
          ]),
        ),
        h(
          'figure',
          {},
          h('figcaption', {}, 'Where the time went'),
          barChart('Where the time went', [
            {
              label: 'LLM',
              value: totals.totalTimeLlmMs,
              text: `${millis(totals.totalTimeLlmMs)} (${summary.llmTimePct ?? '—'}%)`,
              class: 'llm',
            },
            {
              label: 'tools',
              value: totals.totalTimeToolMs,
              text: `${millis(totals.totalTimeToolMs)} (${summary.toolTimePct ?? '—'}%)`,
              class: 'tool',
            },
            { label: 'other', value: other, text: millis(other), class: 'other' },
          ]),
        ),
      ),
    );
  });
  return () => {};
}

// ---- routing: #/waiting, #/changes, #/run/<execId>, #/teams, #/team/<name>, #/agents, #/agent/<name>, #/stats ----

const ROUTES = {
  ...agentViews({ h, s, add, gql, errorBanner, number, when }),
  waiting: waitingView,
  changes: changesView,
  run: runView,
  teams: teamsView,
  team: teamView,
  stats: statsView,
};
let leave = () => {};

/** An address that names no view, or not validly (a malformed %-escape): say so, offer a way on. */
function notFoundView(root, address) {
  add(
    root,
    h('h2', { tabindex: '-1' }, 'Not found'),
    h(
      'p',
      {},
      'The console has no page at ',
      h('code', {}, address),
      '. ',
      h('a', { href: '#/waiting' }, 'Go to the runs waiting for a human'),
      '.',
    ),
  );
  return () => {};
}

/** The %-decoded argument of a route, or undefined when the address is not validly encoded. */
function decoded(argument) {
  try {
    return decodeURIComponent(argument);
  } catch {
    return undefined;
  }
}

function route() {
  const [, name = 'waiting', argument = ''] = location.hash.match(/^#\/([^/]*)\/?(.*)$/) ?? [];
  const known = name === '' || Object.hasOwn(ROUTES, name);
  const value = decoded(argument);
  leave();
  view.replaceChildren();
  leave =
    (known && value !== undefined
      ? (ROUTES[name] ?? waitingView)(view, value)
      : notFoundView(view, location.hash)) ?? (() => {});
  const section = { run: 'changes', team: 'teams', agent: 'agents' }[name] ?? name;
  for (const link of document.querySelectorAll('nav a')) {
    if (link.getAttribute('href') === `#/${section}`) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  document.title = `${view.querySelector('h2')?.textContent ?? 'Console'} · agent-graph`;
  if (document.activeElement !== document.body) view.querySelector('h2')?.focus();
}

// A new token applies to new requests and to a new WebSocket connection.
const tokenForm = byId('token-form');
/** @type {HTMLInputElement} */
const tokenInput = byId('token');
tokenInput.value = token;
function useToken(value) {
  token = value.trim();
  if (token) sessionStorage.setItem(TOKEN_KEY, token);
  else sessionStorage.removeItem(TOKEN_KEY);
  leave();
  leave = () => {};
  client?.dispose();
  client = undefined;
  ws();
  route();
}
tokenForm.addEventListener('submit', (event) => {
  event.preventDefault();
  useToken(tokenInput.value);
});
byId('token-clear').addEventListener('click', () => {
  tokenInput.value = '';
  useToken('');
});

window.addEventListener('hashchange', route);
showConnection(token ? 'Connecting with token…' : 'Connecting (anonymous)…', '');
ws();
route();
