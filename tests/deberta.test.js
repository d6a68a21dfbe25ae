// DeBERTa-v2 / v3 / mDeBERTa-v3 (model_type deberta-v2) end to end, against the
// independent references of tests/deberta/ (tests/reference/make_deberta.py:
// float64 forwards written from transformers' modeling_deberta_v2.py, the Rust
// tokenizers' encodings, the pipeline rules on the float64 logits, PyTorch's
// table rows of every relative distance):
//  - every case: task and labels, our tokenizer's ids the Rust tokenizers', the
//    hidden states and every head's logits within 1e-4 per element in both wasm
//    builds and natively (where the addon loads), the two backends within 1e-5;
//    q8 within a measured bound; 1, 2 and 3 threads the same bits;
//  - the public methods (classify, predict, rank, zeroShot, classifyTokens,
//    fillMask) against expected-pipelines.json;
//  - the disentangled scheme's row of every distance |i - j| < 4096 against
//    PyTorch's float32 make_log_bucket_position, through the score probe;
//  - the slot composes: the scheme in config.position gives relativeBias's bits;
//  - swaps: disentangled -> none / alibi / rope keeps every other weight bit for
//    bit and lifts maxLength; without positions a DeBERTa tagger's rows follow a
//    permutation of its tokens bit for bit;
//  - a replaced-token detector (v3) refuses fill-mask saying why; the configs
//    swapformer does not run are refused by name.
// tests/reference/deberta_mutations.mjs plants bugs in the new math and checks
// that this file fails on each.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, mkdtempSync, rmSync, cpSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { loadPretrained, loadModel, createEncoder, configure, runtimeInfo } from '../bindings/index.js';
import { assertClose, assertBitIdentical, elementError, rejects, headOptions, expectedLogits } from './helpers.js';

const ROOT = fileURLToPath(new URL('./deberta/', import.meta.url));
const BIN = fileURLToPath(new URL('../bin/swapformer.js', import.meta.url));
const readJson = (...p) => JSON.parse(readFileSync(path.join(...p), 'utf8'));
const CASES = readdirSync(path.join(ROOT, 'expected'))
  .filter((f) => f.endsWith('.json'))
  .sort()
  .map((f) => readJson(ROOT, 'expected', f));
const PIPELINES = readJson(ROOT, 'expected-pipelines.json');
const BUCKETS = readJson(ROOT, 'buckets.json');
const byName = (name) => CASES.find((c) => c.case === name);
const folder = (c) => path.join(ROOT, c.case);

const TOLERANCE = 1e-4; // per element (helpers.js elementError); measured: a few 1e-6
const Q8_BOUND = 0.5; // int8 weights and activations through 1-3 post-norm layers and gain-2 heads: measured below 0.3
const TASK_NAMES = {
  sequence: 'text-classification',
  token: 'token-classification',
  qa: 'question-answering',
  mlm: 'fill-mask',
  embedding: 'feature-extraction',
};
// the scheme's tensors: what a swap of it drops
const SCHEME_TENSOR = /^(embed\.rel_table|embed\.rel_norm\.|layers\.\d+\.attn\.pos_[kq]\.)/;

let nativeLoads = false;
test.before(async () => {
  configure({ backend: 'native' });
  try {
    nativeLoads = (await runtimeInfo()).backend === 'native';
  } catch {
    nativeLoads = false;
  } finally {
    configure({ backend: undefined });
  }
});

// backends: the two wasm builds, and the native addon where it loads
const RUNTIMES = [
  { name: 'wasm simd128', set: { backend: 'wasm', build: 'simd128' } },
  { name: 'wasm relaxed-simd', set: { backend: 'wasm', build: 'relaxed-simd' } },
  { name: 'native', set: { backend: 'native' }, native: true },
];

const models = new Map();
/** A folder's model on a runtime, dtype and thread count, loaded once (disposed at the end). */
async function model(dir, { runtime = RUNTIMES[1], dtype = 'f32', threads = 1 } = {}) {
  const key = JSON.stringify([dir, runtime.name, dtype, threads]);
  if (!models.has(key)) {
    configure(runtime.set);
    try {
      models.set(key, await loadPretrained(dir, { dtype, threads }));
    } finally {
      configure({ backend: undefined, build: 'auto' });
    }
  }
  return models.get(key);
}
test.after(() => {
  for (const m of models.values()) m.dispose();
});
/** m.withConfig on the runtime m was loaded on (the default one of model()). */
async function derive(m, change, runtime = RUNTIMES[1]) {
  configure(runtime.set);
  try {
    return await m.withConfig(change, { threads: 1 });
  } finally {
    configure({ backend: undefined, build: 'auto' });
  }
}

/** The real rows of [B, T, C] and the reference's rows, both flat. */
function realRows(out, reference) {
  const [, T, C] = out.shape,
    got = [],
    want = [];
  reference.forEach((seq, b) =>
    seq.forEach((r, t) => {
      got.push(...out.data.subarray((b * T + t) * C, (b * T + t + 1) * C));
      want.push(...r);
    }),
  );
  return [Float64Array.from(got), want];
}

/** Every forward of a case (its inputs with the head, its random batches): the worst errors, asserted within tol. */
function checkCase(c, m, tol, what) {
  const out = m.encoder.forward(
    c.inputs.map((i) => i.ids),
    headOptions(c, m),
  );
  const errors = { hidden: assertClose(...realRows(out, c.hidden), tol, `${what}: hidden states`), logits: 0 };
  if (c.task !== 'embedding') errors.logits = assertClose(out.head.data, expectedLogits(c, out.shape[1]), tol, `${what}: logits`);
  for (const [k, b] of (c.batches ?? []).entries()) {
    const o = m.encoder.forward(b.ids, b.typeIds && m.encoder.config.typeVocabSize > 1 ? { typeIds: b.typeIds } : {});
    errors.hidden = Math.max(errors.hidden, assertClose(...realRows(o, b.hidden), tol, `${what}: batch ${k} (lengths ${b.lengths})`));
  }
  return errors;
}

// ------------------------------------------------------------------ every case

test('the cases: every head, v2 and v3 layouts; .task and .labels as config.json says; our tokenizer gives the Rust ids', async () => {
  assert.deepEqual(CASES.map((c) => c.task).sort(), ['embedding', 'embedding', 'mlm', 'mlm', 'mlm', 'qa', 'sequence', 'sequence', 'sequence', 'token']);
  for (const c of CASES) {
    const m = await model(folder(c));
    const hf = readJson(folder(c), 'config.json');
    assert.equal(m.family, 'deberta-v2');
    assert.equal(m.task, TASK_NAMES[c.task], `${c.case}: task`);
    const labels = hf.id2label && c.task !== 'mlm' && c.task !== 'embedding' ? Object.keys(hf.id2label).map((k) => hf.id2label[k]) : null;
    assert.deepEqual(m.labels, labels, `${c.case}: labels`);
    for (const inp of c.inputs) {
      const e = m.tokenizer.encode(inp.text, inp.textPair === undefined ? {} : { pair: inp.textPair });
      assert.deepEqual(Array.from(e.ids), inp.ids, `${c.case}: ids of ${JSON.stringify(inp.text)}`);
      assert.deepEqual(Array.from(e.typeIds), inp.typeIds, `${c.case}: type ids`);
      assert.deepEqual(e.tokens, inp.tokens, `${c.case}: tokens`);
    }
  }
  const v3 = (await model(folder(byName('deberta-v3-nli')))).encoder.config;
  assert.equal(v3.position, 'none');
  assert.equal(v3.relativeBias, 'disentangled');
  assert.deepEqual(v3.relativeBiasOptions, { buckets: 8, maxDistance: 512, terms: ['c2p', 'p2c'], shareKey: true, normTable: true });
  assert.equal(v3.attnScale, 1 / Math.sqrt(8 * 3));
  assert.equal(v3.typeVocabSize, 0);
  assert.equal(v3.eps, 1e-7);
  const v2 = (await model(folder(byName('deberta-v2-lm-head')))).encoder.config;
  assert.equal(v2.position, 'learned');
  assert.deepEqual(v2.relativeBiasOptions, { buckets: 0, maxDistance: 10, terms: ['c2p'], shareKey: false, normTable: false });
  assert.deepEqual(v2.conv, { kernel: 3, activation: 'tanh' });
  // embedding_size != hidden_size: tables 24 wide, embed_proj before the norm, which is hidden_size wide
  const p = (await model(folder(byName('deberta-v2-embed-proj')))).encoder;
  assert.equal(p.config.embedDim, 24);
  assert.equal(p.config.embedNormAfterProj, true);
  assert.equal(p.config.head.width, 24);
  const shapes = p.weightShapes();
  assert.deepEqual([shapes['embed.tokens'], shapes['embed.proj.weight'], shapes['embed.norm.weight']], [[p.config.vocabSize, 24], [32, 24], [32]]);
  assert.ok(
    p.getWeights()['embed.proj.bias'].every((v) => v === 0),
    'embed_proj has no bias: zeros',
  );
});

for (const runtime of RUNTIMES) {
  test(`[${runtime.name}] every case: hidden states and every head's logits within 1e-4 of the float64 reference`, async (ctx) => {
    if (runtime.native && !nativeLoads) return ctx.skip('the native addon does not load here');
    const rows = [];
    for (const c of CASES) rows.push({ case: c.case, ...checkCase(c, await model(folder(c), { runtime }), TOLERANCE, `${c.case} [${runtime.name}]`) });
    const worst = (k) => rows.reduce((w, r) => (r[k] > w[0] ? [r[k], r.case] : w), [0, '']);
    ctx.diagnostic(
      `worst per-element error: hidden ${worst('hidden')[0].toExponential(2)} (${worst('hidden')[1]}), logits ${worst('logits')[0].toExponential(2)} (${worst('logits')[1]})`,
    );
  });
}

test('native and wasm agree within 1e-5 relative on every case', async (ctx) => {
  if (!nativeLoads) return ctx.skip('the native addon does not load here');
  for (const c of CASES) {
    const [a, b] = [await model(folder(c), { runtime: RUNTIMES[2] }), await model(folder(c), { runtime: RUNTIMES[1] })];
    const [x, y] = [
      a.encoder.forward(
        c.inputs.map((i) => i.ids),
        headOptions(c, a),
      ),
      b.encoder.forward(
        c.inputs.map((i) => i.ids),
        headOptions(c, b),
      ),
    ];
    assert.ok(elementError(x.data, y.data).error <= 1e-5, `${c.case}: hidden states ${elementError(x.data, y.data).error}`);
    if (x.head) assert.ok(elementError(x.head.data, y.head.data).error <= 1e-5, `${c.case}: logits`);
  }
});

test('q8: every case close to the float64 reference', async (ctx) => {
  let w = 0;
  for (const c of CASES) {
    const m = await model(folder(c), { dtype: 'q8' });
    assert.equal(m.encoder.dtype, 'q8');
    const e = checkCase(c, m, Q8_BOUND, `${c.case} [q8]`);
    w = Math.max(w, e.hidden, e.logits);
  }
  ctx.diagnostic(`worst per-element error ${w.toFixed(3)} (bound ${Q8_BOUND})`);
});

test('threads 1, 2, 3: the same bits (f32 and q8), with the tables projected on each', async (ctx) => {
  const info = await runtimeInfo({ threads: 3 });
  if (info.threads !== 3) return ctx.skip(`no threads here: ${info.threadsFallback}`);
  for (const c of CASES) {
    const m = await model(folder(c));
    const file = m.encoder.save();
    const ids = Array.from({ length: 70 }, (_, i) => c.inputs[i % c.inputs.length].ids);
    ids.push(Array.from({ length: Math.min(150, m.encoder.maxSequenceLength) }, (_, i) => c.inputs[0].ids[i % c.inputs[0].ids.length]));
    for (const dtype of ['f32', 'q8']) {
      const outs = [];
      for (const threads of [1, 2, 3]) {
        const e = await loadModel(file, { dtype, threads });
        try {
          outs.push(e.forward(ids).data);
        } finally {
          e.dispose();
        }
      }
      outs.forEach((o, i) => assertBitIdentical(o, outs[0], `${c.case} [${dtype}, ${i + 1} threads]`));
    }
  }
});

test("the public methods on the fixtures' texts give the pipelines' outputs (expected-pipelines.json)", async (ctx) => {
  const methods = new Set(PIPELINES.calls.map((x) => x.method));
  assert.deepEqual([...methods].sort(), ['classify', 'classifyTokens', 'fillMask', 'predict', 'rank', 'zeroShot']);
  let worst = 0;
  const compare = (actual, expected, where, score = false) => {
    if (typeof expected === 'number') {
      if (!score) return assert.equal(actual, expected, where);
      const err = Math.abs(actual - expected) / Math.max(1, Math.abs(expected));
      assert.ok(err <= TOLERANCE, `${where}: ${actual} vs ${expected}`);
      worst = Math.max(worst, err);
    } else if (Array.isArray(expected)) {
      assert.equal(actual.length, expected.length, `${where}: length`);
      expected.forEach((e, i) => compare(actual[i], e, `${where}[${i}]`, score));
    } else if (expected !== null && typeof expected === 'object') {
      assert.deepEqual(Object.keys(actual).sort(), Object.keys(expected).sort(), `${where}: keys`);
      for (const k of Object.keys(expected)) compare(actual[k], expected[k], `${where}.${k}`, k === 'score' || k === 'scores');
    } else assert.equal(actual, expected, where);
  };
  for (const call of PIPELINES.calls) {
    const m = await model(path.join(ROOT, call.case));
    compare(m[call.method](...call.args, call.options), call.expected, call.id, call.method === 'predict');
    if (call.id.endsWith('/0'))
      assert.deepStrictEqual(await m[`${call.method}Async`](...call.args, call.options), m[call.method](...call.args, call.options), `${call.id}: async`);
  }
  ctx.diagnostic(`${PIPELINES.calls.length} calls, ${PIPELINES.skipped.length} left out for near-ties; worst score error ${worst.toExponential(2)}`);
});

test('truncated pairs: zeroShot keeps the hypothesis whole, predict cuts the longest first, as the Rust tokenizer', async () => {
  for (const t of PIPELINES.truncations) {
    const m = await loadPretrained(path.join(ROOT, t.case), { maxLength: t.maxLength, threads: 1 });
    try {
      for (const [truncation, want] of [
        ['longest_first', t.longestFirst],
        ['only_first', t.onlyFirst],
      ]) {
        const encode = () => m.tokenizer.encode(t.text, { pair: t.textPair, maxLength: t.maxLength, truncation });
        if (want.error) await rejects(encode, 'SEQUENCE_TOO_LONG', /truncation 'only_first'/);
        else assert.deepEqual([Array.from(encode().ids), Array.from(encode().typeIds)], [want.ids, want.typeIds], `${t.case}@${t.maxLength} ${truncation}`);
      }
    } finally {
      m.dispose();
    }
  }
});

test("the converter: f32 files give the folder's bits, q8 files those of loading the folder with q8 (the convolution stays f32)", async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'swapformer-deberta-convert-'));
  try {
    for (const name of ['deberta-v2-mlm', 'deberta-v3-nli', 'deberta-v2-conv']) {
      const c = byName(name);
      for (const dtype of ['f32', 'q8']) {
        const out = path.join(dir, `${name}-${dtype}.safetensors`);
        await promisify(execFile)(process.execPath, [BIN, 'convert', folder(c), out, '--dtype', dtype]);
        const [want, file] = [await model(folder(c), { dtype }), await model(out, { dtype })];
        try {
          assert.equal(file.encoder.dtype, dtype);
          assert.deepEqual(file.encoder.config, want.encoder.config, `${name} [${dtype}]: config`);
          const ids = c.inputs.map((i) => i.ids);
          const [a, b] = [file.encoder.forward(ids, headOptions(c, file)), want.encoder.forward(ids, headOptions(c, want))];
          assertBitIdentical(a.data, b.data, `${name} [${dtype} file]: hidden states`);
          if (a.head) assertBitIdentical(a.head.data, b.head.data, `${name} [${dtype} file]: logits`);
          assert.equal(file.task, want.task);
        } finally {
          models.delete(JSON.stringify([out, RUNTIMES[1].name, dtype, 1]));
          file.dispose();
        }
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

// ------------------------------------------------------------------ the relative rows

/** Rows of distances 0 .. T-1 from PyTorch's runs [[first distance, row], ...]. */
function expand(runs, T) {
  const out = new Int32Array(T);
  runs.forEach(([d, row], k) => out.fill(row, d, k + 1 < runs.length ? runs[k + 1][0] : T));
  return out;
}

test("the table row of every distance |i - j| < 4096 is PyTorch's float32 make_log_bucket_position (seven configurations, through the score probe)", async () => {
  const T = BUCKETS.T;
  assert.equal(T, 4096);
  for (const cfg of BUCKETS.configs) {
    // one head of size 1, a table whose row r holds r, the key projection the identity, c2p alone, scale 1:
    // the probe's score of (i, j) with q = 1, k = 0 is the row of i - j
    const rows = cfg.rows;
    const e = await createEncoder(
      {
        vocabSize: 2,
        dModel: 1,
        heads: 1,
        layers: 1,
        ffDim: 1,
        maxLen: 8,
        position: 'none',
        relativeBias: 'disentangled',
        relativeBiasOptions: { buckets: cfg.buckets, maxDistance: cfg.maxDistance, terms: ['c2p'], normTable: false },
        attnScale: 1,
        norm: 'layernorm',
        normPlacement: 'post',
        activation: 'gelu',
      },
      { weights: { 'embed.rel_table': Float32Array.from({ length: rows }, (_, r) => r), 'layers.0.attn.k.weight': [1], 'layers.0.attn.k.bias': [0] } },
    );
    try {
      const s = e.positionScores({ q: [1], k: [0], length: T }).data; // [1, T, T]
      const pos = expand(cfg.positive, T),
        neg = expand(cfg.negative, T);
      const what = `buckets ${cfg.buckets}, maxDistance ${cfg.maxDistance}`;
      for (let d = 0; d < T; d++) {
        if (s[(T - 1) * T + (T - 1 - d)] !== pos[d]) assert.fail(`${what}: distance ${d} reads row ${s[(T - 1) * T + (T - 1 - d)]}, PyTorch ${pos[d]}`);
        if (s[d] !== neg[d]) assert.fail(`${what}: distance -${d} reads row ${s[d]}, PyTorch ${neg[d]}`);
      }
      // past 4096 PyTorch's rows stay at the ends up to the core's longest sequence (make_deberta.py checks it):
      // ours reach them within the distances tested
      assert.equal(pos[T - 1], rows - 1, `${what}: the last row`);
      assert.equal(neg[T - 1], 0, `${what}: row 0`);
    } finally {
      e.dispose();
    }
  }
});

// ------------------------------------------------------------------ the slot, swaps, the lesson

test('the scheme in config.position gives the bits of relativeBias; with learned positions both slots at once (v2)', async () => {
  for (const name of ['deberta-v3-nli', 'deberta-v2-lm-head']) {
    const c = byName(name);
    const m = await model(folder(c));
    const { relativeBiasOptions: opts, position } = m.encoder.config;
    if (position !== 'none') continue; // v2 with learned positions holds both slots: nothing to move
    const moved = await derive(m, { position: 'disentangled', positionOptions: opts, relativeBias: 'none' });
    try {
      const ids = c.inputs.map((i) => i.ids);
      assertBitIdentical(
        moved.encoder.forward(ids, headOptions(c, moved)).head.data,
        m.encoder.forward(ids, headOptions(c, m)).head.data,
        `${name}: moved slot`,
      );
    } finally {
      moved.dispose();
    }
  }
});

test('swaps: disentangled -> none / alibi / rope keep every other weight bit for bit and lift maxLength; the head still runs', async () => {
  const texts = ['The quick brown fox jumps over the lazy dog.', 'Hello, world!'];
  for (const name of ['deberta-v3-nli', 'deberta-v3-ner', 'deberta-v2-lm-head', 'deberta-v2-seq-p2c']) {
    const m = await model(folder(byName(name)));
    const weights = m.encoder.getWeights();
    assert.ok(Number.isFinite(m.maxLength), `${name}: the checkpoint's limit`);
    for (const change of [
      { relativeBias: 'none' },
      { relativeBias: 'none', position: 'none' },
      { relativeBias: 'none', position: 'alibi' },
      { relativeBias: 'none', position: 'rope' },
    ]) {
      const what = `${name} ${JSON.stringify(change)}`;
      const d = await derive(m, change);
      try {
        assert.equal(d.encoder.config.relativeBias, 'none');
        assert.equal(d.encoder.config.attnScale, m.encoder.config.attnScale, `${what}: the content scores' scale kept`);
        assert.equal(d.swapped, true);
        const after = d.encoder.getWeights();
        for (const [k, v] of Object.entries(weights)) {
          if (SCHEME_TENSOR.test(k) || (k === 'embed.positions' && change.position)) assert.ok(!Object.hasOwn(after, k), `${what}: ${k} dropped`);
          else assertBitIdentical(after[k], v, `${what}: ${k}`);
        }
        assert.deepEqual(
          Object.keys(after).filter((k) => !Object.hasOwn(weights, k)),
          [],
          `${what}: no new tensor`,
        );
        assert.equal(d.maxLength, d.encoder.maxSequenceLength, `${what}: the plugin's limit`);
        if (d.encoder.config.position !== 'learned') {
          assert.equal(d.maxLength, Infinity, `${what}: no limit`);
          const long = Array(40).fill('the quick brown fox jumps over the lazy dog').join(' ');
          const n = d.tokenizer.encode(long).ids.length;
          assert.ok(n > m.maxLength || n > 300, `${what}: ${n} tokens`);
          assert.equal(d.embed(long, { pooling: 'none' }).shape[1], n, `${what}: the whole text`);
        }
        assert.ok(d.embed(texts).data.every(Number.isFinite), `${what}: finite`);
        if (d.task === 'text-classification') assert.ok(d.classify(texts[0], { topK: null }).every((x) => Number.isFinite(x.score)));
        if (d.task === 'token-classification') assert.ok(d.classifyTokens(texts[0], { aggregationStrategy: 'none', ignoreLabels: [] }).length > 0);
      } finally {
        d.dispose();
      }
    }
  }
});

test('the permutation lesson: a DeBERTa tagger without positions gives the rows of permuted tokens, permuted, bit for bit', async () => {
  const c = byName('deberta-v3-ner');
  const m = await model(folder(c));
  const none = await derive(m, { relativeBias: 'none' });
  try {
    assert.equal(none.encoder.config.position, 'none');
    const ids = c.inputs[1].ids;
    const perm = ids.map((_, t) => t).sort((a, b) => ((a * 7919) % 13) - ((b * 7919) % 13) || a - b);
    const rows = (enc, seq) => {
      const out = enc.forward(seq, { head: true }).head,
        L = out.shape[2];
      return seq.map((_, t) => Buffer.from(out.data.buffer, out.data.byteOffset + 4 * t * L, 4 * L).toString('hex'));
    };
    const a = rows(none.encoder, ids),
      b = rows(
        none.encoder,
        perm.map((k) => ids[k]),
      );
    perm.forEach((k, t) => assert.equal(b[t], a[k], `permuted row ${t} is row ${k}, bit for bit`));
    const [x, y] = [
      rows(m.encoder, ids),
      rows(
        m.encoder,
        perm.map((k) => ids[k]),
      ),
    ];
    assert.ok(
      perm.some((k, t) => y[t] !== x[k]),
      'with the disentangled scheme, a token that moves changes its logits',
    );
  } finally {
    none.dispose();
  }
});

// ------------------------------------------------------------------ refusals

test('question answering (DebertaV2ForQuestionAnswering): answerQuestion gives the span the pipeline picks from the float64 logits', async () => {
  const c = CASES.find((x) => x.task === 'qa');
  const m = await model(folder(c));
  for (const [b, inp] of c.inputs.entries()) {
    // the pipeline's choice (QuestionAnsweringPipeline.postprocess): a softmax over [CLS] and the context's tokens,
    // [CLS] then zeroed; the best start x end with start <= end < start + 15
    const enc = m.tokenizer.encode(inp.text, { pair: inp.textPair });
    const sep = enc.tokens.indexOf('[SEP]'),
      last = enc.tokens.length - 1;
    const rows = [0, ...Array.from({ length: last - sep - 1 }, (_, k) => sep + 1 + k)];
    const prob = (col) => {
      const z = rows.map((t) => c.logits[b][t][col]),
        mx = Math.max(...z),
        e = z.map((v) => Math.exp(v - mx)),
        sum = e.reduce((x, y) => x + y, 0);
      return new Map(rows.map((t, i) => [t, t === 0 ? 0 : e[i] / sum]));
    };
    const ps = prob(0),
      pe = prob(1);
    let best = { score: -1, s: 0, e: 0 };
    for (const s of rows.slice(1))
      for (const e of rows.slice(1)) if (e >= s && e < s + 15 && ps.get(s) * pe.get(e) > best.score) best = { score: ps.get(s) * pe.get(e), s, e };
    const want = inp.textPair.slice(enc.offsets[best.s][0], enc.offsets[best.e][1]);
    const got = m.answerQuestion(inp.text, inp.textPair, { alignToWords: false }); // the tokens' own offsets
    assert.ok(got, `${inp.text}: an answer`);
    assert.equal(got.answer, want, `${inp.text}: the span`);
    assert.equal(inp.textPair.slice(got.start, got.end), got.answer);
    assert.ok(Math.abs(got.score - best.score) <= 1e-4 * best.score, `${inp.text}: score ${got.score} against ${best.score}`);
    const words = m.answerQuestion(inp.text, inp.textPair); // the default: widened to whole words
    assert.ok(
      words && words.start <= got.start && words.end >= got.end && words.score >= got.score,
      `${inp.text}: aligned to words (spans of the same words add their scores)`,
    );
  }
});

test('a replaced-token detector (DeBERTa-v3) loads as an encoder and refuses fill-mask saying why', async () => {
  const m = await model(folder(byName('deberta-v3-rtd')));
  assert.equal(m.task, 'feature-extraction');
  for (const call of [() => m.fillMask('The [MASK] jumps.'), () => m.fillMaskAsync('The [MASK] jumps.')])
    await rejects(
      call,
      'UNSUPPORTED_MODEL',
      /fillMask needs a masked-LM head.*DeBERTa-v3 and mDeBERTa-v3 checkpoints are replaced-token detectors.*no masked-LM head/,
    );
  assert.ok(m.embed('Hello, world!').data.every(Number.isFinite));
});

test('configs swapformer does not run are refused by name; DeBERTa v1 too', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'swapformer-deberta-'));
  try {
    const src = folder(byName('deberta-v3-nli'));
    for (const [change, re] of [
      [{ model_type: 'deberta' }, /model_type = "deberta" \(DeBERTa v1\) is not supported/],
      [{ conv_kernel_size: 3, conv_groups: 2 }, /conv_groups = 2 is not supported \(1\)/],
      [{ conv_groups: 2 }, null], // no convolution: the field is not read
      [{ conv_kernel_size: 4 }, /conv_kernel_size = 4.*an odd kernel/],
      [{ embedding_size: 16 }, /tensor 'embed\.tokens' has the wrong shape; config needs \[\d+, 16\]/], // read: the tables' width
      [{ pooler_hidden_size: 16 }, /pooler_hidden_size = 16 is not supported \(hidden_size, 32\)/],
      [{ pos_att_type: 'c2p|p2p' }, /pos_att_type has "p2p"/],
      [{ pos_att_type: [] }, /relative_attention = true with no pos_att_type/],
      [{ norm_rel_ebd: 'rms_norm' }, /norm_rel_ebd has "rms_norm"/],
    ]) {
      const copy = path.join(dir, 'm');
      rmSync(copy, { recursive: true, force: true });
      cpSync(src, copy, { recursive: true });
      writeFileSync(path.join(copy, 'config.json'), JSON.stringify({ ...readJson(src, 'config.json'), ...change }));
      if (re) await rejects(() => loadPretrained(copy, { threads: 1 }), 'UNSUPPORTED_MODEL', re);
      else (await loadPretrained(copy, { threads: 1 })).dispose();
    }
    // with embed_proj, the lm_predictions head (legacy false) is hidden_size wide against a narrower token table
    const copy = path.join(dir, 'm');
    rmSync(copy, { recursive: true, force: true });
    cpSync(folder(byName('deberta-v2-embed-proj')), copy, { recursive: true });
    writeFileSync(path.join(copy, 'config.json'), JSON.stringify({ ...readJson(copy, 'config.json'), legacy: false }));
    // its head renamed into the lm_predictions layout (the header rewritten, the data as it was)
    const file = path.join(copy, 'model.safetensors'),
      bytes = readFileSync(file),
      n = Number(bytes.readBigUInt64LE(0));
    const header = JSON.parse(bytes.subarray(8, 8 + n).toString('utf8'));
    const renamed = Object.fromEntries(
      Object.entries(header).map(([k, v]) => [
        k.replace('cls.predictions.transform.', 'lm_predictions.lm_head.').replace('cls.predictions.bias', 'lm_predictions.lm_head.bias'),
        v,
      ]),
    );
    const json = Buffer.from(JSON.stringify(renamed)),
      len = Buffer.alloc(8);
    len.writeBigUInt64LE(BigInt(json.length));
    writeFileSync(file, Buffer.concat([len, json, bytes.subarray(8 + n)]));
    await rejects(() => loadPretrained(copy, { threads: 1 }), 'UNSUPPORTED_MODEL', /legacy = false with embedding_size = 24 != hidden_size = 32/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the scheme's options are checked by the core: BAD_CONFIG naming the field", async () => {
  const base = { vocabSize: 8, dModel: 8, heads: 2, layers: 1, ffDim: 8, position: 'none', norm: 'layernorm', normPlacement: 'post', activation: 'gelu' };
  for (const [opts, re] of [
    [{ buckets: 1 }, /relativeBiasOptions\.buckets must be 0 \(none\) or at least 2/],
    [{ buckets: 8, maxDistance: 5 }, /relativeBiasOptions\.maxDistance \(5\) must exceed buckets \/ 2 \+ 1/],
    [{ terms: [] }, /relativeBiasOptions\.terms must be a non-empty array/],
    [{ terms: ['c2p', 'c2p'] }, /relativeBiasOptions\.terms\[1\]/],
    [{ shareKey: 1 }, /relativeBiasOptions\.shareKey must be true or false/],
    [{ span: 3 }, /relativeBiasOptions has an unknown field 'span'/],
  ])
    await rejects(() => createEncoder({ ...base, relativeBias: 'disentangled', relativeBiasOptions: opts }), 'BAD_CONFIG', re);
  await rejects(() => createEncoder({ ...base, conv: { kernel: 2 } }), 'BAD_CONFIG', /config\.conv\.kernel must be odd/);
  for (const extra of [{}, { embedDim: 4 }, { embedNorm: true }])
    await rejects(
      () => createEncoder({ ...base, ...extra, embedNormAfterProj: true }),
      'BAD_CONFIG',
      /config\.embedNormAfterProj: true needs config\.embedDim and config\.embedNorm/,
    );
  await rejects(() => createEncoder({ ...base, embedDim: 4, embedNorm: true, embedNormAfterProj: 1 }), 'BAD_CONFIG', /embedNormAfterProj/);
  await rejects(() => createEncoder({ ...base, conv: { kernel: 3, activation: 'swish' } }), 'BAD_CONFIG', /config\.conv\.activation/);
  // DeBERTa's scale, 1 / sqrt(d (1 + terms)), is the scheme's default: the same bits as given
  const ids = [1, 2, 3, 4, 5, 6, 7];
  for (const [terms, n] of [
    [['c2p', 'p2c'], 3],
    [['p2c'], 2],
  ]) {
    const relativeBiasOptions = { buckets: 4, maxDistance: 6, terms };
    const [e, given, plain] = await Promise.all([
      createEncoder({ ...base, relativeBias: 'disentangled', relativeBiasOptions }, { seed: 3 }),
      createEncoder({ ...base, relativeBias: 'disentangled', relativeBiasOptions, attnScale: 1 / Math.sqrt(4 * n) }, { seed: 3 }),
      createEncoder({ ...base, relativeBias: 'disentangled', relativeBiasOptions, attnScale: 1 / Math.sqrt(4) }, { seed: 3 }),
    ]);
    assertBitIdentical(e.forward(ids).data, given.forward(ids).data, `terms ${terms}: the default scale`);
    assert.ok(elementError(plain.forward(ids).data, e.forward(ids).data).error > 1e-3, `terms ${terms}: 1 / sqrt(d) differs`);
    assert.equal(e.maxSequenceLength, Infinity);
    for (const x of [e, given, plain]) x.dispose();
  }
});
