// Question answering, SPLADE, ColBERT and bge-m3 end to end, against the
// independent references of tests/retrieval/ (make_retrieval.py: tiny random
// checkpoints in each exact folder layout, their outputs in float64 from the
// upstream code transcribed: transformers' question-answering pipeline,
// sentence-transformers' SparseEncoder, PyLate, FlagEmbedding's M3Embedder):
//  - answerQuestion: the windows' ids, the qa head's logits (1e-4), the
//    answers (spans exact, scores 1e-4, context.slice(start, end) the answer);
//  - SPLADE: the indices above a threshold exactly, values 1e-4, max_active_dims,
//    decode, dot products; the untied decoder and the sum / log1p_relu pooling;
//  - ColBERT (PyLate, jina-like markers with attended expansion, colbert-ai's
//    HF_ColBERT, jina-colbert-v2's HF_ColBERT over the XLM-R flash backbone
//    with RoPE): the kept tokens, their vectors 1e-4, MaxSim 1e-4 end to end
//    and 1e-5 against a float64 loop over the same vectors, rank;
//  - bge-m3 with .pt and .safetensors heads: dense, lexical weights, ColBERT
//    vectors, compute_score with two weightings, rank;
//  - the converter keeps every kind; both wasm builds agree with the native
//    one within 1e-5; refusals name what is wrong and leave the model usable.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadPretrained, maxSim, maxSimSearch, sparseSimilarity, sparseSearch, configure } from '../bindings/index.js';
import { readCheckpoint } from '../bindings/pretrained/checkpoint.js';
import { writeModelFile } from '../bindings/pretrained/model-file.js';
import { SwapformerError } from '../bindings/utils/errors.js';
import { sparseRowsOn } from '../bindings/runtime/embeddings.js';
import { defaultRuntime } from '../bindings/runtime/encoder.js';

const ROOT = fileURLToPath(new URL('./retrieval/', import.meta.url));
const expected = (name) => JSON.parse(readFileSync(path.join(ROOT, 'expected', `${name}.json`), 'utf8'));
const CASES = readdirSync(path.join(ROOT, 'expected'))
  .map((f) => f.replace(/\.json$/, ''))
  .sort();
const TOL = 1e-4;

const models = new Map();
async function model(name) {
  if (!models.has(name)) models.set(name, await loadPretrained(path.join(ROOT, name)));
  return models.get(name);
}

function close(actual, want, tol, where) {
  const a = Array.from(actual.flat ? actual.flat(Infinity) : actual),
    b = want.flat(Infinity);
  assert.equal(a.length, b.length, `${where}: ${a.length} values, expected ${b.length}`);
  for (let i = 0; i < b.length; i++) assert.ok(Math.abs(a[i] - b[i]) <= tol * Math.max(1, Math.abs(b[i])), `${where}[${i}]: ${a[i]} vs ${b[i]}`);
}

const rejects = async (p, code, re) => {
  await assert.rejects(p, (e) => e instanceof SwapformerError && e.code === code && (!re || re.test(e.message)), `${code} ${re}`);
};
const throws = (fn, code, re) => assert.throws(fn, (e) => e instanceof SwapformerError && e.code === code && (!re || re.test(e.message)), `${code} ${re}`);

// ------------------------------------------------------------------ question answering

/** Answers in order, those whose expected scores are within 1e-4 of each other in either order. */
function assertAnswers(actual, want, context, where) {
  const list = (x) => (x === null ? [] : Array.isArray(x) ? x : [x]);
  const [a, b] = [list(actual), list(want)];
  assert.equal(Array.isArray(actual), Array.isArray(want), `${where}: one answer or a list`);
  assert.equal(a.length, b.length, `${where}: ${a.length} answers, expected ${b.length}`);
  for (const x of a) assert.equal(context.slice(x.start, x.end), x.answer, `${where}: context.slice(start, end) is the answer`);
  for (let i = 0; i < b.length;) {
    let j = i + 1;
    while (j < b.length && Math.abs(b[j].score - b[i].score) < 2 * TOL) j++;
    const key = (x) => `${x.start}:${x.end}`;
    const got = a.slice(i, j).sort((x, y) => key(x).localeCompare(key(y))),
      exp = b.slice(i, j).sort((x, y) => key(x).localeCompare(key(y)));
    got.forEach((x, k) => {
      assert.deepEqual([x.start, x.end, x.answer], [exp[k].start, exp[k].end, exp[k].answer], `${where}[${i + k}]: the span`);
      assert.ok(Math.abs(x.score - exp[k].score) <= TOL, `${where}[${i + k}]: score ${x.score} vs ${exp[k].score}`);
    });
    i = j;
  }
}

for (const name of CASES.filter((c) => c.startsWith('qa-'))) {
  test(`question answering ${name}: windows, qa head logits, answers as the pipeline (and the async twin)`, async () => {
    const m = await model(name),
      e = expected(name);
    assert.equal(m.task, 'question-answering');
    assert.equal(m.labels, null);
    for (const item of e.qa) {
      const windows = m.tokenizer.encodeWindows(item.question, item.context, { maxLength: item.maxSeqLen, stride: item.docStride });
      assert.deepEqual(
        windows.map((w) => Array.from(w.ids)),
        item.windows,
        `${name}: the windows' ids`,
      );
      const types = m.encoder.config.typeVocabSize > 1 ? { typeIds: windows.map((w) => w.typeIds) } : {};
      const out = m.encoder.forward(
        windows.map((w) => w.ids),
        { head: true, ...types },
      );
      const T = out.head.shape[1];
      windows.forEach((w, k) => close(out.head.data.slice(k * T * 2, (k * T + w.ids.length) * 2), item.logits[k], TOL, `${name} logits ${k}`));
      for (const v of item.variants) {
        const options = { maxSeqLen: item.maxSeqLen, docStride: item.docStride, ...v.options };
        const got = m.answerQuestion(item.question, item.context, options);
        assertAnswers(got, v.expected, item.context, `${name} ${JSON.stringify(v.options)}`);
        assert.deepEqual(await m.answerQuestionAsync(item.question, item.context, options), got, 'the async twin');
      }
    }
  });
}

test('question answering: refusals name the field, and the model keeps answering', async () => {
  const m = await model('qa-bert');
  throws(() => m.answerQuestion('what?', ''), 'BAD_ARGUMENT', /context cannot be empty/);
  throws(() => m.answerQuestion('', 'a context'), 'BAD_ARGUMENT', /question cannot be empty/);
  throws(
    () => m.answerQuestion('what is it? '.repeat(30), 'a context', { maxSeqLen: 32 }),
    'SEQUENCE_TOO_LONG',
    /question has \d+ tokens.*no room for the context/,
  );
  throws(() => m.answerQuestion('what?', 'a context', { maxSeqLen: 16, docStride: 15 }), 'BAD_ARGUMENT', /docStride = 15.*stride 15 is more than maxLength 16/);
  throws(
    () => m.answerQuestion('what?', 'the quick brown fox jumps over the lazy dog '.repeat(5), { maxSeqLen: 16, docStride: 12 }),
    'BAD_ARGUMENT',
    /stride 12 must be less than the \d+ tokens/,
  );
  throws(() => m.answerQuestion('what?', 'ctx', { docStride: 400, maxSeqLen: 384 }), 'BAD_ARGUMENT', /docStride \(400\) is larger/);
  throws(
    () => m.answerQuestion('what?', 'the lazy dog '.repeat(100), { maxSeqLen: 1000, docStride: 10 }),
    'SEQUENCE_TOO_LONG',
    /maxSeqLen = 1000: a window has \d+ tokens; this model encodes at most 130/,
  );
  throws(() => m.answerQuestion('what?', 'ctx', { topk: 2 }), 'BAD_ARGUMENT', /did you mean 'topK'/);
  const splade = await model('splade-bert');
  throws(() => splade.answerQuestion('what?', 'ctx'), 'UNSUPPORTED_MODEL', /needs a question-answering head.*fill-mask head/);
  const again = m.answerQuestion('what is a transformer?', 'A transformer encodes text.');
  assert.ok(again && again.score > 0 && again.answer.length > 0);
});

test('question answering: UTF-16 offsets with text outside the BMP (context.slice(start, end) is the answer)', async () => {
  const m = await model('qa-xlmr');
  const context = '𝐀𝐁𝐂 the quick brown 🦊 fox jumps over the lazy dog 😀 twice.';
  for (const a of m.answerQuestion('what jumps?', context, { topK: 10, alignToWords: true })) assert.equal(context.slice(a.start, a.end), a.answer);
  for (const a of m.answerQuestion('what jumps?', context, { topK: 10, alignToWords: false })) assert.equal(context.slice(a.start, a.end), a.answer);
});

// ------------------------------------------------------------------ SPLADE

/** Sparse vectors: the indices whose value passes `floor` the same, the values within tol (an index missing on one side is 0). */
function sparseClose(got, want, where, floor = 1e-3) {
  const map = (v) => new Map(Array.from(v.indices, (i, k) => [i, v.values[k]]));
  const [a, b] = [map(got), map(want)];
  const big = (m) =>
    [...m]
      .filter(([, x]) => Math.abs(x) > floor)
      .map(([i]) => i)
      .sort((x, y) => x - y);
  assert.deepEqual(big(a), big(b), `${where}: the indices above ${floor}`);
  for (const i of new Set([...a.keys(), ...b.keys()]))
    assert.ok(Math.abs((a.get(i) ?? 0) - (b.get(i) ?? 0)) <= TOL, `${where}[${i}]: ${a.get(i)} vs ${b.get(i)}`);
  for (let k = 1; k < got.indices.length; k++) assert.ok(got.indices[k] > got.indices[k - 1], `${where}: indices ascending`);
}

for (const name of CASES.filter((c) => c.startsWith('splade-'))) {
  test(`SPLADE ${name}: sparse vectors, maxActiveDims, decode and dot products as SparseEncoder`, async () => {
    const m = await model(name),
      e = expected(name);
    const plain = name === 'splade-roberta-plain';
    assert.equal(m.defaultOutput, plain ? 'dense' : 'sparse');
    assert.deepEqual(m.outputs, plain ? ['dense', 'sparse'] : ['sparse']);
    const got = m.embed(e.texts, plain ? { output: 'sparse' } : undefined);
    assert.equal(got.length, e.texts.length);
    got.forEach((v, i) => {
      assert.ok(v.indices instanceof Int32Array && v.values instanceof Float32Array);
      sparseClose(v, e.sparse[i], `${name} text ${i}`);
    });
    const top = m.embed(e.texts, { output: 'sparse', maxActiveDims: e.maxActiveDims });
    top.forEach((v, i) => {
      assert.ok(v.indices.length <= e.maxActiveDims);
      assert.deepEqual(Array.from(v.indices), e.top[i].indices, `${name} text ${i}: the top ${e.maxActiveDims}`);
      close(v.values, e.top[i].values, TOL, `${name} top ${i}`);
    });
    const dec = m.decodeSparse(got, { topK: 3 });
    dec.forEach((d, i) => {
      assert.deepEqual(
        d.map(([t]) => t),
        e.decodeTop[i].map(([t]) => t),
        `${name}: decode ${i}`,
      );
      close(
        d.map(([, w]) => w),
        e.decodeTop[i].map(([, w]) => w),
        TOL,
        `${name}: decode weights ${i}`,
      );
    });
    const sims = await sparseSimilarity(got, got);
    close(sims.data, e.similarity, TOL, `${name}: dot products`);
    const hits = await sparseSearch(got, got, { topK: 2 });
    hits.forEach((h, i) => assert.equal(h[0].score, Math.max(...sims.data.slice(i * got.length, (i + 1) * got.length))));
    assert.deepEqual(await m.embedAsync(e.texts, plain ? { output: 'sparse' } : undefined), got, 'embedAsync: the same vectors');
  });
}

test('SPLADE: refusals (a model without a masked-LM head, dense options), the model still works', async () => {
  const qa = await model('qa-bert');
  throws(() => qa.embed(['x'], { output: 'sparse' }), 'UNSUPPORTED_MODEL', /output 'sparse': sparse vectors need a masked-LM head/);
  const m = await model('splade-bert');
  throws(() => m.embed(['x'], { output: 'dense' }), 'UNSUPPORTED_MODEL', /output 'dense'.*gives sparse/);
  throws(() => m.embed(['x'], { pooling: 'mean' }), 'BAD_ARGUMENT', /options.pooling applies to dense/);
  throws(() => m.embed(['x'], { maxActiveDims: 0 }), 'BAD_ARGUMENT', /maxActiveDims must be a positive integer/);
  throws(() => m.embed(['x'], { output: 'colbert' }), 'UNSUPPORTED_MODEL', /token vectors need a ColBERT model/);
  throws(() => m.embed(['x'], { isQuery: true }), 'BAD_ARGUMENT', /isQuery applies to a ColBERT model/);
  throws(() => m.encoder.forward([1, 2, 3], { sparse: { pooling: 'mean' } }), 'BAD_ARGUMENT', /pooling must be 'max' or 'sum'/);
  throws(() => qa.encoder.forward([1, 2, 3], { sparse: true }), 'UNSUPPORTED_MODEL', /masked-LM head/);
  assert.equal(m.embed('hello world').length, 1);
});

// ------------------------------------------------------------------ ColBERT

/** MaxSim in float64 over real tokens: sum over the query's rows of the largest dot product with the document's rows. */
function maxSim64(q, d) {
  const [nq, D] = q.shape,
    nd = d.shape[0];
  let s = 0;
  for (let i = 0; i < nq; i++) {
    let best = -Infinity;
    for (let j = 0; j < nd; j++) {
      let dot = 0;
      for (let k = 0; k < D; k++) dot += q.data[i * D + k] * d.data[j * D + k];
      best = Math.max(best, dot);
    }
    s += best;
  }
  return s;
}

for (const name of CASES.filter((c) => c.startsWith('colbert-'))) {
  test(`ColBERT ${name}: token vectors as PyLate encodes them, MaxSim, rank`, async () => {
    const m = await model(name),
      e = expected(name);
    assert.equal(m.retrieval.kind, 'colbert');
    assert.equal(m.defaultOutput, 'colbert');
    if (name === 'colbert-jina-v2') {
      // jina-colbert-v2: the XLM-R flash backbone (RoPE) under HF_ColBERT, its markers and attended expansion
      assert.equal(m.family, 'jina-v3');
      assert.deepEqual([m.encoder.config.position, m.encoder.config.positionOptions.base], ['rope', 10000]);
      assert.deepEqual(
        [m.retrieval.layout, m.retrieval.queryPrefix, m.retrieval.documentPrefix, m.retrieval.attendToExpansionTokens],
        ['stanford', '[QueryMarker]', '[DocumentMarker]', true],
      );
    }
    const q = m.embed(e.queries, { isQuery: true }),
      d = m.embed(e.documents, { output: 'colbert', isQuery: false });
    [
      [q, e.queryTokens],
      [d, e.documentTokens],
    ].forEach(([got, want], side) =>
      got.forEach((v, i) => {
        assert.deepEqual(v.shape, [want[i].keep.length, want[i].vectors[0].length], `${name}: ${side ? 'document' : 'query'} ${i} kept tokens`);
        close(v.data, want[i].vectors, TOL, `${name}: ${side ? 'document' : 'query'} ${i}`);
      }),
    );
    for (let i = 0; i < q.length; i++) {
      const s = await maxSim(q[i], d);
      close(s, e.maxSim[i], TOL, `${name}: MaxSim end to end`);
      s.forEach((x, j) => assert.ok(Math.abs(x - maxSim64(q[i], d[j])) <= 1e-5, `${name}: MaxSim ${x} vs the float64 loop`));
      // batch-independent: each document alone scores the same bits
      for (let j = 0; j < d.length; j++) assert.equal((await maxSim(q[i], [d[j]]))[0], s[j]);
      const ranked = m.rank(e.queries[i], e.documents, { returnDocuments: true });
      const order = e.maxSim[i].map((_, j) => j).sort((a, b) => e.maxSim[i][b] - e.maxSim[i][a]);
      assert.deepEqual(
        ranked.map((r) => r.corpusId),
        order,
        `${name}: rank order`,
      );
      ranked.forEach((r) => assert.ok(Math.abs(r.score - e.maxSim[i][r.corpusId]) <= TOL && r.text === e.documents[r.corpusId]));
      assert.deepEqual(await m.rankAsync(e.queries[i], e.documents, { returnDocuments: true }), ranked);
    }
    const hits = await maxSimSearch(q, d, { topK: 2 });
    hits.forEach((h, i) =>
      assert.deepEqual(
        h.map((x) => x.corpusId),
        e.maxSim[i]
          .map((_, j) => j)
          .sort((a, b) => e.maxSim[i][b] - e.maxSim[i][a])
          .slice(0, 2),
      ),
    );
  });
}

test('ColBERT: queries default to isQuery (PyLate), dense output and bad MaxSim inputs refused', async () => {
  const m = await model('colbert-pylate-bert');
  assert.deepEqual(m.embed('a query'), m.embed('a query', { isQuery: true }));
  throws(() => m.embed(['x'], { output: 'dense' }), 'UNSUPPORTED_MODEL', /gives colbert/);
  throws(() => m.embed(['x'], { isQuery: 'yes' }), 'BAD_ARGUMENT', /isQuery must be true or false/);
  const [q] = m.embed(['a query']);
  await rejects(maxSim(q, [{ data: new Float32Array(0), shape: [0, 12] }]), 'BAD_ARGUMENT');
  await rejects(maxSim(q, [{ data: new Float32Array(8), shape: [1, 8] }]), 'BAD_ARGUMENT', /dimensions/);
  await rejects(maxSim(q, [{ data: Float32Array.of(NaN, ...new Float32Array(11)), shape: [1, 12] }]), 'BAD_ARGUMENT', /non-finite/);
  assert.equal(m.embed(['still works']).length, 1);
});

// ------------------------------------------------------------------ bge-m3

for (const name of ['bge-m3', 'bge-m3-safetensors']) {
  test(`bge-m3 ${name}: dense, lexical weights and ColBERT vectors from one pass; compute_score; rank`, async () => {
    const m = await model(name),
      e = expected('bge-m3');
    assert.equal(m.retrieval.kind, 'bge-m3');
    assert.deepEqual(m.outputs, ['dense', 'sparse', 'colbert']);
    const all = m.embed(e.texts, { output: ['dense', 'sparse', 'colbert'] });
    close(all.dense.data, e.dense, TOL, `${name}: dense`);
    all.sparse.forEach((v, i) => sparseClose(v, e.sparse[i], `${name}: lexical weights ${i}`, 0));
    all.colbert.forEach((v, i) => close(v.data, e.colbert[i], TOL, `${name}: colbert ${i}`));
    // embed's default output is the dense one, as sentence-transformers makes it: the same but for the text
    // with spaces around it, which ST strips and FlagEmbedding does not
    close(m.embed(e.texts.slice(0, 4)).data, e.dense.slice(0, 4), TOL, `${name}: embed's default output is the dense one`);
    for (const [w, scores] of Object.entries(e.scores)) {
      const pairs = e.pairs.map(([a, b]) => [e.texts[a], e.texts[b]]);
      const got = m.computeScore(pairs, { weights: JSON.parse(w) });
      for (const k of ['dense', 'sparse', 'colbert', 'sparseDense', 'colbertSparseDense'])
        close(
          got[k],
          scores.map((s) => s[k]),
          TOL,
          `${name}: ${k} ${w}`,
        );
      assert.deepEqual(await m.computeScoreAsync(pairs, { weights: JSON.parse(w) }), got);
    }
    const docs = [e.texts[1], e.texts[3]];
    const ranked = m.rank(e.texts[0], docs);
    const s = e.scores['[1.0, 1.0, 1.0]'];
    assert.ok(Math.abs(ranked.find((r) => r.corpusId === 0).score - s[0].colbertSparseDense) <= TOL);
    assert.ok(Math.abs(ranked.find((r) => r.corpusId === 1).score - s[1].colbertSparseDense) <= TOL);
  });
}

// ------------------------------------------------------------------ the converter, the builds

// ------------------------------------------------------------------ the core's sparse rows, sparse search and MaxSim

test("the core's sparse rows, sparse search and MaxSim against float64 loops: long documents, negative scores, ties", async () => {
  let seed = 7;
  const rand = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32) * 2 - 1;
  const vectors = (n, D) => ({ data: Float32Array.from({ length: n * D }, rand), shape: [n, D] });
  // MaxSim: documents of 1 to 200 vectors (several blocks of 64 rows), one whose every vector scores below 0 against the query's first
  const D = 12,
    q = vectors(7, D);
  const docs = [1, 63, 64, 65, 130, 200].map((n) => vectors(n, D));
  const neg = Float32Array.from({ length: 3 * D }, (_, i) => -q.data[i % D] * (1 + (i / D) * 0.5));
  docs.push({ data: neg, shape: [3, D] }, docs[2]); // the last one a copy of docs[2]: equal scores
  const s = await maxSim(q, docs);
  s.forEach((x, j) =>
    assert.ok(Math.abs(x - maxSim64(q, docs[j])) <= 1e-5 * Math.max(1, Math.abs(x)), `MaxSim of document ${j}: ${x} vs ${maxSim64(q, docs[j])}`),
  );
  const [hits] = await maxSimSearch([q], docs, { topK: docs.length });
  const order = Array.from(s, (_, j) => j).sort((a, b) => s[b] - s[a] || a - b);
  assert.deepEqual(
    hits.map((h) => h.corpusId),
    order,
    'maxSimSearch: by score, equal scores by the lower index',
  );
  // sparse rows: all non-zeros index ascending, or the k largest |values| (equal ones: the lower index), kept in index order
  const rt = await defaultRuntime();
  const dense = { data: Float32Array.of(0, 2, -2, 1, 2, 0, -2, 0.5, 0, 0, 0, 0, 0, 0), shape: [2, 7] };
  const rows = (k) => sparseRowsOn(rt, dense, k).map((v) => [Array.from(v.indices), Array.from(v.values)]);
  assert.deepEqual(rows(0), [
    [
      [1, 2, 3, 4, 6],
      [2, -2, 1, 2, -2],
    ],
    [[0], [0.5]],
  ]);
  assert.deepEqual(rows(2), [
    [
      [1, 2],
      [2, -2],
    ],
    [[0], [0.5]],
  ]);
  assert.deepEqual(rows(3), [
    [
      [1, 2, 4],
      [2, -2, 2],
    ],
    [[0], [0.5]],
  ]);
  assert.deepEqual(rows(5), rows(0));
  // sparse search: queries sharing indices (the core's scratch cleared between them), against float64 dot products
  const sparse = (n, V, seedOf) =>
    Array.from({ length: n }, (_, i) => {
      const idx = [...new Set(Array.from({ length: 3 + ((i * 5 + seedOf) % 9) }, () => Math.floor(((rand() + 1) / 2) * V)))].sort((a, b) => a - b);
      return { indices: Int32Array.from(idx), values: Float32Array.from(idx, () => rand()) };
    });
  const Q = sparse(5, 40, 1),
    C = [...sparse(30, 40, 2), { indices: Int32Array.of(39), values: Float32Array.of(0) }];
  C.push(C[3]); // equal scores
  const dot = (a, b) => {
    let t = 0;
    a.indices.forEach((i, k) => b.indices.forEach((j, l) => (t += i === j ? a.values[k] * b.values[l] : 0)));
    return t;
  };
  const sims = await sparseSimilarity(Q, C);
  Q.forEach((a, i) => C.forEach((b, j) => assert.ok(Math.abs(sims.data[i * C.length + j] - dot(a, b)) <= 1e-6, `sparse dot ${i}, ${j}`)));
  const found = await sparseSearch(Q, C, { topK: 4 });
  found.forEach((h, i) => {
    const row = Array.from(sims.data.slice(i * C.length, (i + 1) * C.length));
    const want = row
      .map((_, j) => j)
      .sort((a, b) => row[b] - row[a] || a - b)
      .slice(0, 4);
    assert.deepEqual(
      h.map((x) => x.corpusId),
      want,
      `sparseSearch query ${i}`,
    );
  });
});

test('the converter keeps every kind: a model file gives the same outputs as the folder', async () => {
  for (const name of ['qa-roberta', 'splade-distilbert-sum', 'colbert-pylate-xlmr', 'colbert-stanford', 'bge-m3']) {
    const ck = await readCheckpoint(path.join(ROOT, name));
    const file = await loadPretrained(writeModelFile(ck.config, ck.tensors, ck.metadata));
    const folder = await model(name);
    assert.deepEqual(file.retrieval, folder.retrieval, `${name}: retrieval settings`);
    const texts = ['the quick brown fox', 'what is a transformer?'];
    if (name.startsWith('qa-')) assert.deepEqual(file.answerQuestion('what?', texts[0], { topK: 3 }), folder.answerQuestion('what?', texts[0], { topK: 3 }));
    else assert.deepEqual(file.embed(texts, { output: folder.outputs }), folder.embed(texts, { output: folder.outputs }), name);
    file.dispose();
  }
});

test('every build gives the same outputs within 1e-5 (wasm SIMD128, relaxed, and the default backend)', async () => {
  for (const name of ['splade-bert', 'colbert-pylate-bert', 'bge-m3', 'qa-modernbert']) {
    const outs = [];
    for (const build of ['simd128', 'relaxed-simd', null]) {
      configure(build ? { backend: 'wasm', build } : { backend: 'auto', build: 'auto' });
      try {
        const m = await loadPretrained(path.join(ROOT, name), { threads: 1 });
        outs.push(
          name.startsWith('qa-')
            ? m.answerQuestion('what?', 'the quick brown fox jumps', { topK: 3 })
            : m.embed(['the quick brown fox', 'a transformer encodes text'], { output: m.outputs }),
        );
        m.dispose();
      } finally {
        configure({ backend: 'auto', build: 'auto' });
      }
    }
    const flat = (o) =>
      JSON.stringify(o, (k, v) => (ArrayBuffer.isView(v) ? Array.from(v) : v))
        .match(/-?\d[\d.e+-]*/g)
        .map(Number);
    const ref = flat(outs[0]);
    for (const o of outs.slice(1)) {
      const x = flat(o);
      assert.equal(x.length, ref.length, `${name}: the same structure`);
      x.forEach((v, i) => assert.ok(Math.abs(v - ref[i]) <= 1e-5 * Math.max(1, Math.abs(ref[i])), `${name}[${i}]: ${v} vs ${ref[i]}`));
    }
  }
});
