// The worked numbers and pitfalls of the seed lessons (../shared/seeds/),
// checked through the public API.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createEncoder } from '../bindings/index.js';
import { row, dot, rejects, assertBitIdentical } from './helpers.js';

const base = { vocabSize: 16, dModel: 8, heads: 2, layers: 0, ffDim: 8, norm: 'layernorm', normPlacement: 'post', activation: 'gelu' };

test('LayerNorm of [2, -1, 4, 3] is [0, -1.6036, 1.0690, 0.5345]', async () => {
  const enc = await createEncoder(
    { ...base, vocabSize: 1, dModel: 4, heads: 1, position: 'none', finalNorm: true, eps: 1e-12 },
    { weights: { 'embed.tokens': new Float32Array([2, -1, 4, 3]) } },
  );
  const y = enc.forward([0]).data;
  [0, -1.6036, 1.069, 0.5345].forEach((v, i) => assert.ok(Math.abs(y[i] - v) < 5e-5, `y[${i}] = ${y[i]}, want ${v}`));
  const mean = y.reduce((a, b) => a + b) / 4,
    variance = y.reduce((a, b) => a + (b - mean) ** 2, 0) / 4;
  assert.ok(Math.abs(mean) < 1e-6 && Math.abs(variance - 1) < 1e-5, 'zero mean, unit (biased) variance');
});

test('sinusoidal d=4: PE1.PE2 = PE2.PE3 = cos(1) + cos(0.01) = 1.54025', async () => {
  const enc = await createEncoder(
    { ...base, dModel: 4, heads: 1, position: 'sinusoidal' },
    { weights: { 'embed.tokens': new Float32Array(16 * 4) } }, // zero embeddings: the output is PE itself
  );
  const out = enc.forward([0, 0, 0, 0]);
  const pe = [0, 1, 2, 3].map((t) => row(out, 0, t));
  assert.deepEqual(Array.from(pe[0]), [0, 1, 0, 1]);
  // pair i=1 has divisor 10000^(2/4) = 100: the 2i/d exponent, not i/d
  [Math.sin(1), Math.cos(1), Math.sin(0.01), Math.cos(0.01)].forEach((v, i) => assert.ok(Math.abs(pe[1][i] - v) < 1e-7));
  assert.equal(dot(pe[1], pe[2]).toFixed(5), '1.54025');
  assert.equal(dot(pe[2], pe[3]).toFixed(5), '1.54025');
  assert.ok(Math.abs(dot(pe[1], pe[2]) - dot(pe[2], pe[3])) < 1e-6);
  assert.ok(Math.abs(dot(pe[1], pe[3]) - (Math.cos(2) + Math.cos(0.02))) < 1e-6, 'offset 2');
});

// Attention probabilities of a 1-layer model whose q and k projections are
// zero: every score is the position plugin's bias alone.
async function biasOnlyAttention(config, T) {
  const C = config.dModel;
  const enc = await createEncoder(
    { ...base, ...config, layers: 1 },
    {
      weights: { 'layers.0.attn.q.weight': new Float32Array(C * C), 'layers.0.attn.k.weight': new Float32Array(C * C) },
      seed: 3,
    },
  );
  const a = enc.forward(
    Array.from({ length: T }, (_, t) => t % 16),
    { outputAttentions: true },
  ).attentions[0];
  return (h, i, j) => a.data[(h * T + i) * T + j];
}

test('ALiBi slopes for 8 heads are 1/2, 1/4, ..., 1/256', async () => {
  const p = await biasOnlyAttention({ position: 'alibi', dModel: 8, heads: 8 }, 6);
  for (let h = 0; h < 8; h++) {
    const slope = Math.log(p(h, 2, 2) / p(h, 2, 3)); // scores differ by exactly -slope
    assert.ok(Math.abs(slope - 2 ** -(h + 1)) < 1e-6, `head ${h}: slope ${slope}`);
    assert.ok(Math.abs(Math.log(p(h, 2, 2) / p(h, 2, 5)) - 3 * slope) < 1e-5, 'linear in |i - j|');
    assert.ok(Math.abs(p(h, 3, 1) - p(h, 3, 5)) < 1e-7, 'symmetric in i - j');
  }
});

test('ALiBi slopes for 12 heads (not a power of two): 8-head slopes, then every other 16-head slope', async () => {
  const p = await biasOnlyAttention({ position: 'alibi', dModel: 12, heads: 12 }, 4);
  const want = [...Array.from({ length: 8 }, (_, k) => 2 ** -(k + 1)), 2 ** -0.5, 2 ** -1.5, 2 ** -2.5, 2 ** -3.5];
  for (let h = 0; h < 12; h++) assert.ok(Math.abs(Math.log(p(h, 0, 0) / p(h, 0, 1)) - want[h]) < 1e-6, `head ${h}`);
});

test('RoPE: the score of positions (3, 7) equals that of (10, 14); both styles', async () => {
  for (const style of ['interleaved', 'half']) {
    const enc = await createEncoder({ ...base, layers: 1, dModel: 16, heads: 2, position: 'rope', positionOptions: { style } }, { seed: 11 });
    const T = 16;
    const a = enc.forward(new Array(T).fill(5), { outputAttentions: true }).attentions[0];
    const p = (h, i, j) => a.data[(h * T + i) * T + j];
    for (let h = 0; h < 2; h++) {
      // the same token everywhere: score(i, j) - score(i, i) = log(p[i][j] / p[i][i])
      const s37 = Math.log(p(h, 3, 7) / p(h, 3, 3)),
        s1014 = Math.log(p(h, 10, 14) / p(h, 10, 10));
      assert.ok(Math.abs(s37 - s1014) < 1e-4, `${style} head ${h}: ${s37} vs ${s1014}`);
      assert.ok(Math.abs(s37) > 1e-3, 'the offset does change the score');
      const s73 = Math.log(p(h, 7, 3) / p(h, 7, 7)),
        s1410 = Math.log(p(h, 14, 10) / p(h, 14, 14));
      assert.ok(Math.abs(s73 - s1410) < 1e-4, 'negative offset too');
    }
  }
});

test("with position 'none', permuting the input permutes the output rows bit for bit", async () => {
  const config = { ...base, layers: 3, dModel: 16, heads: 4, ffDim: 32, position: 'none', normPlacement: 'pre' };
  const enc = await createEncoder(config, { seed: 5 });
  const dogBitesMan = [3, 9, 12],
    manBitesDog = [12, 9, 3];
  const a = enc.forward(dogBitesMan),
    b = enc.forward(manBitesDog);
  for (let t = 0; t < 3; t++) assertBitIdentical(row(a, 0, t), row(b, 0, 2 - t), `row ${t}`);
  // a longer random permutation, through a batch
  const ids = [1, 5, 2, 7, 7, 0, 14, 3, 8],
    perm = [4, 0, 8, 2, 6, 1, 3, 7, 5];
  const [x, y] = [enc.forward([ids]), enc.forward([perm.map((k) => ids[k])])];
  perm.forEach((k, t) => assertBitIdentical(row(y, 0, t), row(x, 0, k), `permuted row ${t}`));
  // with any position plugin, moving a word changes its vector
  const rotated = [9, 12, 3]; // "bites man dog"
  for (const position of ['sinusoidal', 'learned', 'rope', 'alibi']) {
    const e2 = await createEncoder({ ...config, position }, { seed: 5 });
    const [p, q] = [e2.forward(dogBitesMan), e2.forward(rotated)];
    const diff = Math.max(...row(p, 0, 0).map((v, i) => Math.abs(v - row(q, 0, 2)[i])));
    assert.ok(diff > 1e-3, `${position}: 'dog' differs by ${diff} when it moves`);
  }
  // symmetric (encoder) ALiBi sees only |i - j|: a reversed sequence is a
  // mirror image, so 'man bites dog' gives 'dog bites man' rows reversed (up to rounding)
  const alibi = await createEncoder({ ...config, position: 'alibi' }, { seed: 5 });
  const [f, r] = [alibi.forward(dogBitesMan), alibi.forward(manBitesDog)];
  for (let t = 0; t < 3; t++) row(f, 0, t).forEach((v, i) => assert.ok(Math.abs(v - row(r, 0, 2 - t)[i]) < 1e-5));
});

test('learned positions: T = maxLen works, T = maxLen + 1 is SEQUENCE_TOO_LONG; no wrap, no clamp', async () => {
  const enc = await createEncoder({ ...base, layers: 1, position: 'learned', maxLen: 8 }, { seed: 1 });
  assert.equal(enc.maxSequenceLength, 8);
  enc.forward(new Array(8).fill(1));
  await rejects(() => enc.forward(new Array(9).fill(1)), 'SEQUENCE_TOO_LONG', /ids has 9 tokens.*at most 8/);
  await rejects(() => enc.forward([[1, 2], new Array(9).fill(1)]), 'SEQUENCE_TOO_LONG', /ids\[1\]/);
  enc.forward([1, 2, 3]); // still usable
  for (const position of ['sinusoidal', 'rope', 'alibi', 'none']) {
    const e = await createEncoder({ ...base, layers: 1, position, maxLen: 8 }, { seed: 1 });
    assert.equal(e.maxSequenceLength, Infinity);
    assert.deepEqual(e.forward(new Array(20).fill(1)).shape, [1, 20, 8], `${position} carries on past maxLen`);
  }
});

test('finalNorm defaults to true for pre-norm (the missing final LayerNorm) and false for post-norm', async () => {
  const pre = await createEncoder({ ...base, position: 'none', normPlacement: 'pre' });
  const post = await createEncoder({ ...base, position: 'none', normPlacement: 'post' });
  assert.equal(pre.config.finalNorm, true);
  assert.equal(post.config.finalNorm, false);
  assert.ok('final_norm.weight' in pre.getWeights());
  assert.ok(!('final_norm.weight' in post.getWeights()));
});

test('scaleEmbedding multiplies token embeddings by sqrt(dModel) before positions are added', async () => {
  const cfg = { ...base, dModel: 4, heads: 1, position: 'sinusoidal' };
  const tokens = new Float32Array(16 * 4).map((_, i) => (i % 7) - 3);
  const plain = (await createEncoder(cfg, { weights: { 'embed.tokens': tokens } })).forward([2, 3]);
  const scaled = (await createEncoder({ ...cfg, scaleEmbedding: true }, { weights: { 'embed.tokens': tokens } })).forward([2, 3]);
  const pe = [
    [0, 1, 0, 1],
    [Math.sin(1), Math.cos(1), Math.sin(0.01), Math.cos(0.01)],
  ];
  for (let t = 0; t < 2; t++)
    for (let k = 0; k < 4; k++) {
      const e = tokens[(t + 2) * 4 + k];
      assert.ok(Math.abs(row(plain, 0, t)[k] - (e + pe[t][k])) < 1e-6);
      assert.ok(Math.abs(row(scaled, 0, t)[k] - (2 * e + pe[t][k])) < 1e-6);
    }
});
