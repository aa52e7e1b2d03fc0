import { createHash } from 'node:crypto';
import type { GraphiQLOptions, Plugin } from 'graphql-yoga';

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

const sha256 = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;

/**
 * GraphiQL with its scripts, styles and editor workers inlined (9 MB), so that it works on
 * servers without internet access (yoga's default page loads them from a CDN), and the
 * header discipline of every page we serve (src/console/serve.ts): a CSP made for this
 * bundle, no framing, no sniffing, no referrer. Rendered on the first visit, once per
 * server: the options never change.
 */
export function graphiqlPage(): {
  render: (options: GraphiQLOptions) => Promise<string>;
  plugin: Plugin;
} {
  let page: Promise<{ html: string; csp: string }> | undefined;
  const rendered = (options: GraphiQLOptions) => {
    page ??= import('@graphql-yoga/render-graphiql').then(({ renderGraphiQL }) => {
      const html = renderGraphiQL(options).replace(
        '<script>',
        `<script>${URL_MUTATION_GUARD}</script><script>`,
      );
      // The inline scripts are allowed by their hashes; the editor's workers come from blob:
      // URLs the page makes, Monaco adds <style> elements and style attributes at run time.
      const scripts = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => m[1] ?? '');
      const csp = [
        "default-src 'none'",
        `script-src ${scripts.map(sha256).join(' ')}`,
        'worker-src blob:',
        "style-src 'unsafe-inline'",
        "font-src 'self' data:",
        "img-src 'self' data:",
        "connect-src 'self'",
        "base-uri 'none'",
        "form-action 'none'",
        "frame-ancestors 'none'",
      ].join('; ');
      return { html, csp };
    });
    return page;
  };
  return {
    render: async (options) => (await rendered(options)).html,
    plugin: {
      async onResponse({ response }) {
        if (!response.headers.get('content-type')?.startsWith('text/html') || !page) return;
        response.headers.set('content-security-policy', (await page).csp);
        response.headers.set('x-frame-options', 'DENY');
        response.headers.set('x-content-type-options', 'nosniff');
        response.headers.set('referrer-policy', 'no-referrer');
      },
    },
  };
}
