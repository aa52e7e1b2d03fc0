import { runInNewContext, Script } from 'node:vm';
import { describe, expect, test } from 'vitest';
import { deferInlinedImports, splitForParsing } from '../src/graphiql.js';

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

  // Rollup's UMD wrapper around a factory, as yoga's bundle has it.
  const umdOf = (...statements: string[]) =>
    `(function(g,f){typeof exports=="object"&&typeof module<"u"?f(exports):typeof define=="function"&&define.amd?define(["exports"],f):(g=typeof globalThis<"u"?globalThis:g||self,f(g.Lib={}))})(this,(function(ex){"use strict";${statements.join('')}ex.run=run,Object.defineProperty(ex,Symbol.toStringTag,{value:"Module"})}));\n`;
  /** Classic scripts run one after the other in one global, with a window's own `top`. */
  const runGlobal = (scripts: readonly string[]) => {
    const global: Record<string, unknown> = {};
    global.self = global;
    Object.defineProperty(global, 'top', { value: global, writable: false, configurable: false });
    for (const script of scripts) runInNewContext(script, global);
    return (global.Lib as { run: () => unknown }).run();
  };

  test('the factory of a UMD bundle becomes the top level of pieces about as long, run in order, its names shared and kept apart from the window', () => {
    const pad = (name: string) => `const ${name}="${'x'.repeat(250_000)}";`;
    const js = umdOf(
      // A name the window owns, a shorthand property, patterns, a getter, a class and a label.
      'var top=1,count=0;',
      'const{a:alias,b}={a:2,b:3},[first]=[4];',
      'function bump(){return count++,count}',
      'class Box{value=top;get top(){return this.value}static make(){return new Box}}',
      pad('padOne'),
      // Used above its declaration inside a function that runs later: it may be cut between.
      'function late(){return lateConst}',
      pad('padTwo'),
      'let lateConst=5;',
      'const bumped=bump();',
      'function run(){const o={top,alias,b,first,bumped,count,late:late(),box:Box.make().top,pads:padOne.length+padTwo.length};outer:for(;;)break outer;return o}',
    );
    const { js: last, pieces } = splitForParsing(js);
    expect(pieces).toHaveLength(1);
    for (const piece of [...pieces, last]) {
      expect(() => new Script(piece)).not.toThrow();
      expect(piece.length).toBeGreaterThan(250_000);
    }
    const expected = {
      top: 1,
      alias: 2,
      b: 3,
      first: 4,
      bumped: 1,
      count: 1,
      late: 5,
      box: 1,
      pads: 500_000,
    };
    expect(runGlobal([js])).toEqual(expected);
    expect(runGlobal([...pieces, last])).toEqual(expected);
  });

  test('no cut falls where a function or a var is used above its declaration, and a bundle without the wrapper stays whole', () => {
    const pad = `"${'x'.repeat(300_000)}";`;
    const hoisted = umdOf(
      'const early=later()+laterVar;',
      pad,
      pad,
      'function later(){return 1}var laterVar=2;',
      'function run(){return early}',
    );
    expect(splitForParsing(hoisted).pieces).toEqual([]);
    const plain = `var a=1;${pad}${pad}function run(){return a}`;
    expect(splitForParsing(plain)).toEqual({ js: plain, pieces: [] });
  });

  test("yoga's bundle is cut into pieces that each compile", async () => {
    const bundle = await import('@graphql-yoga/render-graphiql/graphiql');
    const { js } = deferInlinedImports(bundle.js);
    const split = splitForParsing(js);
    expect(split.pieces).toHaveLength(1);
    for (const piece of [...split.pieces, split.js]) {
      expect(() => new Script(piece)).not.toThrow();
      expect(piece.length).toBeGreaterThan(js.length / 3);
    }
  });
});
