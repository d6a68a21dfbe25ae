// The runtime matrix: Deno, Bun and Cloudflare's workerd (the Workers runtime),
// each from its npm package (devDependencies: their binaries ship inside npm
// packages, so `npm ci` brings them from the npm registry alone), import the
// packed tarball installed into a fresh folder and run a forward pass that must
// match Node's (bit for bit with the SIMD128 build, within 1e-5 with relaxed SIMD).
//
// workerd runs the README's Worker: esbuild bundles it as wrangler does (.wasm
// imports become compiled-module imports, a .bin import an ArrayBuffer), the
// bindings import without FinalizationRegistry or a usable import.meta.url,
// refuse to load before configure() with WASM_LOAD naming the fix, then serve
// forward passes of a model file and of createEncoder.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createEncoder, loadPretrained } from '../bindings/index.js';
import { readCheckpoint } from '../bindings/pretrained/checkpoint.js';
import { writeModelFile } from '../bindings/pretrained/model-file.js';
import { BIN, installPacked, writeFiles, checkModule, assertMatchesNode, CHECK_CONFIG, CHECK_SEED, CHECK_IDS } from './packaging.js';

let app;
const setup = () => (app ??= installPacked({ prefix: 'swapformer-runtimes-' }));

const MAIN = `import { check } from './check.js';\nconsole.log(JSON.stringify(await check()));\n`;

function run(cmd, args, cwd) {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', timeout: 60_000, env: { ...process.env, NO_COLOR: '1', DENO_NO_UPDATE_CHECK: '1' } });
  assert.equal(r.status, 0, `${path.basename(cmd)} ${args.join(' ')}: status ${r.status}\n${r.stdout}\n${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop());
}

test('runtimes: Deno, Bun and workerd import the packed package and match Node', { timeout: 180_000 }, async (t) => {
  const { dir } = setup();
  t.after(() => app.cleanup());
  writeFiles(dir, { 'check.js': checkModule(), 'main.js': MAIN });

  await t.test('Deno (npm package deno): deno run --allow-read', async (t) => {
    const version = spawnSync(BIN('deno'), ['--version'], { encoding: 'utf8' }).stdout.split('\n')[0];
    const result = run(BIN('deno'), ['run', '--allow-read', 'main.js'], dir);
    t.diagnostic(`${version}: ${await assertMatchesNode(assert, result, 'Deno')}`);
  });

  await t.test('Bun (npm package bun): bun main.js', async (t) => {
    const version = spawnSync(BIN('bun'), ['--version'], { encoding: 'utf8' }).stdout.trim();
    const result = run(BIN('bun'), ['main.js'], dir);
    t.diagnostic(`bun ${version}: ${await assertMatchesNode(assert, result, 'Bun')}`);
  });

  await t.test("workerd (npm package workerd): the README's Worker, bundled as wrangler does", async (t) => {
    const out = path.join(dir, 'worker-out');
    mkdirSync(out, { recursive: true });
    const enc = await createEncoder(CHECK_CONFIG, { seed: CHECK_SEED });
    writeFileSync(path.join(dir, 'model.bin'), enc.save());
    enc.dispose();
    // the README's embeddings Worker: a checkpoint converted by `swapformer convert`, as a data module
    const ck = await readCheckpoint(fileURLToPath(new URL('./pretrained/bert-minilm/', import.meta.url)));
    writeFileSync(path.join(dir, 'minilm.bin'), writeModelFile(ck.config, ck.tensors, ck.metadata, 'f32'));
    writeFiles(dir, {
      'worker.js': `import { configure, loadModel, loadPretrained } from 'swapformer';
import simd from 'swapformer/swapformer.wasm';
import relaxed from 'swapformer/swapformer-relaxed.wasm';
import modelFile from './model.bin';
import minilm from './minilm.bin';
import { check } from './check.js';

const before = check(); // before configure: no wasm a Worker can load
const settings = before.then(() => configure({ wasmPaths: { simd, relaxed } }));
let encoder, model;

export default {
  async fetch(request) {
    await settings;
    if (new URL(request.url).pathname === '/check') {
      return Response.json({ before: await before, check: await check(), finalizationRegistry: typeof FinalizationRegistry });
    }
    if (new URL(request.url).pathname === '/embed') {
      model ??= await loadPretrained(new Uint8Array(minilm));
      const { texts } = await request.json();
      const { data, shape } = model.embed(texts);
      return Response.json({ shape, data: Array.from(data) });
    }
    encoder ??= await loadModel(modelFile);
    const { ids } = await request.json();
    const { data, shape } = encoder.forward(ids);
    return Response.json({ shape, data: Array.from(data) });
  },
};
`,
    });
    const esbuild = await import('esbuild');
    await esbuild.build({
      absWorkingDir: dir, entryPoints: ['worker.js'], outfile: path.join(out, 'worker.js'), bundle: true, format: 'esm',
      platform: 'neutral', conditions: ['workerd', 'worker', 'browser'], mainFields: ['module', 'main'], logLevel: 'error',
      plugins: [{
        name: 'wrangler-like modules', // .wasm -> a compiled-module import, .bin -> a data import, as wrangler's default rules
        setup(b) {
          b.onResolve({ filter: /\.(wasm|bin)$/ }, async (args) => {
            if (args.pluginData) return undefined;
            const r = await b.resolve(args.path, { kind: args.kind, resolveDir: args.resolveDir, pluginData: true });
            if (r.errors.length) return { errors: r.errors };
            copyFileSync(r.path, path.join(out, path.basename(r.path)));
            return { path: `./${path.basename(r.path)}`, external: true };
          });
        },
      }],
    });
    const port = await freePort();
    writeFileSync(path.join(out, 'config.capnp'), `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [ (name = "main", worker = .worker) ],
  sockets = [ (name = "http", address = "127.0.0.1:${port}", http = (), service = "main") ],
);
const worker :Workerd.Worker = (
  modules = [
    (name = "worker.js", esModule = embed "worker.js"),
    (name = "swapformer.wasm", wasm = embed "swapformer.wasm"),
    (name = "swapformer-relaxed.wasm", wasm = embed "swapformer-relaxed.wasm"),
    (name = "model.bin", data = embed "model.bin"),
    (name = "minilm.bin", data = embed "minilm.bin"),
  ],
  compatibilityDate = "2024-09-23", # a date without FinalizationRegistry: explicit dispose only
);
`);
    const version = spawnSync(BIN('workerd'), ['--version'], { encoding: 'utf8' }).stdout.trim();
    const child = spawn(BIN('workerd'), ['serve', 'config.capnp'], { cwd: out, stdio: ['ignore', 'pipe', 'pipe'] });
    let log = '';
    child.stdout.on('data', (d) => { log += d; });
    child.stderr.on('data', (d) => { log += d; });
    t.after(() => child.kill());
    const base = `http://127.0.0.1:${port}`;
    const get = async (p, init) => {
      for (let i = 0; ; i++) {
        try {
          const r = await fetch(`${base}${p}`, init);
          const text = await r.text();
          assert.equal(r.status, 200, `workerd ${p}: HTTP ${r.status}\n${text}\n${log}`);
          return JSON.parse(text);
        } catch (e) {
          if (i > 100 || child.exitCode !== null || e.code === 'ERR_ASSERTION') throw new Error(`workerd ${p}: ${e.message}\n${log}`, { cause: e });
          await new Promise((r) => setTimeout(r, 100));
        }
      }
    };
    const r = await get('/check');
    assert.equal(r.before.error?.code, 'WASM_LOAD', 'before configure: WASM_LOAD');
    assert.match(r.before.error.message, /import\.meta\.url.*Fix:.*configure\(\{ wasmPaths: \{ simd, relaxed \} \}\).*Cloudflare Worker/);
    const check = await assertMatchesNode(assert, r.check, 'workerd createEncoder');
    const model = await get('/', { method: 'POST', body: JSON.stringify({ ids: CHECK_IDS }) });
    const fromFile = await assertMatchesNode(assert, { ...model, build: r.check.build }, 'workerd loadModel(model.bin)');
    const texts = ['A Worker returns embeddings.', 'from a converted checkpoint'];
    const emb = await get('/embed', { method: 'POST', body: JSON.stringify({ texts }) });
    const p = await loadPretrained(fileURLToPath(new URL('./pretrained/bert-minilm/', import.meta.url)));
    const want = p.embed(texts);
    p.dispose();
    assert.deepEqual(emb.shape, want.shape);
    const worst = Math.max(...emb.data.map((x, i) => Math.abs(x - want.data[i])));
    assert.ok(worst <= 1e-6, `workerd embeddings differ from Node's by ${worst}`);
    t.diagnostic(`${version}: FinalizationRegistry ${r.finalizationRegistry}; before configure: WASM_LOAD; createEncoder: ${check}; the README's Worker (loadModel of a .bin module): ${fromFile}; loadPretrained + embed: max diff ${worst}`);
  });
});

/** A free TCP port on 127.0.0.1. */
function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}
