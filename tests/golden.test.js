// Every golden fixture from tests/reference/make_fixtures.py (PyTorch's
// nn.TransformerEncoderLayer where it applies, float64 formulas for the rest):
// swapformer's outputs must match to a relative max error of 1e-4.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { loadModel, createEncoder, features } from '../bindings/index.js';
import { golden, readFixture, relMaxError, assertBitIdentical } from './helpers.js';

const TOLERANCE = 1e-4;

test('fixtures cover every position x norm x placement and every activation', () => {
  const seen = new Set(golden.cases.map((c) => `${c.config.position}/${c.config.positionOptions?.style ?? ''}/${c.config.norm}/${c.config.normPlacement}`));
  for (const pos of ['none', 'sinusoidal', 'learned', 'rope/interleaved', 'rope/half', 'alibi'])
    for (const norm of ['layernorm', 'rmsnorm'])
      for (const pl of ['pre', 'post']) {
        const [p, style = ''] = pos.split('/');
        assert.ok(seen.has(`${p}/${style}/${norm}/${pl}`), `missing ${pos} ${norm} ${pl}`);
      }
  const acts = new Set(golden.cases.map((c) => c.config.activation));
  for (const a of ['gelu', 'gelu_tanh', 'relu', 'swiglu', 'geglu']) assert.ok(acts.has(a), a);
  assert.ok(golden.cases.some((c) => c.config.position === 'alibi' && c.config.heads === 12));
  assert.ok(golden.cases.some((c) => c.config.scaleEmbedding));
  for (const type of ['linear', 'ntk', 'yarn'])
    for (const style of ['interleaved', 'half'])
      assert.ok(golden.cases.some((c) => c.config.positionOptions?.scaling?.type === type && c.config.positionOptions.style === style), `RoPE ${type} ${style}`);
  assert.ok(golden.cases.filter((c) => c.logits).length >= 2, 'output-head cases');
  assert.ok(golden.cases.every((c) => new Set(c.ids.map((s) => s.length)).size > 1), 'every case is a padded batch');
});

// Both builds: npm test runs Node with --experimental-wasm-relaxed-simd.
const builds = {
  simd128: readFileSync(new URL('../dist/swapformer.wasm', import.meta.url)),
  relaxed: readFileSync(new URL('../dist/swapformer-relaxed.wasm', import.meta.url)),
};

test('this Node runs both builds (relaxed SIMD enabled)', () => {
  assert.ok(features.simd, 'wasm SIMD');
  assert.ok(features.relaxedSimd, 'relaxed SIMD: run node with --experimental-wasm-relaxed-simd (npm test does)');
});

for (const [build, wasm] of Object.entries(builds)) for (const c of golden.cases) {
  test(`golden [${build}]: ${c.name}`, async () => {
    const enc = await loadModel(readFixture(c.file), { wasm });
    const out = enc.forward(c.ids, { outputAttentions: !!c.attentions });
    assert.deepEqual(out.shape, c.shape);
    const err = relMaxError(out.data, c.expected);
    assert.ok(err <= TOLERANCE, `relative max error ${err} > ${TOLERANCE}`);
    // padded rows are exactly zero
    const [B, T, C] = out.shape;
    for (let b = 0; b < B; b++)
      for (let t = c.ids[b].length; t < T; t++)
        for (let k = 0; k < C; k++) assert.equal(out.data[(b * T + t) * C + k], 0);
    if (c.logits) {
      assert.deepEqual(out.logits.shape, c.logits.shape);
      const lerr = relMaxError(out.logits.data, c.logits.data);
      assert.ok(lerr <= TOLERANCE, `logits relative max error ${lerr}`);
    } else assert.equal(out.logits, undefined);
    if (c.attentions) {
      const flat = new Float32Array(out.attentions.flatMap((a) => Array.from(a.data)));
      assert.deepEqual([out.attentions.length, ...out.attentions[0].shape], c.attentions.shape);
      const aerr = relMaxError(flat, c.attentions.data);
      assert.ok(aerr <= TOLERANCE, `attention relative max error ${aerr}`);
    }
    // the same weights through createEncoder give the same bits
    const again = await createEncoder(enc.config, { weights: enc.getWeights(), seed: 99, wasm });
    assertBitIdentical(again.forward(c.ids).data, out.data, 'createEncoder(config, {weights})');
    enc.dispose();
    again.dispose();
  });
}
