// Runs one of the project's TypeScript entry points (`node scripts/run.mjs src/main.ts [args]`)
// as plain JavaScript. tsx compiles as it loads, and its module hooks, which Node 20 runs on a
// separate thread, slow every module load, node_modules included: the server's modules loaded
// in about twice the time under tsx. Here esbuild (the compiler tsx uses) writes src/ once per
// content into node_modules/.cache/agent-graph/js/<hash>/, in about a second, and later runs
// reuse it; the files keep their layout (src/db/embedded/worker.ts finds its thread's module
// beside it) and src/console/static is linked, not copied. `npm run build` (tsc, for the
// image) stays the checked build; this only makes `npm start` and the scripts start fast.
import { createHash } from 'node:crypto';
import {
  existsSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
} from 'node:fs';
import module from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const src = join(root, 'src');
const [entry, ...args] = process.argv.slice(2);
if (!entry?.startsWith('src/') || !entry.endsWith('.ts')) {
  process.stderr.write('usage: node scripts/run.mjs src/<entry>.ts [arguments]\n');
  process.exit(2);
}

const sources = [];
(function walk(dir) {
  for (const item of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, item.name);
    if (item.isDirectory()) {
      if (path !== join(src, 'console', 'static')) walk(path);
    } else if (item.name.endsWith('.ts')) sources.push(path);
  }
})(src);
sources.sort();

const esbuildVersion = JSON.parse(
  readFileSync(join(root, 'node_modules', 'esbuild', 'package.json'), 'utf8'),
).version;
const hash = createHash('sha256')
  .update(esbuildVersion)
  .update(readFileSync(join(root, 'tsconfig.json')));
for (const path of sources)
  hash.update(relative(src, path)).update('\0').update(readFileSync(path));
const cache = join(root, 'node_modules', '.cache', 'agent-graph', 'js');
const out = join(cache, hash.digest('hex').slice(0, 16));

if (!existsSync(out)) {
  const { build } = await import('esbuild');
  // Written aside and renamed: a start running beside this one sees all of it or none.
  const building = `${out}.${process.pid}.tmp`;
  await build({
    entryPoints: sources,
    outdir: building,
    outbase: src,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    sourcemap: 'linked',
    logLevel: 'warning',
  });
  symlinkSync(join(src, 'console', 'static'), join(building, 'console', 'static'), 'dir');
  try {
    renameSync(building, out);
  } catch {
    rmSync(building, { recursive: true, force: true });
  }
  // Copies of earlier contents, unused for an hour: a process started from one may still be
  // loading its modules (the embedded database's thread loads late).
  for (const old of readdirSync(cache)) {
    const path = join(cache, old);
    if (path !== out && statSync(path).mtimeMs < Date.now() - 3_600_000) {
      rmSync(path, { recursive: true, force: true });
    }
  }
}

// V8's compiled code for every module loaded, node_modules included, kept on disk (Node 22.1+):
// later starts skip most parsing and compiling.
module.enableCompileCache?.(join(cache, '..', 'v8'));

const script = join(out, relative(src, resolve(root, entry)).replace(/\.ts$/, '.js'));
// Errors point at the TypeScript lines (the .map files beside the scripts).
process.setSourceMapsEnabled(true);
process.argv = [process.argv[0], script, ...args];
await import(pathToFileURL(script).href);
