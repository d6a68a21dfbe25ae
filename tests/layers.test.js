// The import graph: no circle anywhere in the project's own JavaScript, and
// the bindings in layers that a folder names (README "Layout"):
//   utils/ <- runtime/ <- pretrained/
//   utils/ <- tokenizers/ <- tasks/ <- pretrained/
// index.js only re-exports. A module may import its own folder and the
// layers below it, never one above.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SKIP = new Set(['node_modules', '.git', 'build', 'dist', 'out', 'fuzz', 'pretrained', 'tokenizers', 'fixtures']);

function walk(dir) {
  return readdirSync(path.join(REPO, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = dir ? `${dir}/${e.name}` : e.name;
    if (e.isDirectory()) return SKIP.has(e.name) && !rel.startsWith('bindings/') ? [] : walk(rel);
    return /\.(m?js)$/.test(e.name) ? [rel] : [];
  });
}

/** The relative imports of a module (static, dynamic with a literal, re-exports), resolved to repo paths. */
function importsOf(file) {
  const text = readFileSync(path.join(REPO, file), 'utf8').replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  const out = [];
  for (const m of text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(['"])(\.{1,2}\/[^'"]+)\1/g)) {
    out.push(path.posix.normalize(path.posix.join(path.posix.dirname(file), m[2])));
  }
  return out;
}

const files = walk('');
const graph = new Map(files.map((f) => [f, importsOf(f).filter((t) => files.includes(t))]));

test('no import circle in the project (bindings, bin, web, bench, tools, tests)', () => {
  const state = new Map(); // 1 on the stack, 2 done
  const cycles = [];
  const visit = (f, stack) => {
    if (state.get(f) === 2) return;
    if (state.get(f) === 1) { cycles.push([...stack.slice(stack.indexOf(f)), f].join(' -> ')); return; }
    state.set(f, 1);
    for (const t of graph.get(f) ?? []) visit(t, [...stack, f]);
    state.set(f, 2);
  };
  for (const f of files) visit(f, []);
  assert.deepEqual(cycles, []);
  assert.ok(graph.size > 50, `the walk found the project's modules (${graph.size})`);
});

const LAYERS = { utils: 0, runtime: 1, tokenizers: 1, tasks: 2, pretrained: 3 };
// tokenizers and runtime are side by side: neither imports the other
const MAY_IMPORT = {
  utils: ['utils'],
  runtime: ['utils', 'runtime'],
  tokenizers: ['utils', 'tokenizers'],
  tasks: ['utils', 'tokenizers', 'tasks'], // post-processing over logits: no wasm
  pretrained: ['utils', 'runtime', 'tokenizers', 'tasks', 'pretrained'],
};

test('the bindings are layered by folder: utils <- runtime, tokenizers <- tasks <- pretrained; index.js only re-exports', () => {
  const bindings = files.filter((f) => f.startsWith('bindings/'));
  for (const f of bindings) {
    if (f === 'bindings/index.js') continue;
    const layer = f.split('/')[1];
    assert.ok(Object.hasOwn(LAYERS, layer), `${f} lives in a layer folder (${Object.keys(LAYERS).join(', ')})`);
    for (const t of graph.get(f)) {
      assert.ok(t.startsWith('bindings/'), `${f} imports ${t}, outside the bindings`);
      const to = t.split('/')[1];
      assert.ok(MAY_IMPORT[layer].includes(to), `${f} (${layer}) imports ${t} (${to}): a layer imports only itself and the layers below it`);
    }
  }
  const index = readFileSync(path.join(REPO, 'bindings/index.js'), 'utf8').replace(/^\s*\/\/.*$/gm, '').trim();
  for (const stmt of index.split(/;\s*/).filter(Boolean)) assert.match(stmt, /^export \{[^}]+\} from '\.\/[a-z]+\/[a-z-]+\.js'$/, `bindings/index.js: ${stmt}`);
});

// Node 22 and later refuse --experimental-wasm-relaxed-simd as a bad option: a process
// started with it must take it from tools/node-flags.js, which passes it to Node 20 only.
test('no Node process is started with a literal --experimental-wasm-relaxed-simd (tools/node-flags.js decides)', () => {
  const literal = /(['"`])--experimental-wasm-relaxed-simd\1|node --experimental-wasm-relaxed-simd/;
  const scripts = [...files, 'build.sh', 'package.json', 'bench/package.json'].filter((f) => f !== 'tools/node-flags.js' && f !== 'tests/layers.test.js');
  const offenders = scripts.filter((f) => {
    let text;
    try { text = readFileSync(path.join(REPO, f), 'utf8'); } catch { return false; }
    return literal.test(text.replace(/^\s*(\/\/|#).*$/gm, ''));
  });
  assert.deepEqual(offenders, [], `use NODE_FLAGS from tools/node-flags.js (or tools/node.mjs) in: ${offenders.join(', ')}`);
});
