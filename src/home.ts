import { createHash } from 'node:crypto';

/**
 * The page at `/`: where a first visitor finds both faces of the server, GraphiQL for
 * exploring the API and the operators' console, and the probes an operator looks for.
 * Static, so built once; its one inline style is allowed by its hash.
 */
const STYLE = `body { font: 16px/1.5 system-ui, sans-serif; margin: 0 auto; max-width: 44rem; padding: 2rem 1.25rem; color: #14202b; }
h1 { font-size: 1.6rem; margin: 0 0 .25rem; }
ul.faces { list-style: none; padding: 0; display: grid; gap: .75rem; }
ul.faces a { display: block; padding: .9rem 1rem; border: 1px solid #b8c4cf; border-radius: 8px; text-decoration: none; color: inherit; }
ul.faces a:hover, ul.faces a:focus { border-color: #1f6feb; background: #f3f8ff; }
ul.faces strong { color: #1f6feb; font-size: 1.1rem; }
.probes { color: #4a5a68; font-size: .9rem; }`;

export function homePage(links: { graphql: string; console: string }): {
  readonly html: string;
  readonly csp: string;
} {
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>agent-graph</title>
<link rel="icon" href="data:,">
<style>${STYLE}</style>
</head>
<body>
<h1>agent-graph</h1>
<p>A GraphQL API over Oracle AI Database's agents, their runtime statistics and agent-team history.</p>
<ul class="faces">
<li><a href="${links.graphql}"><strong>GraphiQL</strong><br>Explore the schema and run queries, with an example query ready to run.</a></li>
<li><a href="${links.console}"><strong>Operators' console</strong><br>Runs waiting for a human, run changes as they happen, teams, agents and statistics.</a></li>
</ul>
<p class="probes">For operators: <a href="/health">/health</a> · <a href="/ready">/ready</a> · <a href="/metrics">/metrics</a></p>
</body>
</html>
`;
  const styleHash = createHash('sha256').update(STYLE).digest('base64');
  const csp = [
    "default-src 'none'",
    `style-src 'sha256-${styleHash}'`,
    'img-src data:',
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
  return { html, csp };
}
