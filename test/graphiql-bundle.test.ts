import { runInNewContext, Script } from 'node:vm';
import { describe, expect, test } from 'vitest';
import { deferInlinedImports } from '../src/graphiql.js';

// The rewrite patterns yoga's minified bundle: when an upgrade changes its shape, the page still
// works (the bundle is served unchanged) but every open downloads and evaluates Prettier again.
// This is where that shows.

interface Plugin {
  parsers?: Record<string, unknown>;
  printers?: Record<string, unknown>;
  format?: (text: string, options: object) => Promise<string>;
}

/** The scripts run one after the other in a global of their own, as the page loads them. */
function runScripts(scripts: readonly string[]) {
  const global: Record<string, unknown> = {};
  global.self = global;
  for (const script of scripts) runInNewContext(script, global);
  return global.agentGraphModules as (
    | ((module: object, exports: object) => void)
    | (() => Plugin)
  )[];
}

describe("GraphiQL's bundle, as served", () => {
  test('Prettier (its core, printers and parsers) is in scripts of their own, loaded on first use, and formats alone', async () => {
    const bundle = await import('@graphql-yoga/render-graphiql/graphiql');
    const { js, deferred, scripts } = deferInlinedImports(bundle.js);
    // Two parsers (CommonJS factories), then the core and two printers (ES modules).
    expect(deferred).toBe(5);
    expect(scripts).toHaveLength(5);
    // What left the bundle is what the scripts hold, give or take their few lines of wiring.
    const moved = scripts.reduce((sum, script) => sum + script.length, 0);
    expect(Math.abs(bundle.js.length - js.length - moved)).toBeLessThan(2_000);
    expect(moved).toBeGreaterThan(650_000);
    // The bundle is still one script that compiles, importing each by its index.
    expect(() => new Script(js)).not.toThrow();
    expect([...new Set(js.match(/agentGraphScript\(\d\)/g))].sort()).toEqual(
      scripts.map((_, index) => `agentGraphScript(${index})`),
    );
    // With nothing of the bundle in scope, the scripts are Prettier: they format a query and
    // JSON, as the prettify button does.
    const factories = runScripts(scripts);
    const modules = factories.map((factory, index) => {
      if (index < 2) {
        const module = { exports: {} as Plugin };
        (factory as (module: object, exports: object) => void)(module, module.exports);
        return module.exports;
      }
      return (factory as () => Plugin)();
    });
    const [graphqlParser, babelParser, core, graphqlPrinter, estreePrinter] = modules;
    expect(Object.keys(graphqlParser?.parsers ?? {})).toContain('graphql');
    expect(Object.keys(babelParser?.parsers ?? {})).toContain('json');
    expect(
      await core?.format?.('{agents(first:1){totalCount}}', {
        parser: 'graphql',
        plugins: [graphqlPrinter, graphqlParser],
      }),
    ).toBe('{\n  agents(first: 1) {\n    totalCount\n  }\n}\n');
    expect(
      await core?.format?.('{"first":1}', {
        parser: 'json',
        plugins: [estreePrinter, babelParser],
      }),
    ).toBe('{ "first": 1 }\n');
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

  // Rollup's shape: each ES module's statements in one run, ending with its namespace object.
  const namespace = (name: string, exports: string) =>
    `const ${name}=Object.freeze(Object.defineProperty({__proto__:null,${exports}},Symbol.toStringTag,{value:"Module"}));`;
  const padding = `"${'x'.repeat(20_000)}"`;
  const bundleOf = (...parts: string[]) => `(function(uo){"use strict";${parts.join('')}})({});`;

  test('an ES module only imported with import(), naming only its own and global names, moves to a script', async () => {
    const lazy =
      // Names that are also names outside, as a key, a method, a property or a class member,
      // a regular expression and templates that hold brackets: none of them is a use.
      `var pad=${padding};const re=/[/}]{/g,tpl=\`}\${"{"}\`;class Box{shared(){return 1}get[Symbol.iterator](){return[].values()}}` +
      `function lazyOwn(n){return{shared:n,other(){return n.shared}}.other()?.length??tpl.length+re.source.length}` +
      namespace('lazyNs', 'lazyOwn,Box,pad:pad.length');
    const js = bundleOf(
      'function shared(){return 2}',
      lazy,
      'const statically=shared();',
      'uo.load=()=>Promise.resolve().then(()=>lazyNs);',
    );
    const { js: out, deferred, scripts } = deferInlinedImports(js);
    expect(deferred).toBe(1);
    expect(scripts).toHaveLength(1);
    expect(out).not.toContain('lazyOwn');
    expect(out).toContain('agentGraphScript(0).then(()=>lazyNs())');
    // The page's loader (src/graphiql.ts's START) in a global of its own, and the rewritten bundle.
    const global: Record<string, unknown> = {};
    global.self = global;
    global.agentGraphScript = async (index: number) =>
      runInNewContext(scripts[index] ?? '', global);
    const exports: { load?: () => Promise<{ lazyOwn: (n: object) => number; pad: number }> } = {};
    global.exports = exports;
    runInNewContext(out.replace('({});', '(exports);'), global);
    const loaded = await exports.load?.();
    expect(loaded?.pad).toBe(20_000);
    expect(loaded?.lazyOwn({ shared: 'abc' })).toBe(3);
    expect(await exports.load?.()).toBe(loaded);
  });

  test('a module that names an outside declaration, or whose declarations are used outside, stays', () => {
    const usesOutside = `var a=${padding};function f(){return shared()}${namespace('ns1', 'f')}`;
    const usedOutside = `var b=${padding};function g(){return 1}${namespace('ns2', 'g')}`;
    const js = bundleOf(
      'function shared(){return 2}',
      usesOutside,
      usedOutside,
      'const x=g(),y=shared();',
      'uo.load=()=>Promise.all([Promise.resolve().then(()=>ns1),Promise.resolve().then(()=>ns2)]);',
    );
    expect(deferInlinedImports(js)).toEqual({ js, deferred: 0, scripts: [] });
  });
});
