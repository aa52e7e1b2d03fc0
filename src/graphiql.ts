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
  assets.set(path, { body, type, encoded: new Map() });
  return path;
}

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
export function deferInlinedImports(js: string): DeferredBundle {
  const wrapped =
    /var ([\w$]+)=([\w$]+)\(\);const ([\w$]+)=([\w$]+)\(\{__proto__:null,default:([\w$]+)\(\1\)\},\[\1\]\);/g;
  let out = js;
  let deferred = 0;
  const scripts: string[] = [];
  for (const [whole, module, load, namespace, toNamespace, interop] of js.matchAll(wrapped)) {
    if (!(module && load && namespace && toNamespace && interop)) continue;
    const imported = `Promise.resolve().then(()=>${namespace})`;
    const uses = (identifier: string) =>
      js.match(new RegExp(`(?<![\\w$.])${escapeName(identifier)}(?![\\w$])`, 'g'))?.length;
    // Only these lines and the inlined imports name them: nothing reads them at load.
    if (uses(module) !== 3 || uses(namespace) !== js.split(imported).length) continue;
    let importing = `Promise.resolve().then(()=>${namespace}())`;
    const factory = selfContainedFactory(out, load);
    if (factory) {
      const index = scripts.length;
      scripts.push(`(self.agentGraphModules??=[])[${index}]=${factory};\n`);
      out = out.replace(factory, () => `agentGraphModules[${index}]`);
      importing = `agentGraphScript(${index}).then(()=>${namespace}())`;
    }
    out = out
      .replace(
        whole,
        `var ${module},${namespace}$built;const ${namespace}=()=>${namespace}$built??=(${module}=${load}(),${toNamespace}({__proto__:null,default:${interop}(${module})},[${module}]));`,
      )
      .split(imported)
      .join(importing);
    deferred++;
  }
  return { js: out, deferred, scripts };
}

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

const escapeHtml = (text: string) => text.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);

async function buildPage(
  options: GraphiQLOptions,
  consolePath: string,
  schema: GraphQLSchema | undefined,
): Promise<Page> {
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
  const css = addAsset(assets, 'graphiql.css', 'text/css; charset=utf-8', Buffer.from(bundle.css));
  const ownCss = addAsset(
    assets,
    'agent-graph.css',
    'text/css; charset=utf-8',
    Buffer.from(STYLES),
  );
  const workers = {
    editorWorkerService: js('editor.worker.js', bundle.editorWorkerService),
    json: js('json.worker.js', bundle.jsonWorker),
    graphql: js('graphql.worker.js', bundle.graphqlWorker),
  };
  const own = js('agent-graph.js', `${URL_MUTATION_GUARD}\n${STATEMENTS_PANEL}\n${START}\n`);
  const deferred = deferInlinedImports(bundle.js);
  const graphiql = js('graphiql.js', deferred.js);
  const scripts = deferred.scripts.map((text, index) => js(`deferred-${index}.js`, text));
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
<link rel="stylesheet" href="${css}">
<link rel="stylesheet" href="${ownCss}">
</head>
<body id="body" class="no-focus-outline">
<nav class="ag-bar" aria-label="agent-graph"><strong>${title}</strong><a href="/">Home</a><a href="${consolePath}">Operators' console</a></nav>
<noscript>GraphiQL needs JavaScript.</noscript>
<div id="root"></div>
<details id="ag-statements" hidden></details>
<script type="application/json" id="ag-graphiql">${data}</script>
<script src="${own}"></script>
<script src="${graphiql}"></script>
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
      async onResponse({ request, response }) {
        if (!response.headers.get('content-type')?.startsWith('text/html') || !page) return;
        const { csp, assets } = await page;
        for (const [name, value] of Object.entries(headers(csp))) response.headers.set(name, value);
        // The page changes only with the server; its files are named by their content.
        response.headers.set('cache-control', 'no-cache');
        // The visitor's files are about to be asked for: compress them meanwhile.
        const encoding = acceptedEncoding(request.headers.get('accept-encoding') ?? undefined);
        if (encoding) for (const asset of assets.values()) void encode(asset, encoding);
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
