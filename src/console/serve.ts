import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { dirname, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MAX_PROMPT_BYTES } from '../db/sql/run-team.js';
import { MAX_INPUTS_BYTES } from '../model/call-contract.js';

// The console is a handful of static files plus the graphql-ws client, read once at start-up
// and served from memory: no bundler, no CDN, nothing fetched at run time. `npm run build`
// copies static/ next to the compiled module, so the same relative path works from src/ and dist/.

const STATIC = join(dirname(fileURLToPath(import.meta.url)), 'static');
const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
};

/** The console's trusted documents (src/console/documents.ts writes it; the server loads it). */
export const CONSOLE_MANIFEST = join(STATIC, 'persisted-documents.json');

interface Asset {
  readonly body: Buffer;
  readonly type: string;
  readonly etag: string;
  readonly cacheControl: string;
}

/** Where the page is served; /console/ is the same page. */
export const CONSOLE_PATH = '/console';

function asset(body: Buffer | string, file: string, cacheControl: string): Asset {
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  return {
    body: bytes,
    type: TYPES[extname(file)] ?? 'application/octet-stream',
    etag: `"${createHash('sha256').update(bytes).digest('base64url').slice(0, 27)}"`,
    cacheControl,
  };
}

/**
 * The graphql-ws browser client: dist/client.js and the chunks it imports, under a path that
 * names the installed version, so browsers may keep them for good.
 */
function graphqlWsClient(): { base: string; files: Map<string, Buffer> } {
  const require = createRequire(import.meta.url);
  const dist = dirname(require.resolve('graphql-ws'));
  const { version } = JSON.parse(readFileSync(join(dist, '..', 'package.json'), 'utf8')) as {
    version: string;
  };
  const files = new Map<string, Buffer>();
  const pending = ['client.js'];
  for (let file = pending.pop(); file; file = pending.pop()) {
    if (files.has(file)) continue;
    const body = readFileSync(join(dist, file));
    files.set(file, body);
    for (const match of body.toString('utf8').matchAll(/from\s*'\.\/([\w.-]+\.js)'/g)) {
      if (match[1]) pending.push(match[1]);
    }
  }
  return { base: `${CONSOLE_PATH}/vendor/graphql-ws@${version}/`, files };
}

export interface ConsoleAssets {
  /** Answers a GET/HEAD under /console; false when the path is not the console's. */
  serve(req: IncomingMessage, res: ServerResponse): boolean;
}

/**
 * The limits the console shows before they bite, as the server enforces them: its own
 * constants and configuration, handed to the page (index.html's limits meta element) so that
 * console.js holds no copy of a number.
 */
export interface ConsoleLimits {
  /** MAX_BODY_BYTES: the largest request body. */
  readonly maxBodyBytes: number;
}

/** The page's `<meta name="agent-graph-limits">`, one data attribute per limit. */
function limitsMeta({ maxBodyBytes }: ConsoleLimits): string {
  const attributes = {
    'prompt-bytes': MAX_PROMPT_BYTES,
    'inputs-bytes': MAX_INPUTS_BYTES,
    'body-bytes': maxBodyBytes,
  };
  const data = Object.entries(attributes)
    .map(([name, value]) => ` data-${name}="${Math.trunc(value)}"`)
    .join('');
  return `<meta name="agent-graph-limits"${data}>`;
}

export function createConsoleAssets(limits: ConsoleLimits): ConsoleAssets {
  const client = graphqlWsClient();
  // The import map lets console.js import 'graphql-ws' by name while the file keeps its
  // versioned, immutable URL; being inline, it is allowed by its hash rather than
  // 'unsafe-inline', so the policy still admits no other inline script.
  const importMap = JSON.stringify({ imports: { 'graphql-ws': `${client.base}client.js` } });
  const importMapHash = createHash('sha256').update(importMap).digest('base64');
  const csp = [
    "default-src 'none'",
    `script-src 'self' 'sha256-${importMapHash}'`,
    "style-src 'self'",
    "connect-src 'self'",
    "img-src 'self' data:",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
  // Own files are revalidated on every load (their names carry no version); the ETag makes
  // that a 304 with no body.
  const revalidate = 'no-cache';
  const assets = new Map<string, Asset>();
  const page = readFileSync(join(STATIC, 'index.html'), 'utf8')
    .replace('<!-- limits -->', limitsMeta(limits))
    .replace('<!-- import map -->', `<script type="importmap">${importMap}</script>`);
  assets.set(CONSOLE_PATH, asset(page, 'index.html', revalidate));
  assets.set(`${CONSOLE_PATH}/`, asset(page, 'index.html', revalidate));
  for (const file of [
    'console.js',
    'console.css',
    'agent.js',
    'agent.css',
    'persisted-documents.json',
  ]) {
    assets.set(
      `${CONSOLE_PATH}/${file}`,
      asset(readFileSync(join(STATIC, file)), file, revalidate),
    );
  }
  for (const [file, body] of client.files) {
    assets.set(`${client.base}${file}`, asset(body, file, 'public, max-age=31536000, immutable'));
  }

  return {
    serve(req, res) {
      const path = (req.url ?? '/').split('?')[0] ?? '/';
      if (path !== CONSOLE_PATH && !path.startsWith(`${CONSOLE_PATH}/`)) return false;
      const found = req.method === 'GET' || req.method === 'HEAD' ? assets.get(path) : undefined;
      const headers: Record<string, string> = {
        'content-security-policy': csp,
        'x-content-type-options': 'nosniff',
        'referrer-policy': 'no-referrer',
      };
      if (!found) {
        res.writeHead(404, {
          ...headers,
          'content-type': 'text/plain',
          'cache-control': 'no-store',
        });
        res.end('not found');
        return true;
      }
      Object.assign(headers, {
        'content-type': found.type,
        'cache-control': found.cacheControl,
        etag: found.etag,
      });
      if (req.headers['if-none-match'] === found.etag) {
        res.writeHead(304, headers);
        res.end();
        return true;
      }
      res.writeHead(200, { ...headers, 'content-length': String(found.body.length) });
      res.end(req.method === 'HEAD' ? undefined : found.body);
      return true;
    },
  };
}
