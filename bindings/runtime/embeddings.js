// Embeddings, then: similarity matrices, top-k semantic search (Hamming for
// packed bits) and quantized embeddings, as sentence-transformers' util and
// quantization modules compute them, in the core (core/search.c, SIMD); this
// file copies rows in and results out.
//
//   await cosSim(a, b)                     -> {data, shape: [M, N]}   (util.cos_sim)
//   await dotScore(a, b)                   -> {data, shape: [M, N]}   (util.dot_score)
//   await semanticSearch(q, corpus, {topK = 10, scoreFunction = 'cosine'})
//                                          -> per query [{corpusId, score}] best first (util.semantic_search)
//   await quantizeEmbeddings(e, precision, {ranges, calibrationEmbeddings})   (quantize_embeddings)
//
// Rows are {data, shape: [N, D]} (what embed returns), an array of number
// arrays, or one vector. Packed bits (precision 'binary' / 'ubinary': Int8Array /
// Uint8Array rows of D / 8 bytes) search by Hamming distance, score = -distance.
import { fail } from '../utils/errors.js';
import { readOptions, own } from '../utils/options.js';
import { defaultRuntime } from './encoder.js';

export const SCORE_FUNCTIONS = ['cosine', 'dot', 'euclidean', 'manhattan'];
const SCORE_CODE = { cosine: 0, dot: 1, euclidean: 2, manhattan: 3 };
export const PRECISIONS = ['float32', 'int8', 'uint8', 'binary', 'ubinary'];
const PRECISION_CODE = { int8: 0, uint8: 1, binary: 2, ubinary: 3 };

/** Rows as {data: Float32Array (or the packed bytes), rows, width, packed}. */
export function readRows(x, what) {
  const isVector = (v) => (Array.isArray(v) ? v.every((n) => typeof n === 'number') : ArrayBuffer.isView(v) && !(v instanceof DataView));
  if (x !== null && typeof x === 'object' && Object.hasOwn(x, 'data') && Object.hasOwn(x, 'shape')) {
    const { data, shape } = x;
    if (!Array.isArray(shape) || shape.length !== 2 || !shape.every((n) => Number.isSafeInteger(n) && n > 0))
      fail('BAD_ARGUMENT', `${what}.shape must be [rows, dimensions]`);
    if (!ArrayBuffer.isView(data) || data.length !== shape[0] * shape[1])
      fail('BAD_ARGUMENT', `${what}.data must hold rows x dimensions = ${shape[0] * shape[1]} numbers`);
    return typed(data, shape[0], shape[1], what);
  }
  if (isVector(x)) return typed(x, 1, x.length, what);
  if (Array.isArray(x) && x.length > 0) {
    const D = x[0]?.length;
    if (!Number.isSafeInteger(D) || D < 1) fail('BAD_ARGUMENT', `${what}[0] must be a vector of numbers`);
    const out = new Float32Array(x.length * D);
    x.forEach((row, i) => {
      if (!isVector(row) || row.length !== D) fail('BAD_ARGUMENT', `${what}[${i}] must be a vector of ${D} numbers`);
      for (let d = 0; d < D; d++) out[i * D + d] = row[d];
    });
    return typed(out, x.length, D, what);
  }
  fail('BAD_ARGUMENT', `${what} must be {data, shape: [rows, dimensions]}, an array of vectors or one vector`);
}

function typed(data, rows, width, what) {
  if (rows < 1 || width < 1) fail('BAD_ARGUMENT', `${what} is empty`);
  if (data instanceof Uint8Array || data instanceof Int8Array) {
    // packed bits, as bytes: int8 'binary' is ubinary - 128, the same bits with the top one of each byte flipped
    return { data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength), rows, width, packed: true, signed: data instanceof Int8Array };
  }
  return { data: data instanceof Float32Array ? data : Float32Array.from(data), rows, width, packed: false, what }; // finite: checked in copyIn
}

/** Packed 'binary' rows as 'ubinary': each byte's top bit flipped, four bytes a step. */
function flipTopBits(rows) {
  const n = rows.data.length,
    out = new Uint8Array((n + 3) & ~3);
  out.set(rows.data);
  const words = new Uint32Array(out.buffer);
  for (let i = 0; i < words.length; i++) words[i] ^= 0x80808080;
  return { ...rows, data: out.subarray(0, n), signed: false };
}

/** The default runtime: native in Node where the addon loads, else the single-threaded wasm build (loaded once). */
const runtime = () => defaultRuntime();

/** Runs fn(x, alloc) on rt with wasm buffers that alloc(bytes) makes, all freed after. */
function withBuffers(rt, fn) {
  const ptrs = [];
  try {
    return fn(rt.x, (bytes) => {
      const p = rt.alloc(bytes || 4);
      ptrs.push(p);
      return p;
    });
  } finally {
    for (const p of ptrs) rt.x.sf_dealloc(p);
  }
}

/** rows' data copied into wasm memory; float rows with a NaN or an infinity refused (the scan in the core). */
const copyIn = (rt, alloc, rows) => {
  const p = alloc(rows.data.byteLength);
  rt.write(p, rows.data);
  const i = rows.packed ? -1 : rt.x.sf_nonfinite(p, rows.data.length);
  if (i >= 0) fail('BAD_ARGUMENT', `${rows.what} holds a non-finite value at row ${Math.floor(i / rows.width)}, dimension ${i % rows.width}`);
  return p;
};

function norms(rt, x, alloc, rows, ptr) {
  const p = alloc(rows.rows * 4);
  x.sf_row_norms(p, ptr, rows.rows, rows.width);
  return p;
}

/** score(a_m, b_n) for every pair on rt: {data, shape: [M, N]}. */
export function similarityOn(rt, a, b, scoreFunction = 'cosine') {
  const A = readRows(a, 'a'),
    B = readRows(b, 'b');
  if (!SCORE_FUNCTIONS.includes(scoreFunction))
    fail('BAD_ARGUMENT', `the score function must be one of ${SCORE_FUNCTIONS.join(', ')}, got ${JSON.stringify(scoreFunction)}`);
  if (A.packed || B.packed) fail('BAD_ARGUMENT', 'similarity takes float embeddings (search packed bits with semanticSearch)');
  if (A.width !== B.width) fail('BAD_ARGUMENT', `a has ${A.width} dimensions and b ${B.width}`);
  if (A.rows * B.rows > 2 ** 28) fail('OUT_OF_MEMORY', `a similarity matrix of ${A.rows} x ${B.rows} is too large: search with semanticSearch`);
  return withBuffers(rt, (x, alloc) => {
    const pa = copyIn(rt, alloc, A),
      pb = copyIn(rt, alloc, B),
      out = alloc(A.rows * B.rows * 4);
    const cos = scoreFunction === 'cosine';
    x.sf_similarity(
      out,
      pa,
      cos ? norms(rt, x, alloc, A, pa) : 0,
      A.rows,
      pb,
      cos ? norms(rt, x, alloc, B, pb) : 0,
      B.rows,
      A.width,
      SCORE_CODE[scoreFunction],
    );
    return { data: rt.readF32(out, A.rows * B.rows), shape: [A.rows, B.rows] };
  });
}

/** The k best corpus rows of each query on rt. */
export function searchOn(rt, queries, corpus, options) {
  const o = readOptions(options, 'semanticSearch');
  const Q = readRows(queries, 'queryEmbeddings'),
    C = readRows(corpus, 'corpusEmbeddings');
  const k = own(o, 'topK') ?? 10;
  if (!Number.isSafeInteger(k) || k < 1) fail('BAD_ARGUMENT', `options.topK must be a positive integer, got ${String(k)}`);
  for (const key of ['queryChunkSize', 'corpusChunkSize']) {
    // ST's memory bounds: this search streams the corpus, the results are the same
    const v = own(o, key);
    if (v !== undefined && (!Number.isSafeInteger(v) || v < 1)) fail('BAD_ARGUMENT', `options.${key} must be a positive integer, got ${String(v)}`);
  }
  if (Q.packed !== C.packed) fail('BAD_ARGUMENT', 'queryEmbeddings and corpusEmbeddings must both be floats or both packed bits');
  if (Q.width !== C.width) fail('BAD_ARGUMENT', `the queries have ${Q.width} ${Q.packed ? 'bytes' : 'dimensions'} and the corpus ${C.width}`);
  const fn = own(o, 'scoreFunction') ?? (Q.packed ? 'hamming' : 'cosine');
  if (Q.packed ? fn !== 'hamming' : !SCORE_FUNCTIONS.includes(fn)) {
    fail(
      'BAD_ARGUMENT',
      `options.scoreFunction must be ${Q.packed ? "'hamming' for packed bits" : `one of ${SCORE_FUNCTIONS.join(', ')}`}, got ${JSON.stringify(fn)}`,
    );
  }
  const kk = Math.min(k, C.rows);
  // binary against binary (or ubinary against ubinary): the same flip on both sides leaves every Hamming
  // distance as it is; only a mix needs the binary side as ubinary (b ^ 0x80 = b + 128)
  const [q, c] = Q.packed && Q.signed !== C.signed ? [Q, C].map((r) => (r.signed ? flipTopBits(r) : r)) : [Q, C];
  return withBuffers(rt, (x, alloc) => {
    const pq = copyIn(rt, alloc, q),
      pc = copyIn(rt, alloc, c),
      idx = alloc(Q.rows * kk * 4),
      out = alloc(Q.rows * kk * 4);
    if (Q.packed) x.sf_hamming(idx, out, pq, Q.rows, pc, C.rows, Q.width, kk);
    else {
      const cos = fn === 'cosine';
      x.sf_search(idx, out, pq, cos ? norms(rt, x, alloc, Q, pq) : 0, Q.rows, pc, cos ? norms(rt, x, alloc, C, pc) : 0, C.rows, Q.width, kk, SCORE_CODE[fn]);
    }
    const I = rt.readI32(idx, Q.rows * kk),
      S = rt.readF32(out, Q.rows * kk);
    return Array.from({ length: Q.rows }, (_, m) => Array.from({ length: kk }, (_, j) => ({ corpusId: I[m * kk + j], score: S[m * kk + j] })));
  });
}

/** quantize_embeddings on rt: Int8Array / Uint8Array rows, {data, shape: [N, D or D / 8]}. */
export function quantizeOn(rt, embeddings, precision, options) {
  const o = readOptions(options, 'quantizeEmbeddings');
  const E = readRows(embeddings, 'embeddings');
  if (E.packed) fail('BAD_ARGUMENT', 'embeddings must be floats');
  if (!PRECISIONS.includes(precision)) fail('BAD_ARGUMENT', `precision must be one of ${PRECISIONS.join(', ')}, got ${JSON.stringify(precision)}`);
  const [N, D] = [E.rows, E.width];
  if (precision === 'float32') return { data: E.data.slice(), shape: [N, D] };
  if (precision === 'binary' || precision === 'ubinary') {
    if (D % 8) fail('BAD_ARGUMENT', `${precision} packs 8 dimensions a byte: ${D} dimensions is not a multiple of 8`);
    return withBuffers(rt, (x, alloc) => {
      const p = copyIn(rt, alloc, E),
        out = alloc((N * D) / 8);
      x.sf_quantize(out, p, N, D, PRECISION_CODE[precision], 0, 0);
      const bytes = rt.readBytes(out, (N * D) / 8);
      return { data: precision === 'binary' ? new Int8Array(bytes.buffer) : bytes, shape: [N, D / 8] };
    });
  }
  // int8 / uint8: the ranges given, else those of the calibration embeddings, else of these
  const ranges = own(o, 'ranges'),
    calibration = own(o, 'calibrationEmbeddings');
  const R = ranges === undefined ? undefined : readRows(ranges, 'options.ranges');
  if (R && (R.rows !== 2 || R.width !== D)) fail('BAD_ARGUMENT', `options.ranges must be [2, ${D}]: the minima, then the maxima`);
  const src = R || calibration === undefined ? E : readRows(calibration, 'options.calibrationEmbeddings');
  if (src.packed || src.width !== D) fail('BAD_ARGUMENT', `options.calibrationEmbeddings must be floats of ${D} dimensions, as the embeddings`);
  return withBuffers(rt, (x, alloc) => {
    const p = copyIn(rt, alloc, E),
      out = alloc(N * D);
    let s, st; // (minima, maxima) for now: ranges' two rows, or those of the calibration rows
    if (R) [s, st] = ((r) => [r, r + D * 4])(copyIn(rt, alloc, R));
    else (([s, st] = [alloc(D * 4), alloc(D * 4)]), x.sf_column_ranges(s, st, src === E ? p : copyIn(rt, alloc, src), src.rows, D));
    const lo = rt.readF32(s, D),
      steps = rt.readF32(st, D);
    for (let d = 0; d < D; d++) {
      // the steps from the maxima in place: float32, as numpy on float32 ranges
      const hi = steps[d];
      steps[d] = Math.fround(Math.fround(hi - lo[d]) / 255);
      if (!(steps[d] > 0)) fail('BAD_ARGUMENT', `dimension ${d} has an empty range (min ${lo[d]}, max ${hi}): int8 / uint8 need calibration rows that vary`);
    }
    rt.write(st, steps);
    x.sf_quantize(out, p, N, D, PRECISION_CODE[precision], s, st);
    const bytes = rt.readBytes(out, N * D);
    return { data: precision === 'int8' ? new Int8Array(bytes.buffer) : bytes, shape: [N, D] };
  });
}

/** util.cos_sim: cosine similarity of every row of a with every row of b. */
export async function cosSim(a, b) {
  return similarityOn(await runtime(), a, b, 'cosine');
}
/** util.dot_score: dot products of every row of a with every row of b. */
export async function dotScore(a, b) {
  return similarityOn(await runtime(), a, b, 'dot');
}
/** util.semantic_search: per query the topK corpus rows [{corpusId, score}], best first. */
export async function semanticSearch(queryEmbeddings, corpusEmbeddings, options) {
  return searchOn(await runtime(), queryEmbeddings, corpusEmbeddings, options);
}
/** quantize_embeddings: int8 / uint8 per-dimension ranges, binary / ubinary packed bits. */
export async function quantizeEmbeddings(embeddings, precision, options) {
  return quantizeOn(await runtime(), embeddings, precision, options);
}

// ------------------------------------------------------------------ sparse and multi-vector retrieval
// (core/retrieval.c): SPLADE / bge-m3 sparse vectors as {indices, values}, ColBERT's
// token vectors as {data, shape: [tokens, dim]}.

/** Indices past this are refused: the search scatters a query into a dense scratch of max index + 1 floats. */
export const SPARSE_MAX_INDEX = 2 ** 24 - 1;

const isList = (v) =>
  Array.isArray(v) || (ArrayBuffer.isView(v) && !(v instanceof DataView) && !(v instanceof BigInt64Array) && !(v instanceof BigUint64Array));

/** One sparse vector {indices, values} (any order; a repeated index adds up): Int32Array / Float32Array copies. */
function readSparseVector(v, what) {
  if (v === null || typeof v !== 'object' || !Object.hasOwn(v, 'indices') || !Object.hasOwn(v, 'values'))
    fail('BAD_ARGUMENT', `${what} must be a sparse vector {indices, values}`);
  const { indices, values } = v;
  if (!isList(indices) || !isList(values)) fail('BAD_ARGUMENT', `${what}.indices and .values must be arrays of numbers`);
  if (indices.length !== values.length) fail('BAD_ARGUMENT', `${what} has ${indices.length} indices and ${values.length} values`);
  const n = indices.length,
    idx = new Int32Array(n),
    val = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    const k = indices[i],
      x = values[i];
    if (!Number.isInteger(k) || k < 0 || k > SPARSE_MAX_INDEX) fail('BAD_ARGUMENT', `${what}.indices[${i}] = ${String(k)} is not an integer in [0, 2^24)`);
    if (typeof x !== 'number' || !Number.isFinite(x)) fail('BAD_ARGUMENT', `${what}.values[${i}] = ${String(x)} is not a finite number`);
    idx[i] = k;
    val[i] = x;
  }
  return { idx, val };
}

/** Sparse vectors (one, or an array) as CSR: {off (n + 1), idx, val, rows}. */
export function readSparse(x, what) {
  const list = Array.isArray(x) ? x : [x];
  if (Array.isArray(x) && x.length === 0) fail('BAD_ARGUMENT', `${what} is empty`);
  const rows = list.map((v, i) => readSparseVector(v, Array.isArray(x) ? `${what}[${i}]` : what));
  const off = new Int32Array(rows.length + 1);
  rows.forEach((r, i) => (off[i + 1] = off[i] + r.idx.length));
  if (off[rows.length] > 2 ** 28) fail('OUT_OF_MEMORY', `${what} holds ${off[rows.length]} entries: too many for one call`);
  const idx = new Int32Array(off[rows.length]),
    val = new Float32Array(off[rows.length]);
  rows.forEach((r, i) => {
    idx.set(r.idx, off[i]);
    val.set(r.val, off[i]);
  });
  return { off, idx, val, rows: rows.length };
}

/** Token vectors of one text: {data, shape: [tokens, dim]} or an array of rows, as {data, rows, width}. */
function readTokens(x, what) {
  const t = readRows(x, what);
  if (t.packed) fail('BAD_ARGUMENT', `${what} must hold float vectors`);
  return { ...t, what };
}

/** Documents' token vectors (one text, or an array of texts) as {data, off (N + 1), rows: N, width}. */
function readDocuments(x, what) {
  const single = x !== null && typeof x === 'object' && !Array.isArray(x);
  const list = single ? [x] : x;
  if (!Array.isArray(list) || !list.length) fail('BAD_ARGUMENT', `${what} must be token vectors {data, shape: [tokens, dim]} or an array of them`);
  const docs = list.map((d, i) => readTokens(d, single ? what : `${what}[${i}]`));
  const width = docs[0].width;
  const off = new Int32Array(docs.length + 1);
  docs.forEach((d, i) => {
    if (d.width !== width) fail('BAD_ARGUMENT', `${what}[${i}] has vectors of ${d.width} dimensions, ${what}[0] of ${width}`);
    off[i + 1] = off[i] + d.rows;
  });
  if (off[docs.length] * width > 2 ** 28) fail('OUT_OF_MEMORY', `${what} holds ${off[docs.length]} vectors of ${width}: too many for one call`);
  const data = new Float32Array(off[docs.length] * width);
  docs.forEach((d, i) => data.set(d.data.subarray(0, d.rows * width), off[i] * width));
  return { data, off, rows: docs.length, width, what };
}

function topKOption(o, call) {
  const k = own(readOptions(o, call), 'topK') ?? 10;
  if (!Number.isSafeInteger(k) || k < 1) fail('BAD_ARGUMENT', `options.topK must be a positive integer, got ${String(k)}`);
  return k;
}

/**
 * Rows of dense vectors {data, shape: [M, V]} (SPLADE's pooled logits) as
 * sparse vectors on rt: [{indices: Int32Array (ascending), values:
 * Float32Array}] of the non-zeros, or of the k largest by |value| (k > 0; ties:
 * the lower index), as sentence-transformers' max_active_dims.
 */
export function sparseRowsOn(rt, dense, k = 0) {
  const [M, V] = dense.shape;
  const cap = k > 0 && k < V ? k : V;
  return withBuffers(rt, (x, alloc) => {
    const px = alloc(M * V * 4);
    rt.write(px, dense.data);
    const idx = alloc(M * cap * 4),
      val = alloc(M * cap * 4),
      counts = alloc(M * 4);
    x.sf_sparse_rows(idx, val, counts, px, M, V, k > 0 ? k : 0);
    const n = rt.readI32(counts, M),
      I = rt.readI32(idx, M * cap),
      S = rt.readF32(val, M * cap);
    return Array.from({ length: M }, (_, m) => ({ indices: I.slice(m * cap, m * cap + n[m]), values: S.slice(m * cap, m * cap + n[m]) }));
  });
}

/**
 * Dot products of sparse vectors on rt: k > 0, per query the k best corpus
 * rows [{corpusId, score}] best first; k = 0, {data, shape: [M, N]}.
 */
export function sparseScoresOn(rt, queries, corpus, k) {
  const Q = readSparse(queries, 'queries'),
    C = readSparse(corpus, 'corpus');
  let V = 1;
  for (const i of Q.idx) if (i >= V) V = i + 1;
  for (const i of C.idx) if (i >= V) V = i + 1;
  const kk = Math.min(k, C.rows);
  if (!k && Q.rows * C.rows > 2 ** 28) fail('OUT_OF_MEMORY', `a score matrix of ${Q.rows} x ${C.rows} is too large: search with sparseSearch`);
  return withBuffers(rt, (x, alloc) => {
    const put = (a) => {
      const p = alloc(a.byteLength);
      rt.write(p, a);
      return p;
    };
    const dense = alloc(V * 4);
    rt.write(dense, new Float32Array(V)); // zero on entry (the core leaves it zero)
    const n = k ? Q.rows * kk : Q.rows * C.rows;
    const ids = alloc(k ? n * 4 : 4),
      out = alloc(n * 4);
    x.sf_sparse_search(ids, out, put(Q.off), put(Q.idx), put(Q.val), Q.rows, put(C.off), put(C.idx), put(C.val), C.rows, dense, k ? kk : 0);
    const S = rt.readF32(out, n);
    if (!k) return { data: S, shape: [Q.rows, C.rows] };
    const I = rt.readI32(ids, n);
    return Array.from({ length: Q.rows }, (_, m) => Array.from({ length: kk }, (_, j) => ({ corpusId: I[m * kk + j], score: S[m * kk + j] })));
  });
}

/**
 * ColBERT's MaxSim on rt over real tokens only: for each document, the sum
 * over a query's vectors of the largest dot product with the document's
 * vectors (the documents copied in once for every query). Per query: k > 0,
 * the k best [{corpusId, score}]; k = 0, a Float32Array of every document's score.
 */
export function maxSimOn(rt, queries, documents, k) {
  const Q = queries.map((q, i) => readTokens(q, queries.length > 1 ? `queries[${i}]` : 'query'));
  const D = readDocuments(documents, 'documents');
  for (const q of Q) if (q.width !== D.width) fail('BAD_ARGUMENT', `${q.what} has vectors of ${q.width} dimensions and the documents ${D.width}`);
  for (let i = 0; i < D.rows; i++) if (D.off[i + 1] === D.off[i]) fail('BAD_ARGUMENT', `documents[${i}] has no vectors`);
  const kk = Math.min(k, D.rows),
    n = k ? kk : D.rows;
  return withBuffers(rt, (x, alloc) => {
    const pd = copyIn(rt, alloc, { data: D.data, width: D.width, what: 'documents', packed: false });
    const off = alloc(D.off.byteLength);
    rt.write(off, D.off);
    const ids = alloc(n * 4),
      out = alloc(n * 4);
    return Q.map((q) => {
      const pq = copyIn(rt, alloc, q);
      const scratch = alloc(Number(x.sf_maxsim_scratch(q.rows, q.width)) * 4);
      x.sf_maxsim(ids, out, pq, q.rows, pd, off, D.rows, q.width, k ? kk : 0, scratch);
      const S = rt.readF32(out, n);
      if (!k) return S;
      const I = rt.readI32(ids, n);
      return Array.from({ length: kk }, (_, j) => ({ corpusId: I[j], score: S[j] }));
    });
  });
}

/** MaxSim scores of one query's token vectors against each document's (PyLate's colbert_scores, over real tokens only): a Float32Array. */
export async function maxSim(query, documents) {
  return maxSimOn(await runtime(), [query], documents, 0)[0];
}
/** Per query, the topK documents by MaxSim [{corpusId, score}], best first. */
export async function maxSimSearch(queries, documents, options) {
  const k = topKOption(options, 'maxSimSearch');
  if (!Array.isArray(queries) || !queries.length) fail('BAD_ARGUMENT', 'queries must be an array of token vectors {data, shape: [tokens, dim]}');
  return maxSimOn(await runtime(), queries, documents, k);
}
/** Dot products of every pair of sparse vectors: {data, shape: [M, N]} (SparseEncoder.similarity, lexical matching scores). */
export async function sparseSimilarity(a, b) {
  return sparseScoresOn(await runtime(), a, b, 0);
}
/** Per query, the topK corpus rows by sparse dot product [{corpusId, score}], best first. */
export async function sparseSearch(queries, corpus, options) {
  return sparseScoresOn(await runtime(), queries, corpus, topKOption(options, 'sparseSearch'));
}
