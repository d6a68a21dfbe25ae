// Text Embeddings Inference's routes, with its request and response shapes
// (router/src/http/{server,types}.rs at huggingface/text-embeddings-inference
// 0d124dc): /embed, /embed_sparse, /embed_all, /predict, /rerank, /tokenize,
// /decode, /info, /health. Beyond TEI: /embed_sparse on bge-m3 (its lexical
// weights), /embed_all on a ColBERT model or bge-m3 (their ColBERT vectors,
// is_query for a ColBERT model's queries), /rerank on them (MaxSim, bge-m3's
// combined score).
// Each handler reads the body (body.js), checks it as TEI's serde types and
// handlers do, and hands its inputs to infer.js; it has no model logic: the
// numbers are the library's (engine.js).
import { empty, modelType, unhealthy, validation, HttpError } from './errors.js';
import { shape, own, bool, optionalBool, optionalString, optionalCount, string, isIds, list, truncationDirection } from './body.js';
import { infer, record, checkBatchSize, slicer } from './infer.js';

const describe = 'a string, token ids, or an array of strings and token ids';

/**
 * TEI's Input (untagged: Single(String | Vec<u32>) | Batch(Vec<...>)): the
 * texts, token ids decoded with the model's tokenizer (they are embedded as
 * that text), and whether the request gave one input.
 */
export function embedInputs(svc, body, field) {
  const v = own(body, field);
  if (v === undefined) throw shape(field, 'is missing');
  if (typeof v === 'string') return { texts: [v], single: true };
  if (!Array.isArray(v)) throw shape(field, `must be ${describe}`);
  if (v.length && isIds(v)) return { texts: [svc.engine.decodeIds(v, field)], single: true };
  if (v.length === 0) throw empty(`\`${field}\` cannot be empty`, field);
  const texts = v.map((x, i) => {
    if (typeof x === 'string') return x;
    if (isIds(x)) return svc.engine.decodeIds(x, `${field}[${i}]`);
    throw shape(`${field}[${i}]`, 'must be a string or an array of token ids');
  });
  return { texts, single: false };
}

/** TEI's `dimensions`: positive, at most the embedding's width. */
export function dimensionsOf(svc, body) {
  const d = optionalCount(body, 'dimensions');
  const fault =
    d === 0 ? '`dimensions` should be positive' : d > svc.engine.dimensions ? '`dimensions` should be smaller than the maximum embedding dimension.' : null;
  if (fault) {
    svc.metrics.count('te_request_failure', { err: 'validation' });
    throw validation(fault, 'dimensions');
  }
  return d;
}

function needEmbedding(svc, output, message) {
  if (svc.engine.kind !== 'embedding' || (output && !svc.engine.outputs.includes(output))) {
    svc.metrics.count('te_request_failure', { err: 'model_type' });
    throw modelType(message);
  }
}

/** The inputs of an embedding request through the batcher: one vector (a Float32Array view) per text. */
export async function embedTexts(svc, call, texts, { normalize, dimensions, promptName, truncate }) {
  const { engine } = svc;
  needEmbedding(svc, null, 'Model is not an embedding model');
  if (engine.splade) {
    if (normalize) {
      svc.metrics.count('te_request_failure', { err: 'validation' });
      throw validation('`normalize` is not available for SPLADE models', 'normalize');
    }
    return spladeDense(svc, call, texts, { promptName, truncate });
  }
  needEmbedding(svc, 'dense', `Model gives no dense embeddings (it gives ${engine.outputs.join(', ')} vectors: /embed_all, /rerank)`);
  const prompt = engine.prompt(promptName);
  return infer(svc, call, {
    key: JSON.stringify(['embed', normalize, dimensions ?? null, promptName ?? null, truncate]),
    inputs: texts.map((text) => ({ text })),
    measure: (x) => engine.embedTokens(x.text, prompt),
    truncate,
    task: 'embed',
  });
}

/** Texts through the batcher as a kind of vectors ('sparse' or 'all'): one result per text. */
function vectorsOf(svc, call, texts, task, { promptName, truncate, isQuery = false }) {
  const { engine } = svc;
  const prompt = engine.prompt(promptName);
  return infer(svc, call, {
    key: JSON.stringify([task, promptName ?? null, truncate, isQuery]),
    inputs: texts.map((text) => ({ text })),
    measure: (x) => engine.embedTokens(x.text, prompt),
    truncate,
    task: 'embed',
  });
}

/** /embed on a SPLADE model, as TEI's splade pooling: the sparse vector in full (vocabulary-sized). */
async function spladeDense(svc, call, texts, options) {
  const { results, meta } = await vectorsOf(svc, call, texts, 'sparse', options);
  const V = svc.engine.dimensions;
  return {
    results: results.map((v) => {
      const d = new Float32Array(V);
      v.indices.forEach((i, k) => (d[i] = v.values[k]));
      return d;
    }),
    meta,
  };
}

const method = (single) => ({ method: single ? 'single' : 'batch' });

/** A float vector as JSON numbers (each float32 exactly: JSON numbers are doubles). */
const floats = (v) => Array.from(v);

/** The inputs of an /embed-like request, counted, their batch size and truncation direction checked. */
function requestInputs(svc, body) {
  const { texts, single } = embedInputs(svc, body, 'inputs');
  svc.metrics.count('te_request_count', method(single));
  if (!single) checkBatchSize(svc, texts.length, 'inputs');
  truncationDirection(body);
  return { texts, single };
}

/** POST /embed: [[f32]]. */
export async function embed(svc, body, call) {
  const { texts, single } = requestInputs(svc, body);
  const options = {
    truncate: optionalBool(body, 'truncate', svc.options.autoTruncate),
    promptName: optionalString(body, 'prompt_name'),
    normalize: bool(body, 'normalize', true),
    dimensions: dimensionsOf(svc, body),
  };
  const { results, meta } = await embedTexts(svc, call, texts, options);
  svc.metrics.count('te_request_success', method(single));
  return { json: results.map(floats), headers: record(svc, meta) };
}

/** POST /embed_sparse: [[{index, value}]] of the non-zeros, index ascending, one list per input (a single string too). */
export async function embedSparse(svc, body, call) {
  const { texts, single } = requestInputs(svc, body);
  const options = { truncate: optionalBool(body, 'truncate', svc.options.autoTruncate), promptName: optionalString(body, 'prompt_name') };
  needEmbedding(svc, 'sparse', 'Model is not an embedding model with SPLADE pooling');
  const { results, meta } = await vectorsOf(svc, call, texts, 'sparse', options);
  svc.metrics.count('te_request_success', method(single));
  return { json: results.map((v) => Array.from(v.indices, (index, k) => ({ index, value: v.values[k] }))), headers: record(svc, meta) };
}

/**
 * POST /embed_all: [[[f32]]], every token's vector of each input: the last
 * hidden states (TEI's), or on a ColBERT model or bge-m3 their ColBERT vectors
 * (is_query: a ColBERT model's query encoding; default false, documents).
 */
export async function embedAll(svc, body, call) {
  const { texts, single } = requestInputs(svc, body);
  const options = {
    truncate: optionalBool(body, 'truncate', svc.options.autoTruncate),
    promptName: optionalString(body, 'prompt_name'),
    isQuery: bool(body, 'is_query', false),
  };
  needEmbedding(svc, null, 'Model is not an embedding model');
  if (svc.engine.splade) {
    svc.metrics.count('te_request_failure', { err: 'model_type' });
    throw modelType('`embed_all` is not available for SPLADE models');
  }
  const { results, meta } = await vectorsOf(svc, call, texts, 'all', options);
  svc.metrics.count('te_request_success', method(single));
  return {
    json: results.map((t) => Array.from({ length: t.shape[0] }, (_, i) => Array.from(t.data.subarray(i * t.shape[1], (i + 1) * t.shape[1])))),
    headers: record(svc, meta),
  };
}

/** TEI's PredictInput: a string, a pair [a, b], or a batch [[a], [a, b], ...]. */
function predictInputs(body) {
  const v = own(body, 'inputs');
  const bad = () =>
    shape('inputs', 'must be a string, a pair of strings [string, string] or a batch of mixed strings and pairs [[string], [string, string], ...]');
  const sequence = (x) => {
    if (!Array.isArray(x) || x.length < 1 || x.length > 2 || x.some((s) => typeof s !== 'string')) throw bad();
    return x.length === 1 ? { text: x[0] } : { text: x[0], pair: x[1] };
  };
  if (typeof v === 'string') return { inputs: [{ text: v }], single: true };
  if (!Array.isArray(v) || v.length === 0) throw bad();
  if (typeof v[0] === 'string') return { inputs: [sequence(v)], single: true };
  return { inputs: v.map(sequence), single: false };
}

/** TEI's sort: ascending (stable), then reversed; a NaN score is a backend error. */
function descending(rows) {
  if (rows.some((r) => Number.isNaN(r.score))) throw new HttpError(424, 'Backend', 'score is NaN', { code: 'backend' });
  return rows.sort((a, b) => a.score - b.score).reverse();
}

/** Scores as TEI gives them: raw, or softmax for several labels and sigmoid for one (infer.rs predict). */
const activationOf = (svc, raw) => (raw ? 'none' : svc.engine.labels.length > 1 ? 'softmax' : 'sigmoid');

function needClassifier(svc, kinds, message) {
  if (!kinds.includes(svc.engine.kind)) {
    svc.metrics.count('te_request_failure', { err: 'model_type' });
    throw modelType(message);
  }
}

/** POST /predict: [{score, label}] descending, [[...]] for a batch. */
export async function predict(svc, body, call) {
  const { inputs, single } = predictInputs(body);
  svc.metrics.count('te_request_count', method(single));
  if (!single) checkBatchSize(svc, inputs.length, 'inputs');
  truncationDirection(body);
  needClassifier(svc, ['classifier', 'reranker'], 'Model is not a classifier model');
  const truncate = optionalBool(body, 'truncate', svc.options.autoTruncate);
  const fn = activationOf(svc, bool(body, 'raw_scores', false));
  const { results, meta } = await infer(svc, call, {
    key: JSON.stringify(['classify', fn]),
    inputs,
    truncate,
    task: 'predict',
    measure: (x) => svc.engine.pairTokens(x.text, x.pair),
  });
  const out = results.map((labels) => descending(labels.map(({ label, score }) => ({ score, label }))));
  svc.metrics.count('te_request_success', method(single));
  return { json: single ? out[0] : out, headers: record(svc, meta) };
}

/** POST /rerank: [{index, text?, score}] descending. */
export async function rerank(svc, body, call) {
  const query = string(body, 'query');
  const texts = list(own(body, 'texts'), 'texts');
  texts.forEach((t, i) => {
    if (typeof t !== 'string') throw shape(`texts[${i}]`, 'must be a string');
  });
  truncationDirection(body);
  const raw = bool(body, 'raw_scores', false),
    returnText = bool(body, 'return_text', false);
  const truncate = optionalBool(body, 'truncate', svc.options.autoTruncate);
  if (texts.length === 0) throw empty('`texts` cannot be empty', 'texts');
  if (svc.engine.lateInteraction) return lateRerank(svc, call, query, texts, { returnText });
  needClassifier(svc, ['reranker'], 'model is not a re-ranker model');
  svc.metrics.count('te_request_count', method(false));
  checkBatchSize(svc, texts.length, 'texts');
  const { results, meta } = await infer(svc, call, {
    key: JSON.stringify(['rerank', raw ? 'none' : 'sigmoid']),
    truncate,
    task: 'predict',
    inputs: texts.map((text) => ({ text: query, pair: text })),
    measure: (x) => svc.engine.pairTokens(x.text, x.pair),
  });
  const ranks = descending(results.map((score, index) => (returnText ? { index, text: texts[index], score } : { index, score })));
  svc.metrics.count('te_request_success', method(false));
  return { json: ranks, headers: record(svc, meta) };
}

/** /rerank on a ColBERT model (MaxSim) or bge-m3 (its combined score): raw scores, the documents through the batcher. */
async function lateRerank(svc, call, query, texts, { returnText }) {
  svc.metrics.count('te_request_count', method(false));
  checkBatchSize(svc, texts.length, 'texts');
  const { results, meta } = await infer(svc, call, {
    key: JSON.stringify(['late', query]),
    truncate: true, // the model cuts documents at its own length
    task: 'predict',
    inputs: texts.map((text) => ({ text })),
    measure: (x) => svc.engine.lateTokens(x.text),
  });
  const ranks = descending(results.map((score, index) => (returnText ? { index, text: texts[index], score } : { index, score })));
  svc.metrics.count('te_request_success', method(false));
  return { json: ranks, headers: record(svc, meta) };
}

/**
 * POST /tokenize: [[{id, text, special, start, stop}]], UTF-8 byte offsets,
 * null on special tokens (TEI's into_tokens). Each input within the longest
 * input as /embed's: cut (truncate, default --auto-truncate) or 422; the
 * inputs tokenized in slices (infer.js's slicer), the event loop served between them.
 */
export async function tokenize(svc, body, call) {
  const v = own(body, 'inputs');
  let texts;
  if (typeof v === 'string') texts = [v];
  else if (Array.isArray(v) && v.every((t) => typeof t === 'string')) {
    if (v.length === 0) throw empty('`inputs` cannot be empty', 'inputs');
    checkBatchSize(svc, v.length, 'inputs');
    texts = v;
  } else throw shape('inputs', v === undefined ? 'is missing' : 'must be a string or an array of strings');
  const addSpecialTokens = bool(body, 'add_special_tokens', true);
  const truncate = optionalBool(body, 'truncate', svc.options.autoTruncate);
  const prompt = svc.engine.prompt(optionalString(body, 'prompt_name'));
  const out = [],
    slice = slicer(call);
  for (const t of texts) {
    await slice();
    try {
      out.push(svc.engine.tokens(prompt + t, addSpecialTokens, truncate));
    } catch (e) {
      svc.metrics.count('te_request_failure', { err: 'validation' });
      throw e;
    }
  }
  return { json: out };
}

/** POST /decode: [str]. */
export function decode(svc, body) {
  const v = own(body, 'ids');
  let batch;
  if (isIds(v)) batch = [v];
  else if (Array.isArray(v) && v.every(isIds)) {
    if (v.length === 0) throw empty('`ids` cannot be empty', 'ids');
    checkBatchSize(svc, v.length, 'ids');
    batch = v;
  } else throw shape('ids', v === undefined ? 'is missing' : 'must be token ids or an array of token ids');
  const skipSpecialTokens = bool(body, 'skip_special_tokens', true);
  return { json: batch.map((ids) => svc.engine.model.tokenizer.decode(ids, { skipSpecialTokens })) };
}

/** GET /health: 200 while the model serves, 503 once it is disposed or the server drains. */
export function health(svc) {
  if (svc.draining || svc.engine.disposed) throw unhealthy();
  return { text: '' };
}

/** GET /info: TEI's Info. */
export function info(svc) {
  const { engine, options } = svc;
  return {
    json: {
      model_id: options.modelId,
      model_sha: null,
      model_dtype: engine.dtype,
      served_model_name: options.servedModelName,
      model_type: engine.modelType(),
      max_concurrent_requests: options.maxConcurrentRequests,
      max_input_length: engine.maxInputLength,
      max_batch_tokens: options.maxBatchTokens,
      max_batch_requests: Number.isFinite(options.maxBatchRequests) ? options.maxBatchRequests : null,
      max_client_batch_size: options.maxClientBatchSize,
      auto_truncate: options.autoTruncate,
      tokenization_workers: 1,
      version: options.version,
      sha: null,
      docker_label: null,
    },
  };
}
