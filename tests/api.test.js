// The public API: module loading, save/load, seeds, batches, weights, dispose,
// and the errors of common mistakes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createEncoder, loadModel, listPlugins, SwapformerError, Encoder, features, runtimeInfo, configure } from '../bindings/index.js';
import { golden, readFixture, assertBitIdentical, rejects } from './helpers.js';

const defaultWasm = new URL(features.relaxedSimd ? '../dist/swapformer-relaxed.wasm' : '../dist/swapformer.wasm', import.meta.url);
const wasmBytes = readFileSync(defaultWasm);
const cfg = { vocabSize: 50, dModel: 32, heads: 4, layers: 2, ffDim: 64, position: 'rope', norm: 'rmsnorm', normPlacement: 'pre', activation: 'swiglu' };

test('both single-threaded builds import nothing, instantiate with {} and stay under 115 KB; the threaded ones at most 120 KB', async () => {
  for (const file of ['swapformer-mt.wasm', 'swapformer-relaxed-mt.wasm']) {
    // the threaded ones import their shared memory
    const bytes = readFileSync(new URL(`../dist/${file}`, import.meta.url));
    assert.ok(bytes.length <= 120 * 1024, `${file} is ${bytes.length} bytes`);
    assert.deepEqual(WebAssembly.Module.imports(await WebAssembly.compile(bytes)), [{ module: 'env', name: 'memory', kind: 'memory' }], file);
  }
  for (const file of ['swapformer.wasm', 'swapformer-relaxed.wasm']) {
    const bytes = readFileSync(new URL(`../dist/${file}`, import.meta.url));
    assert.ok(bytes.length < 115 * 1024, `${file} is ${bytes.length} bytes (the package's promise: a runtime under 115 KB)`);
    const module = await WebAssembly.compile(bytes);
    assert.deepEqual(WebAssembly.Module.imports(module), [], file);
    const { exports } = await WebAssembly.instantiate(module, {});
    exports._initialize();
    assert.equal(exports.sf_abi_version(), 4);
  }
});

test('the wasm option takes bytes, a Module, or a URL', async (t) => {
  const ids = [1, 2, 3];
  configure({ backend: 'wasm' }); // the reference: the default wasm build (the native backend's floats differ)
  t.after(() => configure({ backend: undefined }));
  const ref = (await createEncoder(cfg, { seed: 1 })).forward(ids).data;
  for (const wasm of [wasmBytes, await WebAssembly.compile(wasmBytes), defaultWasm, defaultWasm.href]) {
    assertBitIdentical((await createEncoder(cfg, { seed: 1, wasm })).forward(ids).data, ref);
  }
});

test('listPlugins reads the C registry', async () => {
  assert.deepEqual(await listPlugins(), { position: ['sinusoidal', 'learned', 'rope', 'alibi', 't5', 'disentangled', 'none'], norm: ['layernorm', 'rmsnorm'] });
});

test('config is resolved with every default', async () => {
  const enc = await createEncoder(cfg);
  assert.deepEqual(enc.config, {
    ...cfg,
    maxLen: 512,
    positionOptions: { base: 10000, style: 'interleaved' },
    finalNorm: true,
    eps: 1e-5,
    scaleEmbedding: false,
    outputHead: false,
    typeVocabSize: 0,
    embedNorm: false,
    firstAttnNorm: true,
    localWindow: 0,
    localLayers: [],
    qkNorm: 'none',
    residualScale: 1,
    relativeBias: 'none',
    relativeBiasOptions: {},
    head: null,
  });
  assert.ok(Object.isFrozen(enc.config));
  const s = await createEncoder({ ...cfg, position: 'sinusoidal', positionOptions: { base: 100 }, eps: 1e-6, normPlacement: 'post' });
  assert.deepEqual(s.config.positionOptions, { base: 100 });
  assert.equal(s.config.eps, 1e-6);
  assert.equal(s.config.finalNorm, false);
});

test('save() -> loadModel() gives the same config, weights and bit-identical outputs', async () => {
  for (const position of ['sinusoidal', 'learned', 'rope', 'alibi', 'none']) {
    const enc = await createEncoder(
      { ...cfg, position, norm: 'layernorm', positionOptions: position === 'rope' ? { style: 'half', base: 500 } : undefined },
      { seed: 7 },
    );
    const bytes = enc.save();
    assert.ok(bytes instanceof Uint8Array);
    const back = await loadModel(bytes);
    assert.deepEqual(back.config, enc.config);
    const [w1, w2] = [enc.getWeights(), back.getWeights()];
    assert.deepEqual(Object.keys(w2), Object.keys(w1));
    for (const k of Object.keys(w1)) assertBitIdentical(w2[k], w1[k], k);
    const ids = [
      [4, 8, 15, 16, 23, 42],
      [1, 2],
    ];
    const [a, b] = [enc.forward(ids, { outputAttentions: true }), back.forward(ids, { outputAttentions: true })];
    assertBitIdentical(b.data, a.data);
    a.attentions.forEach((x, l) => assertBitIdentical(b.attentions[l].data, x.data, `attentions ${l}`));
    // the header is safetensors: u64 length, JSON, 8-byte aligned data
    const n = Number(new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(0, true));
    const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n)));
    assert.equal(header.__metadata__.format, 'swapformer');
    assert.deepEqual(JSON.parse(header.__metadata__.config), enc.config);
    assert.equal((8 + n) % 8, 0);
    assert.deepEqual(header['layers.0.attn.q.weight'], { dtype: 'F32', shape: [32, 32], data_offsets: header['layers.0.attn.q.weight'].data_offsets });
  }
});

test('ArrayBuffer input to loadModel, and a fixture stored as F16 / BF16 re-saves as F32', async () => {
  const c = golden.cases.find((x) => x.name.startsWith('f16__'));
  const bytes = readFixture(c.file);
  const enc = await loadModel(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
  const again = await loadModel(enc.save());
  assertBitIdentical(again.forward(c.ids).data, enc.forward(c.ids).data);
});

test('seeds: deterministic, distinct, and shared by name across configs', async () => {
  const a = (await createEncoder(cfg, { seed: 42 })).getWeights();
  const b = (await createEncoder(cfg, { seed: 42 })).getWeights();
  const c = (await createEncoder(cfg, { seed: 43 })).getWeights();
  for (const k of Object.keys(a)) assertBitIdentical(a[k], b[k], k);
  assert.notDeepEqual(a['embed.tokens'], c['embed.tokens']);
  // swap the position plugin on the same seed: every tensor both have is the same
  const l = (await createEncoder({ ...cfg, position: 'learned' }, { seed: 42 })).getWeights();
  for (const k of Object.keys(a)) assertBitIdentical(l[k], a[k], k);
  assert.deepEqual(
    Object.keys(l).filter((k) => !(k in a)),
    ['embed.positions'],
  );
  // initialisation: N(0,1) embeddings, U(+-1/sqrt(in)) Linear weights, zero biases, unit norm weights
  const tok = a['embed.tokens'],
    mean = tok.reduce((s, x) => s + x) / tok.length;
  const std = Math.sqrt(tok.reduce((s, x) => s + (x - mean) ** 2, 0) / tok.length);
  assert.ok(Math.abs(mean) < 0.05 && Math.abs(std - 1) < 0.05, `embeddings N(0,1): mean ${mean} std ${std}`);
  const w = a['layers.0.ffn.up.weight'],
    bound = 1 / Math.sqrt(32);
  assert.ok(w.every((x) => Math.abs(x) <= bound) && Math.max(...w) > 0.9 * bound);
  assert.ok(a['layers.1.attn.o.bias'].every((x) => x === 0));
  assert.ok(a['final_norm.weight'].every((x) => x === 1));
});

test('swapping a plugin on the same weights keeps every shared weight', async () => {
  const enc = await createEncoder({ ...cfg, norm: 'layernorm' }, { seed: 3 });
  const w = enc.getWeights();
  const swapped = await createEncoder({ ...enc.config, position: 'alibi', positionOptions: {} }, { weights: w });
  const w2 = swapped.getWeights();
  for (const k of Object.keys(w)) assertBitIdentical(w2[k], w[k], k);
  // rmsnorm has no biases: passing the layernorm biases is an error, not a silent drop
  await rejects(createEncoder({ ...enc.config, norm: 'rmsnorm' }, { weights: w }), 'BAD_WEIGHTS', /layers\.0\.norm1\.bias/);
});

test('Encoder.withConfig: the same weights under another scheme; tables dropped, new ones zero, options reset; the source unchanged', async () => {
  const base = {
    vocabSize: 50,
    dModel: 16,
    heads: 2,
    layers: 2,
    ffDim: 32,
    position: 'learned',
    maxLen: 24,
    norm: 'layernorm',
    normPlacement: 'pre',
    activation: 'gelu',
  };
  const enc = await createEncoder(base, { seed: 3 });
  const before = enc.getWeights();
  const rope = await enc.withConfig({ position: 'rope' });
  assert.deepEqual(rope.config.positionOptions, (await createEncoder({ ...base, position: 'rope' })).config.positionOptions, 'rope with its own defaults');
  const after = rope.getWeights();
  assert.ok(!Object.hasOwn(after, 'embed.positions'), 'the learned table is dropped');
  for (const [name, w] of Object.entries(after)) assertBitIdentical(w, before[name], name);
  // the same as createEncoder on those weights: the swap is the config change alone
  const direct = await createEncoder({ ...base, position: 'rope' }, { weights: after });
  assertBitIdentical(rope.forward([1, 2, 3, 4]).data, direct.forward([1, 2, 3, 4]).data, 'rope via withConfig = createEncoder with the weights');
  const learned = await rope.withConfig({ position: 'learned', maxLen: 40 });
  assert.ok(
    learned.getWeights()['embed.positions'].every((x) => x === 0),
    'a table swapped in starts at zero, not seeded noise',
  );
  const longer = await enc.withConfig({ maxLen: 40 }); // the learned table resized: the trained rows kept, zeros after
  const table = longer.getWeights()['embed.positions'];
  assertBitIdentical(table.subarray(0, 24 * 16), before['embed.positions'], 'the trained rows');
  assert.ok(
    table.subarray(24 * 16).every((x) => x === 0),
    'zeros past them',
  );
  assert.equal((await enc.withConfig({ eps: 1e-6 })).config.eps, 1e-6);
  await rejects(enc.withConfig({ dModel: 32 }), 'BAD_CONFIG', /resizes the weight/);
  await rejects(enc.withConfig({ position: 'rope' }, { maxLength: 8 }), 'BAD_ARGUMENT', /unknown option 'maxLength'/);
  await rejects(enc.withConfig(null), 'BAD_ARGUMENT', /withConfig takes an object/);
  assertBitIdentical(enc.getWeights()['embed.positions'], before['embed.positions'], 'the source is unchanged');
  for (const e of [rope, direct, learned, longer]) e.dispose();
  enc.dispose();
  await rejects(enc.withConfig({ position: 'rope' }), 'DISPOSED');
});

test('positionScores reads q and k of the attention width (heads x headDim), not dModel', async () => {
  const enc = await createEncoder(
    { vocabSize: 20, dModel: 8, heads: 2, headDim: 8, layers: 1, ffDim: 16, position: 'rope', norm: 'layernorm', normPlacement: 'pre', activation: 'gelu' },
    { seed: 1 },
  );
  const q = Float32Array.from({ length: 16 }, (_, i) => (i % 5) / 4),
    k = Float32Array.from({ length: 16 }, (_, i) => (i % 3) / 2);
  const s = enc.positionScores({ q, k, length: 1 }); // one position: no rotation, q.k / sqrt(8) per head
  for (let h = 0; h < 2; h++) {
    let dot = 0;
    for (let d = 0; d < 8; d++) dot += q[h * 8 + d] * k[h * 8 + d];
    assert.ok(Math.abs(s.data[h] - dot / Math.sqrt(8)) < 1e-5, `head ${h}: ${s.data[h]} vs ${dot / Math.sqrt(8)}`);
  }
  await rejects(() => enc.positionScores({ q: new Float32Array(8), length: 2 }), 'BAD_ARGUMENT', /probe\.q must hold heads x headDim = 16 numbers, got 8/);
  enc.dispose();
});

test('a batch of different lengths equals each sequence alone, bit for bit; padding rows are zero', async () => {
  for (const position of ['sinusoidal', 'learned', 'rope', 'alibi', 'none']) {
    const enc = await createEncoder({ ...cfg, position, layers: 3 }, { seed: 9 });
    const seqs = [[5, 3, 9, 1, 1, 7, 30, 2, 2, 8, 41], [6], [10, 20, 30, 40, 49], Array.from({ length: 70 }, (_, i) => (i * 7) % 50)];
    const batch = enc.forward(seqs, { outputAttentions: true });
    const T = 70;
    assert.deepEqual(batch.shape, [4, T, 32]);
    seqs.forEach((s, b) => {
      const one = enc.forward(s, { outputAttentions: true });
      assertBitIdentical(batch.data.subarray(b * T * 32, (b * T + s.length) * 32), one.data, `${position} seq ${b}`);
      assert.ok(batch.data.subarray((b * T + s.length) * 32, (b + 1) * T * 32).every((x) => x === 0));
      const L = s.length;
      for (let l = 0; l < 3; l++)
        for (let h = 0; h < 4; h++)
          for (let i = 0; i < T; i++) {
            const r = batch.attentions[l].data.subarray(((b * 4 + h) * T + i) * T, ((b * 4 + h) * T + i + 1) * T);
            if (i >= L)
              assert.ok(
                r.every((x) => x === 0),
                'padded query rows are zero',
              );
            else {
              assert.ok(
                r.subarray(L).every((x) => x === 0),
                'padded keys get no attention',
              );
              assertBitIdentical(r.subarray(0, L), one.attentions[l].data.subarray((h * L + i) * L, (h * L + i + 1) * L));
            }
          }
    });
  }
});

test('the same input gives the same bits across calls and instances', async () => {
  const ids = Array.from({ length: 40 }, (_, i) => (i * 13) % 50);
  const a = await createEncoder(cfg, { seed: 2 }),
    b = await createEncoder(cfg, { seed: 2 });
  const ref = a.forward(ids).data;
  a.forward([[1, 2, 3]]);
  assertBitIdentical(a.forward(ids).data, ref);
  assertBitIdentical(b.forward(Int32Array.from(ids)).data, ref);
});

test('getWeights returns copies; weightShapes gives every shape', async () => {
  const enc = await createEncoder(cfg, { seed: 1 });
  const w = enc.getWeights();
  w['embed.tokens'].fill(0);
  assert.ok(enc.getWeights()['embed.tokens'].some((x) => x !== 0));
  const shapes = enc.weightShapes();
  assert.deepEqual(shapes['embed.tokens'], [50, 32]);
  assert.deepEqual(shapes['layers.1.ffn.gate.weight'], [64, 32]);
  assert.deepEqual(shapes['layers.1.ffn.down.weight'], [32, 64]);
  for (const [k, s] of Object.entries(shapes))
    assert.equal(
      w[k].length,
      s.reduce((a, b) => a * b),
      k,
    );
});

test('a Linear weight is [out, in]: output = x W^T', async () => {
  // layers 1, one-hot embeddings, identity-ish checks on ffn.up through a relu MLP with zero attention
  const C = 4,
    F = 3;
  const up = new Float32Array([1, 2, 3, 4, /* out 1 */ 0, 0, 0, 1, /* out 2 */ -1, 0, 0, 0]);
  const down = new Float32Array([1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0]); // [C=4, F=3]: out0 = h0, out1 = h1, out2 = h2
  const zero = new Float32Array(C * C);
  const enc = await createEncoder(
    { vocabSize: 1, dModel: C, heads: 1, layers: 1, ffDim: F, position: 'none', norm: 'rmsnorm', normPlacement: 'post', finalNorm: false, activation: 'relu' },
    {
      weights: {
        'embed.tokens': new Float32Array([1, 1, 1, 1]),
        'layers.0.attn.v.weight': zero,
        'layers.0.ffn.up.weight': up,
        'layers.0.ffn.down.weight': down,
      },
    },
  );
  const y = enc.forward([0]).data;
  // after attention (v = 0): x = rmsnorm([1,1,1,1]) = [1,1,1,1]; up: [10, 1, -1] -> relu [10, 1, 0]; x + down = [11, 2, 1, 1]
  const rms = Math.sqrt((121 + 4 + 1 + 1) / 4 + 1e-5);
  [11, 2, 1, 1].forEach((v, i) => assert.ok(Math.abs(y[i] - v / rms) < 1e-5, `y[${i}] = ${y[i]}`));
});

test('dispose frees the encoder; later calls throw DISPOSED; Symbol.dispose works', async () => {
  const enc = await createEncoder(cfg);
  assert.ok(enc instanceof Encoder);
  enc.dispose();
  enc.dispose(); // idempotent
  assert.equal(enc.disposed, true);
  for (const call of [() => enc.forward([1]), () => enc.getWeights(), () => enc.save(), () => enc.weightShapes()]) await rejects(call, 'DISPOSED');
  if (typeof Symbol.dispose === 'symbol') {
    let inner;
    {
      const e = await createEncoder(cfg);
      inner = e;
      e[Symbol.dispose]();
    }
    assert.equal(inner.disposed, true);
  }
});

test('errors are SwapformerError with a stable code and the field named', async () => {
  assert.ok(new SwapformerError('X', 'y') instanceof Error);
  await rejects(createEncoder({ ...cfg, dModel: 30 }), 'BAD_CONFIG', /dModel \(30\) must be divisible by config\.heads \(4\)/);
  await rejects(createEncoder({ ...cfg, position: 'xpos' }), 'BAD_CONFIG', /config\.position 'xpos'.*sinusoidal, learned, rope, alibi, t5, disentangled, none/);
  await rejects(createEncoder({ ...cfg, norm: 'batchnorm' }), 'BAD_CONFIG', /config\.norm 'batchnorm'/);
  await rejects(createEncoder({ ...cfg, activation: 'tanh' }), 'BAD_CONFIG', /config\.activation 'tanh'/);
  await rejects(createEncoder({ ...cfg, dmodel: 32 }), 'BAD_CONFIG', /unknown field 'dmodel'/);
  await rejects(createEncoder({ ...cfg, layers: -1 }), 'BAD_CONFIG', /config\.layers must be an integer/);
  await rejects(createEncoder({ ...cfg, heads: 2.5 }), 'BAD_CONFIG', /config\.heads .*got 2\.5/);
  await rejects(createEncoder({ ...cfg, ffDim: '64' }), 'BAD_CONFIG', /config\.ffDim .*got a string/);
  await rejects(createEncoder({ ...cfg, heads: 32 }), 'BAD_CONFIG', /RoPE needs an even head size/);
  await rejects(createEncoder({ ...cfg, positionOptions: { style: 'neox' } }), 'BAD_CONFIG', /positionOptions\.style/);
  await rejects(createEncoder({ ...cfg, positionOptions: { bsae: 10 } }), 'BAD_CONFIG', /unknown field 'bsae'/);
  await rejects(createEncoder({ ...cfg, position: 'alibi', positionOptions: { base: 10 } }), 'BAD_CONFIG', /takes no options/);
  await rejects(createEncoder({ ...cfg, eps: 0 }), 'BAD_CONFIG', /config\.eps/);
  await rejects(createEncoder({ ...cfg, finalNorm: 1 }), 'BAD_CONFIG', /config\.finalNorm must be true or false/);
  const { vocabSize, ...noVocab } = cfg;
  await rejects(createEncoder(noVocab), 'BAD_CONFIG', /config\.vocabSize is required/);
  await rejects(createEncoder(null), 'BAD_CONFIG');
  await rejects(createEncoder(cfg, { seed: -1 }), 'BAD_ARGUMENT', /seed/);
  await rejects(createEncoder(cfg, { weights: { 'embed.token': new Float32Array(1) } }), 'BAD_WEIGHTS', /embed\.token/);
  await rejects(createEncoder(cfg, { weights: { 'embed.tokens': new Float32Array(3) } }), 'BAD_WEIGHTS', /'embed\.tokens' has 3 values, config needs 1600/);
  await rejects(createEncoder(cfg, { weights: { 'layers.0.attn.q.bias': new Float32Array(32).fill(NaN) } }), 'BAD_WEIGHTS', /non-finite/);
  await rejects(loadModel(new Uint8Array(3)), 'BAD_FILE', /too short/);
  await rejects(loadModel('model.safetensors'), 'BAD_FILE', /Uint8Array/);

  const enc = await createEncoder(cfg, { seed: 1 });
  const ref = enc.forward([1, 2, 3]).data;
  await rejects(() => enc.forward([1, 50]), 'BAD_TOKEN', /ids\[1\] = 50 .*\[0, 50\)/);
  await rejects(() => enc.forward([[1], [2, -1]]), 'BAD_TOKEN', /ids\[1\]\[1\] = -1/);
  await rejects(() => enc.forward([1.5]), 'BAD_TOKEN', /ids\[0\] = 1\.5/);
  await rejects(() => enc.forward([NaN]), 'BAD_TOKEN', /NaN/);
  await rejects(() => enc.forward(['1']), 'BAD_TOKEN', /string/);
  await rejects(() => enc.forward([]), 'BAD_ARGUMENT', /empty/);
  await rejects(() => enc.forward([[1], []]), 'BAD_ARGUMENT', /ids\[1\] is empty/);
  await rejects(() => enc.forward('hello'), 'BAD_ARGUMENT');
  assertBitIdentical(enc.forward([1, 2, 3]).data, ref, 'still usable after errors');
});

test('outputHiddenStates: embeddings then the stream after each layer; the last one, normed, is the output', async () => {
  for (const position of ['none', 'rope', 'learned']) {
    const enc = await createEncoder({ ...cfg, position, norm: 'layernorm', layers: 3 }, { seed: 4 });
    const ids = [
      [3, 1, 4, 1, 5],
      [9, 2],
    ];
    const r = enc.forward(ids, { outputHiddenStates: true, outputAttentions: true });
    assert.equal(r.hiddenStates.length, 4);
    assertBitIdentical(r.data, enc.forward(ids).data, 'asking for more outputs changes nothing');
    // with zero layers and no final norm, the single hidden state is the embedding output
    const embedOnly = Object.fromEntries(Object.entries(enc.getWeights()).filter(([k]) => k.startsWith('embed.')));
    const flat = await createEncoder({ ...enc.config, layers: 0, finalNorm: false }, { weights: embedOnly });
    const e0 = flat.forward(ids);
    assertBitIdentical(r.hiddenStates[0].data, e0.data, `${position}: hidden state 0 = embeddings + positions`);
    // layer norm of the last hidden state = the output (pre-norm with final norm)
    const last = r.hiddenStates[3].data,
      C = 32;
    for (let t = 0; t < 5; t++) {
      const x = last.subarray(t * C, (t + 1) * C),
        mean = x.reduce((a, b) => a + b) / C;
      const v = x.reduce((a, b) => a + (b - mean) ** 2, 0) / C;
      for (let k = 0; k < C; k++) assert.ok(Math.abs((x[k] - mean) / Math.sqrt(v + 1e-5) - r.data[t * C + k]) < 1e-4);
    }
  }
});

test('positionVectors: sinusoidal formula, the learned table, zeros for the rest', async () => {
  const s = await createEncoder({ ...cfg, position: 'sinusoidal', positionOptions: { base: 100 } });
  const pv = s.positionVectors(7);
  assert.deepEqual(pv.shape, [7, 32]);
  for (let t = 0; t < 7; t++)
    for (let i = 0; i < 16; i++) {
      assert.ok(Math.abs(pv.data[t * 32 + 2 * i] - Math.sin(t / 100 ** ((2 * i) / 32))) < 1e-6);
      assert.ok(Math.abs(pv.data[t * 32 + 2 * i + 1] - Math.cos(t / 100 ** ((2 * i) / 32))) < 1e-6);
    }
  const l = await createEncoder({ ...cfg, position: 'learned', maxLen: 10 }, { seed: 2 });
  assertBitIdentical(l.positionVectors(10).data, l.getWeights()['embed.positions']);
  await rejects(() => l.positionVectors(11), 'SEQUENCE_TOO_LONG');
  const r = await createEncoder(cfg);
  assert.ok(r.positionVectors(5).data.every((x) => x === 0));
  await rejects(() => r.positionVectors(0), 'BAD_ARGUMENT');
});

test('positionScores: RoPE depends on j - i only; ALiBi bias with q = k = 0; none is flat', async () => {
  const q = Array.from({ length: 32 }, (_, i) => Math.sin(i + 1)),
    k = Array.from({ length: 32 }, (_, i) => Math.cos(2 * i));
  const rope = await createEncoder({ ...cfg, positionOptions: { style: 'half' } });
  const T = 24,
    s = rope.positionScores({ q, k, length: T });
  assert.deepEqual(s.shape, [4, T, T]);
  const at = (h, i, j) => s.data[(h * T + i) * T + j];
  for (let h = 0; h < 4; h++) {
    // offset 0: the plain dot product of head h
    const plain = q.slice(h * 8, h * 8 + 8).reduce((a, x, d) => a + x * k[h * 8 + d], 0) / Math.sqrt(8);
    assert.ok(Math.abs(at(h, 5, 5) - plain) < 1e-5);
    for (let i = 0; i + 6 < T; i++) assert.ok(Math.abs(at(h, i, i + 6) - at(h, 0, 6)) < 1e-4, `offset 6 at i = ${i}`);
  }
  const alibi = await createEncoder({ ...cfg, position: 'alibi' });
  const b = alibi.positionScores({ length: 5 });
  for (let h = 0; h < 4; h++)
    for (let i = 0; i < 5; i++) for (let j = 0; j < 5; j++) assert.ok(Math.abs(b.data[(h * 5 + i) * 5 + j] + 2 ** (-2 * (h + 1)) * Math.abs(i - j)) < 1e-6);
  const none = await createEncoder({ ...cfg, position: 'none' });
  const n = none.positionScores({ q, k, length: 6 });
  assert.ok(n.data.subarray(0, 36).every((x) => x === n.data[0]));
  await rejects(() => none.positionScores({ q: [1, 2], length: 3 }), 'BAD_ARGUMENT', /heads x headDim = 32/);
});

test('outputHead: logits = output @ head^T + bias, predict is their argmax', async () => {
  const config = { ...cfg, vocabSize: 11, outputHead: true, position: 'alibi' };
  const enc = await createEncoder(config, { seed: 8, weights: { 'head.bias': new Float32Array(11).map((_, i) => i / 10) } });
  assert.equal(enc.config.outputHead, true);
  const w = enc.getWeights(),
    shapes = enc.weightShapes();
  assert.deepEqual(shapes['head.weight'], [11, 32]);
  const ids = [
    [1, 2, 3, 4],
    [5, 6],
  ];
  const r = enc.forward(ids);
  assert.deepEqual(r.logits.shape, [2, 4, 11]);
  for (let b = 0; b < 2; b++)
    for (let t = 0; t < 4; t++)
      for (let v = 0; v < 11; v++) {
        const got = r.logits.data[(b * 4 + t) * 11 + v];
        if (t >= ids[b].length) {
          assert.equal(got, 0);
          continue;
        }
        let want = w['head.bias'][v];
        for (let k = 0; k < 32; k++) want += r.data[(b * 4 + t) * 32 + k] * w['head.weight'][v * 32 + k];
        assert.ok(Math.abs(got - want) < 1e-4 * (1 + Math.abs(want)), `logit ${b} ${t} ${v}`);
      }
  const p = enc.predict(ids);
  assert.equal(p.length, 2);
  assert.deepEqual(Array.from(enc.predict(ids[0])), Array.from(p[0]));
  p.forEach((pred, b) =>
    pred.forEach((v, t) => {
      const row = r.logits.data.subarray((b * 4 + t) * 11, (b * 4 + t + 1) * 11);
      assert.equal(v, row.indexOf(Math.max(...row)));
    }),
  );
  const back = await loadModel(enc.save());
  assertBitIdentical(back.forward(ids).logits.data, r.logits.data);
  await rejects(() => createEncoder(cfg).then((e) => e.predict([1])), 'BAD_ARGUMENT', /outputHead/);
});

test('RoPE scaling: linear = positions / factor; ntk = larger base; yarn keeps fast pairs and interpolates slow ones', async () => {
  const q = Array.from({ length: 32 }, (_, i) => Math.cos(i)),
    k = Array.from({ length: 32 }, (_, i) => Math.sin(3 * i));
  const T = 40,
    at = (s, i, j) => s.data[(0 * T + i) * T + j];
  const plain = await createEncoder({ ...cfg, positionOptions: { style: 'half' } });
  const linear = await createEncoder({ ...cfg, positionOptions: { style: 'half', scaling: { type: 'linear', factor: 4 } } });
  const sp = plain.positionScores({ q, k, length: T }),
    sl = linear.positionScores({ q, k, length: T });
  for (const off of [0, 4, 8, 36]) assert.ok(Math.abs(at(sl, 0, off) - at(sp, 0, off / 4)) < 1e-4, `linear: offset ${off} scores like ${off / 4}`);
  const ntk = await createEncoder({ ...cfg, positionOptions: { style: 'half', base: 10000, scaling: { type: 'ntk', factor: 4 } } });
  const base2 = await createEncoder({ ...cfg, positionOptions: { style: 'half', base: 10000 * 4 ** (8 / 6) } });
  assertBitIdentical(ntk.positionScores({ q, k, length: T }).data, base2.positionScores({ q, k, length: T }).data, 'ntk = base * factor^(D/(D-2))');
  assert.deepEqual(ntk.config.positionOptions, { base: 10000, style: 'half', scaling: { type: 'ntk', factor: 4 } });
  const yarn = await createEncoder({ ...cfg, positionOptions: { scaling: { type: 'yarn', factor: 4, originalMaxLen: 16 } } });
  assert.deepEqual(yarn.config.positionOptions.scaling, { type: 'yarn', factor: 4, originalMaxLen: 16, betaFast: 32, betaSlow: 1 });
  // offset 0: q.k scaled by mscale^2, mscale = 0.1 ln 4 + 1
  const s0 = yarn.positionScores({ q, k, length: 2 }),
    p0 = plain.positionScores({ q, k, length: 2 });
  assert.ok(Math.abs(at(s0, 0, 0) / at(p0, 0, 0) - (0.1 * Math.log(4) + 1) ** 2) < 1e-5);
  for (const [scaling, re] of [
    [{ type: 'linear' }, /factor is required/],
    [{ type: 'ntk', factor: 0.5 }, /factor must be in \[1,/],
    [{ type: 'yarn', factor: 2 }, /originalMaxLen is required/],
    [{ type: 'linear', factor: 2, betaFast: 3 }, /applies to type 'yarn' only/],
    [{ type: 'rotate' }, /type must be one of/],
    [{ factor: 2 }, /type is required/],
    ['yarn', /scaling must be an object/],
  ]) {
    await rejects(createEncoder({ ...cfg, positionOptions: { scaling } }), 'BAD_CONFIG', re);
  }
});

test('attention needs O(T) memory: T = 8192 with RoPE and ALiBi grows wasm memory by x, k, v, out, not T x T', async () => {
  for (const position of ['rope', 'alibi']) {
    const wasm = readFileSync(defaultWasm); // a fresh instance: memory is measured from its start
    const C = 64,
      T = 8192,
      enc = await createEncoder({ ...cfg, dModel: C, heads: 4, ffDim: 128, layers: 1, position }, { seed: 1, wasm });
    enc.forward([1, 2, 3]);
    const before = (await runtimeInfo({ wasm })).memoryBytes;
    const ids = Array.from({ length: T }, (_, i) => (i * 31) % 50);
    const out = enc.forward(ids);
    assert.deepEqual(out.shape, [1, T, C]);
    assert.ok(out.data.every(Number.isFinite));
    const grown = (await runtimeInfo({ wasm })).memoryBytes - before,
      linear = 4 * T * C * 4; // x, kv (2), out
    assert.ok(grown <= linear + (4 << 20), `${position}: memory grew ${grown} bytes; O(T) needs ~${linear}; T x T scores alone would be ${4 * T * T * 4}`);
  }
});
