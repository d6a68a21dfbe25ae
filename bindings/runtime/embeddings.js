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
