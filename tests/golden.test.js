// Every golden fixture from tests/reference/make_fixtures.py (PyTorch's
// nn.TransformerEncoderLayer where it applies, float64 formulas for the rest):
// every element of swapformer's outputs, attentions and logits must satisfy
// |a - e| <= TOLERANCE * (rms(e) + |e|) (helpers.js elementError), in both builds.
//
// The tolerance is a small multiple of the measured float32 error. Measured on
// the 82 cases (tests/reference/README.md has the tables): the worst output error
// is 3.7e-6 (simd128, the T5 case with attnScale 1) and 3.4e-6 (relaxed), 2.6e-6
// before the families' cases; attentions 6.5e-7, logits 1.2e-6; the two cases
// whose raw scores pass 100 (maxScore) reach 2.0e-5, since a float32 score of 114
// carries an absolute rounding error ~10x that of a score of 10. The 23 cases of
// the normalisation levers (qkNorm, residualScale, skipLayers) reach 4.2e-6 (the
// long layernorm QK-norm with RoPE). Cases with typeIds pass them to forward, cases
// with skipLayers pass those. Run with SWAPFORMER_GOLDEN_REPORT=1 to print every
// case's error.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { loadModel, createEncoder, features } from '../bindings/index.js';
import { golden, readFixture, assertClose, assertBitIdentical, goldenTolerance } from './helpers.js';

const REPORT = !!process.env.SWAPFORMER_GOLDEN_REPORT;

test('fixtures cover every position x norm x placement and every activation', () => {
  const seen = new Set(golden.cases.map((c) => `${c.config.position}/${c.config.positionOptions?.style ?? ''}/${c.config.norm}/${c.config.normPlacement}`));
  for (const pos of ['none', 'sinusoidal', 'learned', 'rope/interleaved', 'rope/half', 'alibi'])
    for (const norm of ['layernorm', 'rmsnorm'])
      for (const pl of ['pre', 'post']) {
        const [p, style = ''] = pos.split('/');
        assert.ok(seen.has(`${p}/${style}/${norm}/${pl}`), `missing ${pos} ${norm} ${pl}`);
      }
  const acts = new Set(golden.cases.map((c) => c.config.activation));
  for (const a of ['gelu', 'gelu_tanh', 'relu', 'swiglu', 'geglu', 'silu', 'geglu_tanh']) assert.ok(acts.has(a), a);
  assert.ok(golden.cases.some((c) => c.config.position === 'alibi' && c.config.heads === 12));
  assert.ok(golden.cases.some((c) => c.config.scaleEmbedding));
  for (const type of ['linear', 'ntk', 'yarn'])
    for (const style of ['interleaved', 'half'])
      assert.ok(golden.cases.some((c) => c.config.positionOptions?.scaling?.type === type && c.config.positionOptions.style === style), `RoPE ${type} ${style}`);
  assert.ok(golden.cases.filter((c) => c.logits).length >= 2, 'output-head cases');
  assert.ok(golden.cases.every((c) => new Set(c.ids.map((s) => s.length)).size > 1), 'every case is a padded batch');
});

// The fields that map Hugging Face families onto the encoder (README "Config"):
// every one keeps fixtures that would fail if the core ignored or misplaced it.
test('fixtures cover the fields of the Hugging Face families: headDim, attnScale, token types, embedNorm, firstAttnNorm, local windows, t5, learned offset, dynamic NTK', () => {
  const cs = golden.cases, cfg = (c) => c.config, po = (c) => c.config.positionOptions ?? {};
  const lens = (c) => c.ids.map((s) => s.length);
  const has = (what, f) => assert.ok(cs.some(f), `no fixture: ${what}`);
  // typeIds: next to ids, the same shape, in range; every case with more than one type has them
  for (const c of cs) {
    if ((cfg(c).typeVocabSize ?? 0) > 1) assert.ok(c.typeIds, `${c.name}: typeIds`);
    if (!c.typeIds) continue;
    assert.deepEqual(c.typeIds.map((s) => s.length), lens(c), `${c.name}: typeIds shape`);
    assert.ok(c.typeIds.flat().every((t) => Number.isInteger(t) && t >= 0 && t < cfg(c).typeVocabSize), `${c.name}: typeIds range`);
  }
  const mixed = (c) => c.typeIds?.some((s) => new Set(s).size > 1) && new Set(c.typeIds.flat()).size === cfg(c).typeVocabSize;
  for (const tv of [2, 3]) has(`typeVocabSize ${tv}, every type used, a sequence of mixed types`, (c) => cfg(c).typeVocabSize === tv && mixed(c));
  has('typeVocabSize 1 (RoBERTa)', (c) => cfg(c).typeVocabSize === 1);
  for (const norm of ['layernorm', 'rmsnorm']) has(`token types with embedNorm (${norm})`, (c) => mixed(c) && cfg(c).embedNorm && cfg(c).norm === norm);
  has('BERT: types, embedNorm, learned positions, layernorm post', (c) => mixed(c) && cfg(c).embedNorm && cfg(c).position === 'learned' &&
    cfg(c).norm === 'layernorm' && cfg(c).normPlacement === 'post');
  has('embedNorm with rope', (c) => cfg(c).embedNorm && cfg(c).position === 'rope');
  for (const pos of ['learned', 'sinusoidal']) has(`embedNorm after ${pos} vectors`, (c) => cfg(c).embedNorm && cfg(c).position === pos);
  // firstAttnNorm false: pre-norm, the final norm
  has('firstAttnNorm false', (c) => cfg(c).firstAttnNorm === false && cfg(c).normPlacement === 'pre' && cfg(c).finalNorm);
  has('firstAttnNorm false, T > 64', (c) => cfg(c).firstAttnNorm === false && c.shape[1] > 64);
  // local windows: some layers local, some global; past the 64-row chunks and 64-key tiles
  const windowed = (c) => cfg(c).localWindow > 0 && cfg(c).localLayers?.length > 0 && cfg(c).localLayers.length < cfg(c).layers;
  const long = (c) => lens(c).some((L) => L > 64 && L > 2 * cfg(c).localWindow + SF_CHUNK);
  has('ModernBERT-like: rope half, localBase != base, local layers [1, 2] of 3, firstAttnNorm false, geglu, T > 64, a padded batch',
    (c) => windowed(c) && long(c) && cfg(c).position === 'rope' && po(c).style === 'half' && po(c).localBase !== undefined &&
      po(c).localBase !== po(c).base && String(cfg(c).localLayers) === '1,2' && cfg(c).layers === 3 && cfg(c).firstAttnNorm === false &&
      cfg(c).activation === 'geglu' && c.ids.length > 1);
  has('a window with alibi, T > 64', (c) => windowed(c) && long(c) && cfg(c).position === 'alibi');
  has('a window with position none, attentions stored', (c) => windowed(c) && cfg(c).position === 'none' && c.attentions);
  // attention width and scale
  const A = (c) => cfg(c).heads * (cfg(c).headDim ?? cfg(c).dModel / cfg(c).heads);
  has('headDim with heads x headDim != dModel, the default scale', (c) => A(c) !== cfg(c).dModel && cfg(c).attnScale === undefined);
  has('attnScale 1 with heads x headDim != dModel', (c) => A(c) !== cfg(c).dModel && cfg(c).attnScale === 1);
  // T5 buckets: 32 with maxDistance 20 (log buckets and the clamp over 130+ tokens), and 16
  const t5 = (c) => cfg(c).position === 't5';
  has('t5, 32 buckets, maxDistance 20, a sequence of 130+ tokens', (c) => t5(c) && po(c).buckets === 32 && po(c).maxDistance === 20 &&
    lens(c).some((L) => L >= 130));
  has('t5, 16 buckets, a sequence past maxDistance', (c) => t5(c) && po(c).buckets === 16 && lens(c).some((L) => L > po(c).maxDistance));
  for (const act of ['relu', 'geglu_tanh']) has(`t5 with ${act}, rmsnorm pre, a final norm`, (c) => t5(c) && cfg(c).activation === act &&
    cfg(c).norm === 'rmsnorm' && cfg(c).normPlacement === 'pre' && cfg(c).finalNorm);
  // learned offset: maxLen = longest + offset, a sequence ending on the last row
  has('learned offset 2, a sequence using the last row', (c) => cfg(c).position === 'learned' && po(c).offset === 2 &&
    lens(c).some((L) => L + 2 === cfg(c).maxLen));
  // dynamic NTK: each sequence by its own length, so a batch with sequences longer and
  // not longer than originalMaxLen, and a scaled one shorter than the batch's longest
  for (const style of ['interleaved', 'half'])
    has(`rope ${style}, dynamic scaling, sequences longer and shorter than originalMaxLen, one scaled but shorter than T`, (c) => {
      const sc = po(c).scaling;
      return sc?.type === 'dynamic' && po(c).style === style && lens(c).some((L) => L <= sc.originalMaxLen) &&
        lens(c).some((L) => L > sc.originalMaxLen && L < c.shape[1]);
    });
});

const SF_CHUNK = 64;

// The normalisation levers (README "Config", issue 14): qkNorm, residualScale and
// forward's skipLayers, each in cases that fail if the core ignores or misplaces it
// (make_fixtures.py asserts that each lever moves its cases' output by more than 1%).
test('fixtures cover the normalisation levers: qkNorm, residualScale, skipLayers', () => {
  const cs = golden.cases, cfg = (c) => c.config, po = (c) => c.config.positionOptions ?? {};
  const lens = (c) => c.ids.map((s) => s.length);
  const has = (what, f) => assert.ok(cs.some(f), `no fixture: ${what}`);
  const long = (c) => c.shape[1] > SF_CHUNK && lens(c).some((L) => L > SF_CHUNK && L % SF_CHUNK !== 0);
  const qk = (c) => (cfg(c).qkNorm ?? 'none') !== 'none';
  // QK-norm: both norms, each with RoPE, and with ALiBi; pre and post; every position plugin
  for (const n of ['layernorm', 'rmsnorm']) {
    has(`qkNorm ${n}`, (c) => cfg(c).qkNorm === n);
    has(`qkNorm ${n} with rope`, (c) => cfg(c).qkNorm === n && cfg(c).position === 'rope');
    has(`qkNorm ${n} with alibi`, (c) => cfg(c).qkNorm === n && cfg(c).position === 'alibi');
    has(`qkNorm ${n} differing from the model's norm`, (c) => cfg(c).qkNorm === n && cfg(c).norm !== n);
  }
  for (const style of ['interleaved', 'half']) has(`qkNorm with rope ${style}`, (c) => qk(c) && po(c).style === style);
  for (const pl of ['pre', 'post']) {
    has(`qkNorm ${pl}-norm`, (c) => qk(c) && cfg(c).normPlacement === pl);
    for (const pos of ['rope', 'alibi']) has(`qkNorm with ${pos}, ${pl}-norm`, (c) => qk(c) && cfg(c).position === pos && cfg(c).normPlacement === pl);
  }
  for (const pos of ['none', 'sinusoidal', 'learned', 'rope', 'alibi', 't5']) has(`qkNorm with position ${pos}`, (c) => qk(c) && cfg(c).position === pos);
  has('qkNorm layernorm without bias tensors', (c) => cfg(c).qkNorm === 'layernorm' && !readFixtureNames(c).some((n) => /q_norm\.bias/.test(n)));
  has('qkNorm with heads x headDim != dModel', (c) => qk(c) && cfg(c).headDim && cfg(c).headDim * cfg(c).heads !== cfg(c).dModel);
  has('qkNorm with a large eps (0.5)', (c) => qk(c) && cfg(c).eps >= 0.5);
  has('qkNorm with attentions stored', (c) => qk(c) && c.attentions);
  for (const pos of ['rope', 'alibi']) has(`qkNorm with ${pos}, T > 64`, (c) => qk(c) && cfg(c).position === pos && long(c));
  for (const style of ['interleaved', 'half']) has(`qkNorm with rope ${style}, T > 64`, (c) => qk(c) && po(c).style === style && long(c));
  // residualScale: 'deepnorm' post and pre, numbers below and above 1, 3+ layers
  const rs = (c) => cfg(c).residualScale;
  for (const pl of ['pre', 'post']) has(`residualScale 'deepnorm', ${pl}-norm, 3+ layers`, (c) => rs(c) === 'deepnorm' && cfg(c).normPlacement === pl && cfg(c).layers >= 3);
  has('residualScale a number < 1, post-norm, 3 layers', (c) => typeof rs(c) === 'number' && rs(c) < 1 && cfg(c).normPlacement === 'post' && cfg(c).layers >= 3);
  has('residualScale a number > 1, pre-norm', (c) => typeof rs(c) === 'number' && rs(c) > 1 && cfg(c).normPlacement === 'pre');
  has("residualScale 'deepnorm', T > 64", (c) => rs(c) === 'deepnorm' && long(c));
  // skipLayers: valid, distinct; a middle layer, the first and the last, every layer; with attentions; T > 64
  for (const c of cs.filter((c) => c.skipLayers)) {
    assert.ok(c.skipLayers.every((l) => Number.isInteger(l) && l >= 0 && l < cfg(c).layers), `${c.name}: skipLayers range`);
    assert.equal(new Set(c.skipLayers).size, c.skipLayers.length, `${c.name}: skipLayers distinct`);
  }
  const sk = (c) => c.skipLayers ?? [];
  has('skipLayers: a middle layer', (c) => sk(c).some((l) => l > 0 && l < cfg(c).layers - 1));
  has('skipLayers: the first and the last layer, attentions stored', (c) => sk(c).includes(0) && sk(c).includes(cfg(c).layers - 1) &&
    sk(c).length < cfg(c).layers && c.attentions);
  has('skipLayers: every layer', (c) => cfg(c).layers > 0 && sk(c).length === cfg(c).layers);
  for (const pl of ['pre', 'post']) has(`skipLayers, ${pl}-norm`, (c) => sk(c).length && cfg(c).normPlacement === pl);
  has('skipLayers, T > 64', (c) => sk(c).length && long(c));
  has("skipLayers with qkNorm and residualScale 'deepnorm'", (c) => sk(c).length && qk(c) && rs(c) === 'deepnorm');
});

/** The tensor names of a case's model file (its safetensors header). */
function readFixtureNames(c) {
  const bytes = readFixture(c.file), n = Number(new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(0, true));
  return Object.keys(JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n)))).filter((k) => k !== '__metadata__');
}

// The C core runs queries in chunks of 64 (SF_CHUNK) and keys in tiles of 64
// (SF_ATT_BK): sequences past 64 and 128 tokens, with a partial last chunk,
// for every position plugin.
test('fixtures cover sequences past the 64-token query chunk and key tile, for every position plugin', () => {
  const long = golden.cases.filter((c) => c.shape[1] > 64);
  const lens = (c) => c.ids.map((s) => s.length);
  const has = (what, f) => assert.ok(long.some(f), `no case with T > 64: ${what}`);
  for (const pos of ['none', 'sinusoidal', 'learned', 'alibi']) has(pos, (c) => c.config.position === pos);
  for (const style of ['interleaved', 'half']) has(`rope ${style}`, (c) => c.config.position === 'rope' && c.config.positionOptions.style === style);
  has('rope with scaling', (c) => c.config.positionOptions?.scaling);
  has('learned, maxLen >= 300, a sequence of 300', (c) => c.config.position === 'learned' && c.config.maxLen >= 300 && lens(c).includes(300));
  has('alibi, a non-power-of-two head count', (c) => c.config.position === 'alibi' && (c.config.heads & (c.config.heads - 1)) !== 0);
  has('a sequence of 300 tokens', (c) => lens(c).includes(300));
  has('a batch straddling 64 and 128 (lengths <= 64, 65..128, > 128)', (c) =>
    lens(c).some((L) => L <= 64) && lens(c).some((L) => L > 64 && L <= 128) && lens(c).some((L) => L > 128));
  has('a partial last query chunk (L > 64, L % 64 != 0)', (c) => lens(c).some((L) => L > 64 && L % 64 !== 0));
  for (const norm of ['layernorm', 'rmsnorm'])
    for (const pl of ['pre', 'post']) has(`${norm} ${pl}`, (c) => c.config.norm === norm && c.config.normPlacement === pl);
  // scores past exp's float32 range: wrong without subtracting the row maximum
  assert.ok(golden.cases.some((c) => c.maxScore > 100), 'a case with raw scores above 100');
  has('raw scores above 100', (c) => c.maxScore > 100);
});

// Both builds: npm test runs Node 20 with --experimental-wasm-relaxed-simd (tools/node.mjs); Node 22 and later have relaxed SIMD on.
const builds = {
  simd128: readFileSync(new URL('../dist/swapformer.wasm', import.meta.url)),
  relaxed: readFileSync(new URL('../dist/swapformer-relaxed.wasm', import.meta.url)),
};

test('this Node runs both builds (relaxed SIMD enabled)', () => {
  assert.ok(features.simd, 'wasm SIMD');
  assert.ok(features.relaxedSimd, 'relaxed SIMD: Node 20 needs --experimental-wasm-relaxed-simd (npm test passes it)');
});

for (const [build, wasm] of Object.entries(builds)) for (const c of golden.cases) {
  test(`golden [${build}]: ${c.name}`, async (ctx) => {
    const enc = await loadModel(readFixture(c.file), { wasm });
    const types = { ...(c.typeIds && { typeIds: c.typeIds }), ...(c.skipLayers && { skipLayers: c.skipLayers }) };
    const out = enc.forward(c.ids, { outputAttentions: !!c.attentions, ...types });
    assert.deepEqual(out.shape, c.shape);
    const tol = goldenTolerance(c), errors = [];
    errors.push(`output ${assertClose(out.data, c.expected, tol, 'output').toExponential(2)}`);
    // padded rows are exactly zero
    const [B, T, C] = out.shape;
    for (let b = 0; b < B; b++)
      for (let t = c.ids[b].length; t < T; t++)
        for (let k = 0; k < C; k++) assert.equal(out.data[(b * T + t) * C + k], 0);
    if (c.logits) {
      assert.deepEqual(out.logits.shape, c.logits.shape);
      errors.push(`logits ${assertClose(out.logits.data, c.logits.data, tol, 'logits').toExponential(2)}`);
    } else assert.equal(out.logits, undefined);
    if (c.attentions) {
      const flat = new Float32Array(out.attentions.flatMap((a) => Array.from(a.data)));
      assert.deepEqual([out.attentions.length, ...out.attentions[0].shape], c.attentions.shape);
      errors.push(`attentions ${assertClose(flat, c.attentions.data, tol, 'attentions').toExponential(2)}`);
    }
    ctx.diagnostic(`per-element error: ${errors.join(', ')} (tolerance ${tol})`);
    if (REPORT) console.log(`golden-error ${build} ${c.name} ${errors.join(' ')}`);
    // the same weights through createEncoder give the same bits
    const again = await createEncoder(enc.config, { weights: enc.getWeights(), seed: 99, wasm });
    assertBitIdentical(again.forward(c.ids, types).data, out.data, 'createEncoder(config, {weights})');
    enc.dispose();
    again.dispose();
  });
}
