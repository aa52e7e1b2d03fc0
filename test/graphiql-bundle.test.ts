import { describe, expect, test } from 'vitest';
import { deferInlinedImports } from '../src/graphiql.js';

// The rewrite patterns yoga's minified bundle: when an upgrade changes its shape, the page still
// works (the bundle is served unchanged) but every open evaluates Prettier's parsers again.
// This is where that shows.
describe("GraphiQL's bundle, as served", () => {
  test("Prettier's two parsers (Babel and GraphQL) are built on first use, not at load", async () => {
    const bundle = await import('@graphql-yoga/render-graphiql/graphiql');
    const { js, deferred } = deferInlinedImports(bundle.js);
    expect(deferred).toBe(2);
    expect(js).not.toBe(bundle.js);
    expect(js.length - bundle.js.length).toBeLessThan(1_000);
  });

  test('a bundle without the pattern is served as it is', () => {
    const js = 'const ns=Promise.resolve().then(()=>other);export{ns};';
    expect(deferInlinedImports(js)).toEqual({ js, deferred: 0 });
  });
});
