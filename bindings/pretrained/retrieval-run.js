// Pretrained.embed with output 'sparse' or 'colbert' (or several outputs from
// one pass), as the libraries of those models encode (retrieval.js reads
// their folders):
//
//   sparse   SPLADE (sentence-transformers SparseEncoder.encode): the masked-LM
//            head over every token, pooled in the core (max of log1p(relu)),
//            the non-zeros as {indices, values}, the top maxActiveDims by |value|;
//            bge-m3 (FlagEmbedding M3Embedder): relu(sparse_linear(h)) per token,
//            the largest weight of each token id, special tokens (cls, eos, pad,
//            unk) dropped, weights > 0 kept.
//   colbert  PyLate ColBERT.encode: the query or document prefix inserted after
//            the first token, queries padded with the mask token to
//            query_length (attended to only with attend_to_expansion_tokens:
//            forward's attentionLengths), documents without the skiplist's
//            tokens; the head's rows, L2-normalised in the core. bge-m3: the
//            rows after CLS, as _colbert_embedding and _process_colbert_vecs.
//   dense    with the others on bge-m3: CLS, normalised (its recipe).
//
// Texts: stripped and lowercased as the Transformer module does (SPLADE,
// PyLate), as they are for bge-m3 (FlagEmbedding tokenizes them untouched).
// Like embed-run.js, a run yields forward requests [ids, options]; a text's
// output never depends on the batch it is in.
import { fail } from '../utils/errors.js';
import { prepareText, resolvePrompt } from './embed-run.js';
import { pool, applyRecipe } from './recipe.js';

/** The outputs a model gives: dense (a sentence embedding), sparse (an mlm head or bge-m3), colbert (a ColBERT model or bge-m3). */
export function outputsOf(model) {
  const kind = model.retrieval?.kind;
  const out = [];
  if (kind !== 'splade' && kind !== 'colbert') out.push('dense');
  if (kind === 'bge-m3' || model.encoder.config.head?.task === 'mlm') out.push('sparse');
  if (kind === 'colbert' || kind === 'bge-m3') out.push('colbert');
  return out;
}

/** The output embed gives without the option: the model's own (a SparseEncoder's sparse, a ColBERT model's token vectors). */
export const defaultOutput = (model) => ({ splade: 'sparse', colbert: 'colbert' })[model.retrieval?.kind] ?? 'dense';

/** The ColBERT settings with their token ids, resolved once per tokenizer (a prefix the vocabulary lacks is refused). */
const colbertIds = new WeakMap();
export function colbertSettings(model) {
  const r = model.retrieval;
  if (colbertIds.has(model.tokenizer) && colbertIds.get(model.tokenizer).r === r) return colbertIds.get(model.tokenizer).s;
  const t = model.tokenizer;
  const id = (token, what) => {
    if (token === '') return null; // PyLate: no prefix
    const v = t.tokenToId(token);
    if (v === null)
      fail('UNSUPPORTED_MODEL', `the ${what} ${JSON.stringify(token)} is not a token of this tokenizer (PyLate would add it with a new, untrained embedding)`);
    return v;
  };
  // PyLate: pad_token_id := mask_token_id, else eos (the query expansion token)
  const expansion = t.maskTokenId ?? t.eosTokenId ?? t.padTokenId;
  if (r.doQueryExpansion && expansion === null) fail('UNSUPPORTED_MODEL', 'query expansion needs a mask, eos or pad token: this tokenizer has none');
  const s = {
    ...r,
    queryPrefixId: id(r.queryPrefix, 'query prefix'),
    documentPrefixId: id(r.documentPrefix, 'document prefix'),
    expansionId: expansion,
    // convert_tokens_to_ids: the unknown token's id for a word the vocabulary lacks
    skiplist: new Set(r.skiplistWords.map((w) => t.tokenToId(w) ?? t.unkTokenId).filter((x) => x !== null)),
  };
  colbertIds.set(model.tokenizer, { r, s });
  return s;
}

/** A text as PyLate tokenizes it: {ids, typeIds, attend (keys attended), keep (positions whose vectors are kept)}. */
function colbertEncoding(model, text, isQuery, c) {
  const prefix = isQuery ? c.queryPrefixId : c.documentPrefixId;
  const length = isQuery ? c.queryLength : c.documentLength;
  const max = prefix === null ? length : length - 1;
  const enc = model.tokenizer.encode(text, { maxLength: max });
  let ids = Array.from(enc.ids),
    types = Array.from(enc.typeIds);
  let real = ids.length;
  const expand = isQuery && c.doQueryExpansion;
  if (expand) while (ids.length < max) (ids.push(c.expansionId), types.push(0)); // padding "max_length" with pad := mask
  if (prefix !== null) {
    ids = [ids[0], prefix, ...ids.slice(1)];
    types = [types[0], 0, ...types.slice(1)];
    real++;
  }
  const attend = isQuery && c.attendToExpansionTokens ? ids.length : real;
  const keep = [];
  for (let t = 0; t < ids.length; t++) {
    if (expand)
      keep.push(t); // every position of an expanded query, attended or not
    else if (t < real && (isQuery || !c.skiplist.has(ids[t]))) keep.push(t);
  }
  return { ids, typeIds: types, attend, keep };
}

/** bge-m3's special tokens, left out of its lexical weights (M3Embedder's unused_tokens). */
function m3Unused(model) {
  const t = model.tokenizer;
  return new Set([t.clsTokenId, t.eosTokenId, t.padTokenId, t.unkTokenId].filter((x) => x !== null));
}

/** A text's lexical weights (bge-m3): the largest weight of each token id, > 0, specials dropped, as {indices (ascending), values}; the top k by value. */
function lexicalWeights(ids, weight, unused, k) {
  const best = new Map();
  ids.forEach((id, t) => {
    const w = weight(t);
    if (unused.has(id) || !(w > 0)) return;
    if (!best.has(id) || w > best.get(id)) best.set(id, w);
  });
  let entries = [...best];
  if (k > 0 && entries.length > k) entries = entries.sort((a, b) => b[1] - a[1] || a[0] - b[0]).slice(0, k);
  entries.sort((a, b) => a[0] - b[0]);
  return { indices: Int32Array.from(entries, (e) => e[0]), values: Float32Array.from(entries, (e) => e[1]) };
}

/**
 * Yields the passes that give `list`'s outputs s.outputs (a Set of 'dense',
 * 'sparse', 'colbert'); returns {dense?: {data, shape}, sparse?: [{indices,
 * values}], colbert?: [{data, shape: [tokens, dim]}]}. `sparseRows(dense, k)`
 * turns pooled SPLADE rows into sparse vectors in the core.
 */
export function* retrievalRun(model, list, s, sparseRows) {
  const kind = model.retrieval?.kind ?? null;
  const { typeVocabSize, head, dModel } = model.encoder.config;
  const cut = Number.isFinite(s.maxLength) ? s.maxLength : undefined;
  const N = list.length,
    want = s.outputs;
  const out = {};
  if (want.has('sparse')) out.sparse = new Array(N);
  if (want.has('colbert')) out.colbert = new Array(N);
  if (want.has('dense')) out.dense = { data: null, shape: [N, 0] };
  const c = kind === 'colbert' ? colbertSettings(model) : null;
  const unused = kind === 'bge-m3' ? m3Unused(model) : null;
  const D = head?.labels;
  let done = 0,
    denseRows = null;
  // a text as its library tokenizes it
  const encode = (text) => {
    if (kind === 'colbert') return colbertEncoding(model, prepareText(model, text, s.prompt), s.isQuery, c);
    const prepared = kind === 'bge-m3' ? s.prompt + text : prepareText(model, text, s.prompt); // FlagEmbedding does not strip
    const enc = model.tokenizer.encode(prepared, cut === undefined ? undefined : { maxLength: cut });
    if (!s.truncate) {
      const whole = model.tokenizer.encode(prepared).ids.length;
      if (cut !== undefined && whole > cut)
        fail('SEQUENCE_TOO_LONG', `a text has ${whole} tokens; the model takes at most ${cut} (maxLength): truncate: true cuts it`);
    }
    return { ids: Array.from(enc.ids), typeIds: Array.from(enc.typeIds) };
  };
  for (let b = 0; b < N; b += s.batchSize) {
    const batch = list.slice(b, b + s.batchSize).map(encode);
    const options = {};
    if (typeVocabSize > 1) options.typeIds = batch.map((e) => e.typeIds);
    if (kind === 'colbert') options.attentionLengths = batch.map((e) => e.attend);
    if (kind === 'splade' || (kind !== 'bge-m3' && want.has('sparse'))) {
      const r = model.retrieval ?? { pooling: 'max', activation: 'relu' };
      options.sparse = { pooling: r.pooling, activation: r.activation };
    } else options.head = true;
    const result = yield [batch.map((e) => e.ids), options];
    const [, T] = result.shape;
    batch.forEach((e, k) => {
      const i = b + k;
      if (kind === 'colbert') {
        const v = new Float32Array(e.keep.length * D);
        e.keep.forEach((t, j) => v.set(result.head.data.subarray((k * T + t) * D, (k * T + t + 1) * D), j * D));
        out.colbert[i] = { data: v, shape: [e.keep.length, D] };
      } else if (kind === 'bge-m3') {
        const row = (t) => result.head.data.subarray((k * T + t) * D, (k * T + t + 1) * D);
        if (want.has('sparse')) out.sparse[i] = lexicalWeights(e.ids, (t) => row(t)[0], unused, s.maxActiveDims ?? 0);
        if (want.has('colbert')) {
          const n = e.ids.length - 1,
            d = D - 1,
            v = new Float32Array(n * d);
          for (let t = 1; t <= n; t++) v.set(row(t).subarray(1), (t - 1) * d);
          out.colbert[i] = { data: v, shape: [n, d] };
        }
      }
    });
    if (result.sparse) sparseRows(result.sparse, s.maxActiveDims ?? 0).forEach((v, k) => (out.sparse[b + k] = v));
    if (want.has('dense')) {
      const pooled = pool(
        result,
        batch.map((e) => e.ids.length),
        model.recipe.pooling,
      );
      const emb = applyRecipe(pooled, model.recipe, { normalize: s.normalize, dimensions: s.dimensions });
      denseRows ??= new Float32Array(N * emb.shape[1]);
      denseRows.set(emb.data, b * emb.shape[1]);
      out.dense.shape[1] = emb.shape[1];
    }
    done += batch.length;
    s.onProgress?.({ done, total: N });
  }
  if (want.has('dense')) out.dense.data = denseRows ?? new Float32Array(0);
  if (want.has('dense') && !N) out.dense.shape[1] = outputWidth(model, s, dModel);
  return out;
}

/** The dense width without a pass (an empty call). */
function outputWidth(model, s, dModel) {
  let D = model.recipe.pooling.length * dModel;
  for (const d of model.recipe.dense) D = d.outFeatures;
  return s.dimensions ?? D;
}

// ------------------------------------------------------------------ scores

/** bge-m3's weights for dense, sparse and colbert scores (compute_score's weights_for_different_modes), default [1, 1, 1]. */
function readWeights(w) {
  if (w === undefined) return [1, 1, 1];
  if (!Array.isArray(w) || w.length !== 3 || !w.every((x) => typeof x === 'number' && Number.isFinite(x) && x >= 0) || !(w[0] + w[1] + w[2] > 0))
    fail('BAD_ARGUMENT', 'options.weights must be three non-negative numbers [dense, sparse, colbert], not all 0');
  return w;
}

/** The settings of an internal embed call: the given outputs, embed's defaults for the rest (the default prompt too). */
const settings = (model, outputs, isQuery, batchSize = 32) => ({
  outputs: new Set(outputs),
  isQuery,
  batchSize,
  truncate: true,
  prompt: resolvePrompt(model.recipe),
  maxLength: model.maxLength,
  maxActiveDims: undefined,
});

/**
 * rank on a ColBERT model (PyLate: the query's vectors against each
 * document's, MaxSim summed over the query's tokens) or on bge-m3 (the
 * weighted mean of compute_score's dense, sparse and colbert scores):
 * [{corpusId, score, text?}] best first (ties: corpus order), the first topK.
 * `scoring` gives maxSim(query, docs) -> Float32Array and sparseScores(a, b) -> {data}.
 */
export function* lateRankRun(model, query, documents, options, scoring, readRankOptions) {
  const kind = model.retrieval?.kind;
  const o = readRankOptions(options);
  if (typeof query !== 'string') fail('BAD_ARGUMENT', 'query must be a string');
  if (!Array.isArray(documents) || documents.some((d) => typeof d !== 'string')) fail('BAD_ARGUMENT', 'documents must be an array of strings');
  if (o.weights !== undefined && kind !== 'bge-m3') fail('BAD_ARGUMENT', 'options.weights applies to bge-m3 (its dense, sparse and colbert scores)');
  if (!documents.length) return [];
  let scores;
  if (kind === 'colbert') {
    const q = yield* retrievalRun(model, [query], settings(model, ['colbert'], true), scoring.sparseRows);
    const d = yield* retrievalRun(model, documents, settings(model, ['colbert'], false), scoring.sparseRows);
    scores = scoring.maxSim(q.colbert[0], d.colbert);
  } else {
    const all = yield* m3Outputs(model, [query, ...documents], scoring);
    scores = m3Combine(
      all,
      0,
      documents.map((_, i) => i + 1),
      readWeights(o.weights),
      scoring,
    ).colbertSparseDense;
  }
  const order = Array.from(scores, (_, i) => i).sort((a, b) => scores[b] - scores[a] || a - b);
  return order
    .slice(0, o.topK ?? order.length)
    .map((i) => (o.returnDocuments ? { corpusId: i, score: scores[i], text: documents[i] } : { corpusId: i, score: scores[i] }));
}

function* m3Outputs(model, texts, scoring) {
  return yield* retrievalRun(model, texts, settings(model, ['dense', 'sparse', 'colbert'], true), scoring.sparseRows);
}

/** bge-m3's scores of text q against texts ps of one m3Outputs: dense (dot of the normalised CLS), sparse (lexical matching), colbert (MaxSim / query tokens), combined. */
function m3Combine(all, q, ps, [w0, w1, w2], scoring) {
  const D = all.dense.shape[1];
  const dense = Float32Array.from(ps, (p) => {
    let s = 0;
    for (let k = 0; k < D; k++) s += all.dense.data[q * D + k] * all.dense.data[p * D + k];
    return s;
  });
  const sparse = scoring.sparseScores(
    all.sparse[q],
    ps.map((p) => all.sparse[p]),
  ).data;
  const nq = all.colbert[q].shape[0];
  const colbert = nq
    ? scoring
        .maxSim(
          all.colbert[q],
          ps.map((p) => all.colbert[p]),
        )
        .map((x) => x / nq)
    : new Float32Array(ps.length);
  return {
    dense,
    sparse,
    colbert,
    sparseDense: Float32Array.from(ps, (_, i) => (w1 * sparse[i] + w0 * dense[i]) / (w0 + w1 || 1)),
    colbertSparseDense: Float32Array.from(ps, (_, i) => (w0 * dense[i] + w1 * sparse[i] + w2 * colbert[i]) / (w0 + w1 + w2)),
  };
}

/**
 * bge-m3's compute_score over [query, passage] pairs: {dense, sparse, colbert,
 * sparseDense, colbertSparseDense}, a Float32Array each (FlagEmbedding's
 * 'sparse+dense' and 'colbert+sparse+dense' with weights [dense, sparse, colbert]).
 */
export function* computeScoreRun(model, pairs, options, scoring, readScoreOptions) {
  if (model.retrieval?.kind !== 'bge-m3') fail('UNSUPPORTED_MODEL', "computeScore is bge-m3's (dense, sparse and colbert scores of one model)");
  const o = readScoreOptions(options);
  const w = readWeights(o.weights);
  if (!Array.isArray(pairs) || pairs.some((p) => !Array.isArray(p) || p.length !== 2 || typeof p[0] !== 'string' || typeof p[1] !== 'string'))
    fail('BAD_ARGUMENT', 'pairs must be an array of [query, passage] string pairs');
  const names = ['dense', 'sparse', 'colbert', 'sparseDense', 'colbertSparseDense'];
  const out = Object.fromEntries(names.map((n) => [n, new Float32Array(pairs.length)]));
  if (!pairs.length) return out;
  const all = yield* m3Outputs(model, pairs.flat(), scoring);
  pairs.forEach((_, i) => {
    const s = m3Combine(all, 2 * i, [2 * i + 1], w, scoring);
    for (const n of names) out[n][i] = s[n][0];
  });
  return out;
}

/** SparseEncoder.decode: per vector [[token, weight]] of its non-zeros by weight, largest first (ties: the lower index), the first topK. */
export function decodeSparse(model, vectors, topK) {
  const one = vectors !== null && typeof vectors === 'object' && !Array.isArray(vectors);
  const list = one ? [vectors] : vectors;
  if (!Array.isArray(list)) fail('BAD_ARGUMENT', 'decodeSparse takes a sparse vector {indices, values} or an array of them');
  if (topK !== undefined && topK !== null && (!Number.isSafeInteger(topK) || topK < 1)) fail('BAD_ARGUMENT', 'options.topK must be a positive integer');
  const out = list.map((v, i) => {
    const idx = v?.indices,
      val = v?.values;
    if (!idx || !val || idx.length !== val.length) fail('BAD_ARGUMENT', `vectors[${i}] must be {indices, values} of one length`);
    const entries = [];
    for (let k = 0; k < idx.length; k++) if (val[k] !== 0) entries.push([idx[k], val[k]]);
    entries.sort((a, b) => b[1] - a[1] || a[0] - b[0]);
    return entries.slice(0, topK ?? entries.length).map(([id, w]) => {
      const token = model.tokenizer.idToToken(id);
      if (token === null) fail('BAD_ARGUMENT', `vectors[${i}] has the index ${id}, which is no token of this model`);
      return [token, w];
    });
  });
  return one ? out[0] : out;
}
