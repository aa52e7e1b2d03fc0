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
 * An SVG element, for the charts and the run timeline.
 * @param {string} tag
 * @param {Record<string, string | number>} [attributes]
 * @param {...(Node | string)} children
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
/**
 * A duration with `digits` more precision than millis(): decimals of a second below a
 * minute (8.53 s), seconds (and their decimals) above.
 */
function preciseMillis(ms, digits) {
  if (ms === null || ms === undefined) return '—';
  if (digits === 0) return millis(ms);
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(digits)} s`;
  const seconds = ((ms % 60_000) / 1000)
    .toFixed(digits - 1)
    .padStart(digits > 1 ? digits + 2 : 2, '0');
  const minutes = Math.floor(ms / 60_000);
  return minutes < 60
    ? `${minutes}m ${seconds}s`
    : `${Math.floor(minutes / 60)}h ${String(minutes % 60).padStart(2, '0')}m ${seconds}s`;
}
/**
 * Durations shown side by side, each as precise as it takes for different values to read
 * differently: 8.5 s, 8.9 s, 9.0 s rather than 8s three times.
 * @param {readonly (number | null | undefined)[]} values
 * @returns {string[]}
 */
function millisApart(values) {
  let texts = values.map((value) => millis(value));
  for (let digits = 1; digits <= 3; digits++) {
    const apart = values.every((a, i) =>
      values.every((b, j) => a === b || a === null || b === null || texts[i] !== texts[j]),
    );
    if (apart) return texts;
    texts = values.map((value) => preciseMillis(value, digits));
  }
  return texts;
}

const textMeasure = document.createElement('canvas').getContext('2d');
/**
 * The width of a text in an SVG at `size` px, in the page's font (console.css): labels are
 * placed where they fit rather than cut at the edge.
 */
function textWidth(text, size = 12) {
  if (!textMeasure) return text.length * size * 0.62;
  textMeasure.font = `${size}px ${getComputedStyle(document.documentElement).fontFamily}`;
  return textMeasure.measureText(text).width;
}

const when = (iso) => (iso ? new Date(iso).toLocaleString() : '—');
const number = (n) => (n === null || n === undefined ? '—' : Number(n).toLocaleString());
const percent = (n) => (n === null || n === undefined ? '—' : `${(n * 100).toFixed(1)}%`);
const stateBadge = (state) => h('span', { class: `state ${state}` }, state ?? '—');
const runLink = (execId, text = execId) =>
  h('a', { href: `#/run/${encodeURIComponent(execId)}` }, text);
const teamLink = (name) => h('a', { href: `#/team/${encodeURIComponent(name)}` }, name);

// ---- limits, shown before they bite and counted as the server counts ----

/** The server's limits, from index.html's meta element (src/console/serve.ts writes it). */
const LIMITS = (() => {
  const meta = /** @type {HTMLMetaElement | null} */ (
    document.querySelector('meta[name="agent-graph-limits"]')
  );
  if (!meta) throw new Error('index.html has no limits meta element');
  const limit = (name) => Number(meta.dataset[name]);
  return Object.freeze({
    promptBytes: limit('promptBytes'),
    inputsBytes: limit('inputsBytes'),
    bodyBytes: limit('bodyBytes'),
  });
})();

const encoder = new TextEncoder();
/** @param {string} text */
const utf8Bytes = (text) => encoder.encode(text).length;
/**
 * A prompt's size as the server counts it (promptBytes in src/db/sql/run-team.ts): bytes of
 * UTF-8, each single quote twice, as the scheduler job's text holds it.
 * @param {string} text
 */
const promptBytes = (text) => utf8Bytes(text.replaceAll("'", "''"));
/** A size in bytes as people read it: 1,000 bytes, 31.3 KiB, 1 MiB. */
function byteSize(n) {
  if (n < 1024) return `${number(n)} bytes`;
  const [value, unit] = n < 1024 * 1024 ? [n / 1024, 'KiB'] : [n / 1024 / 1024, 'MiB'];
  return `${Number(value.toFixed(1)).toLocaleString()} ${unit}`;
}

/**
 * A box for a text the server takes as a prompt (an answer, a run's request): beside it the
 * count of its bytes as the server counts them; an empty, whitespace-only or too long text is
 * refused by the browser's own form validation, before anything is sent.
 * @param {string} id
 * @param {string} labelText
 * @param {string} what What the text is, to start a refusal: "The answer".
 */
function promptBox(id, labelText, what) {
  const counter = h('span', { id: `${id}-count`, class: 'count' });
  const textarea = h('textarea', {
    id,
    name: 'prompt',
    required: true,
    'aria-describedby': `${id}-count`,
  });
  const check = () => {
    const size = promptBytes(textarea.value);
    const over = size - LIMITS.promptBytes;
    counter.textContent = `${number(size)} of ${number(LIMITS.promptBytes)} bytes${over > 0 ? `: ${number(over)} too many` : ''}`;
    counter.title = "Bytes of UTF-8 as the server counts them (a ' counts twice)";
    counter.classList.toggle('over', over > 0);
    textarea.setCustomValidity(
      textarea.value !== '' && textarea.value.trim() === ''
        ? `${what} is only spaces: write something to send.`
        : over > 0
          ? `${what} is ${number(size)} bytes of UTF-8 (a ' counts twice); the server accepts at most ${number(LIMITS.promptBytes)}.`
          : '',
    );
  };
  textarea.addEventListener('input', check);
  check();
  return { textarea, counter, label: h('label', { for: id }, labelText), check };
}

/**
 * Runs `change` (which adds or removes elements above) keeping the element the operator is
 * working in where it was on the screen: the one holding the focus, else the one with text
 * typed into it. Scroll anchoring does not do it at the top of the page.
 * @param {Element} container
 * @param {string} selector Which ancestor of the focus is the element to keep.
 * @param {() => void} change
 */
function keepInPlace(container, selector, change) {
  const focused = document.activeElement?.closest(selector);
  const typed = [...container.querySelectorAll('textarea')].find((box) => box.value !== '');
  const anchor = focused && container.contains(focused) ? focused : typed?.closest(selector);
  const before = anchor?.getBoundingClientRect().top;
  change();
  if (anchor?.isConnected && before !== undefined) {
    window.scrollBy(0, anchor.getBoundingClientRect().top - before);
  }
}

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

/** Keys a HUMAN tool's JSON input may put its question under, in the order they are read. */
const QUESTION_KEYS = ['question', 'prompt', 'message', 'text', 'query'];

const shown = (value) => (typeof value === 'string' ? value : JSON.stringify(value));

/**
 * The question as a person reads it. A JSON object's question (its `question` member, else
 * the first of QUESTION_KEYS that holds text) comes first, and its other members below,
 * labelled by key; an object with none of them is shown as those labelled values, an array
 * as a list: never as raw JSON. Any other input is shown as the text it is.
 */
function question(wait) {
  const json = wait?.questionJson;
  if (Array.isArray(json)) {
    return h(
      'div',
      { class: 'question' },
      h('p', { class: 'asked' }, 'The agent asks about:'),
      h(
        'ul',
        {},
        json.map((item) => h('li', {}, shown(item))),
      ),
    );
  }
  if (json && typeof json === 'object') {
    const key = QUESTION_KEYS.find((name) => typeof json[name] === 'string');
    const rest = Object.entries(json).filter(([name]) => name !== key && name !== 'options');
    return h(
      'div',
      { class: 'question' },
      h('p', { class: 'asked' }, key ? json[key] : 'The agent asks for input on:'),
      rest.length > 0 &&
        h(
          'dl',
          { class: 'facts' },
          rest.map(([name, value]) => [h('dt', {}, name), h('dd', {}, shown(value))]),
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
        textarea.dispatchEvent(new Event('input'));
        textarea.focus();
      });
      return button;
    }),
  );
}

/**
 * The answer box of a waiting run, with the question's suggested answers. `sent` gets the
 * outcome of an accepted answer; a refusal is shown in the form, which stays to try again.
 * @param {any} run
 * @param {(sent: { text: string, state: string | null, at: Date }) => void} sent
 */
function answerForm(run, sent) {
  const box = promptBox(`answer-${run.execId}`, `Your answer to ${run.teamName}`, 'The answer');
  const outcome = h('p', { class: 'outcome', role: 'status' });
  const send = h('button', { type: 'submit' }, 'Send answer');
  const form = h(
    'form',
    { class: 'answer', 'aria-label': `Answer ${run.teamName}` },
    choices(run.waitingFor?.questionJson, box.textarea),
    box.label,
    box.textarea,
    h('div', { class: 'actions' }, send, box.counter, outcome),
  );
  const refuse = (text) => {
    outcome.className = 'outcome error';
    outcome.setAttribute('role', 'alert');
    outcome.textContent = text;
    send.disabled = false;
  };
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    send.disabled = true;
    // Busy until the answer is accepted or refused: the views read it (answerOnItsWay).
    form.setAttribute('aria-busy', 'true');
    outcome.className = 'outcome';
    outcome.setAttribute('role', 'status');
    outcome.textContent = 'Sending…';
    try {
      const text = box.textarea.value;
      const { data, errors } = await gql(RESPOND, { execId: run.execId, response: text });
      if (errors.length) return refuse(errors.map(explain).join(' '));
      outcome.textContent = '';
      sent({ text, state: data.respondToHuman.run?.state ?? null, at: new Date() });
    } catch (error) {
      refuse(`Not sent: ${error instanceof Error ? error.message : String(error)}`);
    } finally {
      form.removeAttribute('aria-busy');
    }
  });
  return form;
}

/** Whether an answer sent from within `element` still waits for the server's reply. */
const answerOnItsWay = (element) => element.querySelector('form.answer[aria-busy="true"]') !== null;

/**
 * What stays on the page once an answer is accepted, until the operator dismisses it: when,
 * what was sent, and the run's state right after. `here`: shown on the run's own page.
 */
function sentNotice(run, sent, dismiss, here = false) {
  const excerpt = sent.text.length > 160 ? `${sent.text.slice(0, 160)}…` : sent.text;
  const close = h('button', { type: 'button', class: 'dismiss' }, 'Dismiss');
  close.addEventListener('click', dismiss);
  return h(
    'div',
    { class: 'sent', role: 'status' },
    h(
      'p',
      {},
      h('strong', {}, 'Answer sent'),
      ` at ${sent.at.toLocaleTimeString()}: `,
      h('q', {}, excerpt),
    ),
    h(
      'p',
      { class: 'muted after' },
      `The run was ${sent.state ?? 'resuming'} right after; `,
      here
        ? 'this page tells when it changes.'
        : [runLink(run.execId, 'follow it on its page'), '.'],
    ),
    close,
  );
}

/** The waiting runs' filter, kept in the address (#/waiting?q=…). */
function waitingView(root, _argument, params) {
  const list = h('ul', { class: 'waiting', 'aria-label': 'Runs waiting for a human' });
  const count = h('p', { class: 'muted', 'aria-live': 'polite' }, 'Loading…');
  const none = h('p', { class: 'empty', hidden: true });
  const problems = h('div');
  /** @type {Map<string, HTMLElement>} */
  const items = new Map();
  /** The runs of the latest waiting set, by execId. */
  let waitingNow = new Map();
  const filter = h('input', {
    id: 'waiting-filter',
    type: 'search',
    placeholder: 'team, task, agent or question',
  });
  filter.value = params.get('q') ?? '';
  let waiting = 0;
  const summarize = () => {
    const words = filter.value.toLowerCase().split(/\s+/).filter(Boolean);
    let matching = 0;
    for (const [execId, element] of items) {
      const text = element.dataset.search ?? '';
      element.hidden = !words.every((word) => text.includes(word));
      if (!element.hidden && !element.classList.contains('answered') && waitingNow.has(execId))
        matching++;
    }
    const runs = `${waiting} run${waiting === 1 ? '' : 's'} waiting`;
    count.textContent =
      waiting === 0
        ? ''
        : words.length
          ? `${matching} of ${runs} match “${filter.value.trim()}”.`
          : `${runs}, newest wait first.`;
    const clear = h('button', { type: 'button' }, 'Clear the filter');
    clear.addEventListener('click', () => {
      filter.value = '';
      filtered();
      filter.focus();
    });
    none.hidden = waiting > 0 && matching > 0;
    none.replaceChildren();
    add(
      none,
      waiting === 0
        ? 'No run is waiting for a person.'
        : matching === 0
          ? ['No waiting run matches “', filter.value.trim(), '”. ', clear]
          : '',
    );
  };
  const filtered = () => {
    setParams({ q: filter.value.trim() });
    summarize();
  };
  filter.addEventListener('input', filtered);
  add(
    root,
    h('h2', { tabindex: '-1' }, 'Waiting for a human'),
    h('p', { class: 'filter' }, h('label', { for: 'waiting-filter' }, 'Filter '), filter),
    count,
    problems,
    none,
    list,
  );

  /** An answered card notes that its run no longer waits. */
  const resumed = (element) => {
    element.classList.add('resumed');
    element.querySelector('.waited')?.replaceChildren('answered; no longer waiting');
  };

  function item(run, since) {
    const ticking = since
      ? h('time', { class: 'ticking', datetime: since, 'data-since': since })
      : h('span', { class: 'muted' }, 'unknown');
    if (since) tick(ticking);
    const task = run.waitingFor?.task;
    const element = h(
      'li',
      { class: 'wait', 'data-exec-id': run.execId },
      h(
        'div',
        { class: 'row-head' },
        h('h3', {}, teamLink(run.teamName)),
        h('span', {}, 'task ', h('strong', {}, task?.taskName ?? '—')),
        h('span', {}, 'agent ', h('strong', {}, run.waitingFor?.agentName ?? '—')),
        h('span', { class: 'waited' }, 'waiting ', ticking),
        runLink(run.execId, 'run details'),
      ),
      question(run.waitingFor),
    );
    const form = answerForm(run, (sent) => {
      // The card stays, its box replaced by what was sent, until the operator dismisses it.
      element.classList.add('answered');
      element.querySelector('.waited')?.replaceChildren('answered');
      form.replaceWith(
        sentNotice(run, sent, () => {
          element.remove();
          items.delete(run.execId);
          summarize();
        }),
      );
      // The set without this run may have come before the answer's reply (the server's poll
      // saw the answer first): the card kept its place for it (see below) and says so now.
      if (!waitingNow.has(run.execId)) resumed(element);
      summarize();
    });
    element.append(form);
    element.dataset.wait = since ?? '';
    element.dataset.search = [
      run.teamName,
      task?.taskName,
      run.waitingFor?.agentName,
      run.waitingFor?.question,
    ]
      .join(' ')
      .toLowerCase();
    return element;
  }

  let shownFirst = false;
  const stop = subscribe(
    WAITING,
    {},
    (data) => {
      problems.replaceChildren();
      const since = (run) => run.waitingFor?.since ?? run.waitingSince ?? null;
      const runs = [...data.teamsWaitingForHuman].sort(
        (a, b) => Date.parse(since(b) ?? 0) - Date.parse(since(a) ?? 0),
      );
      waiting = runs.length;
      const current = new Map(runs.map((run) => [run.execId, run]));
      waitingNow = current;
      keepInPlace(list, 'li.wait', () => {
        for (const [execId, element] of items) {
          if (current.has(execId)) continue;
          // An answered card stays; it notes that its run is no longer waiting. So does a card
          // whose answer is on its way, which the answer's reply turns into an answered one.
          if (element.classList.contains('answered')) {
            if (!element.classList.contains('resumed')) resumed(element);
          } else if (!answerOnItsWay(element)) {
            element.remove();
            items.delete(execId);
          }
        }
        const ordered = runs.map((run) => {
          let element = items.get(run.execId);
          // A run answered here that waits again (a new question) gets a new card.
          if (
            element?.classList.contains('answered') &&
            element.dataset.wait !== (since(run) ?? '')
          ) {
            element.remove();
            element = undefined;
          }
          if (!element) {
            element = item(run, since(run));
            items.set(run.execId, element);
          }
          return element;
        });
        // Only what is out of order is moved: an element taken out of the page loses the
        // focus, and the answer being typed in it must not. Answered cards keep their place.
        const listed = new Set(ordered);
        let next = list.firstElementChild;
        for (const element of ordered) {
          while (next && !listed.has(/** @type {HTMLElement} */ (next)))
            next = next.nextElementSibling;
          if (next === element) next = element.nextElementSibling;
          else list.insertBefore(element, next);
        }
      });
      summarize();
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
    h('p', {}, h('a', { href: '#/runs' }, 'Every run, with paging, filters and search')),
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

function runTable(runs, withTeam, withOwner = false) {
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
          withOwner && h('th', { scope: 'col' }, 'Owner'),
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
            withOwner && h('td', {}, run.owner),
            h('td', {}, stateBadge(run.state)),
            h('td', {}, when(run.startDate)),
            h('td', {}, millis(run.durationMs)),
          ),
        ),
      ),
    ),
  );
}

// ---- run lists: paged, filtered (team, state, owner, time) and searched, their state in the address ----

const RUN_FIELDS = 'execId teamName owner state startDate endDate durationMs';
const RUNS = `query ConsoleRuns($first: Int, $last: Int, $after: String, $before: String, $filter: TeamRunFilter) {
  teamRuns(first: $first, last: $last, after: $after, before: $before, filter: $filter) {
    totalCount
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
    nodes { ${RUN_FIELDS} }
  }
}`;
/** The first page, kept true by the server. */
const RUNS_LIVE = `query ConsoleRunsLive($first: Int, $filter: TeamRunFilter) @live {
  teamRuns(first: $first, filter: $filter) {
    totalCount
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
    nodes { ${RUN_FIELDS} }
  }
}`;
/** A search: the run with that id, and the runs of that conversation, both filtered. */
const RUN_SEARCH = `query ConsoleRunSearch($execId: ID!, $filter: TeamRunFilter) {
  teamRun(execId: $execId) { ${RUN_FIELDS} }
  teamRuns(first: 100, filter: $filter) { totalCount nodes { ${RUN_FIELDS} } }
}`;
const TEAM_NAMES = `query ConsoleTeamNames {
  teams(first: 100) { nodes { name } }
}`;

const RUN_STATES = ['WAITING_FOR_HUMAN', 'RUNNING', 'RESUMING', 'FAILED', 'SUCCEEDED'];
/** The time filter's choices: how far back a run may have started. */
const PERIODS = {
  '1h': ['in the last hour', 3_600_000],
  '24h': ['in the last 24 hours', 86_400_000],
  '7d': ['in the last 7 days', 7 * 86_400_000],
  '30d': ['in the last 30 days', 30 * 86_400_000],
};
const RUNS_PAGE = 25;

/**
 * A list of runs, paged 25 at a time, with filters (team unless `team` is fixed, states,
 * owner, start time) and a search by run or conversation id; all of it in the address
 * (team, state, owner, since, q, after, before), so a reload or a link shows the same page.
 * The first page follows the runs as they change.
 * @param {string | null} team
 * @param {URLSearchParams} params
 */
function runList(team, params) {
  const filters = h('form', { class: 'run-filters', role: 'search', 'aria-label': 'Filter runs' });
  const summary = h('p', { class: 'muted', 'aria-live': 'polite' }, 'Loading…');
  const body = h('div');
  const pager = h('nav', { class: 'pager', 'aria-label': 'Pages of runs' });
  const field = (id, label, control) =>
    h('div', { class: 'field' }, h('label', { for: id }, label), control);

  const teamSelect = h(
    'select',
    { id: 'runs-team', name: 'team' },
    h('option', { value: '' }, 'every team'),
  );
  const selectedTeam = params.get('team') ?? '';
  if (selectedTeam) add(teamSelect, h('option', { value: selectedTeam }, selectedTeam));
  teamSelect.value = selectedTeam;
  const chosenStates = new Set(
    (params.get('state') ?? '').split(',').filter((s) => RUN_STATES.includes(s)),
  );
  const stateBoxes = RUN_STATES.map((state) => {
    const box = h('input', {
      type: 'checkbox',
      name: 'state',
      value: state,
      checked: chosenStates.has(state),
    });
    return h('label', { class: `chip state-chip ${state}` }, box, ` ${state}`);
  });
  const owner = h('input', {
    id: 'runs-owner',
    name: 'owner',
    autocomplete: 'off',
    placeholder: 'any owner',
    spellcheck: 'false',
  });
  owner.value = params.get('owner') ?? '';
  const since = h(
    'select',
    { id: 'runs-since', name: 'since' },
    h('option', { value: '' }, 'at any time'),
    Object.entries(PERIODS).map(([value, [label]]) => h('option', { value }, label)),
  );
  since.value = Object.hasOwn(PERIODS, params.get('since') ?? '')
    ? (params.get('since') ?? '')
    : '';
  const search = h('input', {
    id: 'runs-q',
    name: 'q',
    type: 'search',
    autocomplete: 'off',
    placeholder: 'run id or conversation id',
    spellcheck: 'false',
  });
  search.value = params.get('q') ?? '';
  const clear = h('button', { type: 'button' }, 'Clear the filters');
  add(
    filters,
    team === null && field('runs-team', 'Team', teamSelect),
    h('fieldset', { class: 'states' }, h('legend', {}, 'State'), stateBoxes),
    field('runs-owner', 'Owner', owner),
    field('runs-since', 'Started', since),
    field('runs-q', 'Search', search),
    clear,
  );

  /** @type {{ after: string | null, before: string | null }} */
  let page = { after: params.get('after'), before: params.get('before') };
  const state = () => ({
    team: team === null ? teamSelect.value : '',
    state: RUN_STATES.filter((s) =>
      stateBoxes.some(
        (label) =>
          label.querySelector('input')?.checked && label.querySelector('input')?.value === s,
      ),
    ).join(','),
    owner: owner.value.trim().toUpperCase(),
    since: since.value,
    q: search.value.trim(),
  });
  const described = (chosen) =>
    [
      chosen.team && `team ${chosen.team}`,
      chosen.state && `state ${chosen.state.replaceAll(',', ' or ')}`,
      chosen.owner && `owner ${chosen.owner}`,
      chosen.since && `started ${PERIODS[chosen.since][0]}`,
      chosen.q && `id “${chosen.q}”`,
    ].filter(Boolean);
  const filterOf = (chosen) => ({
    teamName: team ?? (chosen.team || undefined),
    states: chosen.state ? chosen.state.split(',') : undefined,
    owner: chosen.owner || undefined,
    startedAfter: chosen.since
      ? new Date(Date.now() - PERIODS[chosen.since][1]).toISOString()
      : undefined,
  });
  const matches = (run, chosen) => {
    const filter = filterOf(chosen);
    return (
      (!filter.teamName || run.teamName === filter.teamName) &&
      (!filter.states || filter.states.includes(run.state)) &&
      (!filter.owner || run.owner === filter.owner) &&
      (!filter.startedAfter || (run.startDate && run.startDate >= filter.startedAfter))
    );
  };

  let latest = 0;
  /** Stops the live query of the first page, when it is shown. */
  let stopLive = () => {};
  const load = async () => {
    const chosen = state();
    const asked = ++latest;
    const filter = filterOf(chosen);
    stopLive();
    stopLive = () => {};
    const noInfo = {
      hasNextPage: false,
      hasPreviousPage: false,
      startCursor: null,
      endCursor: null,
    };
    const showPage = (connection, errors) =>
      show(
        asked,
        chosen,
        connection?.nodes ?? [],
        connection?.totalCount ?? 0,
        connection?.pageInfo ?? noInfo,
        errors,
      );
    if (chosen.q) {
      const result = await gql(RUN_SEARCH, {
        execId: chosen.q,
        filter: { ...filter, conversationId: chosen.q },
      });
      const byId = result.data?.teamRun;
      const byConversation = result.data?.teamRuns?.nodes ?? [];
      const runs = [
        ...(byId && matches(byId, chosen) ? [byId] : []),
        ...byConversation.filter((run) => run.execId !== byId?.execId),
      ];
      show(asked, chosen, runs, runs.length, noInfo, result.errors);
    } else if (page.after || page.before) {
      // A later page holds its place by its cursor: it is not followed.
      const result = await gql(RUNS, {
        filter,
        ...(page.before
          ? { last: RUNS_PAGE, before: page.before }
          : { first: RUNS_PAGE, after: page.after }),
      });
      showPage(result.data?.teamRuns, result.errors);
    } else {
      // The first page follows the runs: a live query, sent again by the server as they change.
      stopLive = subscribe(
        RUNS_LIVE,
        { filter, first: RUNS_PAGE },
        (data) => showPage(data?.teamRuns, []),
        (errors) => show(asked, chosen, [], 0, noInfo, errors),
      );
    }
  };
  const show = (asked, chosen, runs, total, info, errors) => {
    if (asked !== latest) return;
    const words = described(chosen);
    const clearButton = h('button', { type: 'button' }, 'Clear the filters');
    clearButton.addEventListener('click', reset);
    body.replaceChildren(
      errors.length ? errorBanner(errors) : '',
      runs.length
        ? runTable(runs, team === null, true)
        : errors.length
          ? ''
          : h(
              'p',
              { class: 'empty' },
              words.length
                ? ['No run matches ', words.join(' · '), '. ', clearButton]
                : 'No runs yet.',
            ),
    );
    // Where this page lies: its first position counts the pages before it.
    const first = chosen.q ? 1 : info.hasPreviousPage ? (pageNumber - 1) * RUNS_PAGE + 1 : 1;
    summary.textContent = runs.length
      ? `Runs ${number(first)}–${number(first + runs.length - 1)} of ${number(total)}${words.length ? `, ${words.join(' · ')}` : ''}; newest first.`
      : '';
    const newer = h('button', { type: 'button', disabled: !info.hasPreviousPage }, '← Newer');
    const older = h('button', { type: 'button', disabled: !info.hasNextPage }, 'Older →');
    newer.addEventListener('click', () => turn({ after: null, before: info.startCursor }, -1));
    older.addEventListener('click', () => turn({ after: info.endCursor, before: null }, 1));
    pager.replaceChildren();
    if (info.hasPreviousPage || info.hasNextPage)
      add(pager, newer, h('span', { class: 'muted' }, `page ${number(pageNumber)}`), older);
  };
  // The page's number is kept in the address too, only to be shown.
  let pageNumber = Math.max(1, Number(params.get('page')) || 1);
  const turn = (to, step) => {
    page = to;
    pageNumber = Math.max(1, pageNumber + step);
    setParams(
      { after: to.after, before: to.before, page: pageNumber > 1 ? String(pageNumber) : null },
      true,
    );
    load();
  };
  const apply = () => {
    page = { after: null, before: null };
    pageNumber = 1;
    setParams({ ...state(), after: null, before: null, page: null });
    load();
  };
  function reset() {
    teamSelect.value = '';
    for (const label of stateBoxes) {
      const box = label.querySelector('input');
      if (box) box.checked = false;
    }
    owner.value = '';
    since.value = '';
    search.value = '';
    apply();
  }
  clear.addEventListener('click', reset);
  let typing;
  filters.addEventListener('input', (event) => {
    clearTimeout(typing);
    const typed = event.target === owner || event.target === search;
    typing = setTimeout(apply, typed ? 400 : 0);
  });
  filters.addEventListener('submit', (event) => {
    event.preventDefault();
    clearTimeout(typing);
    apply();
  });
  if (team === null) {
    gql(TEAM_NAMES).then(({ data }) => {
      for (const { name } of data?.teams?.nodes ?? []) {
        if (name !== selectedTeam) add(teamSelect, h('option', { value: name }, name));
      }
    });
  }
  load();
  return {
    element: h(
      'section',
      { class: 'run-list', 'aria-label': 'Runs' },
      filters,
      summary,
      body,
      pager,
    ),
    stop: () => {
      clearTimeout(typing);
      latest++;
      stopLive();
    },
  };
}

function runsView(root, _argument, params) {
  const list = runList(null, params);
  add(root, h('h2', { tabindex: '-1' }, 'Runs'), list.element);
  return list.stop;
}

const RUN = `query ConsoleRun($execId: ID!) @live {
  teamRun(execId: $execId) {
    execId teamName owner state startDate endDate durationMs
    team { tools { name toolType } }
    waitingFor { question questionJson agentName since }
    tasks {
      taskOrder taskName agentName state startDate endDate durationMs input result
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

function runView(root, execId) {
  const notice = h('div', { role: 'status' });
  // An answer sent from this page is confirmed here, outside what a reload redraws.
  const confirmation = h('div');
  const body = h('div', {}, h('p', { class: 'muted' }, 'Loading…'));
  add(root, h('h2', { tabindex: '-1' }, 'Run ', execId), notice, confirmation, body);
  /** The wait (its since) answered from this page: its box is not offered again. */
  let answered;
  let shown = false;
  // The run is a live query: the server sends it again when it changes. The page is not
  // redrawn under the reader (opened prompts would close): a new answer is announced, and the
  // reader chooses when to see it, with nothing fetched again.
  const show = (data, errors) => {
    body.replaceChildren();
    if (errors.length) add(body, errorBanner(errors));
    const run = data?.teamRun;
    if (run) render(run);
  };
  const stop = subscribe(
    RUN,
    { execId },
    (data) => {
      if (!shown || !data?.teamRun) {
        shown = true;
        show(data, []);
        return;
      }
      const latest = h('button', { type: 'button' }, 'Show the latest');
      latest.addEventListener('click', () => {
        notice.replaceChildren();
        show(data, []);
      });
      notice.replaceChildren(
        h(
          'p',
          { class: 'changed' },
          'The run is now ',
          stateBadge(data.teamRun.state),
          ' ',
          latest,
        ),
      );
    },
    (errors) => {
      if (shown) notice.replaceChildren(errorBanner(errors));
      else show(null, errors);
    },
  );
  const render = (run) =>
    add(
      body,
      breadcrumb(
        ['Teams', '#/teams'],
        [run.teamName, `#/team/${encodeURIComponent(run.teamName)}`],
        [`Run ${run.execId}`],
      ),
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
      run.waitingFor && answerSection(run),
      runTimeline(run),
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
  const answerSection = (run) => {
    if (answered !== undefined && answered === run.waitingFor.since) return null;
    const section = h(
      'section',
      { class: 'answer-section', 'aria-label': 'Answer the run' },
      h('h3', {}, 'Answer'),
    );
    const form = answerForm(run, (sent) => {
      answered = run.waitingFor.since;
      section.remove();
      confirmation.replaceChildren(
        sentNotice(run, sent, () => confirmation.replaceChildren(), true),
      );
    });
    section.append(form);
    return section;
  };
  return stop;
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
              (([p50, p95]) => `p50 ${p50} · p95 ${p95}`)(
                millisApart([team.stats.durationP50Ms, team.stats.durationP95Ms]),
              ),
            ),
          ),
        ),
      ),
    );
  });
  return () => {};
}

/** What a team page reads once: the catalog's team, its tools, its A2A card and drift. */
const TEAM = `query ConsoleTeam($name: String!) {
  team(name: $name) {
    name owner description status
    tools { name toolType agentName taskName }
    cardDrift { kind toolName expected actual }
    agentCard { name description version url protocolVersion skills { id name description } }
  }
}`;
/**
 * The team's run figures, kept true by the server: apart from TEAM, so that a change of a run
 * does not read the A2A card again.
 */
const TEAM_FIGURES = `query ConsoleTeamFigures($name: String!) @live {
  team(name: $name) { stats { ${STATS_FIELDS} } }
}`;

const RUN_TEAM = `mutation ConsoleRunTeam($teamName: String!, $prompt: String!, $idempotencyKey: String) {
  runTeam(teamName: $teamName, prompt: $prompt, idempotencyKey: $idempotencyKey) { conversationId }
}`;
const RUN_OF_CONVERSATION = `query ConsoleRunOfConversation($conversationId: String!) @live {
  teamRuns(first: 1, filter: { conversationId: $conversationId }) { nodes { execId } }
}`;

/** A random idempotency key (crypto.randomUUID needs a secure context; this does not). */
const idempotencyKey = () =>
  Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) =>
    b.toString(16).padStart(2, '0'),
  ).join('');

/**
 * Starts a run of the team with a request (runTeam), then opens the run's page as soon as
 * the history shows it (found by its conversation id, looked for again at each change of the
 * team's runs). A retry after a failure reuses the key, so it cannot start a second run.
 */
function startRunForm(teamName) {
  const box = promptBox(`start-${teamName}`, `Request for ${teamName}`, 'The request');
  const send = h('button', { type: 'submit' }, 'Start a run');
  const outcome = h('p', { class: 'outcome', role: 'status' });
  const form = h(
    'form',
    { class: 'answer start-run', 'aria-label': `Start a run of ${teamName}` },
    box.label,
    box.textarea,
    h('div', { class: 'actions' }, send, box.counter, outcome),
  );
  let key;
  let stopFinding = () => {};
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    key ??= idempotencyKey();
    send.disabled = true;
    outcome.className = 'outcome';
    outcome.textContent = 'Starting…';
    const { data, errors } = await gql(RUN_TEAM, {
      teamName,
      prompt: box.textarea.value,
      idempotencyKey: key,
    }).catch((error) => ({ data: null, errors: [{ message: String(error?.message ?? error) }] }));
    if (errors.length) {
      outcome.className = 'outcome error';
      outcome.textContent = errors.map(explain).join(' ');
      send.disabled = false;
      return;
    }
    key = undefined;
    const { conversationId } = data.runTeam;
    outcome.className = 'outcome ok';
    outcome.replaceChildren(
      `Run requested at ${new Date().toLocaleTimeString()}; its page opens as soon as the database shows it (conversation `,
      h('a', { href: `#/runs?q=${encodeURIComponent(conversationId)}` }, conversationId),
      ').',
    );
    stopFinding();
    // A live query: the server answers again once the run is in the database.
    stopFinding = subscribe(
      RUN_OF_CONVERSATION,
      { conversationId },
      (found) => {
        const execId = found?.teamRuns?.nodes?.[0]?.execId;
        if (!execId) return;
        stopFinding();
        location.hash = `#/run/${encodeURIComponent(execId)}`;
      },
      () => {},
    );
  });
  return {
    element: h(
      'section',
      { class: 'start-section', 'aria-label': 'Start a run' },
      h('h3', {}, 'Start a run'),
      form,
    ),
    stop: () => stopFinding(),
  };
}

function teamView(root, name, params) {
  add(root, h('h2', { tabindex: '-1' }, 'Team ', name), h('p', { class: 'muted' }, 'Loading…'));
  let figures;
  let activity;
  let runs;
  let start;
  gql(TEAM, { name }).then(({ data, errors }) => {
    root.lastElementChild.remove();
    if (errors.length) add(root, errorBanner(errors));
    const team = data?.team;
    if (!team) return;
    figures = teamFigures(team.name);
    activity = activitySection(team.name);
    runs = runList(team.name, params);
    start = startRunForm(team.name);
    add(
      root,
      breadcrumb(['Teams', '#/teams'], [team.name]),
      h('p', { class: 'muted' }, team.description ?? '', ` · owner ${team.owner}`),
      start.element,
      figures.element,
      activity.element,
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
      h('h3', {}, 'Runs'),
      runs.element,
    );
  });
  return () => {
    figures?.stop();
    activity?.stop();
    runs?.stop();
    start?.stop();
  };
}

/**
 * A team's run figures (runs, success rate, durations, waits, runs by state), sent again by
 * its live query when a run of the team changes. Returns the element and the function that
 * stops it.
 */
function teamFigures(teamName) {
  const element = h(
    'div',
    { class: 'team-figures' },
    h('p', { class: 'muted' }, 'Loading the figures…'),
  );
  const show = (stats, errors) =>
    element.replaceChildren(
      errors.length ? errorBanner(errors) : '',
      stats
        ? h(
            'div',
            { class: 'cards' },
            card('Runs', number(stats.runCount)),
            card('Success rate', percent(stats.successRate)),
            card(
              'Duration p50 / p95',
              millisApart([stats.durationP50Ms, stats.durationP95Ms]).join(' / '),
            ),
            card(
              'Waiting for humans',
              millis(stats.humanWaitTotalMs),
              `${number(stats.humanWaitCount)} answered waits, ${millis(stats.humanWaitAvgMs)} on average`,
            ),
          )
        : '',
      stats
        ? h(
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
          )
        : '',
    );
  const stop = subscribe(
    TEAM_FIGURES,
    { name: teamName },
    (data) => show(data?.team?.stats, []),
    (errors) => show(null, errors),
  );
  return { element, stop };
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
  const labelWidth = Math.max(...items.map((item) => textWidth(item.label))) + 12;
  const valueWidth = Math.max(...items.map((item) => textWidth(item.text))) + 12;
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

/** The execution statistics, kept true by the server (executeAgent, and each run that changes). */
const STATS = `query ConsoleStats @live {
  execStatSummary {
    executionCount totalTimeAvgMs totalTimeP50Ms totalTimeP95Ms totalTimeP99Ms totalTimeMaxMs
    llmTimePct toolTimePct
    totals { inputTokens outputTokens totalTimeExecMs totalTimeLlmMs totalTimeToolMs llmCallCount toolCallCount }
  }
}`;

function statsView(root) {
  const summary = execSummary();
  // Team runs over time, below the execution statistics (or alone, when those are refused).
  const activity = activitySection(null);
  add(root, h('h2', { tabindex: '-1' }, 'Runtime statistics'), summary.element, activity.element);
  return () => {
    summary.stop();
    activity.stop();
  };
}

/**
 * The execution statistics as cards and charts, drawn again with each answer of their live
 * query. Returns the element and the function that stops it.
 */
function execSummary() {
  const element = h('div', { class: 'exec-summary' }, h('p', { class: 'muted' }, 'Loading…'));
  const show = (summary) => {
    if (!summary) return element.replaceChildren();
    const totals = summary.totals;
    const other = Math.max(
      0,
      totals.totalTimeExecMs - totals.totalTimeLlmMs - totals.totalTimeToolMs,
    );
    element.replaceChildren(
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
            ].map(([label, value], index, all) => ({
              label,
              value,
              text: millisApart(all.map(([, v]) => v))[index],
            })),
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
  };
  const stop = subscribe(
    STATS,
    {},
    (data) => show(data?.execStatSummary),
    (errors) => element.replaceChildren(errorBanner(errors)),
  );
  return { element, stop };
}

// ---- activity over time (teamRunActivity), on the Statistics and Team pages ----

const ACTIVITY = `query ConsoleActivity($bucket: ActivityBucket!, $filter: TeamRunActivityFilter) @live {
  teamRunActivity(bucket: $bucket, filter: $filter) {
    bucket from to
    buckets {
      start end startedCount startedByState { state count } endedCount durationP50Ms durationP95Ms
      waitingAtEnd waitsBegun humanWaitCount humanWaitMs
    }
  }
}`;

/** Stacking order of the bars, bottom up, each with a pattern so that no state rests on colour. */
const STACK = ['SUCCEEDED', 'FAILED', 'RUNNING', 'RESUMING', 'WAITING_FOR_HUMAN'];
let patternIds = 0;

/** Fills for the states: the state's colour plus a pattern (none, hatches, dots, grid). */
function statePatterns() {
  const id = `p${++patternIds}`;
  const marks = {
    SUCCEEDED: [],
    FAILED: [s('path', { d: 'M0,6 L6,0', class: 'mark' })],
    RUNNING: [s('path', { d: 'M3,0 L3,6', class: 'mark' })],
    RESUMING: [s('path', { d: 'M0,3 L6,3', class: 'mark' })],
    WAITING_FOR_HUMAN: [s('circle', { cx: 3, cy: 3, r: 1.3, class: 'mark' })],
  };
  const defs = s('defs');
  for (const [state, children] of Object.entries(marks)) {
    defs.append(
      s(
        'pattern',
        { id: `${id}-${state}`, width: 6, height: 6, patternUnits: 'userSpaceOnUse' },
        s('rect', { width: 6, height: 6, class: `fill ${state}` }),
        ...children,
      ),
    );
  }
  return { defs, fill: (state) => `url(#${id}-${state})` };
}

const bucketLabel = (activity, iso) => {
  const date = new Date(iso);
  return activity.bucket === 'HOUR'
    ? date.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' })
    : date.toLocaleDateString([], { month: 'short', day: 'numeric' });
};

/** One bucket in words: what the hover readout and the bar's title say. */
function describeBucket(activity, bucket) {
  const states = bucket.startedByState
    .filter((entry) => entry.count > 0)
    .map((entry) => `${entry.count} ${entry.state}`)
    .join(', ');
  return (
    [
      `${bucketLabel(activity, bucket.start)}–${bucketLabel(activity, bucket.end)}:`,
      `${bucket.startedCount} started${states ? ` (${states})` : ''};`,
      `${bucket.endedCount} ended${bucket.endedCount ? `, p50 ${millis(bucket.durationP50Ms)}, p95 ${millis(bucket.durationP95Ms)}` : ''};`,
      bucket.waitingAtEnd === null ? '' : `${bucket.waitingAtEnd} waiting for a person at the end`,
    ].join(' ') +
    (bucket.humanWaitCount
      ? `, ${bucket.humanWaitCount} answered after ${millis(bucket.humanWaitMs)} in all`
      : '')
  );
}

/**
 * Stacked bars of the runs started per bucket by state, and below them the p50 and p95
 * durations of the runs that ended per bucket (a solid and a dashed line). Hovering or
 * focusing a bucket shows its figures in the readout; every bar also carries them as a title.
 */
/** Both activity charts' horizontal layout, so that their buckets line up. */
const ACTIVITY_WIDTH = 720;
const ACTIVITY_LEFT = 64;
const ACTIVITY_RIGHT = 12;

/**
 * The time axis under an activity chart: a label every few buckets, centred under its bucket
 * and kept inside the chart (measured, not cut at an edge).
 */
function timeAxis(svg, activity, y) {
  const buckets = activity.buckets;
  const step = (ACTIVITY_WIDTH - ACTIVITY_LEFT - ACTIVITY_RIGHT) / buckets.length;
  const labelEvery = Math.ceil(buckets.length / 8);
  buckets.forEach((bucket, index) => {
    if (index % labelEvery !== 0) return;
    const text = bucketLabel(activity, bucket.start);
    const half = textWidth(text) / 2;
    const x = Math.min(
      ACTIVITY_WIDTH - half - 1,
      Math.max(half + 1, ACTIVITY_LEFT + (index + 0.5) * step),
    );
    svg.append(s('text', { x, y, 'text-anchor': 'middle', class: 'axis-label' }, text));
  });
}

function activityCharts(activity) {
  const buckets = activity.buckets;
  const width = ACTIVITY_WIDTH;
  const left = ACTIVITY_LEFT;
  const plot = width - left - ACTIVITY_RIGHT;
  const step = plot / buckets.length;
  const height = 150;
  const max = Math.max(1, ...buckets.map((b) => b.startedCount));
  const total = buckets.reduce((sum, b) => sum + b.startedCount, 0);
  const readout = h(
    'p',
    { class: 'readout', 'aria-live': 'polite' },
    'Point at a bar for its figures.',
  );
  const { defs, fill } = statePatterns();
  const unit = activity.bucket === 'HOUR' ? 'hour' : 'day';
  const bars = s('svg', {
    viewBox: `0 0 ${width} ${height + 24}`,
    class: 'activity-bars',
    role: 'img',
    'aria-label': `Runs started per ${unit}, by state: ${total} in ${buckets.length} ${unit}s, at most ${max} in one`,
    'data-started-total': total,
  });
  bars.append(defs);
  for (const tick of new Set([0, Math.ceil(max / 2), max])) {
    const y = height - (tick / max) * (height - 10);
    bars.append(
      s('line', { x1: left, x2: width - ACTIVITY_RIGHT, y1: y, y2: y, class: 'grid' }),
      s('text', { x: left - 6, y: Math.max(12, y + 4), 'text-anchor': 'end' }, String(tick)),
    );
  }
  buckets.forEach((bucket, index) => {
    const x = left + index * step;
    const group = s('g', {
      class: 'bucket',
      tabindex: 0,
      'data-start': bucket.start,
      'data-started': bucket.startedCount,
    });
    const words = describeBucket(activity, bucket);
    group.append(s('title', {}, words));
    group.append(s('rect', { x, y: 0, width: step, height, class: 'hit' }));
    let y = height;
    for (const state of STACK) {
      const count = bucket.startedByState.find((entry) => entry.state === state)?.count ?? 0;
      if (!count) continue;
      const h2 = (count / max) * (height - 10);
      y -= h2;
      group.append(
        s('rect', {
          x: x + step * 0.12,
          y,
          width: step * 0.76,
          height: h2,
          fill: fill(state),
          class: `seg ${state}`,
        }),
      );
    }
    const show = () => {
      readout.textContent = words;
      for (const other of bars.querySelectorAll('.bucket.active')) other.classList.remove('active');
      group.classList.add('active');
    };
    group.addEventListener('mouseenter', show);
    group.addEventListener('focus', show);
    bars.append(group);
  });
  timeAxis(bars, activity, height + 17);
  if (total === 0) {
    bars.append(
      s(
        'text',
        { x: width / 2, y: height / 2, 'text-anchor': 'middle', class: 'empty' },
        `No runs started in these ${buckets.length} ${unit}s.`,
      ),
    );
  }
  const legend = h(
    'ul',
    { class: 'legend', 'aria-label': 'States' },
    STACK.map((state) => {
      const swatch = s('svg', {
        viewBox: '0 0 14 14',
        width: 14,
        height: 14,
        'aria-hidden': 'true',
      });
      const own = statePatterns();
      swatch.append(own.defs, s('rect', { width: 14, height: 14, fill: own.fill(state) }));
      return h('li', {}, swatch, ' ', state);
    }),
  );
  return h(
    'div',
    { class: 'activity-charts' },
    h('figure', {}, h('figcaption', {}, `Runs started per ${unit}, by state now`), bars, legend),
    readout,
    h(
      'figure',
      {},
      h('figcaption', {}, `Duration of the runs that ended, per ${unit}`),
      durationTrend(activity),
    ),
  );
}

/**
 * The p50 (solid) and p95 (dashed) durations per bucket, gaps where no run ended, on the
 * same time axis as the bars above; the y axis's figures as precise as it takes to differ.
 */
function durationTrend(activity) {
  const buckets = activity.buckets;
  const width = ACTIVITY_WIDTH;
  const left = ACTIVITY_LEFT;
  const top = 10;
  const height = 110;
  const step = (width - left - ACTIVITY_RIGHT) / buckets.length;
  const max = Math.max(1, ...buckets.map((b) => b.durationP95Ms ?? 0));
  const ended = buckets.filter((b) => b.durationP50Ms !== null);
  const y = (value) => top + (1 - value / max) * (height - top);
  const ticks = [0, max / 2, max];
  const tickTexts = millisApart(ticks);
  const svg = s('svg', {
    viewBox: `0 0 ${width} ${height + 24}`,
    class: 'activity-trend',
    role: 'img',
    'aria-label': ended.length
      ? `Duration p50 and p95 of ended runs: longest p95 ${tickTexts[2]}`
      : 'No run ended in this period',
  });
  ticks.forEach((tick, index) => {
    svg.append(
      s('line', { x1: left, x2: width - ACTIVITY_RIGHT, y1: y(tick), y2: y(tick), class: 'grid' }),
      s(
        'text',
        { x: left - 6, y: y(tick) + 4, 'text-anchor': 'end', class: 'axis-label' },
        tickTexts[index] ?? '',
      ),
    );
  });
  for (const [field, className] of [
    ['durationP50Ms', 'p50'],
    ['durationP95Ms', 'p95'],
  ]) {
    const points = buckets
      .map((b, i) => [left + (i + 0.5) * step, b[field]])
      .filter(([, value]) => value !== null)
      .map(([x, value]) => [x, y(value)]);
    if (points.length === 0) continue;
    svg.append(
      s('polyline', {
        points: points.map((p) => p.join(',')).join(' '),
        class: `trend ${className}`,
      }),
      ...points.map(([x, py]) => s('circle', { cx: x, cy: py, r: 2.5, class: `dot ${className}` })),
    );
  }
  timeAxis(svg, activity, height + 17);
  if (ended.length === 0) {
    svg.append(
      s(
        'text',
        { x: width / 2, y: height / 2, 'text-anchor': 'middle', class: 'empty' },
        'No run ended in this period.',
      ),
    );
  }
  const key = (className, text) => {
    const swatch = s('svg', { viewBox: '0 0 24 10', width: 24, height: 10, 'aria-hidden': 'true' });
    swatch.append(s('line', { x1: 0, x2: 24, y1: 5, y2: 5, class: `trend ${className}` }));
    return h('li', {}, swatch, ' ', text);
  };
  return [
    svg,
    h(
      'ul',
      { class: 'trend-key', 'aria-label': 'Lines' },
      key('p50', 'p50 (median)'),
      key('p95', 'p95'),
    ),
  ];
}

/**
 * The activity section of a page: hourly over a day or daily over a month, redrawn when a
 * run of the page's scope changes state (the existing subscriptions; bursts coalesce into
 * one query). Returns the element and the function that stops it.
 */
function activitySection(teamName) {
  const body = h('div', { class: 'activity' }, h('p', { class: 'muted' }, 'Loading activity…'));
  let bucket = 'HOUR';
  const choices = [
    ['HOUR', 'Last 24 hours'],
    ['DAY', 'Last 30 days'],
  ].map(([value, label]) => {
    const button = h('button', { type: 'button', 'aria-pressed': String(value === bucket) }, label);
    button.addEventListener('click', () => {
      bucket = value;
      for (const other of choices) other.setAttribute('aria-pressed', String(other === button));
      load();
    });
    return button;
  });
  const show = (data, errors) => {
    const activity = data?.teamRunActivity;
    body.replaceChildren(
      errors.length ? errorBanner(errors) : '',
      activity ? activityCharts(activity) : '',
    );
  };
  // A live query: the server sends the activity again when a run changes; another period is
  // another live query.
  let stopLive = () => {};
  const load = () => {
    stopLive();
    stopLive = subscribe(
      ACTIVITY,
      { bucket, filter: teamName ? { teamName } : null },
      (data) => show(data, []),
      (errors) => show(null, errors),
    );
  };
  load();
  const stop = () => stopLive();
  const section = h(
    'section',
    { class: 'activity-section', 'aria-label': 'Activity over time' },
    h('h3', {}, 'Activity over time'),
    h('div', { class: 'choices', role: 'group', 'aria-label': 'Period' }, choices),
    body,
  );
  return { element: section, stop };
}

// ---- a run's timeline: tasks as bars on its time axis, their tool calls nested ----

/** Lanes of overlapping tool calls drawn per task, and bars drawn per task, before aggregating. */
const TIMELINE_LANES = 4;
const TIMELINE_BARS_PER_TASK = 120;
/** Time bins of the aggregated row of a task's remaining calls. */
const TIMELINE_BINS = 60;

const instant = (iso) => (iso ? Date.parse(iso) : null);

/**
 * Calls into lanes, each call in the first lane free at its start (calls that overlap get
 * lanes of their own), at most TIMELINE_LANES lanes and TIMELINE_BARS_PER_TASK bars; the calls
 * left over are returned to be drawn as one aggregated row.
 */
function packLanes(calls, now) {
  const lanes = [];
  const rest = [];
  let drawn = 0;
  for (const call of calls) {
    const start = instant(call.startDate) ?? now;
    const end = instant(call.endDate) ?? now;
    const lane = lanes.find((l) => l.end <= start);
    if (drawn >= TIMELINE_BARS_PER_TASK || (!lane && lanes.length >= TIMELINE_LANES)) {
      rest.push(call);
      continue;
    }
    drawn++;
    if (lane) {
      lane.calls.push(call);
      lane.end = end;
    } else lanes.push({ calls: [call], end });
  }
  return { lanes, rest };
}

/**
 * The timeline of a run: one row per task (its bar from start to end, or to now while open),
 * under it its tool calls in lanes, and past TIMELINE_BARS_PER_TASK calls or TIMELINE_LANES
 * overlapping ones, an aggregated row counting the remaining calls per time bin. Failed parts
 * are in the failure colour and hatched, waits for a person in the waiting colour and dotted,
 * open parts marked open. Clicking (or Enter on) a bar shows its input and output below.
 */
function runTimeline(run) {
  const humanTools = new Set(
    (run.team?.tools ?? []).filter((tool) => tool.toolType === 'HUMAN').map((tool) => tool.name),
  );
  const now = Date.now();
  const calls = run.tasks.flatMap((task) => task.toolCalls);
  const starts = [
    run.startDate,
    ...run.tasks.map((t) => t.startDate),
    ...calls.map((c) => c.startDate),
  ]
    .map(instant)
    .filter((t) => t !== null);
  const ends = [
    run.endDate,
    ...run.tasks.map((t) => t.endDate),
    ...calls.map((c) => c.endDate),
  ].map((iso) => instant(iso) ?? now);
  if (starts.length === 0) return h('p', { class: 'muted' }, 'No dates recorded: no timeline.');
  const t0 = Math.min(...starts);
  const t1 = Math.max(t0 + 1, ...ends);
  const rows = [];
  for (const task of run.tasks) {
    rows.push({ kind: 'task', task, calls: [] });
    const ordered = [...task.toolCalls].sort(
      (a, b) => (instant(a.startDate) ?? 0) - (instant(b.startDate) ?? 0),
    );
    const { lanes, rest } = packLanes(ordered, now);
    for (const lane of lanes) rows.push({ kind: 'lane', task, calls: lane.calls });
    if (rest.length > 0) rows.push({ kind: 'rest', task, calls: rest });
  }
  const width = 960;
  const rowLabel = (entry) =>
    entry.kind === 'task'
      ? `#${entry.task.taskOrder} ${entry.task.taskName ?? '—'}`
      : entry.kind === 'rest'
        ? `+${entry.calls.length} more calls`
        : entry.calls.length === 1
          ? (entry.calls[0].toolName ?? 'tool call')
          : `${entry.calls.length} tool calls`;
  // The label column as wide as its longest label (within reason); the plot takes the rest.
  const label = Math.min(
    320,
    Math.ceil(
      Math.max(
        ...rows.map((entry) => textWidth(rowLabel(entry), 12) + (entry.kind === 'task' ? 0 : 14)),
      ),
    ) + 12,
  );
  const right = 8;
  const plot = width - label - right;
  const row = 20;
  const height = 28 + rows.length * row;
  const details = h(
    'div',
    { class: 'timeline-details', 'aria-live': 'polite' },
    h(
      'p',
      { class: 'muted' },
      'Click a bar to see its input and output; drag across the timeline to zoom in.',
    ),
  );
  const svg = s('svg', {
    viewBox: `0 0 ${width} ${height}`,
    class: 'timeline',
    role: 'group',
    'aria-label': `Timeline of the run: ${run.tasks.length} tasks, ${calls.length} tool calls over ${duration(t1 - t0)}`,
  });
  const showing = h('p', { class: 'muted zoom-state', 'aria-live': 'polite' });
  const show = (title, facts, texts) => {
    details.replaceChildren();
    add(
      details,
      h('h4', {}, title),
      h(
        'dl',
        { class: 'facts' },
        facts.map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]),
      ),
      texts.map(([name, text]) => (text ? [h('h5', {}, name), h('pre', {}, text)] : null)),
    );
  };
  const bar = (attributes, words, open) => {
    const group = s('g', { class: 'bar-button', role: 'button', tabindex: 0, 'aria-label': words });
    group.append(s('title', {}, words), s('rect', attributes));
    group.addEventListener('click', open);
    group.addEventListener('keydown', (event) => {
      if (event.key === 'Enter' || event.key === ' ') {
        event.preventDefault();
        open();
      }
    });
    return group;
  };
  const stateOf = (call) => {
    if (humanTools.has(call.toolName)) return 'WAITING_FOR_HUMAN';
    if (!call.endDate) return 'RUNNING';
    return call.taskFailed && !call.output ? 'FAILED' : 'SUCCEEDED';
  };
  const clipId = `timeline-clip-${++patternIds}`;

  /** The part of the run on screen: all of it until the operator zooms. */
  let from = t0;
  let to = t1;
  const draw = () => {
    const x = (t) => label + ((t - from) / (to - from)) * plot;
    /** A bar's ends on screen, cut to the plot; null when it lies outside the window. */
    const span = (start, end) => {
      if (end < from || start > to) return null;
      const a = Math.max(label, x(start));
      return { x: a, width: Math.max(2, Math.min(label + plot, x(end)) - a) };
    };
    /**
     * A state label beside its bar: after it where it fits, else before it, else inside its
     * right end; never cut at the edge.
     */
    const stateLabel = (text, box, y) => {
      const w = textWidth(text, 11);
      const after = box.x + box.width + 4;
      if (after + w <= width - 2) return s('text', { x: after, y, class: 'state-label' }, text);
      if (box.x - 4 - w >= label) {
        return s('text', { x: box.x - 4, y, 'text-anchor': 'end', class: 'state-label' }, text);
      }
      // Inside the bar's right end, on a backdrop that keeps it readable over the pattern.
      const end = Math.min(box.x + box.width, width - 2) - 4;
      return s(
        'g',
        { class: 'inside' },
        s('rect', {
          x: end - w - 3,
          y: y - 11,
          width: w + 6,
          height: 14,
          rx: 3,
          class: 'label-backdrop',
        }),
        s('text', { x: end, y, 'text-anchor': 'end', class: 'state-label' }, text),
      );
    };
    const { defs, fill } = statePatterns();
    defs.append(s('clipPath', { id: clipId }, s('rect', { x: label, y: 0, width: plot, height })));
    svg.replaceChildren(defs);
    const offsets = [0, 1, 2, 3, 4].map((i) => from + ((to - from) * i) / 4 - t0);
    // The ticks and the whole run's length, as precise as it takes for them to differ.
    const tickTexts = millisApart([...offsets, t1 - t0]);
    offsets.forEach((offset, i) => {
      const at = x(t0 + offset);
      const text = offset === 0 ? 'start' : `+${tickTexts[i]}`;
      const w = textWidth(text);
      svg.append(
        s('line', { x1: at, x2: at, y1: 16, y2: height, class: 'grid' }),
        s(
          'text',
          {
            x: Math.min(width - w / 2 - 1, Math.max(label + w / 2, at)),
            y: 12,
            'text-anchor': 'middle',
            class: 'tick',
          },
          text,
        ),
      );
    });
    const bars = s('g', { 'clip-path': `url(#${clipId})` });
    const labels = [];
    rows.forEach((entry, index) => {
      const y = 22 + index * row;
      labels.push(
        s(
          'text',
          {
            x: entry.kind === 'task' ? 0 : 14,
            y: y + 13,
            class: entry.kind === 'task' ? 'task-label' : 'lane-label',
          },
          rowLabel(entry),
        ),
      );
      if (entry.kind === 'task') {
        const { task } = entry;
        const start = instant(task.startDate) ?? t0;
        const end = instant(task.endDate) ?? now;
        const words = `Task #${task.taskOrder} ${task.taskName ?? ''}: ${task.state}, ${task.endDate ? millis(end - start) : `open for ${millis(end - start)}`}`;
        const box = span(start, end);
        if (!box) return;
        bars.append(
          bar(
            {
              x: box.x,
              y: y + 2,
              width: box.width,
              height: row - 4,
              fill: fill(task.state),
              class: `span task ${task.state}${task.endDate ? '' : ' open'}`,
            },
            words,
            () =>
              show(
                `Task #${task.taskOrder} ${task.taskName ?? ''}`,
                [
                  ['Agent', task.agentName],
                  ['State', task.state],
                  ['Started', when(task.startDate)],
                  ['Duration', task.endDate ? millis(end - start) : 'open'],
                ],
                [
                  ['Input', task.input],
                  ['Result', task.result],
                  ['Failure', task.failure?.message],
                ],
              ),
          ),
        );
        labels.push(stateLabel(task.endDate ? task.state : `${task.state} (open)`, box, y + 13));
        return;
      }
      if (entry.kind === 'lane') {
        for (const call of entry.calls) {
          const start = instant(call.startDate) ?? t0;
          const end = instant(call.endDate) ?? now;
          const box = span(start, end);
          if (!box) continue;
          const state = stateOf({ ...call, taskFailed: entry.task.state === 'FAILED' });
          const human = humanTools.has(call.toolName);
          const words = `${call.toolName ?? 'tool call'}${human ? ' (waits for a person)' : ''}: ${call.endDate ? millis(end - start) : 'open'}`;
          bars.append(
            bar(
              {
                x: box.x,
                y: y + 4,
                width: box.width,
                height: row - 8,
                fill: fill(state),
                class: `span call ${state}${human ? ' human' : ''}${call.endDate ? '' : ' open'}`,
                'data-invocation-id': call.invocationId,
              },
              words,
              () =>
                show(
                  `${call.toolName ?? 'Tool call'}${human ? ' — a wait for a person' : ''}`,
                  [
                    ['Agent', call.agentName ?? '—'],
                    ['Started', when(call.startDate)],
                    ['Duration', call.endDate ? millis(end - start) : 'open'],
                  ],
                  [
                    ['Input', call.input],
                    ['Output', call.output],
                    ['Tool messages', call.toolOutput],
                  ],
                ),
            ),
          );
          if (human && !call.endDate) labels.push(stateLabel('waiting for a person', box, y + 13));
        }
        return;
      }
      // The calls beyond what is drawn one by one: a count per time bin of the window shown,
      // darker where denser.
      const bins = new Array(TIMELINE_BINS).fill(0);
      for (const call of entry.calls) {
        const at = instant(call.startDate) ?? t0;
        if (at < from || at > to) continue;
        bins[
          Math.min(TIMELINE_BINS - 1, Math.floor(((at - from) / (to - from)) * TIMELINE_BINS))
        ]++;
      }
      const most = Math.max(1, ...bins);
      const words = `+${entry.calls.length} more calls, aggregated by time (most in one bin: ${most})`;
      const group = bar(
        { x: label, y: y + 4, width: plot, height: row - 8, class: 'rest-hit' },
        words,
        () =>
          show(
            `${entry.calls.length} more tool calls of task #${entry.task.taskOrder}`,
            [['Shown', 'by start, the first 50 below']],
            [
              [
                'Calls',
                entry.calls
                  .slice(0, 50)
                  .map(
                    (call) =>
                      `${when(call.startDate)}  ${call.toolName ?? '—'}  ${call.endDate ? millis(call.durationMs) : 'open'}`,
                  )
                  .join('\n'),
              ],
            ],
          ),
      );
      bins.forEach((count, bin) => {
        if (!count) return;
        group.append(
          s('rect', {
            x: label + (bin / TIMELINE_BINS) * plot,
            y: y + 4,
            width: plot / TIMELINE_BINS,
            height: row - 8,
            class: 'density',
            'fill-opacity': (0.25 + (0.75 * count) / most).toFixed(2),
          }),
        );
      });
      bars.append(group);
    });
    svg.append(bars, ...labels);
    const zoomed = from > t0 || to < t1;
    showing.textContent = zoomed
      ? `Showing +${tickTexts[0]} to +${tickTexts[4]} of ${tickTexts[5]}.`
      : `The whole run: ${tickTexts[5]}.`;
    for (const button of [zoomOut, all]) button.disabled = !zoomed;
    left.disabled = from <= t0;
    rightward.disabled = to >= t1;
  };
  /** Shows [a, b] of the run, kept within it and at least 1/1000 of it (or 1 ms) wide. */
  const zoom = (a, b) => {
    const least = Math.max(1, (t1 - t0) / 1000);
    let start = a;
    let end = Math.max(b, a + least);
    const spanWidth = Math.min(end - start, t1 - t0);
    if (start < t0) [start, end] = [t0, t0 + spanWidth];
    if (end > t1) [start, end] = [t1 - spanWidth, t1];
    from = start;
    to = end;
    draw();
  };
  const control = (text, name, action) => {
    const button = h('button', { type: 'button', 'aria-label': name, title: name }, text);
    button.addEventListener('click', action);
    return button;
  };
  const middle = () => (from + to) / 2;
  const zoomIn = control('+', 'Zoom in', () =>
    zoom(middle() - (to - from) / 4, middle() + (to - from) / 4),
  );
  const zoomOut = control('−', 'Zoom out', () =>
    zoom(middle() - (to - from), middle() + (to - from)),
  );
  const left = control('←', 'Earlier', () => zoom(from - (to - from) / 2, to - (to - from) / 2));
  const rightward = control('→', 'Later', () => zoom(from + (to - from) / 2, to + (to - from) / 2));
  const all = control('Show all', 'Show the whole run', () => zoom(t0, t1));

  // Dragging across the plot zooms to the stretch dragged over.
  const at = (event) => {
    const box = svg.getBoundingClientRect();
    const vx = ((event.clientX - box.left) / box.width) * width;
    return from + ((Math.min(label + plot, Math.max(label, vx)) - label) / plot) * (to - from);
  };
  // No pointer capture: a click must still reach the bar under it.
  svg.addEventListener('pointerdown', (event) => {
    if (event.button !== 0) return;
    const dragFrom = at(event);
    let selection = null;
    const move = (moved) => {
      const x = (t) => label + ((t - from) / (to - from)) * plot;
      const [a, b] = [dragFrom, at(moved)].sort((p, q) => p - q);
      selection?.remove();
      selection = s('rect', {
        x: x(a),
        y: 16,
        width: x(b) - x(a),
        height: height - 16,
        class: 'zoom-selection',
      });
      svg.append(selection);
    };
    const up = (released) => {
      window.removeEventListener('pointermove', move);
      window.removeEventListener('pointerup', up);
      selection?.remove();
      const [a, b] = [dragFrom, at(released)].sort((p, q) => p - q);
      // A click (no drag) is left to the bar under it.
      if (((b - a) / (to - from)) * plot >= 4) zoom(a, b);
    };
    window.addEventListener('pointermove', move);
    window.addEventListener('pointerup', up);
  });
  draw();
  return h(
    'figure',
    { class: 'timeline-figure' },
    h('figcaption', {}, 'Timeline'),
    h(
      'div',
      { class: 'zoom', role: 'group', 'aria-label': 'Zoom the timeline' },
      zoomIn,
      zoomOut,
      left,
      rightward,
      all,
      showing,
    ),
    h('div', { class: 'scroll' }, svg),
    details,
  );
}

/** Where the page is, as links up to it: Teams › team › run. */
function breadcrumb(...steps) {
  return h(
    'nav',
    { class: 'breadcrumb', 'aria-label': 'You are here' },
    h(
      'ol',
      {},
      steps.map(([text, href], index) =>
        h(
          'li',
          {},
          index === steps.length - 1
            ? h('span', { 'aria-current': 'page' }, text)
            : h('a', { href }, text),
        ),
      ),
    ),
  );
}

// ---- routing: #/waiting, #/changes, #/run/<execId>, #/teams, #/team/<name>, #/agents, #/agent/<name>, #/stats ----

const ROUTES = {
  ...agentViews({
    h,
    s,
    add,
    gql,
    errorBanner,
    number,
    when,
    limits: LIMITS,
    utf8Bytes,
    byteSize,
  }),
  waiting: waitingView,
  changes: changesView,
  runs: runsView,
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

/** The address: the view's name and argument (#/name/argument), and its state (after '?'). */
function address() {
  const hash = location.hash;
  const mark = hash.indexOf('?');
  const path = mark === -1 ? hash : hash.slice(0, mark);
  const [, name = 'waiting', argument = ''] = path.match(/^#\/([^/]*)\/?(.*)$/) ?? [];
  return {
    path,
    name,
    argument,
    params: new URLSearchParams(mark === -1 ? '' : hash.slice(mark + 1)),
  };
}

/**
 * Puts a view's state in the address, so that a reload or a shared link shows the same: the
 * given values replace the current ones, empty ones are dropped. `push` makes a history
 * entry (Back returns to the state before, as for a page of a list); otherwise the entry is
 * replaced (as for each key typed into a filter). The view is not redrawn.
 * @param {Record<string, string | null | undefined>} values
 * @param {boolean} [push]
 */
function setParams(values, push = false) {
  const { path, params } = address();
  for (const [key, value] of Object.entries(values)) {
    if (value) params.set(key, value);
    else params.delete(key);
  }
  const query = params.toString();
  const url = `${path || '#/waiting'}${query ? `?${query}` : ''}`;
  if (url === location.hash) return;
  if (push) history.pushState(null, '', url);
  else history.replaceState(null, '', url);
}

function route() {
  const { name, argument, params } = address();
  const known = name === '' || Object.hasOwn(ROUTES, name);
  const value = decoded(argument);
  leave();
  view.replaceChildren();
  leave =
    (known && value !== undefined
      ? (ROUTES[name] ?? waitingView)(view, value, params)
      : notFoundView(view, location.hash)) ?? (() => {});
  // A run and a team are under Teams, where their breadcrumbs start; an agent under Agents.
  const section = { run: 'teams', team: 'teams', agent: 'agents' }[name] ?? name;
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
