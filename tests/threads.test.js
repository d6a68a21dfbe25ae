// Wasm threads: the threaded builds (dist/swapformer-mt.wasm,
// dist/swapformer-relaxed-mt.wasm) with a pool of worker_threads sharing the
// memory. Every golden case with 1, 2 and 3 threads: bit-identical to one
// thread and within the golden tolerance of PyTorch; the fallback and its
// reason; the pool's shutdown (a process with an undisposed encoder exits).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { loadModel, createEncoder, runtimeInfo, configure, loadPretrained } from '../bindings/index.js';
import { golden, readFixture, assertBitIdentical, assertClose, goldenTolerance } from './helpers.js';
import { NODE_FLAGS } from '../tools/node-flags.js';

// This file is about the wasm's threads: the wasm backend, here and in its child processes
// (the native backend's threads: tests/native.test.js).
process.env.SWAPFORMER_BACKEND = 'wasm';

const BINDINGS = fileURLToPath(new URL('../bindings/index.js', import.meta.url));

test('the threaded build runs here: runtimeInfo reports the threads and, for one, why', async () => {
  const info = await runtimeInfo({ threads: 2 });
  assert.equal(info.threaded, true, info.threadsFallback ?? '');
  assert.equal(info.threads, 2);
  assert.equal(info.threadsFallback, null);
  const one = await runtimeInfo({ threads: 1 });
  assert.equal(one.threaded, false);
  assert.equal(one.threads, 1);
  // a wasm option names a single-threaded build: one thread, and the reason
  const custom = await runtimeInfo({ threads: 2, wasm: new URL('../dist/swapformer.wasm', import.meta.url) });
  assert.equal(custom.threads, 1);
  assert.match(custom.threadsFallback, /options\.wasm/);
  await assert.rejects(
    createEncoder(
      { vocabSize: 4, dModel: 4, heads: 1, layers: 1, ffDim: 4, position: 'none', norm: 'rmsnorm', normPlacement: 'pre', activation: 'relu' },
      { threads: 0 },
    ),
    (e) => e.code === 'BAD_ARGUMENT' && /options\.threads/.test(e.message),
  );
});

for (const build of ['relaxed-simd', 'simd128']) {
  test(`every golden case: 1, 2 and 3 threads give the same bits, within tolerance of PyTorch [${build}]`, async () => {
    configure({ build });
    try {
      for (const c of golden.cases) {
        const bytes = readFixture(c.file);
        const opts = { outputAttentions: !!c.attentions, ...(c.typeIds ? { typeIds: c.typeIds } : {}), ...(c.skipLayers ? { skipLayers: c.skipLayers } : {}) };
        const one = await loadModel(bytes, { threads: 1 });
        const ref = one.forward(c.ids, opts);
        one.dispose();
        for (const threads of [2, 3]) {
          const enc = await loadModel(bytes, { threads });
          const out = enc.forward(c.ids, opts);
          assertBitIdentical(out.data, ref.data, `${c.name}: ${threads} threads`);
          if (ref.attentions) out.attentions.forEach((a, l) => assertBitIdentical(a.data, ref.attentions[l].data, `${c.name}: attentions ${l}`));
          if (ref.logits) assertBitIdentical(out.logits.data, ref.logits.data, `${c.name}: logits`);
          assertClose(out.data, c.expected, goldenTolerance(c), `${c.name}: ${threads} threads vs PyTorch`);
          enc.dispose();
        }
      }
    } finally {
      configure({ build: 'auto' });
    }
  });
}

test('a long sequence, a padded batch and many heads split across threads: the same bits', async () => {
  const cfg = {
    vocabSize: 100,
    dModel: 96,
    heads: 12,
    layers: 2,
    ffDim: 256,
    position: 'alibi',
    norm: 'layernorm',
    normPlacement: 'pre',
    activation: 'gelu',
    localWindow: 40,
    localLayers: [1],
  };
  const ids = [Array.from({ length: 300 }, (_, i) => (i * 7) % 100), Array.from({ length: 65 }, (_, i) => i), [3]];
  const ref = (await createEncoder(cfg, { seed: 5, threads: 1 })).forward(ids, { outputHiddenStates: true });
  for (const threads of [2, 3, 4]) {
    const out = (await createEncoder(cfg, { seed: 5, threads })).forward(ids, { outputHiddenStates: true });
    assertBitIdentical(out.data, ref.data, `${threads} threads`);
    out.hiddenStates.forEach((h, l) => assertBitIdentical(h.data, ref.hiddenStates[l].data, `hidden ${l}, ${threads} threads`));
  }
});

test('the pool stops with the last encoder, and a Node process with an undisposed encoder exits', () => {
  const script = `
    import { createEncoder, runtimeInfo } from ${JSON.stringify(BINDINGS)};
    const enc = await createEncoder({ vocabSize: 50, dModel: 64, heads: 4, layers: 2, ffDim: 128, position: 'rope', norm: 'rmsnorm', normPlacement: 'pre', activation: 'swiglu' }, { seed: 1, threads: 2 });
    const info = await runtimeInfo({ threads: 2 });
    enc.forward(Array.from({ length: 200 }, (_, i) => i % 50));
    console.log(JSON.stringify(info));
    // no dispose: the workers must not keep the process alive
  `;
  const t0 = Date.now();
  const r = spawnSync(process.execPath, [...NODE_FLAGS, '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 30000 });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(JSON.parse(r.stdout.trim()).threaded, true);
  assert.ok(Date.now() - t0 < 20000, 'exited promptly');
});

test('forwardAsync and embedAsync: the pass runs in a worker, this thread stays free, the same bits; BUSY meanwhile', async () => {
  const cfg = {
    vocabSize: 1000,
    dModel: 128,
    heads: 4,
    layers: 2,
    ffDim: 256,
    position: 'rope',
    norm: 'rmsnorm',
    normPlacement: 'pre',
    activation: 'swiglu',
    outputHead: true,
  };
  const enc = await createEncoder(cfg, { seed: 1, threads: 2 });
  const other = await createEncoder(cfg, { seed: 2, threads: 2 }); // same runtime: one memory, one pool
  const ids = [Array.from({ length: 400 }, (_, i) => (i * 3) % 1000), [1, 2, 3]];
  const want = enc.forward(ids, { outputAttentions: true });
  let ticks = 0;
  const timer = setInterval(() => ticks++, 1);
  const pending = enc.forwardAsync(ids, { outputAttentions: true });
  await null; // it has started
  assert.throws(
    () => other.forward([1, 2]),
    (e) => e.code === 'BUSY' && /forwardAsync/.test(e.message),
  );
  const got = await pending;
  clearInterval(timer);
  assert.ok(ticks > 0, 'timers ran while the pass computed');
  assertBitIdentical(got.data, want.data, 'forwardAsync');
  assertBitIdentical(got.logits.data, want.logits.data, 'logits');
  got.attentions.forEach((a, l) => assertBitIdentical(a.data, want.attentions[l].data, `attentions ${l}`));
  assert.deepEqual(other.forward([1, 2]).shape, [1, 2, 128]); // free again
  // errors come back as SwapformerErrors, and the runtime stays usable
  await assert.rejects(enc.forwardAsync([[5000]]), (e) => e.code === 'BAD_TOKEN');
  assertBitIdentical((await enc.forwardAsync(ids)).data, want.data, 'after an error');
  // one thread: forwardAsync computes here and gives the same
  const single = await createEncoder(cfg, { seed: 1, threads: 1 });
  assertBitIdentical((await single.forwardAsync(ids)).data, want.data, 'single-threaded forwardAsync');
  for (const e of [enc, other, single]) e.dispose();

  const p = await loadPretrained(new URL('./pretrained/bert-minilm/', import.meta.url), { threads: 2 });
  const texts = Array.from({ length: 40 }, (_, i) => `sentence ${i} of a batch larger than one pass`);
  assertBitIdentical((await p.embedAsync(texts)).data, p.embed(texts).data, 'embedAsync');
  p.dispose();
});

test('in Chromium (a cross-origin-isolated page): Web Workers, the same bits as one thread, forwardAsync keeps the page responsive', async () => {
  const { chromium } = await import('playwright-core');
  const { startServer } = await import('../web/server.js');
  const server = await startServer({ port: 0 });
  const browser = await chromium.launch({
    executablePath: process.env.SWAPFORMER_CHROMIUM || '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update'],
  });
  try {
    const page = await browser.newPage();
    const problems = [];
    page.on('pageerror', (e) => problems.push(e.message));
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(m.text());
    });
    await page.goto(`http://127.0.0.1:${server.port}/web/`);
    const r = await page.evaluate(async () => {
      const api = await import('/bindings/index.js');
      const cfg = {
        vocabSize: 1000,
        dModel: 256,
        heads: 8,
        layers: 3,
        ffDim: 1024,
        position: 'alibi',
        norm: 'layernorm',
        normPlacement: 'post',
        activation: 'gelu',
      };
      const ids = [Array.from({ length: 300 }, (_, i) => (i * 7) % 1000), [5, 6, 7]];
      const one = await api.createEncoder(cfg, { seed: 3, threads: 1 });
      const two = await api.createEncoder(cfg, { seed: 3, threads: 2 });
      const a = one.forward(ids).data,
        b = two.forward(ids).data;
      let ticks = 0;
      const timer = setInterval(() => ticks++, 0);
      const c = (await two.forwardAsync(ids)).data;
      clearInterval(timer);
      const same = (x, y) => x.length === y.length && x.every((v, i) => Object.is(v, y[i]));
      return { isolated: crossOriginIsolated, info: await api.runtimeInfo({ threads: 2 }), sync: same(a, b), async: same(a, c), ticks };
    });
    assert.equal(r.isolated, true);
    assert.equal(r.info.threaded, true, r.info.threadsFallback ?? '');
    assert.equal(r.info.threads, 2);
    assert.equal(r.sync, true, '2 threads = 1 thread, bit for bit');
    assert.equal(r.async, true, 'forwardAsync = forward, bit for bit');
    assert.ok(r.ticks > 0, 'the page ran timers during forwardAsync');
    assert.deepEqual(problems, []);
  } finally {
    await browser.close();
    await server.close();
  }
});
