import { runInNewContext, Script } from 'node:vm';
import { describe, expect, test } from 'vitest';
import { deferInlinedImports } from '../src/graphiql.js';

// The rewrite patterns yoga's minified bundle: when an upgrade changes its shape, the page still
// works (the bundle is served unchanged) but every open downloads and evaluates Prettier's
// parsers again. This is where that shows.
describe("GraphiQL's bundle, as served", () => {
  test("Prettier's two parsers (Babel and GraphQL) are scripts of their own, loaded on first use", async () => {
    const bundle = await import('@graphql-yoga/render-graphiql/graphiql');
    const { js, deferred, scripts } = deferInlinedImports(bundle.js);
    expect(deferred).toBe(2);
    expect(scripts).toHaveLength(2);
    // What left the bundle is what the scripts hold, give or take their few lines of wiring.
    const moved = scripts.reduce((sum, script) => sum + script.length, 0);
    expect(Math.abs(bundle.js.length - js.length - moved)).toBeLessThan(1_000);
    expect(moved).toBeGreaterThan(300_000);
    // The bundle is still one script that compiles, importing each by its index.
    expect(() => new Script(js)).not.toThrow();
    expect(js.match(/agentGraphScript\(\d\)/g)?.sort()).toEqual([
      'agentGraphScript(0)',
      'agentGraphScript(1)',
    ]);
    // Each runs on its own, with nothing of the bundle in scope: its module is a Prettier plugin.
    const parsers = scripts.map((script, index) => {
      const global: Record<string, unknown> = {};
      global.self = global;
      runInNewContext(script, global);
      const module = { exports: {} as { parsers?: object } };
      const factories = global.agentGraphModules as ((m: object, e: object) => void)[];
      factories[index]?.(module, module.exports);
      return Object.keys(module.exports.parsers ?? {});
    });
    expect(parsers.flat()).toEqual(expect.arrayContaining(['graphql', 'babel', 'json']));
  });

  test('a bundle without the pattern is served as it is', () => {
    const js = 'const ns=Promise.resolve().then(()=>other);export{ns};';
    expect(deferInlinedImports(js)).toEqual({ js, deferred: 0, scripts: [] });
  });

  test('a deferred module whose code is not a factory of its own stays in the bundle', () => {
    const js =
      'function load(){return {a:1}}var m=load();const ns=toNs({__proto__:null,default:interop(m)},[m]);' +
      'const p=Promise.resolve().then(()=>ns);';
    const { js: out, deferred, scripts } = deferInlinedImports(js);
    expect(deferred).toBe(1);
    expect(scripts).toEqual([]);
    expect(out).toContain('Promise.resolve().then(()=>ns())');
  });
});
