import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { promisify } from 'node:util';
import { Script } from 'node:vm';
import { brotliCompress, constants, gzip } from 'node:zlib';
import { type GraphQLSchema, introspectionFromSchema } from 'graphql';
import type { GraphiQLOptions, Plugin } from 'graphql-yoga';

/**
 * GraphiQL from the installed package, so that it works without internet access (yoga's
 * default page loads it from a CDN), but not as yoga's render-graphiql page, which inlines
 * the whole bundle (9 MB) into every response: the page is a small HTML document that names
 * its scripts, styles and editor workers by the hash of their content, served once with
 * `immutable`, compressed (brotli, or gzip), so a second visit downloads only the page. The
 * compression runs once per process, off the event loop, from the first visit on.
 */

/** Where the page's files are served; their names end in their content's hash. */
export const GRAPHIQL_ASSETS = '/graphiql/';

/**
 * Before GraphiQL's own script: a mutation that arrives in the address (`?query=`, what a
 * link or another site can put there) is run only once the user has confirmed it in a
 * dialog that shows it; an edited document, or one typed in, runs as usual. GraphiQL has no
 * hook for this (its fetcher is built inside yoga's bundle), so the page's fetch is wrapped.
 * Strings and comments are blanked before looking for the keyword, so a mutation cannot
 * hide in one; a field named "mutation" only costs a needless question.
 */
const URL_MUTATION_GUARD = String.raw`(() => {
  const fromAddress = new URLSearchParams(location.search).get('query');
  if (!fromAddress) return;
  const bare = fromAddress.replace(/"""[\s\S]*?"""|"(?:[^"\\\n]|\\.)*"|#[^\n\r]*/g, ' ');
  if (!/\bmutation\b/.test(bare)) return;
  // GraphiQL sends the document as graphql-js prints it: compared without layout or comments.
  const shape = (text) =>
    text.replace(/("""[\s\S]*?"""|"(?:[^"\\\n]|\\.)*")|#[^\n\r]*|[\s,]+/g, (match, string) => string ?? '');
  const linked = shape(fromAddress);
  const send = window.fetch.bind(window);
  let confirmed = false;
  window.fetch = (input, init) => {
    let query;
    try { query = JSON.parse(typeof init?.body === 'string' ? init.body : '').query; } catch {}
    if (!confirmed && typeof query === 'string' && shape(query) === linked) {
      confirmed = window.confirm('This mutation came with the address you opened, not from you. Run it?\n\n' + fromAddress.slice(0, 600));
      if (!confirmed) {
        const message = 'Not run: the mutation came with the address you opened and you declined it. Read it, then run it again to confirm, or edit it.';
        return Promise.resolve(new Response(JSON.stringify({ errors: [{ message }] }), { headers: { 'content-type': 'application/json' } }));
      }
    }
    return send(input, init);
  };
})();`;

/**
 * The statements an operation ran (extensions.statements, development mode only; see
 * src/statement-log.ts), listed in a panel beside the result, as PostGraphile's Ruru shows
 * its SQL. Read from the responses through the page's fetch, GraphiQL having no hook for it.
 */
const STATEMENTS_PANEL = `(() => {
  const send = window.fetch.bind(window);
  const panel = document.getElementById('ag-statements');
  const show = (statements) => {
    panel.replaceChildren();
    if (!Array.isArray(statements)) { panel.hidden = true; return; }
    const total = statements.reduce((sum, s) => sum + (s.ms ?? 0), 0);
    const summary = document.createElement('summary');
    summary.textContent = statements.length + ' statement' + (statements.length === 1 ? '' : 's') + ', ' + total.toFixed(1) + ' ms (development mode: binds not shown)';
    const list = document.createElement('ol');
    for (const s of statements) {
      const item = document.createElement('li');
      const head = document.createElement('p');
      head.textContent = s.name + ' · ' + s.ms.toFixed(1) + ' ms · ' + (s.rows === null ? 'no rows' : s.rows + ' row' + (s.rows === 1 ? '' : 's')) + (s.error ? ' · failed' : '');
      const text = document.createElement('pre');
      text.textContent = s.text;
      item.append(head, text);
      list.append(item);
    }
    panel.append(summary, list);
    panel.hidden = false;
  };
  window.fetch = async (input, init) => {
    const response = await send(input, init);
    if ((response.headers.get('content-type') ?? '').includes('json')) {
      response.clone().json().then((body) => show(body?.extensions?.statements), () => {});
    }
    return response;
  };
})();`;

/**
 * The editor's workers, the scripts deferInlinedImports moved out of the bundle (each loaded
 * once, on its first import), and the render call, from the page's options (see buildPage). The
 * schema the page carries is the one this server validated when it started, so GraphiQL is
 * told not to validate it again (its dangerouslyAssumeSchemaIsValid: a tenth of the render).
 */
const START = `(() => {
  const page = JSON.parse(document.getElementById('ag-graphiql').textContent);
  self.MonacoEnvironment = { globalAPI: false, getWorkerUrl: (moduleId, label) => page.workers[label] };
  const scripts = new Map();
  self.agentGraphScript = (index) => {
    if (!scripts.has(index)) {
      scripts.set(index, new Promise((resolve, reject) => {
        const script = document.createElement('script');
        script.src = page.scripts[index];
        script.onload = resolve;
        script.onerror = () => { scripts.delete(index); reject(new Error('could not load ' + script.src)); };
        document.head.append(script);
      }));
    }
    return scripts.get(index);
  };
  const schema = page.schema ? fetch(page.schema).then((response) => response.json()) : Promise.resolve(undefined);
  const loaded = new Promise((resolve) => document.addEventListener('DOMContentLoaded', resolve));
  Promise.all([schema, loaded]).then(([introspection]) => {
    const options = introspection
      ? { ...page.options, schema: introspection, dangerouslyAssumeSchemaIsValid: true }
      : page.options;
    YogaGraphiQL.renderYogaGraphiQL(document.getElementById('root'), options);
  });
})();`;

/** The bar above GraphiQL, and the statements panel. */
const STYLES = `
.graphiql-container { height: calc(100vh - 32px); }
.ag-bar { display: flex; gap: 16px; align-items: center; height: 32px; box-sizing: border-box;
  padding: 0 16px; font: 14px/1 system-ui, sans-serif; background: #0b1a2a; color: #e8eef5; }
.ag-bar strong { font-weight: 600; }
.ag-bar a { color: #9fd0ff; }
#ag-statements { position: fixed; right: 12px; bottom: 12px; max-width: min(46vw, 760px);
  max-height: 45vh; overflow: auto; z-index: 10; background: #fff; color: #111;
  border: 1px solid #9aa7b4; border-radius: 6px; box-shadow: 0 2px 10px #0003;
  font: 13px/1.4 system-ui, sans-serif; padding: 6px 10px; }
#ag-statements summary { cursor: pointer; font-weight: 600; }
#ag-statements ol { margin: 6px 0; padding-left: 22px; }
#ag-statements p { margin: 6px 0 2px; }
#ag-statements pre { margin: 0; white-space: pre-wrap; font: 12px/1.35 ui-monospace, monospace;
  background: #f3f5f7; padding: 4px 6px; border-radius: 4px; }
`;

interface Asset {
  readonly body: Buffer;
  readonly type: string;
  readonly encoded: Map<'br' | 'gzip', Promise<Buffer>>;
}

interface Page {
  readonly html: string;
  readonly csp: string;
  readonly assets: Map<string, Asset>;
}

const IMMUTABLE = 'public, max-age=31536000, immutable';
const compressBrotli = promisify(brotliCompress);
const compressGzip = promisify(gzip);

/** A content-addressed file of the page: `<name>-<hash>.<ext>`. */
function addAsset(assets: Map<string, Asset>, name: string, type: string, body: Buffer): string {
  const hash = createHash('sha256').update(body).digest('base64url').slice(0, 16);
  const dot = name.lastIndexOf('.');
  const path = `${GRAPHIQL_ASSETS}${name.slice(0, dot)}-${hash}${name.slice(dot)}`;
  const asset = processAssets.get(path) ?? { body, type, encoded: new Map() };
  processAssets.set(path, asset);
  assets.set(path, asset);
  return path;
}

/**
 * Every file the pages of this process have named, by its path (so by its content): the servers
 * of one process (a test file starts several) share each file and its compressed bodies.
 */
const processAssets = new Map<string, Asset>();

/** The body in `encoding`, compressed once (brotli at quality 5: 2.1 MB for the 9 MB). */
function encode(asset: Asset, encoding: 'br' | 'gzip'): Promise<Buffer> {
  let encoded = asset.encoded.get(encoding);
  if (!encoded) {
    encoded =
      encoding === 'br'
        ? compressBrotli(asset.body, {
            params: {
              [constants.BROTLI_PARAM_QUALITY]: 5,
              [constants.BROTLI_PARAM_SIZE_HINT]: asset.body.length,
            },
          })
        : compressGzip(asset.body, { level: 6 });
    asset.encoded.set(encoding, encoded);
  }
  return encoded;
}

function acceptedEncoding(header: string | string[] | undefined): 'br' | 'gzip' | undefined {
  const accepted = String(header ?? '')
    .split(',')
    .map((item) => item.trim().split(';'))
    .filter(([, q]) => q?.trim() !== 'q=0')
    .map(([name]) => name?.trim());
  if (accepted.includes('br')) return 'br';
  if (accepted.includes('gzip')) return 'gzip';
  return undefined;
}

/** A bundle rewritten by deferInlinedImports, and the scripts it moved out of it. */
export interface DeferredBundle {
  readonly js: string;
  /** How many inlined imports are built on first use instead of at load. */
  readonly deferred: number;
  /**
   * Scripts each holding a deferred module's code, loaded when it is first imported: the
   * page defines `agentGraphScript(index)` (a promise of the script at `scripts[index]`
   * having run); each script puts its module's factory at `agentGraphModules[index]`.
   */
  readonly scripts: readonly string[];
}

/**
 * GraphiQL imports some modules only when they are needed (`import()`: Prettier's parsers, for
 * the prettify button and for formatting JSON), but yoga's one-file bundle inlines each such
 * import as `Promise.resolve().then(() => ns)` over a namespace built when the bundle loads,
 * so every open evaluated them: Prettier's Babel parser alone was about a third of the
 * bundle's evaluation in Chromium (bench/graphiql-open.ts). A namespace built from a wrapped
 * CommonJS module (`var m = load(); const ns = toNamespace({ default: interop(m) }, [m]);`)
 * and used nowhere but in such imports is built on its first import instead. When that
 * module's code is a self-contained factory (`function load(){return f||(f=1,(function(n,e){
 * ...})(mod)),mod.exports}`, as Prettier's UMD parsers are), it moves to a script of its own,
 * fetched on the first import, so a first open neither downloads nor parses it (370 KB of the
 * 5.3 MB). The bundle has no option for this, hence the rewrite; a bundle without the pattern
 * is served unchanged.
 */
function deferWrappedModules(js: string): DeferredBundle {
  const wrapped =
    /var ([\w$]+)=([\w$]+)\(\);const ([\w$]+)=([\w$]+)\(\{__proto__:null,default:([\w$]+)\(\1\)\},\[\1\]\);/g;
  let out = js;
  const importing = new Map<string, string>();
  const scripts: string[] = [];
  for (const [whole, module, load, namespace, toNamespace, interop] of js.matchAll(wrapped)) {
    if (!(module && load && namespace && toNamespace && interop)) continue;
    const imported = `Promise.resolve().then(()=>${namespace})`;
    const uses = (identifier: string) =>
      js.match(new RegExp(`(?<![\\w$.])${escapeName(identifier)}(?![\\w$])`, 'g'))?.length;
    // Only these lines and the inlined imports name them: nothing reads them at load.
    if (uses(module) !== 3 || uses(namespace) !== js.split(imported).length) continue;
    importing.set(namespace, `Promise.resolve().then(()=>${namespace}())`);
    const factory = selfContainedFactory(out, load);
    if (factory) {
      const index = scripts.length;
      scripts.push(`(self.agentGraphModules??=[])[${index}]=${factory};\n`);
      out = out.replace(factory, () => `agentGraphModules[${index}]`);
      importing.set(namespace, `agentGraphScript(${index}).then(()=>${namespace}())`);
    }
    out = out.replace(
      whole,
      () =>
        `var ${module},${namespace}$built;const ${namespace}=()=>${namespace}$built??=(${module}=${load}(),${toNamespace}({__proto__:null,default:${interop}(${module})},[${module}]));`,
    );
  }
  return { js: replaceImports(out, importing), deferred: importing.size, scripts };
}

/** Each inlined `import()` of a namespace in `importing` replaced by its text there (one pass). */
const replaceImports = (js: string, importing: ReadonlyMap<string, string>) =>
  importing.size === 0
    ? js
    : js.replace(
        /Promise\.resolve\(\)\.then\(\(\)=>([\w$]+)\)/g,
        (inlined, name: string) => importing.get(name) ?? inlined,
      );

/**
 * The factory that `function <load>(){return f||(f=1,(function(n,e){…})(mod)),mod.exports}`
 * runs, as it stands in `js`, when it is one expression on its own: it compiles alone, and
 * test/graphiql-bundle.test.ts runs each one alone, so that it names nothing of the bundle.
 */
function selfContainedFactory(js: string, load: string): string | undefined {
  const head = new RegExp(
    `function ${escapeName(load)}\\(\\)\\{return ([\\w$]+)\\|\\|\\(\\1=1,(?=\\(function\\()`,
  ).exec(js);
  if (!head) return undefined;
  const start = head.index + head[0].length;
  const tail = /\}\)\(([\w$]+)\)\),\1\.exports\}/.exec(js.slice(start));
  if (!tail) return undefined;
  const code = js.slice(start, start + tail.index + 2);
  try {
    new Script(`(${code})`);
  } catch {
    return undefined;
  }
  return code;
}

const escapeName = (identifier: string) => identifier.replace(/\$/g, '\\$');

/**
 * The bundle's tokens, as far as deferModules needs them: where each starts and ends, whether
 * it is a name, a punctuator or a literal (strings, templates, numbers, regular expressions),
 * how many brackets enclose it, and what the innermost brace is (a block, an object literal or
 * pattern, a class body), so that a property key or a method name is not taken for a use of a
 * variable. Regular expressions are told from divisions by the token before, as parsers do; a
 * text that does not tokenize is served unchanged (tokenize throws).
 */
interface Tokens {
  readonly count: number;
  readonly start: Int32Array;
  readonly end: Int32Array;
  readonly kind: Uint8Array;
  readonly depth: Int32Array;
  readonly brace: Uint8Array;
  /** How many function bodies enclose the token. */
  readonly functions: Int32Array;
}

const NAME = 0;
const PUNCTUATOR = 1;
const LITERAL = 2;
const BLOCK = 1;
const OBJECT = 2;
const CLASS = 3;
const FUNCTION = 4;
/** After these words an expression starts: a `/` is a regular expression, a `{` an object. */
const BEFORE_EXPRESSION = new Set([
  'return',
  'typeof',
  'instanceof',
  'in',
  'of',
  'new',
  'delete',
  'void',
  'throw',
  'case',
  'do',
  'else',
  'yield',
  'await',
  'extends',
  'let',
  'const',
  'var',
]);
/** A `{` after the `)` of these is a block, after any other `)` a function's body. */
const CONDITION = new Set(['if', 'while', 'for', 'with', 'catch', 'switch']);

const isNameCode = (c: number) =>
  (c >= 97 && c <= 122) ||
  (c >= 65 && c <= 90) ||
  (c >= 48 && c <= 57) ||
  c === 95 ||
  c === 36 ||
  c > 127;

function tokenize(js: string): Tokens {
  // About one token per three characters of minified code.
  let capacity = Math.max(1024, Math.ceil(js.length / 2));
  let start = new Int32Array(capacity);
  let end = new Int32Array(capacity);
  let kind = new Uint8Array(capacity);
  let depth = new Int32Array(capacity);
  let brace = new Uint8Array(capacity);
  let functions = new Int32Array(capacity);
  let count = 0;
  let openFunctions = 0;
  // Open brackets: the character, or 0 for a template's `${`; for braces, their kind.
  const open: number[] = [];
  const braces: number[] = [];
  // Per open `(`: whether it holds an if/while/for/with condition (a `/` after its `)` starts a
  // regular expression).
  const conditions: boolean[] = [];
  let afterCondition = false;
  const word = (k: number) => (k >= 0 && k < count ? js.slice(start[k], end[k]) : '');
  const push = (type: number, from: number, to: number) => {
    if (count === capacity) {
      capacity *= 2;
      const grow = <T extends Int32Array | Uint8Array>(old: T, next: T) => {
        next.set(old);
        return next;
      };
      start = grow(start, new Int32Array(capacity));
      end = grow(end, new Int32Array(capacity));
      kind = grow(kind, new Uint8Array(capacity));
      depth = grow(depth, new Int32Array(capacity));
      brace = grow(brace, new Uint8Array(capacity));
      functions = grow(functions, new Int32Array(capacity));
    }
    start[count] = from;
    end[count] = to;
    kind[count] = type;
    depth[count] = open.length;
    brace[count] = braces.at(-1) ?? BLOCK;
    functions[count] = openFunctions;
    count++;
  };
  const regexAllowed = () => {
    const last = count - 1;
    if (last < 0) return true;
    if (kind[last] === LITERAL) return false;
    const text = word(last);
    if (kind[last] === NAME) return BEFORE_EXPRESSION.has(text);
    if (text === ')') return afterCondition;
    return text !== ']' && text !== '++' && text !== '--';
  };
  const braceKind = () => {
    const last = count - 1;
    const text = word(last);
    if (text === 'class') return CLASS;
    if (kind[last] === NAME) {
      // class X{, class X extends Y{, class extends a.b.Y{
      let before = last - 1;
      while (word(before) === '.' && kind[before - 1] === NAME) before -= 2;
      if (word(last - 1) === 'class' || word(before) === 'extends') return CLASS;
    }
    if (kind[last] === NAME)
      return BEFORE_EXPRESSION.has(text) && text !== 'else' && text !== 'do' ? OBJECT : BLOCK;
    if (text === '=>' || (text === ')' && !afterCondition)) return FUNCTION;
    return last >= 0 && text !== ')' && text !== ';' && text !== '}' ? OBJECT : BLOCK;
  };
  // From inside a template to its end (the token ends there) or to a `${` (an expression opens).
  const template = (from: number) => {
    for (let i = from; i < js.length; i++) {
      const c = js.charCodeAt(i);
      if (c === 92) i++;
      else if (c === 96) return i + 1;
      else if (c === 36 && js.charCodeAt(i + 1) === 123) {
        open.push(0);
        braces.push(BLOCK);
        return i + 2;
      }
    }
    throw new Error('unterminated template');
  };
  let i = 0;
  while (i < js.length) {
    const c = js.charCodeAt(i);
    const from = i;
    if (c === 32 || c === 10 || c === 13 || c === 9) i++;
    else if (isNameCode(c) && !(c >= 48 && c <= 57)) {
      while (isNameCode(js.charCodeAt(++i)));
      push(NAME, from, i);
    } else if (
      (c >= 48 && c <= 57) ||
      (c === 46 && js.charCodeAt(i + 1) >= 48 && js.charCodeAt(i + 1) <= 57)
    ) {
      for (i++; ; i++) {
        const d = js.charCodeAt(i);
        const exponent =
          (d === 43 || d === 45) &&
          (js.charCodeAt(i - 1) | 32) === 101 &&
          !/^0x/i.test(js.slice(from, from + 2));
        if (!(isNameCode(d) || d === 46 || exponent)) break;
      }
      push(LITERAL, from, i);
    } else if (c === 34 || c === 39) {
      for (i++; js.charCodeAt(i) !== c; i++) {
        if (i >= js.length) throw new Error('unterminated string');
        if (js.charCodeAt(i) === 92) i++;
      }
      push(LITERAL, from, ++i);
    } else if (c === 96) {
      i = template(i + 1);
      push(LITERAL, from, i);
    } else if (c === 47 && js.charCodeAt(i + 1) === 47) {
      const line = js.indexOf('\n', i);
      i = line < 0 ? js.length : line;
    } else if (c === 47 && js.charCodeAt(i + 1) === 42) {
      const close = js.indexOf('*/', i + 2);
      if (close < 0) throw new Error('unterminated comment');
      i = close + 2;
    } else if (c === 47 && regexAllowed()) {
      for (let inClass = false; ; ) {
        const d = js.charCodeAt(++i);
        if (i >= js.length || d === 10) throw new Error('unterminated regular expression');
        if (d === 92) i++;
        else if (d === 91) inClass = true;
        else if (d === 93) inClass = false;
        else if (d === 47 && !inClass) break;
      }
      while (isNameCode(js.charCodeAt(++i)));
      push(LITERAL, from, i);
    } else if (c === 40 || c === 91 || c === 123) {
      if (c === 40)
        conditions.push(
          kind[count - 1] === NAME &&
            (end[count - 1] ?? 0) - (start[count - 1] ?? 0) <= 6 &&
            CONDITION.has(word(count - 1)),
        );
      const type = c === 123 ? braceKind() : 0;
      push(PUNCTUATOR, from, ++i);
      open.push(c);
      braces.push(type);
      if (type === FUNCTION) openFunctions++;
    } else if (c === 41 || c === 93 || c === 125) {
      const opened = open.pop();
      if (braces.pop() === FUNCTION) openFunctions--;
      if (opened === undefined) throw new Error('unbalanced brackets');
      if (opened === 0) {
        // The end of a template's `${…}`: the template goes on, as a literal.
        i = template(i + 1);
        push(LITERAL, from, i);
      } else {
        if (c === 41) afterCondition = conditions.pop() ?? false;
        push(PUNCTUATOR, from, ++i);
      }
    } else {
      // Only these longer punctuators matter here; the rest are read a character at a time.
      const d = js.charCodeAt(i + 1);
      if (c === 46 && d === 46 && js.charCodeAt(i + 2) === 46) i += 3;
      else i += (c === 61 && d === 62) || ((c === 43 || c === 45) && d === c) ? 2 : 1;
      push(PUNCTUATOR, from, i);
    }
  }
  if (open.length) throw new Error('unbalanced brackets');
  return { count, start, end, kind, depth, brace, functions };
}

/** A module under this size stays in the bundle: its own request would cost more than it saves. */
const SCRIPT_MIN_LENGTH = 16_000;

/** The top-level scope of a bundle, as deferModules and splitForParsing read it. */
interface Scope {
  word(k: number): string;
  is(k: number, text: string): boolean;
  /** Where token `k` starts in the text (its length past the last token). */
  at(k: number): number;
  tokenAt(position: number): number;
  readonly level: number;
  /** The first token of each statement, then the scope's end. */
  readonly statements: readonly number[];
  statementOf(k: number): number;
  /** The statement that declares each top-level name; -1 for a parameter or a name declared twice. */
  readonly declaredIn: ReadonlyMap<string, number>;
  /** The tokens that declare a top-level name (its binding, not a use). */
  readonly declaring: Uint8Array;
  /** Statements with a `var` in a nested block: they declare names this does not read. */
  readonly opaque: ReadonlySet<number>;
  /** The tokens that use each top-level name, in order; isUse marks them. */
  readonly uses: ReadonlyMap<string, readonly number[]>;
  readonly isUse: Uint8Array;
}

/** The scope that holds the token at `position`: its statements, declarations and uses. */
function readScope(js: string, tokens: Tokens, position: number): Scope {
  const { count, start, end, kind, depth, brace, functions } = tokens;
  const word = (k: number) => (k >= 0 && k < count ? js.slice(start[k], end[k]) : '');
  const is = (k: number, text: string) =>
    (end[k] ?? 0) - (start[k] ?? 0) === text.length && js.startsWith(text, start[k]);
  const at = (k: number) => start[k] ?? js.length;
  const tokenAt = (position: number) => {
    let low = 0;
    let high = count;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (at(middle) < position) low = middle + 1;
      else high = middle;
    }
    return low;
  };
  // The scope that holds the anchor: its statements, as their first tokens.
  const anchor = tokenAt(position);
  const level = depth[anchor] ?? 0;
  let from = anchor;
  while (from > 0 && (depth[from - 1] ?? 0) >= level) from--;
  let to = anchor;
  while (to < count && (depth[to] ?? 0) >= level) to++;
  const statements = [from];
  const continuing = new Set(['else', 'catch', 'finally', 'while', 'in', 'instanceof', 'of']);
  for (let k = from; k < to - 1; k++) {
    if (depth[k] !== level || kind[k] !== PUNCTUATOR) continue;
    // After `;`, or after a `}` followed by a word that begins a statement (`function f(){}g()`);
    // a boundary missed only joins two statements into one.
    if (is(k, ';') || (is(k, '}') && kind[k + 1] === NAME && !continuing.has(word(k + 1))))
      statements.push(k + 1);
  }
  statements.push(to);
  const last = statements.length - 1;
  const statementOf = (k: number) => {
    let low = 0;
    let high = last;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if ((statements[middle] ?? 0) <= k) low = middle;
      else high = middle - 1;
    }
    return low;
  };
  // The statement that declares each top-level name; -1 for the scope's parameters and for a
  // name declared twice. A statement with a `var` in a nested block declares names this does
  // not read: it is never moved.
  const declaredIn = new Map<string, number>();
  const declaring = new Uint8Array(count);
  const declare = (name: string, statement: number, k = -1) => {
    if (k >= 0) declaring[k] = 1;
    declaredIn.set(
      name,
      declaredIn.has(name) && declaredIn.get(name) !== statement ? -1 : statement,
    );
  };
  for (let k = from - 2; k > 0 && word(k) !== '('; k--) if (kind[k] === NAME) declare(word(k), -1);
  const opaque = new Set<number>();
  for (let s = 0; s < last; s++) {
    const head = statements[s] ?? 0;
    const next = statements[s + 1] ?? 0;
    let k = word(head) === 'async' ? head + 1 : head;
    const keyword = word(k);
    if (keyword === 'function' || keyword === 'class') {
      if (word(++k) === '*') k++;
      if (kind[k] === NAME && word(k) !== 'extends') declare(word(k), s, k);
    } else if (keyword === 'const' || keyword === 'let' || keyword === 'var') {
      // Each declarator's name, or the bindings of its pattern (`const{a:b,c}=…`, `let[d]=…`).
      let expectName = true;
      let pattern = false;
      for (k++; k < next; k++) {
        const text = word(k);
        if (depth[k] === level) {
          if (expectName && kind[k] === NAME) declare(text, s, k);
          pattern = expectName && (text === '{' || text === '[');
          expectName = text === ',';
        } else if (pattern && depth[k] === level + 1 && kind[k] === NAME) {
          if (/^[,}\]=]$/.test(word(k + 1)) && word(k - 1) !== '=') declare(text, s, k);
        }
      }
    }
    for (k = head; k < next; k++)
      if (
        kind[k] === NAME &&
        depth[k] !== level &&
        functions[k] === functions[head] &&
        is(k, 'var')
      )
        opaque.add(s);
  }
  // Where each top-level name is used: a name that is not a property (`a.name`), an object's key
  // or method (`{name:…}`, `{name(){…}}`), or a class's member.
  const uses = new Map<string, number[]>();
  const isUse = new Uint8Array(count);
  const methodName = (k: number) => {
    if (!is(k + 1, '(')) return false;
    let close = k + 2;
    while (close < count && depth[close] !== depth[k + 1]) close++;
    return is(close + 1, '{');
  };
  const keywordBefore = /^(static|async|get|set)$/;
  for (let k = from; k < to; k++) {
    if (kind[k] !== NAME || is(k - 1, '.')) continue;
    const name = word(k);
    if (!declaredIn.has(name)) continue;
    const inObject = brace[k] === OBJECT && (is(k - 1, '{') || is(k - 1, ','));
    const inClass =
      brace[k] === CLASS && (/^[{};*]$/.test(word(k - 1)) || keywordBefore.test(word(k - 1)));
    if (inObject && (is(k + 1, ':') || methodName(k))) continue;
    if (inClass && (is(k + 1, '=') || is(k + 1, ';') || is(k + 1, '}') || methodName(k))) continue;
    if (keywordBefore.test(name) && (kind[k + 1] === NAME || is(k + 1, '['))) continue;
    isUse[k] = 1;
    const list = uses.get(name);
    if (list) list.push(k);
    else uses.set(name, [k]);
  }
  return {
    word,
    is,
    at,
    tokenAt,
    level,
    statements,
    statementOf,
    declaredIn,
    declaring,
    opaque,
    uses,
    isUse,
  };
}

/**
 * The ES modules that the bundle imports only with inlined `import()`s, moved to scripts of their
 * own, fetched on their first import (numbered from `firstIndex`). Rollup hoists a module's
 * top-level statements into the bundle's scope, in one run that ends with its namespace object
 * (`const ns=Object.freeze(Object.defineProperty({__proto__:null,…},Symbol.toStringTag,…));`), so
 * such a module is the shortest run of top-level statements before its namespace that is
 * closed: the names it declares are used only inside it, and the top-level names it uses are its
 * own (everything else it names is a global). Such a run gives the same namespace when it runs
 * later, elsewhere: in a script of its own, as a function that returns the namespace.
 */
function deferModules(js: string, firstIndex: number): DeferredBundle {
  const unchanged = { js, deferred: 0, scripts: [] };
  const namespaces = [
    ...js.matchAll(/const ([\w$]+)=Object\.freeze\(Object\.defineProperty\(\{__proto__:null,/g),
  ].filter(([, name]) => name && js.includes(`Promise.resolve().then(()=>${name})`));
  if (namespaces.length === 0) return unchanged;
  let tokens: Tokens;
  try {
    tokens = tokenize(js);
  } catch {
    return unchanged;
  }
  const { word, at, tokenAt, level, statements, statementOf, declaredIn, opaque, uses, isUse } =
    readScope(js, tokens, namespaces[0]?.index ?? 0);
  const { depth } = tokens;
  const to = statements.at(-1) ?? 0;
  let out = '';
  let copied = 0;
  const scripts: string[] = [];
  const moved = new Map<string, number>();
  for (const match of namespaces) {
    const name = match[1] ?? '';
    const declaration = tokenAt(match.index);
    const statement = statementOf(declaration);
    const end = statements[statement + 1] ?? to;
    const imported = `Promise.resolve().then(()=>${name})`;
    // Used by its declaration and the inlined imports only; declared alone (`const ns=…;`).
    if ((uses.get(name)?.length ?? 0) !== js.split(imported).length) continue;
    if (statements[statement] !== declaration || word(end - 1) !== ';') continue;
    let alone = true;
    for (let k = declaration; k < end; k++)
      if (depth[k] === level && word(k) === ',') alone = false;
    if (!alone) continue;
    let earliestUse = Number.POSITIVE_INFINITY;
    let latestUse = 0;
    // The names the run must declare: those its namespace exports, then those it uses.
    const needs = new Set<string>();
    for (let k = declaration + 2; k < end; k++) if (isUse[k]) needs.add(word(k));
    for (let s = statement - 1; s >= 0 && at(statements[s] ?? 0) >= copied; s--) {
      if (opaque.has(s)) break;
      for (let k = statements[s] ?? 0; k < (statements[s + 1] ?? 0); k++) {
        if (!isUse[k]) continue;
        const used = word(k);
        if (declaredIn.get(used) !== s) needs.add(used);
        else {
          const list = uses.get(used) ?? [];
          earliestUse = Math.min(earliestUse, list[0] ?? 0);
          latestUse = Math.max(latestUse, list.at(-1) ?? 0);
        }
      }
      if (latestUse >= end) break;
      if (earliestUse < (statements[s] ?? 0)) continue;
      const own = (used: string) => {
        const declaration = declaredIn.get(used) ?? -1;
        return declaration >= s && declaration < statement;
      };
      if (![...needs].every(own)) continue;
      const body = js.slice(at(statements[s] ?? 0), at(declaration));
      if (body.length < SCRIPT_MIN_LENGTH) break;
      const index = firstIndex + scripts.length;
      const expression = js.slice(at(declaration + 3), at(end - 1));
      scripts.push(
        `"use strict";(self.agentGraphModules??=[])[${index}]=()=>{${body}return ${expression}};\n`,
      );
      out += `${js.slice(copied, at(statements[s] ?? 0))}let ${name}$built;const ${name}=()=>${name}$built??=agentGraphModules[${index}]();`;
      copied = at(end);
      moved.set(name, index);
      break;
    }
  }
  if (scripts.length === 0) return unchanged;
  out += js.slice(copied);
  // Each import of a moved module loads its script, then builds its namespace once.
  const importing = new Map(
    [...moved].map(([name, index]) => [name, `agentGraphScript(${index}).then(()=>${name}())`]),
  );
  return { js: replaceImports(out, importing), deferred: scripts.length, scripts };
}

/**
 * The bundle with what a first open does not need moved out of its load: the CommonJS modules
 * (deferWrappedModules), then the ES modules (deferModules) that are only imported with `import()`.
 */
export function deferInlinedImports(js: string): DeferredBundle {
  const wrapped = deferWrappedModules(js);
  const modules = deferModules(wrapped.js, wrapped.scripts.length);
  return {
    js: modules.js,
    deferred: wrapped.deferred + modules.deferred,
    scripts: [...wrapped.scripts, ...modules.scripts],
  };
}

/** A bundle cut for parsing on several threads: the pieces the page loads before it. */
export interface SplitBundle {
  readonly js: string;
  /** Classic scripts, run in this order before `js`: with it, the bundle's top level. */
  readonly pieces: readonly string[];
}

/** A piece under this size is not worth a request of its own. */
const PIECE_MIN_LENGTH = 200_000;

/** Rollup's UMD wrapper, as yoga's bundle has it: the global it fills, and the factory's body. */
const UMD =
  /^\(function\(([\w$]+),([\w$]+)\)\{[^{}]*?\2\(\1\.([\w$]+)=\{\}\)\)\}\)\(this,\(function\(([\w$]+)\)\{"use strict";/;

/**
 * Top-level names that could not be told from a keyword where they stand (`for(a of b)`, `async
 * (a)=>…`); `get` and `set` can, as readScope reads them.
 */
const CONTEXTUAL = new Set(['of', 'async']);

/**
 * Chromium parses a script off the main thread while it downloads, but one script on one thread,
 * and runs none of it before that parse ends: a first open waited about 0.7 s on the 4.6 MB
 * bundle's parse, its main thread idle (bench/graphiql-open.ts --trace). So the UMD factory's
 * body becomes the top level of `count` classic scripts of about equal length: each is parsed
 * and compiled off the main thread as it arrives, side by side, and each runs as soon as the
 * ones before it have, while the next are still being parsed. Top-level names of
 * classic scripts share one scope, the global one, as they shared the factory's: each gets a
 * suffix no word of the bundle has, so that none meets a name of the window or of the page's
 * other scripts (a shorthand property keeps its key: `{a}` becomes `{a:a$}`). A cut falls only
 * between statements where no `function` or `var` is used above its declaration across it (a
 * later script's are not hoisted into an earlier one); a `let`, `const` or `class` used so is
 * used inside a function that runs later, as it would otherwise fail already. What the split
 * cannot keep: a callback that an earlier piece schedules while it loads (a promise's, a timer's)
 * runs before the later pieces have; the browser tests open the page and run queries in it. A
 * bundle without the wrapper is served unchanged.
 */
export function splitForParsing(js: string, count = 2): SplitBundle {
  const unchanged = { js, pieces: [] };
  const umd = UMD.exec(js);
  const tail = /\}\)\);?\s*$/.exec(js);
  if (!(umd && tail)) return unchanged;
  const [head, , , global, exports] = umd;
  let tokens: Tokens;
  try {
    tokens = tokenize(js);
  } catch {
    return unchanged;
  }
  const { kind, brace } = tokens;
  const scope = readScope(js, tokens, head.length);
  const { word, is, at, statements, statementOf, declaredIn, declaring, uses, isUse } = scope;
  const last = statements.length - 1;
  const names = [...declaredIn.keys()];
  if (!exports || names.some((name) => CONTEXTUAL.has(name))) return unchanged;
  // The shortest suffix that makes no top-level name a word of the bundle.
  const words = new Set(js.match(/[A-Za-z_$][\w$]*/g));
  const suffix = ['$', '$$', '_$', '$_', '$0'].find((end) =>
    names.every((name) => !words.has(name + end)),
  );
  if (!suffix) return unchanged;
  // Where a cut may not fall: a `function` or `var` used above its declaration.
  const blocked = new Int32Array(last + 2);
  for (const [name, list] of uses) {
    const declared = declaredIn.get(name) ?? -1;
    const declaration = list.find((k) => declaring[k]);
    const hoisted =
      declaration !== undefined &&
      (is(declaration - 1, 'function') ||
        is(declaration - 2, 'function') ||
        word(statements[declared] ?? 0) === 'var');
    const earliest = statementOf(list[0] ?? 0);
    if (!hoisted || earliest >= declared) continue;
    blocked[Math.max(earliest, 0) + 1] = (blocked[Math.max(earliest, 0) + 1] ?? 0) + 1;
    blocked[declared + 1] = (blocked[declared + 1] ?? 0) - 1;
  }
  for (let b = 1; b <= last; b++) blocked[b] = (blocked[b] ?? 0) + (blocked[b - 1] ?? 0);
  // The cuts nearest to equal lengths.
  const begin = at(statements[0] ?? 0);
  const end = at(statements[last] ?? 0);
  const cuts = [0];
  for (let piece = 1; piece < count; piece++) {
    const target = begin + ((end - begin) * piece) / count;
    let best = -1;
    const distance = (b: number) => Math.abs(at(statements[b] ?? 0) - target);
    for (let b = 1; b < last; b++)
      if (blocked[b] === 0 && (best < 0 || distance(b) < distance(best))) best = b;
    const previous = cuts.at(-1) ?? 0;
    if (
      best > previous &&
      at(statements[best] ?? 0) - at(statements[previous] ?? 0) >= PIECE_MIN_LENGTH &&
      end - at(statements[best] ?? 0) >= PIECE_MIN_LENGTH
    )
      cuts.push(best);
  }
  if (cuts.length < 2) return unchanged;
  cuts.push(last);
  // Each token's innermost open bracket: a shorthand property stands directly in an object.
  const enclosing = new Int32Array(tokens.count);
  const open: number[] = [];
  for (let k = 0; k < tokens.count; k++) {
    enclosing[k] = open.at(-1) ?? -1;
    if (kind[k] !== PUNCTUATOR) continue;
    const c = js.charCodeAt(at(k));
    if (c === 40 || c === 91 || c === 123) open.push(k);
    else if (c === 41 || c === 93 || c === 125) open.pop();
  }
  // Each top-level name renamed wherever it is a name (not a property, key or member).
  const rename = (from: number, to: number) => {
    let out = '';
    let copied = at(from);
    for (let k = from; k < to; k++) {
      if (!isUse[k] || is(k - 1, '#')) continue;
      const name = word(k);
      // A method after its modifiers (`{get a(){}}`, `{*a(){}}`), not `{b:c*a()}`.
      const member =
        (brace[k] === OBJECT || brace[k] === CLASS) &&
        /^(get|set|async|static|\*)$/.test(word(k - 1)) &&
        /^([{},;]|async|static)$/.test(word(k - 2)) &&
        is(k + 1, '(');
      if (member) continue;
      const shorthand =
        brace[k] === OBJECT &&
        is(enclosing[k] ?? -1, '{') &&
        (is(k - 1, '{') || is(k - 1, ',')) &&
        (is(k + 1, ',') || is(k + 1, '}') || is(k + 1, '='));
      out += js.slice(copied, at(k)) + (shorthand ? `${name}:` : '') + name + suffix;
      copied = tokens.end[k] ?? at(k);
    }
    return out + js.slice(copied, at(to));
  };
  const pieces = cuts.slice(0, -1).map((cut, index) => {
    const text = rename(statements[cut] ?? 0, statements[cuts[index + 1] ?? last] ?? 0);
    const start = index === 0 ? `const ${exports}${suffix}=self.${global}={};` : '';
    return `"use strict";${start}${text}\n`;
  });
  return { js: pieces.pop() ?? js, pieces };
}

const escapeHtml = (text: string) => text.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);

/** The files that depend on the installed bundle alone, as buildBundle made them. */
interface BundleFiles {
  readonly assets: ReadonlyMap<string, Asset>;
  readonly icon: string;
  readonly css: readonly string[];
  readonly workers: Readonly<Record<'editorWorkerService' | 'json' | 'graphql', string>>;
  readonly own: string;
  readonly graphiql: string;
  readonly scripts: readonly string[];
  /** The bundle's pieces (splitForParsing), loaded before it. */
  readonly pieces: readonly string[];
}

/** Once per process, on the first visit to any server's page: the bundle's rewrite and files. */
let bundleFiles: Promise<BundleFiles> | undefined;

async function buildBundle(): Promise<BundleFiles> {
  const bundle = await import('@graphql-yoga/render-graphiql/graphiql');
  const assets = new Map<string, Asset>();
  const js = (name: string, text: string) =>
    addAsset(assets, name, 'text/javascript; charset=utf-8', Buffer.from(text));
  const [, iconType = 'image/x-icon', iconData = ''] =
    /^data:([^;,]+);base64,(.*)$/s.exec(bundle.favicon) ?? [];
  const icon = addAsset(
    assets,
    `favicon.${iconType.includes('png') ? 'png' : 'ico'}`,
    iconType,
    Buffer.from(iconData, 'base64'),
  );
  const css = [
    addAsset(assets, 'graphiql.css', 'text/css; charset=utf-8', Buffer.from(bundle.css)),
    addAsset(assets, 'agent-graph.css', 'text/css; charset=utf-8', Buffer.from(STYLES)),
  ];
  const workers = {
    editorWorkerService: js('editor.worker.js', bundle.editorWorkerService),
    json: js('json.worker.js', bundle.jsonWorker),
    graphql: js('graphql.worker.js', bundle.graphqlWorker),
  };
  const own = js('agent-graph.js', `${URL_MUTATION_GUARD}\n${STATEMENTS_PANEL}\n${START}\n`);
  const deferred = deferInlinedImports(bundle.js);
  const split = splitForParsing(deferred.js);
  const graphiql = js('graphiql.js', split.js);
  const scripts = deferred.scripts.map((text, index) => js(`deferred-${index}.js`, text));
  const pieces = split.pieces.map((text, index) => js(`piece-${index}.js`, text));
  return { assets, icon, css, workers, own, graphiql, scripts, pieces };
}

async function buildPage(
  options: GraphiQLOptions,
  consolePath: string,
  schema: GraphQLSchema | undefined,
): Promise<Page> {
  bundleFiles ??= buildBundle();
  const { icon, css, workers, own, graphiql, scripts, pieces, ...files } = await bundleFiles;
  const assets = new Map(files.assets);
  // The schema as GraphiQL's introspection query returns it (180 KB of JSON), but as a file
  // named by its content: a second visit finds it in the browser's cache instead of asking.
  const introspection =
    schema &&
    addAsset(
      assets,
      'schema.json',
      'application/json',
      Buffer.from(
        JSON.stringify(
          introspectionFromSchema(schema, {
            descriptions: true,
            specifiedByUrl: true,
            directiveIsRepeatable: true,
            schemaDescription: true,
            inputValueDeprecation: true,
          }),
        ),
      ),
    );
  // Inert data, not a script: `<` escaped so that no text in it can end the element.
  const data = JSON.stringify({ workers, scripts, options, schema: introspection }).replace(
    /</g,
    '\\u003c',
  );
  const title = escapeHtml(options.title ?? 'GraphiQL');
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<link rel="icon" href="${icon}">
${css.map((href) => `<link rel="stylesheet" href="${href}">`).join('\n')}
</head>
<body id="body" class="no-focus-outline">
<nav class="ag-bar" aria-label="agent-graph"><strong>${title}</strong><a href="/">Home</a><a href="${consolePath}">Operators' console</a></nav>
<noscript>GraphiQL needs JavaScript.</noscript>
<div id="root"></div>
<details id="ag-statements" hidden></details>
<script type="application/json" id="ag-graphiql">${data}</script>
<script src="${own}"></script>
${pieces.map((src) => `<script src="${src}"></script>\n`).join('')}<script src="${graphiql}"></script>
</body>
</html>
`;
  // Monaco adds <style> elements and style attributes at run time.
  const csp = [
    "default-src 'none'",
    "script-src 'self'",
    "worker-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "font-src 'self' data:",
    "img-src 'self' data:",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
  return { html, csp, assets };
}

export interface GraphiqlPage {
  /** Yoga's renderGraphiQL, with the schema yoga serves: built on the first visit, once. */
  render(options: GraphiQLOptions, schema: GraphQLSchema): Promise<string>;
  /** The page's headers: its CSP, no framing, no sniffing, no referrer. */
  readonly plugin: Plugin;
  /** Answers a GET/HEAD of one of the page's files; false when the path is not one. */
  serveAsset(req: IncomingMessage, res: ServerResponse): boolean;
}

/**
 * `consolePath`: where the operators' console is, linked from the page's bar; `introspection`:
 * whether the page may carry the schema (when off, GraphiQL asks for it, and is refused).
 */
export function graphiqlPage(consolePath: string, introspection: boolean): GraphiqlPage {
  let page: Promise<Page> | undefined;
  let built: Page | undefined;
  const headers = (csp: string) => ({
    'content-security-policy': csp,
    'x-frame-options': 'DENY',
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
  });
  return {
    async render(options, schema) {
      page ??= buildPage(options, consolePath, introspection ? schema : undefined).then(
        (done) => (built = done),
      );
      return (await page).html;
    },
    plugin: {
      // Not an async function: every other response (each GraphQL answer) passes here, and
      // a promise from this hook would make yoga wait a turn of the event loop's microtasks,
      // with promises of its own, before writing it.
      onResponse({ request, response }) {
        if (!response.headers.get('content-type')?.startsWith('text/html') || !page) return;
        return page.then(({ csp, assets }) => {
          for (const [name, value] of Object.entries(headers(csp))) {
            response.headers.set(name, value);
          }
          // The page changes only with the server; its files are named by their content.
          response.headers.set('cache-control', 'no-cache');
          // The visitor's files are about to be asked for: compress them meanwhile.
          const encoding = acceptedEncoding(request.headers.get('accept-encoding') ?? undefined);
          if (encoding) for (const asset of assets.values()) void encode(asset, encoding);
        });
      },
    },
    serveAsset(req, res) {
      const path = (req.url ?? '/').split('?')[0] ?? '/';
      if (!path.startsWith(GRAPHIQL_ASSETS)) return false;
      const asset =
        req.method === 'GET' || req.method === 'HEAD' ? built?.assets.get(path) : undefined;
      const base = { ...headers(built?.csp ?? "default-src 'none'"), vary: 'accept-encoding' };
      if (!asset) {
        res.writeHead(404, { ...base, 'content-type': 'text/plain', 'cache-control': 'no-store' });
        res.end('not found');
        return true;
      }
      const encoding = acceptedEncoding(req.headers['accept-encoding']);
      const send = (body: Buffer) => {
        res.writeHead(200, {
          ...base,
          'content-type': asset.type,
          'cache-control': IMMUTABLE,
          'content-length': String(body.length),
          ...(encoding ? { 'content-encoding': encoding } : {}),
        });
        res.end(req.method === 'HEAD' ? undefined : body);
      };
      if (!encoding) send(asset.body);
      else
        encode(asset, encoding).then(send, () => {
          res.writeHead(500, { ...base, 'cache-control': 'no-store' });
          res.end();
        });
      return true;
    },
  };
}
