// int8 weights (dtype 'q8', README "int8"):
// - the exact scheme, against an independent emulation (tests/reference/q8_reference.py,
//   numpy; the same integers, float parts in float64): every hidden state and the
//   logits within the golden tolerance, in each build with its own activation range
//   (u8 in the SIMD128 build, u7 in the relaxed one);
// - accuracy against f32 on the golden models and the pretrained fixtures (per-token
//   and pooled cosine; the bar: embeddings >= 0.99);
// - the q8 model file (I8 rows after their F32 '.scale'): round trips bit for bit,
//   other dtypes on load, the converter's --dtype q8, the size, bad files refused;
// - threads: the same bits at 1, 2 and 3 threads.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createEncoder, loadModel, loadPretrained, runtimeInfo, configure } from '../bindings/index.js';
import { pool, applyRecipe } from '../bindings/pretrained/recipe.js';
import { golden, readFixture, assertClose, assertBitIdentical, elementError, rejects, GOLDEN_TOLERANCE } from './helpers.js';
import { NODE_FLAGS } from '../tools/node-flags.js';

const REF = JSON.parse(readFileSync(new URL('./fixtures/q8/reference.json', import.meta.url), 'utf8'));
const builds = {
  simd128: readFileSync(new URL('../dist/swapformer.wasm', import.meta.url)),
  relaxed: readFileSync(new URL('../dist/swapformer-relaxed.wasm', import.meta.url)),
};
const PRETRAINED = fileURLToPath(new URL('./pretrained/', import.meta.url));
const PRETRAINED_CASES = readdirSync(path.join(PRETRAINED, 'expected'))
  .filter((f) => f.endsWith('.json'))
  .map((f) => JSON.parse(readFileSync(path.join(PRETRAINED, 'expected', f), 'utf8')));

const cosine = (a, b) => {
  let d = 0,
    x = 0,
    y = 0;
  for (let i = 0; i < a.length; i++) {
    d += a[i] * b[i];
    x += a[i] * a[i];
    y += b[i] * b[i];
  }
  return x === 0 && y === 0 ? 1 : d / Math.sqrt(x * y);
};
/** The smallest cosine over the rows of two [N, D] arrays. */
const rowCosine = (a, b, D) => {
  let m = 1;
  for (let r = 0; r < a.length / D; r++) m = Math.min(m, cosine(a.subarray(r * D, (r + 1) * D), b.subarray(r * D, (r + 1) * D)));
  return m;
};
/** [B, T, C] -> the real tokens' rows, flat, and each sequence's mean over them. */
function tokensAndMeans(out, lengths) {
  const [, T, C] = out.shape,
    rows = [],
    means = [];
  for (const [b, L] of lengths.entries()) {
    const m = new Float64Array(C);
    for (let t = 0; t < L; t++) {
      const r = out.data.subarray((b * T + t) * C, (b * T + t + 1) * C);
      rows.push(...r);
      for (let k = 0; k < C; k++) m[k] += r[k] / L;
    }
    means.push(...m);
  }
  return { tokens: Float64Array.from(rows), means: Float64Array.from(means), C };
}

// ------------------------------------------------------------ the scheme, exactly

test('the emulation covers both activation ranges, sizes that fill no panel, a zero row, an output head', () => {
  const names = REF.cases.map((c) => c.name);
  assert.deepEqual(names.sort(), ['head__rope_half__rmsnorm__pre__swiglu', 'learned__layernorm__post__gelu', 'odd']);
  for (const c of REF.cases) {
    assert.equal(c.builds.simd128.amax, 255);
    assert.equal(c.builds.relaxed.amax, 127);
    assert.ok(c.minTieDistance >= REF.margin, `${c.name}: no rounding within ${REF.margin} steps of a tie`);
    assert.ok(new Set(c.ids.map((s) => s.length)).size > 1, `${c.name}: a padded batch`);
  }
  const odd = REF.cases.find((c) => c.name === 'odd');
  assert.ok(odd.config.dModel % 8 && odd.config.ffDim % 8 && odd.config.outputHead, 'odd sizes and a head');
  assert.ok(REF.cases.filter((c) => c.builds.relaxed.logits).length >= 2, 'logits');
});

for (const [build, wasm] of Object.entries(builds)) {
  test(`q8 forward equals the emulated scheme: every layer's hidden states and the logits [${build}]`, async (ctx) => {
    const info = await runtimeInfo({ wasm });
    assert.match(info.q8Kernel, build === 'simd128' ? /i32x4\.dot_i16x8/ : /dot_i8x16_i7x16/);
    const other = build === 'simd128' ? 'relaxed' : 'simd128';
    const report = [];
    for (const c of REF.cases) {
      const want = c.builds[build];
      const enc = await loadModel(readFixture(c.file), { wasm, dtype: 'q8' });
      assert.equal(enc.dtype, 'q8');
      const out = enc.forward(c.ids, { outputHiddenStates: true });
      assert.deepEqual(out.shape, want.shape);
      let worst = assertClose(out.data, want.output, GOLDEN_TOLERANCE, `${c.name} output`);
      want.hiddenStates.forEach((h, l) => {
        worst = Math.max(worst, assertClose(out.hiddenStates[l].data, h, GOLDEN_TOLERANCE, `${c.name} hidden state ${l}`));
      });
      if (want.logits) worst = Math.max(worst, assertClose(out.logits.data, want.logits.data, GOLDEN_TOLERANCE, `${c.name} logits`));
      // the check tells schemes apart: the other build's activation range, and f32, are far off
      assert.ok(elementError(out.data, c.builds[other].output).error > 100 * GOLDEN_TOLERANCE, `${c.name}: indistinguishable from the ${other} scheme`);
      const f32 = await loadModel(readFixture(c.file), { wasm });
      assert.equal(f32.dtype, 'f32');
      assert.ok(elementError(f32.forward(c.ids).data, want.output).error > 100 * GOLDEN_TOLERANCE, `${c.name}: f32 indistinguishable from q8`);
      report.push(`${c.name} ${worst.toExponential(1)}`);
      enc.dispose();
      f32.dispose();
    }
    ctx.diagnostic(`worst per-element error against the emulation: ${report.join(', ')}`);
  });
}

test('a q8 file written by the emulation loads bit for bit: the same weights and outputs as quantizing its F32 twin on load', async () => {
  const q8File = readFixture('q8/odd.q8.safetensors'),
    f32File = readFixture('q8/odd.safetensors');
  const c = REF.cases.find((x) => x.name === 'odd');
  const fromFile = await loadModel(q8File); // the file's dtype
  const onLoad = await loadModel(f32File, { dtype: 'q8' });
  assert.equal(fromFile.dtype, 'q8');
  const a = fromFile.getWeights(),
    b = onLoad.getWeights();
  for (const name of Object.keys(b)) assertBitIdentical(a[name], b[name], name);
  assertBitIdentical(fromFile.forward(c.ids).data, onLoad.forward(c.ids).data, 'forward');
  // getWeights of a q8 encoder: fl32(q * scale), from the file's own integers
  const { tensors } = parseFile(q8File),
    q = tensors.get('layers.0.ffn.up.weight'),
    s = tensors.get('layers.0.ffn.up.weight.scale');
  const ints = new Int8Array(q.bytes.buffer, q.bytes.byteOffset, q.bytes.length),
    scales = f32Of(s.bytes);
  const K = q.shape[1],
    w = a['layers.0.ffn.up.weight'];
  for (let i = 0; i < ints.length; i++) assert.equal(w[i], Math.fround(ints[i] * scales[Math.floor(i / K)]), `up.weight[${i}]`);
  assert.ok(scales.includes(0), 'the zero row has scale 0');
  // the same file as f32: dequantized once, then float all the way
  const wide = await loadModel(q8File, { dtype: 'f32' });
  assert.equal(wide.dtype, 'f32');
  const wa = wide.getWeights();
  for (const name of Object.keys(a)) assertBitIdentical(wa[name], a[name], `${name} (f32 load)`);
  const twin = await createEncoder(c.config, { weights: a });
  assertBitIdentical(wide.forward(c.ids).data, twin.forward(c.ids).data, 'f32 load = createEncoder on the dequantized weights');
  for (const e of [fromFile, onLoad, wide, twin]) e.dispose();
});

// ------------------------------------------------------------ accuracy against f32

test('accuracy on the golden models: pooled cosine >= 0.99 everywhere, per-token >= 0.99 unless the raw attention scores pass 20', async (ctx) => {
  const rows = [];
  for (const [build, wasm] of Object.entries(builds)) {
    let token = 1,
      tokenWorst = '',
      mean = 1,
      saturated = 1;
    for (const c of golden.cases) {
      const opts = { ...(c.typeIds && { typeIds: c.typeIds }), ...(c.skipLayers && { skipLayers: c.skipLayers }) };
      const f = await loadModel(readFixture(c.file), { wasm }),
        q = await loadModel(readFixture(c.file), { wasm, dtype: 'q8' });
      const lengths = c.ids.map((s) => s.length);
      const A = tokensAndMeans(f.forward(c.ids, opts), lengths),
        B = tokensAndMeans(q.forward(c.ids, opts), lengths);
      const tc = rowCosine(A.tokens, B.tokens, A.C),
        mc = rowCosine(A.means, B.means, A.C);
      assert.ok(mc >= 0.99, `${c.name} [${build}]: mean-pooled cosine ${mc}`);
      mean = Math.min(mean, mc);
      // scores past 100 (maxScore: the overflow fixtures): a softmax that saturates turns the
      // weights' rounding into a different winner for some tokens; measured, not bounded
      if (c.maxScore > 20) saturated = Math.min(saturated, tc);
      else {
        assert.ok(tc >= 0.99, `${c.name} [${build}]: token cosine ${tc}`);
        if (tc < token) [token, tokenWorst] = [tc, c.name];
      }
      f.dispose();
      q.dispose();
    }
    rows.push(
      `${build}: worst token ${token.toFixed(4)} (${tokenWorst}), worst pooled ${mean.toFixed(4)}, saturated-softmax cases' worst token ${saturated.toFixed(4)}`,
    );
  }
  ctx.diagnostic(`${golden.cases.length} cases; ${rows.join('; ')}`);
});

test('accuracy on the pretrained fixtures: embeddings (the checkpoint recipe) cosine >= 0.99, tokens >= 0.98; embed() too', async (ctx) => {
  const rows = [];
  for (const c of PRETRAINED_CASES) {
    const dir = path.join(PRETRAINED, c.folder);
    const f = await loadPretrained(dir),
      q = await loadPretrained(dir, { dtype: 'q8' });
    assert.equal(q.encoder.dtype, 'q8');
    let token = 1,
      emb = 1;
    for (const b of c.batches) {
      const opts = b.typeIds ? { typeIds: b.typeIds } : {};
      const hf = f.encoder.forward(b.ids, opts),
        hq = q.encoder.forward(b.ids, opts);
      token = Math.min(token, rowCosine(tokensAndMeans(hf, b.lengths).tokens, tokensAndMeans(hq, b.lengths).tokens, hf.shape[2]));
      const ef = applyRecipe(pool(hf, b.lengths, f.recipe.pooling), f.recipe),
        eq = applyRecipe(pool(hq, b.lengths, q.recipe.pooling), q.recipe);
      emb = Math.min(emb, rowCosine(ef.data, eq.data, ef.shape[1]));
    }
    const texts = c.texts?.[0]?.texts;
    if (texts) {
      const ef = f.embed(texts),
        eq = q.embed(texts);
      emb = Math.min(emb, rowCosine(ef.data, eq.data, ef.shape[1]));
    }
    assert.ok(emb >= 0.99, `${c.case}: embedding cosine ${emb}`);
    assert.ok(token >= 0.98, `${c.case}: token cosine ${token}`);
    rows.push(`${c.case} ${token.toFixed(4)}/${emb.toFixed(4)}`);
    f.dispose();
    q.dispose();
  }
  ctx.diagnostic(`token/embedding cosine (relaxed build): ${rows.join(', ')}`);
});

// ------------------------------------------------------------ the file

/** A safetensors file's metadata and tensors (data order), and back. */
function parseFile(bytes) {
  const n = Number(new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(0, true));
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n)));
  const meta = header.__metadata__;
  delete header.__metadata__;
  const data = bytes.subarray(8 + n);
  const entries = Object.entries(header).sort((a, b) => a[1].data_offsets[0] - b[1].data_offsets[0]);
  return { meta, tensors: new Map(entries.map(([name, t]) => [name, { dtype: t.dtype, shape: t.shape, bytes: data.slice(...t.data_offsets) }])) };
}
function buildFile(meta, tensors) {
  const header = { __metadata__: meta },
    parts = [];
  let at = 0;
  for (const [name, t] of tensors) {
    header[name] = { dtype: t.dtype, shape: t.shape, data_offsets: [at, at + t.bytes.length] };
    parts.push(t.bytes);
    at += t.bytes.length;
  }
  const h = new TextEncoder().encode(JSON.stringify(header));
  const out = new Uint8Array(8 + h.length + at);
  new DataView(out.buffer).setBigUint64(0, BigInt(h.length), true);
  out.set(h, 8);
  let p = 8 + h.length;
  for (const b of parts) {
    out.set(b, p);
    p += b.length;
  }
  return out;
}
const f32Of = (bytes) => new Float32Array(bytes.slice().buffer);
const bytesOf = (floats) => new Uint8Array(Float32Array.from(floats).buffer);

const small = {
  vocabSize: 40,
  dModel: 16,
  heads: 2,
  layers: 2,
  ffDim: 24,
  maxLen: 32,
  position: 'rope',
  norm: 'layernorm',
  normPlacement: 'pre',
  activation: 'gelu',
  outputHead: true,
};
const smallIds = [
  [1, 5, 9, 13, 17, 21],
  [2, 4],
];

test('the q8 file: I8 rows after their F32 scales, metadata dtype q8; save and load are bit for bit, in either dtype', async () => {
  const q = await createEncoder(small, { seed: 4, dtype: 'q8' });
  assert.equal(q.dtype, 'q8');
  const file = q.save();
  const { meta, tensors } = parseFile(file);
  assert.equal(meta.dtype, 'q8');
  const names = [...tensors.keys()];
  for (const [name, t] of tensors) {
    if (t.dtype !== 'I8') {
      assert.equal(t.dtype, 'F32', name);
      continue;
    }
    assert.equal(t.shape.length, 2, `${name}: 2-D`);
    assert.equal(names[names.indexOf(name) - 1], `${name}.scale`, `${name}: its scales just before`);
    assert.deepEqual(tensors.get(`${name}.scale`).shape, [t.shape[0]]);
    assert.ok(!new Int8Array(t.bytes.buffer).includes(-128), `${name}: symmetric`);
  }
  const i8 = names.filter((n) => tensors.get(n).dtype === 'I8');
  for (const n of ['embed.tokens', 'layers.0.attn.q.weight', 'layers.1.ffn.down.weight', 'head.weight']) assert.ok(i8.includes(n), `${n} is I8`);
  for (const n of names) if (/norm|bias|\.scale$/.test(n)) assert.equal(tensors.get(n).dtype, 'F32', n);
  // round trip
  const back = await loadModel(file);
  assert.equal(back.dtype, 'q8');
  const want = q.forward(smallIds);
  assertBitIdentical(back.forward(smallIds).data, want.data, 'forward after load');
  assertBitIdentical(back.forward(smallIds).logits.data, want.logits.data, 'logits after load');
  assert.deepEqual(back.save(), file, 'save(load(file)) = file');
  // loaded as f32: the dequantized weights; saved again as f32 and quantized on load: the same q8 file
  const wide = await loadModel(file, { dtype: 'f32' });
  const ww = wide.getWeights(),
    qw = q.getWeights();
  for (const n of Object.keys(qw)) assertBitIdentical(ww[n], qw[n], n);
  const again = await loadModel(wide.save(), { dtype: 'q8' });
  assert.deepEqual(again.save(), file, 'f32(dequantized) -> q8 gives the same integers and scales');
  // an f32 file quantized on load = createEncoder with those weights in q8
  const f = await createEncoder(small, { seed: 4 });
  const a = await loadModel(f.save(), { dtype: 'q8' }),
    b = await createEncoder(small, { weights: f.getWeights(), dtype: 'q8' });
  assertBitIdentical(a.forward(smallIds).data, b.forward(smallIds).data, 'quantized on load = created q8');
  assert.deepEqual(a.save(), b.save());
  for (const e of [q, back, wide, again, f, a, b]) e.dispose();
});

test('a MiniLM-L6-shaped q8 file is under 0.3x the f32 file', async (ctx) => {
  const cfg = {
    vocabSize: 30522,
    dModel: 384,
    heads: 12,
    layers: 6,
    ffDim: 1536,
    maxLen: 512,
    typeVocabSize: 2,
    embedNorm: true,
    position: 'learned',
    norm: 'layernorm',
    normPlacement: 'post',
    activation: 'gelu',
    eps: 1e-12,
  };
  const q = await createEncoder(cfg, { seed: 1, dtype: 'q8' });
  const q8Bytes = q.save().length;
  q.dispose();
  const f = await createEncoder(cfg, { seed: 1 });
  const f32Bytes = f.save().length;
  f.dispose();
  const ratio = q8Bytes / f32Bytes;
  ctx.diagnostic(`q8 ${(q8Bytes / 2 ** 20).toFixed(1)} MiB, f32 ${(f32Bytes / 2 ** 20).toFixed(1)} MiB: ${ratio.toFixed(3)}x`);
  assert.ok(ratio <= 0.3 && ratio > 0.25, `ratio ${ratio}`);
});

test('the converter --dtype q8: one file that loads as q8 with the same bits as loadPretrained(folder, {dtype: q8})', async () => {
  const tmp = mkdtempSync(path.join(tmpdir(), 'swapformer-q8-'));
  try {
    const bin = fileURLToPath(new URL('../bin/swapformer.js', import.meta.url));
    for (const name of ['bert-minilm', 'nomic-embed', 'modernbert-embed', 'sentence-t5']) {
      const c = PRETRAINED_CASES.find((x) => x.case === name);
      const out = path.join(tmp, `${name}.safetensors`);
      execFileSync(process.execPath, [...NODE_FLAGS, bin, 'convert', path.join(PRETRAINED, c.folder), out, '--dtype', 'q8'], { stdio: 'pipe' });
      const ref = await loadPretrained(path.join(PRETRAINED, c.folder), { dtype: 'q8' });
      const p = await loadPretrained(out);
      assert.equal(p.encoder.dtype, 'q8', `${name}: the file's dtype`);
      const b = c.batches[0],
        opts = b.typeIds ? { typeIds: b.typeIds } : {};
      assertBitIdentical(p.encoder.forward(b.ids, opts).data, ref.encoder.forward(b.ids, opts).data, `${name} forward`);
      const texts = ['a converted int8 model', 'embeds as the folder does'];
      assertBitIdentical(p.embed(texts).data, ref.embed(texts).data, `${name} embed`);
      assert.equal(parseFile(readFileSync(out)).meta.dtype, 'q8');
      p.dispose();
      ref.dispose();
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});

test('bad q8 files and options: SwapformerError naming the field, in either load dtype; the instance stays usable', async () => {
  const good = await createEncoder(small, { seed: 9, dtype: 'q8' });
  const ref = good.forward(smallIds).data;
  const { meta, tensors } = parseFile(good.save());
  const W = 'layers.1.attn.o.weight';
  /** The file with one change made to a copy of its tensors (a Map, data order). */
  const variant = (change, m = meta) => {
    const ts = new Map([...tensors].map(([k, t]) => [k, { ...t, bytes: t.bytes.slice() }]));
    change(ts);
    return buildFile(m, ts);
  };
  const withScale = (row, value) =>
    variant((ts) => {
      const s = f32Of(ts.get(`${W}.scale`).bytes);
      s[row] = value;
      ts.get(`${W}.scale`).bytes = bytesOf(s);
    });
  const reorder = (order) =>
    variant((ts) => {
      const all = [...ts];
      ts.clear();
      for (const [k, t] of order(all)) ts.set(k, t);
    });
  const cases = [
    [
      'int8 -128',
      variant((ts) => {
        ts.get(W).bytes[5] = 0x80;
      }),
      'BAD_WEIGHTS',
      /layers\.1\.attn\.o\.weight.*-128 at index 5/,
    ],
    ['negative scale', withScale(3, -0.5), 'BAD_WEIGHTS', /layers\.1\.attn\.o\.weight.*scale of row 3 is -0\.5/],
    ['NaN scale', withScale(0, NaN), 'BAD_WEIGHTS', /scale of row 0 is nan/i],
    ['infinite scale', withScale(15, Infinity), 'BAD_WEIGHTS', /scale of row 15 is inf/i],
    ['a scale whose weights overflow float32', withScale(2, 3e36), 'BAD_WEIGHTS', /scale of row 2 is 3e\+?36.*times 127 a finite float32/],
    [
      'the scales missing',
      variant((ts) => ts.delete(`${W}.scale`)),
      'BAD_WEIGHTS',
      /'layers\.1\.attn\.o\.weight'.*needs its scales 'layers\.1\.attn\.o\.weight\.scale'/,
    ],
    [
      'the scales after the weight',
      reorder((all) => {
        const i = all.findIndex(([k]) => k === `${W}.scale`);
        [all[i], all[i + 1]] = [all[i + 1], all[i]];
        return all;
      }),
      'BAD_WEIGHTS',
      /just before it/,
    ],
    [
      'the scales far from the weight',
      reorder((all) => {
        const i = all.findIndex(([k]) => k === `${W}.scale`);
        return [all[i], ...all.slice(0, i), ...all.slice(i + 1)];
      }),
      'BAD_WEIGHTS',
      /just before it/,
    ],
    [
      'scales of the wrong length',
      variant((ts) => {
        ts.get(`${W}.scale`).shape = [8];
        ts.get(`${W}.scale`).bytes = ts.get(`${W}.scale`).bytes.slice(0, 32);
      }),
      'BAD_WEIGHTS',
      /'layers\.1\.attn\.o\.weight\.scale' must be F32 \[16\]/,
    ],
    [
      'scales in F16',
      variant((ts) => {
        ts.get(`${W}.scale`).dtype = 'F16';
        ts.get(`${W}.scale`).bytes = ts.get(`${W}.scale`).bytes.slice(0, 32);
      }),
      'BAD_WEIGHTS',
      /must be F32 \[16\]/,
    ],
    [
      'an I8 bias',
      variant((ts) => {
        const all = [...ts];
        const i = all.findIndex(([k]) => k === 'layers.0.attn.q.bias');
        all.splice(
          i,
          1,
          ['layers.0.attn.q.bias.scale', { dtype: 'F32', shape: [16], bytes: bytesOf(new Float32Array(16).fill(0.01)) }],
          ['layers.0.attn.q.bias', { dtype: 'I8', shape: [16], bytes: new Uint8Array(16) }],
        );
        ts.clear();
        for (const [k, t] of all) ts.set(k, t);
      }),
      'BAD_WEIGHTS',
      /layers\.0\.attn\.q\.bias.*2-D|layers\.0\.attn\.q\.bias\.scale/,
    ],
    [
      'an I8 norm weight',
      variant((ts) => {
        const t = ts.get('layers.0.norm1.weight');
        t.dtype = 'I8';
        t.bytes = new Uint8Array(16);
      }),
      'BAD_WEIGHTS',
      /layers\.0\.norm1\.weight.*I8: only 2-D/,
    ],
    ['metadata dtype q4', variant(() => {}, { ...meta, dtype: 'q4' }), 'BAD_FILE', /__metadata__\.dtype must be "f32" or "q8"/],
    ['metadata dtype not a string', variant(() => {}, { ...meta, dtype: 8 }), 'BAD_FILE', /__metadata__ values must be strings/],
  ];
  for (const [what, file, code, re] of cases)
    for (const dtype of [undefined, 'f32', 'q8']) {
      await rejects(loadModel(file, dtype ? { dtype } : {}), code, re).catch((e) => {
        throw new Error(`${what} (dtype ${dtype}): ${e.message}`);
      });
      assertBitIdentical(good.forward(smallIds).data, ref, `after: ${what}`);
    }
  // the valid file itself, rebuilt by the same builder, loads (the builder is right)
  assertBitIdentical((await loadModel(variant(() => {}))).forward(smallIds).data, ref, 'the unchanged file');
  // an F32 weight in a q8 file (a tool that quantized only some): quantized on load, accepted
  const mixed = variant((ts) => {
    const w = good.getWeights()[W];
    ts.delete(`${W}.scale`);
    Object.assign(ts.get(W), { dtype: 'F32', bytes: bytesOf(w) });
  });
  assertBitIdentical((await loadModel(mixed)).forward(smallIds).data, ref, 'an F32 tensor among I8 ones');
  for (const bad of ['int8', 'Q8', 'f16', 1, null])
    for (const call of [
      () => createEncoder(small, { dtype: bad }),
      () => loadModel(good.save(), { dtype: bad }),
      () => loadPretrained(path.join(PRETRAINED, 'bert-minilm'), { dtype: bad }),
    ])
      await rejects(call, 'BAD_ARGUMENT', /options\.dtype must be 'f32' or 'q8'/);
  assertBitIdentical(good.forward(smallIds).data, ref, 'after the bad options');
  good.dispose();
});

// ------------------------------------------------------------ threads

for (const build of ['relaxed-simd', 'simd128']) {
  test(`q8 with 1, 2 and 3 threads: the same bits, every golden case and the emulated scheme [${build}]`, async () => {
    configure({ build, backend: 'wasm' }); // the wasm builds (the native kernels: tests/native.test.js)
    try {
      const amaxBuild = build === 'simd128' ? 'simd128' : 'relaxed';
      const cases = [
        ...golden.cases.map((c) => ({ c, file: c.file, ids: c.ids })),
        ...REF.cases.map((c) => ({ c, file: c.file, ids: c.ids, want: c.builds[amaxBuild] })),
      ];
      for (const { c, file, ids, want } of cases) {
        const bytes = readFixture(file);
        const opts = { ...(c.typeIds && { typeIds: c.typeIds }), ...(c.skipLayers && { skipLayers: c.skipLayers }) };
        const one = await loadModel(bytes, { threads: 1, dtype: 'q8' });
        const ref = one.forward(ids, opts);
        one.dispose();
        if (want) assertClose(ref.data, want.output, GOLDEN_TOLERANCE, `${c.name}: against the emulation`);
        for (const threads of [2, 3]) {
          const enc = await loadModel(bytes, { threads, dtype: 'q8' });
          const out = enc.forward(ids, opts);
          assertBitIdentical(out.data, ref.data, `${c.name}: ${threads} threads`);
          if (ref.logits) assertBitIdentical(out.logits.data, ref.logits.data, `${c.name}: logits, ${threads} threads`);
          enc.dispose();
        }
      }
      const info = await runtimeInfo({ threads: 2 });
      assert.equal(info.threads, 2);
      assert.ok(info.threaded);
    } finally {
      configure({ build: 'auto', backend: undefined });
    }
  });
}
