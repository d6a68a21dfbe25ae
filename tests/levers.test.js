// The normalisation levers of issue 14 through the public API: the seed
// initialisations (DeepNorm's beta on exactly attn.v, attn.o and the FFN's
// Linears; init.outputScale on exactly attn.o and ffn.down), their option and
// config errors, forward's skipLayers (its errors and its semantics), the model
// file round trip, and the normalisation lesson's claims in numbers (the seed
// lesson in ../shared/seeds/: the pre-norm stream grows with depth, 1/sqrt(2L)
// and DeepNorm bound it; QK-norm keeps the attention logits from growing without
// bound). The forward pass itself is checked against PyTorch by the golden
// fixtures (tests/golden.test.js: the qknorm_*, deepnorm_*, residual_scale*, skip*
// cases); here every expected number is a formula (beta = (8L)^(-1/4), 1/sqrt(2L),
// s^2, sqrt(headDim)) or a property of the lesson, never swapformer's own output.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createEncoder, loadModel } from '../bindings/index.js';
import { rejects, assertBitIdentical } from './helpers.js';

const BASE = {
  vocabSize: 40,
  dModel: 32,
  heads: 4,
  layers: 6,
  ffDim: 48,
  position: 'learned',
  maxLen: 32,
  norm: 'layernorm',
  normPlacement: 'post',
  activation: 'swiglu',
};
const IDS = [
  [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5],
  [8, 9, 7, 9, 3, 2],
];
const sameBits = (a, b) => a.length === b.length && a.every((x, i) => Object.is(x, b[i]));

async function weightsOf(config, options) {
  const enc = await createEncoder(config, options);
  try {
    return enc.getWeights();
  } finally {
    enc.dispose();
  }
}

/** Every element of a is factor x b, to float32 rounding (both drawn in float64, each rounded once). */
function assertScaled(a, b, factor, what) {
  assert.equal(a.length, b.length, what);
  for (let i = 0; i < a.length; i++) {
    if (b[i] === 0) {
      assert.equal(a[i], 0, `${what}[${i}]`);
      continue;
    }
    const r = a[i] / b[i] / factor - 1;
    assert.ok(Math.abs(r) <= 2.5e-7, `${what}[${i}]: ${a[i]} / ${b[i]} = ${a[i] / b[i]}, want ${factor}`);
  }
}

/** Compares two seed initialisations tensor by tensor: factors[suffix] for the scaled ones, bit-identical the rest. */
function assertOnlyScaled(scaled, plain, factors, what) {
  assert.deepEqual(Object.keys(scaled), Object.keys(plain), `${what}: the same tensors`);
  const seen = new Set();
  for (const [name, w] of Object.entries(scaled)) {
    const suffix = Object.keys(factors).find((s) => name.endsWith(s));
    if (suffix) {
      assertScaled(w, plain[name], factors[suffix], `${what}: ${name}`);
      seen.add(suffix);
    } else assert.ok(sameBits(w, plain[name]), `${what}: ${name} must be untouched`);
  }
  assert.deepEqual([...seen].sort(), Object.keys(factors).sort(), `${what}: every listed tensor exists`);
}

test("residualScale 'deepnorm' with seed weights: DeepNet's beta = (8L)^(-1/4) on exactly attn.v, attn.o, ffn.up, ffn.gate, ffn.down", async () => {
  const config = { ...BASE, qkNorm: 'layernorm' };
  const plain = await weightsOf(config, { seed: 11 });
  const deep = await weightsOf({ ...config, residualScale: 'deepnorm' }, { seed: 11 });
  const beta = (8 * BASE.layers) ** -0.25;
  assert.ok(Math.abs(beta - 0.3799) < 1e-4);
  const linear = ['attn.v.weight', 'attn.o.weight', 'ffn.up.weight', 'ffn.gate.weight', 'ffn.down.weight'];
  assertOnlyScaled(deep, plain, Object.fromEntries(linear.map((n) => [n, beta])), 'deepnorm');
  // on top of nn.Linear's U(-1/sqrt(in), 1/sqrt(in)): the plain draws fill that range, the scaled ones beta times it
  for (const n of linear) {
    const w = plain[`layers.3.${n}`],
      inF = n === 'ffn.down.weight' ? BASE.ffDim : BASE.dModel; // attn.o reads heads x headDim = dModel
    const bound = 1 / Math.sqrt(inF),
      max = Math.max(...w.map(Math.abs));
    assert.ok(max <= bound && max > 0.95 * bound, `${n}: max |w| ${max} against 1/sqrt(${inF}) = ${bound}`);
    assert.ok(Math.max(...deep[`layers.3.${n}`].map(Math.abs)) <= beta * bound * (1 + 1e-6), `${n} x beta`);
  }
  // a number is only the stream's weight: no initialisation changes
  assertOnlyScaled(await weightsOf({ ...config, residualScale: 2.5 }, { seed: 11 }), plain, {}, 'residualScale 2.5');
});

test("init.outputScale: 'depth' multiplies exactly attn.o and ffn.down by 1/sqrt(2L); a number by itself; with DeepNorm both", async () => {
  const config = { ...BASE, qkNorm: 'rmsnorm', typeVocabSize: 2 };
  const plain = await weightsOf(config, { seed: 5 });
  const out = ['attn.o.weight', 'ffn.down.weight'];
  const by = (f) => Object.fromEntries(out.map((n) => [n, f]));
  assertOnlyScaled(await weightsOf(config, { seed: 5, init: { outputScale: 'depth' } }), plain, by(1 / Math.sqrt(2 * BASE.layers)), "outputScale 'depth'");
  assertOnlyScaled(await weightsOf(config, { seed: 5, init: { outputScale: 0.25 } }), plain, by(0.25), 'outputScale 0.25');
  assertOnlyScaled(await weightsOf(config, { seed: 5, init: { outputScale: 1 } }), plain, {}, 'outputScale 1');
  assertOnlyScaled(await weightsOf(config, { seed: 5, init: {} }), plain, {}, 'init {}');
  // the depth is the config's layer count: 2 layers give 1/2
  const two = { ...config, layers: 2 };
  assertOnlyScaled(
    await weightsOf(two, { seed: 5, init: { outputScale: 'depth' } }),
    await weightsOf(two, { seed: 5 }),
    by(0.5),
    "outputScale 'depth', 2 layers",
  );
  // DeepNorm and 'depth' together: v, up, gate x beta; o, down x beta / sqrt(2L)
  const beta = (8 * BASE.layers) ** -0.25;
  assertOnlyScaled(
    await weightsOf({ ...config, residualScale: 'deepnorm' }, { seed: 5, init: { outputScale: 'depth' } }),
    plain,
    { 'attn.v.weight': beta, 'ffn.up.weight': beta, 'ffn.gate.weight': beta, 'attn.o.weight': beta / Math.sqrt(12), 'ffn.down.weight': beta / Math.sqrt(12) },
    'deepnorm + depth',
  );
  // weights given are taken as they are: only the seeded ones are scaled
  const given = { 'layers.0.attn.o.weight': plain['layers.0.attn.o.weight'], 'layers.2.ffn.down.weight': plain['layers.2.ffn.down.weight'] };
  const mixed = await weightsOf(config, { seed: 5, weights: given, init: { outputScale: 'depth' } });
  for (const [n, w] of Object.entries(given)) assert.ok(sameBits(mixed[n], w), `${n}: given, not scaled`);
  assertScaled(mixed['layers.1.attn.o.weight'], plain['layers.1.attn.o.weight'], 1 / Math.sqrt(12), 'layers.1.attn.o.weight (seeded)');
});

test('init option errors: BAD_ARGUMENT naming the field', async () => {
  for (const init of ['depth', null, [], 3])
    await rejects(createEncoder(BASE, { init }), 'BAD_ARGUMENT', /options\.init must be an object like \{outputScale: 'depth'\}/);
  for (const outputScale of ['deep', 'Depth', 0, -1, NaN, Infinity, 2e6, null, true, [1]])
    await rejects(createEncoder(BASE, { init: { outputScale } }), 'BAD_ARGUMENT', /options\.init\.outputScale must be 'depth' or a number in \(0, 1e6\]/);
  await rejects(createEncoder(BASE, { init: { scale: 2 } }), 'BAD_ARGUMENT', /options\.init has an unknown option 'scale'/);
  await rejects(createEncoder(BASE, { init: { outputScale: 'depth', beta: 1 } }), 'BAD_ARGUMENT', /unknown option 'beta'/);
  // accepted: undefined, {}, the bounds
  for (const init of [undefined, {}, { outputScale: undefined }, { outputScale: 1e6 }, { outputScale: 1e-9 }]) (await createEncoder(BASE, { init })).dispose();
});

test('qkNorm and residualScale config errors: BAD_CONFIG naming the field; both echoed in config', async () => {
  await rejects(
    createEncoder({ ...BASE, qkNorm: 'batchnorm' }),
    'BAD_CONFIG',
    /config\.qkNorm 'batchnorm' is neither 'none' nor a registered norm plugin \(layernorm, rmsnorm\)/,
  );
  await rejects(createEncoder({ ...BASE, qkNorm: '' }), 'BAD_CONFIG', /config\.qkNorm '' is neither/);
  for (const v of [3, null, true, ['layernorm']]) await rejects(createEncoder({ ...BASE, qkNorm: v }), 'BAD_CONFIG', /config\.qkNorm must be a string/);
  for (const v of [0, -2, 1e7, -0])
    await rejects(createEncoder({ ...BASE, residualScale: v }), 'BAD_CONFIG', /config\.residualScale must be in \(0, 1e6\] or 'deepnorm'/);
  for (const v of ['deep', 'DeepNorm', '1', true, null, NaN, Infinity, [], {}])
    // NaN and Infinity become null in JSON
    await rejects(createEncoder({ ...BASE, residualScale: v }), 'BAD_CONFIG', /config\.residualScale must be a number or 'deepnorm'/);
  const dflt = await createEncoder(BASE);
  assert.equal(dflt.config.qkNorm, 'none');
  assert.equal(dflt.config.residualScale, 1);
  assert.ok(!Object.keys(dflt.weightShapes()).some((n) => /_norm\./.test(n)), 'no q/k norm tensors without qkNorm');
  dflt.dispose();
  // the tensors: [headDim] per layer, shared by the heads; a bias only for layernorm
  for (const [qkNorm, headDim] of [
    ['layernorm', undefined],
    ['rmsnorm', undefined],
    ['layernorm', 12],
  ]) {
    const enc = await createEncoder({ ...BASE, qkNorm, ...(headDim ? { headDim } : {}), residualScale: 0.5 });
    const shapes = enc.weightShapes(),
      D = headDim ?? BASE.dModel / BASE.heads;
    assert.equal(enc.config.qkNorm, qkNorm);
    assert.equal(enc.config.residualScale, 0.5);
    const names = Object.keys(shapes).filter((n) => /_norm\./.test(n));
    const want = [];
    for (let l = 0; l < BASE.layers; l++)
      for (const n of ['q_norm', 'k_norm']) for (const p of qkNorm === 'layernorm' ? ['weight', 'bias'] : ['weight']) want.push(`layers.${l}.attn.${n}.${p}`);
    assert.deepEqual(names.sort(), want.sort(), `${qkNorm}: the q/k norm tensors`);
    for (const n of names) assert.deepEqual(shapes[n], [D], n);
    // in file order after attn.o, before norm1
    const order = Object.keys(shapes);
    assert.ok(
      order.indexOf('layers.0.attn.o.bias') < order.indexOf('layers.0.attn.q_norm.weight') &&
        order.indexOf('layers.0.attn.k_norm.weight') < order.indexOf('layers.0.norm1.weight'),
      'file order',
    );
    // seeded: gains 1, biases 0
    const w = enc.getWeights();
    for (const n of names)
      assert.ok(
        w[n].every((x) => x === (n.endsWith('.weight') ? 1 : 0)),
        `${n}: seeded`,
      );
    enc.dispose();
  }
});

test("save -> loadModel keeps qkNorm and residualScale ('deepnorm' and a number): config, weights and output bit for bit", async () => {
  for (const extra of [
    { qkNorm: 'layernorm', residualScale: 'deepnorm' },
    { qkNorm: 'rmsnorm', residualScale: 0.75, normPlacement: 'pre' },
    { qkNorm: 'none', residualScale: 'deepnorm', position: 'rope' },
  ]) {
    const config = { ...BASE, ...extra };
    const enc = await createEncoder(config, { seed: 3, init: { outputScale: 'depth' } });
    // weights not from the seed, so that a dropped tensor would show
    const w = enc.getWeights();
    for (const [n, a] of Object.entries(w)) if (/_norm\./.test(n)) w[n] = a.map((x, i) => x + 0.05 * Math.sin(i + n.length));
    const a = await createEncoder(config, { weights: w });
    const bytes = a.save();
    const n = Number(new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(0, true));
    const meta = JSON.parse(JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n))).__metadata__.config);
    assert.equal(meta.qkNorm, extra.qkNorm);
    assert.equal(meta.residualScale, extra.residualScale);
    const b = await loadModel(bytes);
    assert.deepEqual(b.config, a.config);
    const wa = a.getWeights(),
      wb = b.getWeights();
    assert.deepEqual(Object.keys(wb), Object.keys(wa));
    for (const k of Object.keys(wa)) assert.ok(sameBits(wa[k], wb[k]), k);
    assertBitIdentical(b.forward(IDS).data, a.forward(IDS).data, `${JSON.stringify(extra)}: output after the round trip`);
    for (const e of [enc, a, b]) e.dispose();
  }
});

test('skipLayers errors: BAD_ARGUMENT naming the option; nothing left set after an error', async () => {
  const enc = await createEncoder({ ...BASE, layers: 3 }, { seed: 2 });
  const plain = enc.forward(IDS).data;
  for (const skipLayers of [2, '0', {}, null, true])
    assert.throws(
      () => enc.forward(IDS, { skipLayers }),
      (e) => e.code === 'BAD_ARGUMENT' && /options\.skipLayers must be an array of layer indices/.test(e.message),
    );
  for (const [skipLayers, re] of [
    [[3], /options\.skipLayers\[0\] = 3 is not a layer index in \[0, 3\)/],
    [[0, -1], /options\.skipLayers\[1\] = -1 is not a layer index/],
    [[0.5], /skipLayers\[0\] = 0\.5/],
    [['1'], /skipLayers\[0\] = string "1"/],
    [[NaN], /skipLayers\[0\] = NaN/],
    [[1, 1], /names layer 1 twice/],
    [[2, 0, 2], /names layer 2 twice/],
  ])
    assert.throws(
      () => enc.forward(IDS, { skipLayers }),
      (e) => e.code === 'BAD_ARGUMENT' && re.test(e.message),
      JSON.stringify(skipLayers),
    );
  assertBitIdentical(enc.forward(IDS).data, plain, 'after the errors, every layer runs');
  // a skip does not outlive its forward; [] and a typed array are accepted
  const skipped = enc.forward(IDS, { skipLayers: new Int32Array([1]) }).data;
  assert.ok(!sameBits(skipped, plain));
  assertBitIdentical(enc.forward(IDS).data, plain, 'the next forward runs every layer');
  assertBitIdentical(enc.forward(IDS, { skipLayers: [] }).data, plain, 'skipLayers []');
  assertBitIdentical(enc.forward(IDS, { skipLayers: [1] }).data, skipped, 'Int32Array [1] = [1]');
  enc.dispose();
  const none = await createEncoder({ ...BASE, layers: 0 });
  assert.throws(() => none.forward(IDS, { skipLayers: [0] }), /skipLayers\[0\] = 0 is not a layer index in \[0, 0\)/);
  none.dispose();
});

test('skipLayers: the stream passes through (hidden states repeat, attentions 0); pre-norm: the same as zeroed attn.o and ffn.down; all layers: the final norm of the embeddings', async () => {
  for (const normPlacement of ['pre', 'post']) {
    const config = { ...BASE, layers: 4, normPlacement, qkNorm: 'rmsnorm' };
    const enc = await createEncoder(config, { seed: 9 });
    const full = enc.forward(IDS, { outputHiddenStates: true, outputAttentions: true });
    const out = enc.forward(IDS, { outputHiddenStates: true, outputAttentions: true, skipLayers: [2, 0] });
    assertBitIdentical(out.hiddenStates[0].data, full.hiddenStates[0].data, 'embeddings');
    assertBitIdentical(out.hiddenStates[1].data, out.hiddenStates[0].data, 'layer 0 skipped: x unchanged');
    assertBitIdentical(out.hiddenStates[3].data, out.hiddenStates[2].data, 'layer 2 skipped: x unchanged');
    assert.ok(!sameBits(out.hiddenStates[2].data, out.hiddenStates[1].data), 'layer 1 runs');
    for (const l of [0, 2])
      assert.ok(
        out.attentions[l].data.every((p) => p === 0),
        `layer ${l}: no attention`,
      );
    for (const l of [1, 3])
      assert.ok(
        out.attentions[l].data.some((p) => p > 0),
        `layer ${l}: attention`,
      );
    if (normPlacement === 'pre') {
      // x + 0 = x: a layer whose output projections are 0 adds nothing, bit for bit
      const w = enc.getWeights();
      for (const l of [0, 2])
        for (const n of ['attn.o.weight', 'attn.o.bias', 'ffn.down.weight', 'ffn.down.bias'])
          w[`layers.${l}.${n}`] = new Float32Array(w[`layers.${l}.${n}`].length);
      const zeroed = await createEncoder(config, { weights: w });
      assertBitIdentical(out.data, zeroed.forward(IDS).data, 'skipLayers [2, 0] = layers 0 and 2 with attn.o and ffn.down zeroed');
      zeroed.dispose();
      // every layer skipped: the final norm of the embeddings = a 0-layer model with those weights
      const all = enc.forward(IDS, { skipLayers: [3, 1, 2, 0] }).data;
      const ew = enc.getWeights();
      const empty = await createEncoder(
        { ...config, layers: 0 },
        { weights: Object.fromEntries(Object.entries(ew).filter(([n]) => !n.startsWith('layers.'))) },
      );
      assertBitIdentical(all, empty.forward(IDS).data, 'every layer skipped = layers 0');
      empty.dispose();
    }
    enc.dispose();
  }
});

test('residualScale a (post-norm) weighs the stream, not the sub-layer: N(a x + f(x)) = N(x + f(x)/a)', async () => {
  // a norm is scale-invariant (up to eps), so a = 2 on x equals attn.o and ffn.down (weights and biases) / 2
  const config = { ...BASE, eps: 1e-9, normPlacement: 'post' };
  const enc = await createEncoder({ ...config, residualScale: 2 }, { seed: 4 });
  const w = enc.getWeights();
  for (const [n, a] of Object.entries(w)) if (/\.(attn\.o|ffn\.down)\./.test(n)) w[n] = a.map((x) => x / 2);
  const halved = await createEncoder(config, { weights: w });
  const a = enc.forward(IDS).data,
    b = halved.forward(IDS).data;
  let err = 0;
  for (let i = 0; i < a.length; i++) err = Math.max(err, Math.abs(a[i] - b[i]));
  assert.ok(err < 1e-4, `max |difference| ${err}`);
  const plain = await createEncoder(config, { weights: enc.getWeights() });
  assert.ok(
    plain.forward(IDS).data.some((x, i) => Math.abs(x - a[i]) > 1e-2),
    'a = 2 is not a = 1',
  );
  for (const e of [enc, halved, plain]) e.dispose();
});

// ------------------------------------------------------------------ the seed lesson's claims

/** Mean over the tokens of |x_t| after the embeddings and after each layer (one sequence). */
function streamNorms(out) {
  return out.hiddenStates.map((h) => {
    const [, T, C] = h.shape;
    let sum = 0;
    for (let t = 0; t < T; t++) {
      let s = 0;
      for (let c = 0; c < C; c++) s += h.data[t * C + c] ** 2;
      sum += Math.sqrt(s);
    }
    return sum / T;
  });
}

test('the lesson: the pre-norm stream grows with depth; 1/sqrt(2L) init and DeepNorm bound it (24 layers, |x| per layer)', async (t) => {
  const L = 24,
    d = 64;
  const config = {
    vocabSize: 100,
    dModel: d,
    heads: 4,
    layers: L,
    ffDim: 4 * d,
    position: 'rope',
    norm: 'layernorm',
    normPlacement: 'pre',
    activation: 'gelu',
  };
  const ids = Array.from({ length: 48 }, (_, i) => (i * 37 + 11) % 100);
  const run = async (c, init) => {
    const enc = await createEncoder(c, { seed: 1, ...(init ? { init } : {}) });
    try {
      return streamNorms(enc.forward(ids, { outputHiddenStates: true }));
    } finally {
      enc.dispose();
    }
  };
  const plain = await run(config),
    depth = await run(config, { outputScale: 'depth' });
  const deep = await run({ ...config, normPlacement: 'post', residualScale: 'deepnorm' });
  const growth = (s) => s[L] / s[0];
  t.diagnostic(
    `|x| after the embeddings and layers 6, 12, 18, 24: plain ${[0, 6, 12, 18, 24].map((l) => plain[l].toFixed(2))}, ` +
      `1/sqrt(48) ${[0, 6, 12, 18, 24].map((l) => depth[l].toFixed(2))}, DeepNorm ${[0, 6, 12, 18, 24].map((l) => deep[l].toFixed(2))}`,
  );
  // pre-norm: the stream is never normalised; each layer adds to it, so it grows with depth
  assert.ok(
    [0, 6, 12, 18].every((l) => plain[l + 6] > plain[l]),
    `grows at every quarter: ${plain.map((x) => x.toFixed(2))}`,
  );
  assert.ok(growth(plain) > 1.3, `x${growth(plain)}`);
  // 1/sqrt(2L) on attn.o and ffn.down: each layer adds ~1/(2L) of the variance it did
  assert.ok(growth(depth) ** 2 - 1 < (growth(plain) ** 2 - 1) / 10, `x${growth(depth)} against x${growth(plain)}`);
  // DeepNorm (post-norm): normalised after every sub-layer, |x| = sqrt(d) (gain 1) at every depth
  for (let l = 1; l <= L; l++) assert.ok(Math.abs(deep[l] - Math.sqrt(d)) < 1e-2 * Math.sqrt(d), `DeepNorm after layer ${l}: ${deep[l]}`);
  // DeepNorm's alpha belongs with post-norm: pre-norm with a = (2L)^(1/4) multiplies x by a per sub-layer
  const pre = await run({ ...config, residualScale: 'deepnorm' });
  const alpha2L = Math.sqrt(Math.sqrt(2 * L)) ** (2 * L);
  assert.ok(
    growth(pre) / alpha2L > 0.5 && growth(pre) / alpha2L < 2,
    `pre-norm with alpha: x${growth(pre).toExponential(2)}, alpha^(2L) = ${alpha2L.toExponential(2)}`,
  );
});

test('the lesson: QK-norm keeps the attention logits bounded when the q and k weights grow (x 1, 4, 16, 64; outputAttentions)', async (t) => {
  const D = 16;
  const config = {
    vocabSize: 100,
    dModel: 64,
    heads: 4,
    layers: 2,
    ffDim: 128,
    position: 'sinusoidal',
    norm: 'layernorm',
    normPlacement: 'pre',
    activation: 'gelu',
  };
  const ids = Array.from({ length: 32 }, (_, i) => (i * i + 7 * i + 3) % 100);
  /** Per attention row, logit differences are log-probability differences: the largest
   * max_j s_ij - min_j s_ij over every row, head and layer, and the mean entropy. */
  const measure = (out) => {
    let gap = 0,
      ent = 0,
      rows = 0,
      zeros = 0;
    for (const a of out.attentions) {
      const T = a.shape[3];
      for (let i = 0; i < a.data.length; i += T) {
        let hi = 0,
          lo = Infinity,
          e = 0;
        for (let j = 0; j < T; j++) {
          const p = a.data[i + j];
          hi = Math.max(hi, p);
          lo = Math.min(lo, p);
          if (p > 0) e -= p * Math.log(p);
          else zeros++;
        }
        gap = Math.max(gap, Math.log(hi / lo));
        ent += e;
        rows++;
      }
    }
    return { gap, entropy: ent / rows, zeros };
  };
  const results = {};
  for (const qkNorm of ['none', 'layernorm', 'rmsnorm']) {
    const c = { ...config, qkNorm };
    const seeded = await weightsOf(c, { seed: 3 });
    results[qkNorm] = [];
    for (const s of [1, 4, 16, 64]) {
      const w = Object.fromEntries(Object.entries(seeded).map(([n, a]) => [n, /\.attn\.[qk]\.(weight|bias)$/.test(n) ? a.map((x) => x * s) : a]));
      const enc = await createEncoder(c, { weights: w });
      results[qkNorm].push({ s, ...measure(enc.forward(ids, { outputAttentions: true })) });
      enc.dispose();
    }
  }
  const show = (r) => r.map((x) => `x${x.s}: gap ${x.gap.toFixed(2)}, entropy ${x.entropy.toFixed(3)}`).join('; ');
  for (const [k, r] of Object.entries(results)) t.diagnostic(`${k}: ${show(r)}`);
  // without: logits scale as s^2 (seed biases 0), exactly: the x4 gaps are 16 times the x1 ones
  const [n1, n4, n16, n64] = results.none;
  assert.ok(Math.abs(n4.gap / n1.gap - 16) < 0.16, `x4: gap x${n4.gap / n1.gap}, want x16`);
  // ... until the smallest probabilities reach float32's floor (exp(-87.3) ~ 1.2e-38): a larger gap is not representable
  assert.ok(n16.gap > 87 && n64.gap > 87, `x16, x64: gaps ${n16.gap}, ${n64.gap} (saturated)`);
  // and the attention entropy collapses toward a one-hot softmax
  assert.ok(n64.entropy < 0.02 && n16.entropy < 0.1 * n1.entropy, `entropy ${n1.entropy} -> ${n16.entropy} -> ${n64.entropy}`);
  // with: |s_ij| <= |q||k| / sqrt(D) <= gains^2 sqrt(D) (seed gains 1, biases 0), so every gap <= 2 sqrt(D) = 8, at every scale
  for (const qkNorm of ['layernorm', 'rmsnorm']) {
    const r = results[qkNorm];
    for (const x of r) assert.ok(x.gap <= 2 * Math.sqrt(D), `${qkNorm} x${x.s}: gap ${x.gap} > 2 sqrt(${D})`);
    // q and k are normalised, so their scale is gone (up to eps): the same attention at every scale
    for (const x of r) assert.ok(Math.abs(x.entropy - r[0].entropy) < 1e-3 && Math.abs(x.gap - r[0].gap) < 1e-2, `${qkNorm} x${x.s}`);
    assert.ok(r[0].entropy > 0.5 * Math.log(ids.length), `${qkNorm}: entropy ${r[0].entropy} of at most ln ${ids.length}`);
  }
});
