// Hardening II: what a hostile caller tried, through the public API only.
// Each test names the item of the hardening issue it covers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createEncoder, loadModel, runtimeInfo, configure } from '../bindings/index.js';
import { assertBitIdentical, rejects } from './helpers.js';

const builds = {
  simd128: readFileSync(new URL('../dist/swapformer.wasm', import.meta.url)),
  relaxed: readFileSync(new URL('../dist/swapformer-relaxed.wasm', import.meta.url)),
};
const tiny = { vocabSize: 8, dModel: 4, heads: 1, layers: 1, ffDim: 4, position: 'none', norm: 'rmsnorm', normPlacement: 'pre', activation: 'relu' };
const ropeCfg = { vocabSize: 50, dModel: 64, heads: 4, layers: 1, ffDim: 64, position: 'rope', norm: 'layernorm', normPlacement: 'pre', activation: 'gelu' };
const ones = (n) => new Array(n).fill(1);

for (const [build, bytes] of Object.entries(builds)) {
  test(`1. sizes that wrap in 32 bits are OUT_OF_MEMORY, and other encoders are untouched [${build}]`, async () => {
    const wasm = new Uint8Array(bytes); // its own instance
    const other = await createEncoder(ropeCfg, { seed: 7, wasm });
    const ref = other.forward([
      [1, 2, 3],
      [4, 5],
    ]).data;
    const t = await createEncoder(tiny, { seed: 1, wasm });
    // 65,536 one-token sequences + one of 65,537 tokens: B * T * C wraps size_t
    const batch = Array.from({ length: 65536 }, () => [1]);
    batch.push(ones(65537));
    await rejects(() => t.forward(batch), 'OUT_OF_MEMORY', /wasm32/);
    // an ordinary config: 262,144 one-token sequences + one of 16,385 tokens
    const r = await createEncoder(ropeCfg, { seed: 2, wasm });
    const batch2 = Array.from({ length: 262144 }, () => [1]);
    batch2.push(ones(16385));
    await rejects(() => r.forward(batch2), 'OUT_OF_MEMORY', /wasm32/);
    assertBitIdentical(
      other.forward([
        [1, 2, 3],
        [4, 5],
      ]).data,
      ref,
      'the other encoder',
    );
    assert.deepEqual(t.forward([[1, 2], [3]]).shape, [2, 2, 4]); // still usable
    for (const e of [other, t, r]) e.dispose();
  });
}

test('2. re-entrancy: user code inside the inputs cannot change what a call does', async () => {
  const wasm = new Uint8Array(builds.simd128);
  const e = await createEncoder(ropeCfg, { seed: 3, wasm });
  const big = await createEncoder(ropeCfg, { seed: 4, wasm });
  const ref = e.forward([5, 6, 7]).data;
  // a getter that runs a forward on the same encoder with other ids
  const evil1 = [5, 6, 7];
  Object.defineProperty(evil1, 1, {
    get() {
      e.forward([9, 9, 9, 9]);
      return 6;
    },
  });
  assertBitIdentical(e.forward(evil1).data, ref, 'outer forward after a nested one');
  // a Proxy that grows wasm memory through another encoder
  const before = (await runtimeInfo({ wasm })).memoryBytes;
  const evil2 = new Proxy([5, 6, 7], {
    get(t, k) {
      if (k === '2') big.forward(ones(3000));
      return Reflect.get(t, k);
    },
  });
  assertBitIdentical(e.forward(evil2).data, ref, 'forward while memory grew');
  assert.ok((await runtimeInfo({ wasm })).memoryBytes > before, 'memory did grow');
  // a getter that disposes the encoder: DISPOSED, no trap
  const evil3 = [5, 6, 7];
  Object.defineProperty(evil3, 0, {
    get() {
      e.dispose();
      return 5;
    },
  });
  await rejects(() => e.forward(evil3), 'DISPOSED');
  // options, weights and probes are read first too
  const f = await createEncoder(ropeCfg, { seed: 3, wasm });
  const opts = {
    get outputAttentions() {
      f.forward([1]);
      return true;
    },
  };
  assertBitIdentical(f.forward([5, 6, 7], opts).data, ref);
  const q = new Proxy(new Array(64).fill(0.1), {
    get(t, k) {
      if (k === '3') f.forward(ones(500));
      return Reflect.get(t, k);
    },
  });
  const s1 = f.positionScores({ q, length: 5 }).data;
  const s2 = f.positionScores({ q: new Array(64).fill(0.1), length: 5 }).data;
  assertBitIdentical(s1, s2, 'scores');
  const weights = {
    get 'embed.tokens'() {
      f.forward(ones(700));
      return new Float32Array(50 * 64).fill(0.5);
    },
  };
  const g = await createEncoder(ropeCfg, { seed: 3, weights, wasm });
  const g2 = await createEncoder(ropeCfg, { seed: 3, weights: { 'embed.tokens': new Float32Array(50 * 64).fill(0.5) }, wasm });
  assertBitIdentical(g.forward([1, 2]).data, g2.forward([1, 2]).data, 'weights read through a getter');
  for (const x of [big, f, g, g2]) x.dispose();
});

test('3. probes check the length before they reserve', async () => {
  const wasm = new Uint8Array(builds.simd128);
  const e = await createEncoder({ ...tiny, position: 'learned', maxLen: 16 }, { seed: 1, wasm });
  const before = (await runtimeInfo({ wasm })).memoryBytes;
  for (const n of [17, 1e6, 2 ** 31 - 1]) await rejects(() => e.positionVectors(n), 'SEQUENCE_TOO_LONG', /at most 16/);
  for (const n of [17, 1e6]) await rejects(() => e.positionScores({ length: n }), 'SEQUENCE_TOO_LONG', /at most 16/);
  assert.equal((await runtimeInfo({ wasm })).memoryBytes, before, 'memory did not grow');
  assert.deepEqual(e.positionVectors(16).shape, [16, 4]);
});

test('3b. a config too large for wasm32 is OUT_OF_MEMORY naming its first tensor that cannot fit (read before the encoder is freed)', async (t) => {
  configure({ backend: 'wasm' }); // wasm32's limit (natively: OUT_OF_MEMORY past 3/4 of the machine's memory, tests/native.test.js)
  t.after(() => configure({ backend: undefined }));
  // 2^24 x 1024 floats: embed.tokens alone wraps a 32-bit size_t. The name came from the freed encoder's
  // parameter list (garbage such as '0@' once emmalloc reused it).
  const huge = {
    vocabSize: 16777216,
    dModel: 1024,
    heads: 16,
    layers: 1,
    ffDim: 512,
    position: 'rope',
    norm: 'layernorm',
    normPlacement: 'pre',
    activation: 'gelu',
  };
  await rejects(createEncoder(huge), 'OUT_OF_MEMORY', /^config needs more parameter memory than wasm32 can address \(at 'embed\.tokens'\)$/);
  const e = await createEncoder({ ...huge, vocabSize: 50, dModel: 16, heads: 2, ffDim: 32 }); // and the runtime still works
  assert.equal(e.forward([1, 2, 3]).shape[2], 16);
  e.dispose();
});

test('4. nothing ignored or truncated: Maps, NUL, scaling none, inherited properties, duplicate keys', async () => {
  const e = await createEncoder(ropeCfg, { seed: 5 });
  const weights = e.getWeights();
  const fromObject = await createEncoder(ropeCfg, { weights });
  const fromMap = await createEncoder(ropeCfg, { weights: new Map(Object.entries(weights)), seed: 99 });
  assertBitIdentical(fromMap.forward([1, 2, 3]).data, fromObject.forward([1, 2, 3]).data, 'a Map of weights is honoured');
  await rejects(createEncoder(ropeCfg, { weights: new Map([[7, new Float32Array(1)]]) }), 'BAD_WEIGHTS', /key/);
  await rejects(createEncoder({ ...ropeCfg, position: 'rope\u0000xyz' }), 'BAD_CONFIG', /NUL/);
  await rejects(createEncoder({ ...ropeCfg, normPlacement: 'pre\u0000post' }), 'BAD_CONFIG', /NUL/);
  await rejects(createEncoder(ropeCfg, { weights: { 'embed.tokens\u0000junk': weights['embed.tokens'] } }), 'BAD_WEIGHTS', /NUL/);
  await rejects(createEncoder({ ...ropeCfg, positionOptions: { scaling: { type: 'none', factor: 5 } } }), 'BAD_CONFIG', /factor does not apply/);
  // a model file whose tensor name carries an escaped NUL, and headers with repeated keys
  const file = e.save();
  const hlen = Number(new DataView(file.buffer, file.byteOffset).getBigUint64(0, true));
  const header = new TextDecoder().decode(file.subarray(8, 8 + hlen));
  const rebuild = (text) => {
    const h = new TextEncoder().encode(text);
    const out = new Uint8Array(8 + h.length + file.length - 8 - hlen);
    new DataView(out.buffer).setBigUint64(0, BigInt(h.length), true);
    out.set(h, 8);
    out.set(file.subarray(8 + hlen), 8 + h.length);
    return out;
  };
  await rejects(loadModel(rebuild(header.replace('"embed.tokens"', '"embed.tokens\\u0000junk"'))), 'BAD_FILE', /NUL/);
  const cfgField = header.match(/"config":("(?:[^"\\]|\\.)*")/)[0];
  await rejects(loadModel(rebuild(header.replace(cfgField, `${cfgField},${cfgField}`))), 'BAD_FILE', /__metadata__\.config appears twice/);
  await rejects(loadModel(rebuild(header.replace('{"dtype":"F32"', '{"dtype":"F16","dtype":"F32"'))), 'BAD_FILE', /field twice/);
  await rejects(loadModel(rebuild(header.replace('"__metadata__"', '"__metadata__":{"format":"x"},"__metadata__"'))), 'BAD_FILE', /__metadata__ appears twice/);
  await rejects(loadModel(rebuild(header.replace('\\"style\\":', '\\"base\\":10,\\"style\\":'))), 'BAD_CONFIG', /positionOptions\.base is given twice/);
  // inherited properties are never read
  const ref = (await createEncoder(ropeCfg)).forward([1, 2, 3]);
  for (const [key, value] of [
    ['seed', 5],
    ['weights', { 'embed.tokens': new Float32Array(50 * 64) }],
    ['wasm', 'nope.wasm'],
    ['outputAttentions', true],
    ['outputHiddenStates', true],
  ]) {
    Object.prototype[key] = value;
    try {
      const enc = await createEncoder(ropeCfg);
      const out = enc.forward([1, 2, 3]);
      assertBitIdentical(out.data, ref.data, `inherited ${key}`);
      assert.equal(out.attentions, undefined);
      assert.equal(out.hiddenStates, undefined);
    } finally {
      delete Object.prototype[key];
    }
  }
});

test('5. clean errors for odd arguments; DISPOSED first; the config is deeply frozen', async () => {
  const e = await createEncoder({ ...ropeCfg, outputHead: true, positionOptions: { scaling: { type: 'ntk', factor: 2 } } });
  await rejects(() => e.positionScores(), 'BAD_ARGUMENT', /positionScores takes/);
  await rejects(() => e.positionScores({ length: 3, q: new BigInt64Array(64) }), 'BAD_ARGUMENT', /probe\.q must hold numbers/);
  await rejects(createEncoder(ropeCfg, { weights: { 'embed.tokens': new BigInt64Array(3200) } }), 'BAD_WEIGHTS', /must hold numbers/);
  await rejects(() => e.forward([1, , 3]), 'BAD_TOKEN', /ids\[1\] = undefined \(a hole/); // eslint-disable-line no-sparse-arrays
  assert.ok(Object.isFrozen(e.config.positionOptions.scaling));
  assert.throws(() => {
    e.config.positionOptions.scaling.factor = 3;
  }, TypeError);
  e.dispose();
  for (const call of [
    () => e.predict([1]),
    () => e.predict('x'),
    () => e.forward(null),
    () => e.positionScores(),
    () => e.positionVectors(-1),
    () => e.save(),
  ]) {
    await rejects(call, 'DISPOSED');
  }
});

test('6. non-finite outputs: NON_FINITE naming the layer and stage, never a silent argmax of NaN', async () => {
  const cfg = { ...ropeCfg, normPlacement: 'post', outputHead: true };
  const w = (await createEncoder(cfg, { seed: 1 })).getWeights();
  w['embed.tokens'] = w['embed.tokens'].map((x) => x * 1e30);
  const e = await createEncoder(cfg, { weights: w });
  await rejects(
    () =>
      e.forward([
        [1, 2],
        [3, 4, 5],
      ]),
    'NON_FINITE',
    /layer 0 attention .*ids\[0\]\[0\]/,
  );
  await rejects(() => e.predict([1, 2]), 'NON_FINITE');
  // logits of 64 terms of 3e38: beyond float32 (the last norm's bias makes every row sum to 64)
  const w2 = {
    ...w,
    'embed.tokens': w['embed.tokens'].map((x) => x / 1e30),
    'layers.0.norm2.bias': new Float32Array(64).fill(1),
    'head.weight': new Float32Array(50 * 64).fill(3e38),
  };
  const h = await createEncoder(cfg, { weights: w2 });
  await rejects(() => h.predict([1, 2]), 'NON_FINITE', /output head/);
  // the encoder stays usable with sane weights on the same runtime
  assert.equal((await createEncoder(cfg, { seed: 1 })).predict([1, 2]).length, 2);
});

test('7. OUT_OF_MEMORY in a loop that never yields says that undisposed encoders hold the memory', async () => {
  const wasm = new Uint8Array(builds.simd128); // its own instance: it ends at 2 GB
  const cfg = { vocabSize: 4, dModel: 2, heads: 1, layers: 1, ffDim: 2, position: 'none', norm: 'rmsnorm', normPlacement: 'pre', activation: 'relu' };
  const encoders = [];
  let err;
  for (let i = 0; i < 200 && !err; i++) {
    const e = await createEncoder(cfg, { wasm });
    encoders.push(e);
    try {
      e.forward(ones(4096), { outputAttentions: true }); // keeps a 64 MB reservation
    } catch (x) {
      err = x;
    }
  }
  assert.ok(err, 'ran out of memory');
  assert.equal(err.code, 'OUT_OF_MEMORY');
  assert.match(err.message, /\d+ encoders of this runtime are alive .*dispose\(\)/);
  for (const e of encoders) e.dispose();
  const fresh = await createEncoder(cfg, { wasm });
  assert.equal(fresh.forward(ones(4096), { outputAttentions: true }).attentions.length, 1);
});
