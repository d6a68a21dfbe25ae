// examples/cloudflare-queues end to end in miniflare (npm `miniflare`, which
// runs workerd, the runtime Cloudflare runs): the example's Worker bundled as
// wrangler bundles it (esbuild; .wasm imports as compiled modules), the
// bindings of its wrangler.toml (a local R2 bucket holding a q8 model that
// `swapformer convert --dtype q8` writes at test time from a fixture, a
// local D1, the queue simulated with its consumer settings); 1,000 texts in
// through the producer, 1,000 vectors out of D1, bit for bit Node's embed of
// the same file; the bundle size and the isolate's wasm memory within
// Workers' limits.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, mkdirSync, readFileSync, rmSync, symlinkSync, statSync, copyFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadPretrained } from '../bindings/index.js';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const EXAMPLE = path.join(REPO, 'examples', 'cloudflare-queues');
const FIXTURE = path.join(REPO, 'tests', 'pretrained', 'bert-minilm');

/** The few wrangler.toml values the test needs (strings, numbers, the binding tables), read with a small line parser. */
function readWranglerToml(file) {
  const out = { tables: {} };
  let table = out;
  for (const raw of readFileSync(file, 'utf8').split('\n')) {
    const line = raw.replace(/\s+#.*$/, '').trim();
    if (!line || line.startsWith('#')) continue;
    const header = line.match(/^\[\[?([\w.]+)\]\]?$/);
    if (header) {
      table = {};
      (out.tables[header[1]] ??= []).push(table);
      continue;
    }
    const kv = line.match(/^(\w+)\s*=\s*(?:"([^"]*)"|(\d+))$/);
    if (kv) table[kv[1]] = kv[2] ?? Number(kv[3]);
  }
  return out;
}

/** The example bundled as wrangler does: one ES module, the .wasm imports left as compiled-module imports beside it. */
async function bundle(dir, out) {
  const esbuild = await import('esbuild');
  await esbuild.build({
    absWorkingDir: dir, entryPoints: ['src/worker.js'], outfile: path.join(out, 'worker.js'), bundle: true, format: 'esm',
    platform: 'neutral', conditions: ['workerd', 'worker', 'browser'], mainFields: ['module', 'main'], logLevel: 'error',
    plugins: [{
      name: 'wasm as compiled modules',
      setup(b) {
        b.onResolve({ filter: /\.wasm$/ }, async (args) => {
          if (args.pluginData) return undefined;
          const r = await b.resolve(args.path, { kind: args.kind, resolveDir: args.resolveDir, pluginData: true });
          if (r.errors.length) return { errors: r.errors };
          copyFileSync(r.path, path.join(out, path.basename(r.path)));
          return { path: `./${path.basename(r.path)}`, external: true };
        });
      },
    }],
  });
  const files = ['worker.js', 'swapformer.wasm', 'swapformer-relaxed.wasm'];
  const bytes = files.reduce((n, f) => n + statSync(path.join(out, f)).size, 0);
  const gzipped = files.reduce((n, f) => n + gzipSync(readFileSync(path.join(out, f))).length, 0);
  return { bytes, gzipped };
}

const WORDS = ['queue', 'worker', 'vector', 'model', 'edge', 'text', 'batch', 'message', 'bucket', 'database', 'embedding', 'search', 'token', 'cloud', 'index'];
const corpus = (n) => Array.from({ length: n }, (_, i) => `document ${i}: ${Array.from({ length: 3 + (i % 13) }, (_, k) => WORDS[(i * 7 + k * 3) % WORDS.length]).join(' ')}`);

test('examples/cloudflare-queues in miniflare: 1,000 texts through the queue, 1,000 vectors in D1, bit for bit Node\'s', { timeout: 180_000 }, async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'swapformer-queues-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  cpSync(path.join(EXAMPLE, 'src'), path.join(dir, 'src'), { recursive: true });
  mkdirSync(path.join(dir, 'node_modules'));
  symlinkSync(REPO, path.join(dir, 'node_modules', 'swapformer'), 'dir'); // resolved through the package's exports, as an install
  const out = path.join(dir, 'dist');
  mkdirSync(out);
  const size = await bundle(dir, out);

  // the model: the fixture converted to q8 by the CLI, as the example's README does with a Hub model
  const modelFile = path.join(dir, 'model-q8.safetensors');
  execFileSync(process.execPath, [path.join(REPO, 'bin', 'swapformer.js'), 'convert', FIXTURE, modelFile, '--dtype', 'q8'], { stdio: 'pipe' });
  const modelBytes = readFileSync(modelFile);

  const toml = readWranglerToml(path.join(EXAMPLE, 'wrangler.toml'));
  const [vars] = toml.tables.vars, [r2] = toml.tables.r2_buckets, [d1] = toml.tables.d1_databases;
  const [producer] = toml.tables['queues.producers'], [consumer] = toml.tables['queues.consumers'];
  assert.equal(toml.main, 'src/worker.js');
  const { Miniflare } = await import('miniflare');
  const mf = new Miniflare({
    // listed by hand: the bindings' dynamic import()s (Node-only paths) stop miniflare's own module walk
    modulesRoot: out,
    modules: [{ type: 'ESModule', path: path.join(out, 'worker.js') }, ...['swapformer.wasm', 'swapformer-relaxed.wasm'].map((f) => ({ type: 'CompiledWasm', path: path.join(out, f) }))],
    compatibilityDate: toml.compatibility_date,
    bindings: vars,
    r2Buckets: { [r2.binding]: r2.bucket_name },
    d1Databases: { [d1.binding]: d1.database_id },
    queueProducers: { [producer.binding]: { queueName: producer.queue } },
    queueConsumers: { [consumer.queue]: { maxBatchSize: consumer.max_batch_size, maxBatchTimeout: consumer.max_batch_timeout, maxRetries: consumer.max_retries } },
  });
  t.after(() => mf.dispose());
  const bucket = await mf.getR2Bucket(r2.binding);
  await bucket.put(vars.MODEL_KEY, new Uint8Array(modelBytes).buffer); // an ArrayBuffer of its own (miniflare's proxy refuses a Buffer's pooled view)

  const texts = corpus(1000);
  const posted = await mf.dispatchFetch('http://worker/jobs', { method: 'POST', body: JSON.stringify({ id: 'job-1', texts }) });
  assert.equal(posted.status, 202, await posted.clone().text());
  const job = await posted.json();
  assert.deepEqual(job, { id: 'job-1', texts: 1000, messages: Math.ceil(1000 / Number(vars.TEXTS_PER_MESSAGE)) });
  const bad = await mf.dispatchFetch('http://worker/jobs', { method: 'POST', body: JSON.stringify({ texts: ['ok', 3] }) });
  assert.equal(bad.status, 422);

  const started = performance.now();
  let status;
  for (let i = 0; i < 1200; i++) {
    status = await (await mf.dispatchFetch('http://worker/jobs/job-1')).json();
    if (status.done === 1000) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.deepEqual(status, { id: 'job-1', total: 1000, done: 1000 });
  const seconds = (performance.now() - started) / 1000;

  const { vectors } = await (await mf.dispatchFetch('http://worker/jobs/job-1/vectors?start=0&limit=1000')).json();
  assert.equal(vectors.length, 1000);
  assert.deepEqual(vectors.map((v) => v.index), texts.map((_, i) => i));
  const stats = await (await mf.dispatchFetch('http://worker/stats')).json();

  // Node's embeddings of the same file, with the build the Worker ran
  const wasm = path.join(REPO, 'dist', stats.build === 'relaxed-simd' ? 'swapformer-relaxed.wasm' : 'swapformer.wasm');
  const node = await loadPretrained(new Uint8Array(modelBytes), { wasm: readFileSync(wasm), threads: 1 });
  t.after(() => node.dispose());
  const want = node.embed(texts);
  const D = want.shape[1];
  assert.equal(stats.dtype, 'q8');
  const got = new Float32Array(vectors.flatMap((v) => v.embedding));
  assert.equal(got.length, 1000 * D);
  assert.deepEqual(new Uint32Array(got.buffer), new Uint32Array(want.data.buffer), 'the Worker\'s vectors are Node\'s, bit for bit');
  // the D1 rows themselves: little-endian float32 BLOBs
  const db = await mf.getD1Database(d1.binding);
  const row = await db.prepare('SELECT dim, vector FROM vectors WHERE job = ? AND idx = ?').bind('job-1', 999).first();
  assert.equal(row.dim, D);
  assert.deepEqual(new Uint8Array(row.vector), new Uint8Array(want.data.buffer, 999 * D * 4, D * 4));

  // Workers' limits: 128 MB of memory per isolate; 3 MB (free) / 10 MB (paid) of compressed script
  assert.ok(stats.memoryBytes < 128 * 2 ** 20, `wasm memory ${stats.memoryBytes}`);
  assert.ok(size.gzipped < 1 * 2 ** 20, `bundle ${size.gzipped} bytes gzipped`);
  t.diagnostic(`workerd (miniflare): 1000 texts in ${job.messages} messages, done in ${seconds.toFixed(1)} s; build ${stats.build}; wasm memory ${(stats.memoryBytes / 2 ** 20).toFixed(1)} MB; `
    + `q8 model ${(modelBytes.length / 1024).toFixed(0)} KB from R2; bundle ${(size.bytes / 1024).toFixed(0)} KB (${(size.gzipped / 1024).toFixed(0)} KB gzipped)`);
});
