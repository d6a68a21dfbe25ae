// Options objects of the public API: one reader, one list of known keys per
// call (OPTION_KEYS), so that no option is ever silently ignored. An unknown
// key is BAD_ARGUMENT naming it, with the known key it most resembles
// ('normalise' -> did you mean 'normalize'?) or what to use instead.
import { fail } from './errors.js';

/** The known keys of every public call's options (tests/st.test.js calls each with an unknown one). */
export const OPTION_KEYS = Object.freeze({
  createEncoder: ['weights', 'seed', 'init', 'dtype', 'threads', 'wasm'],
  loadModel: ['dtype', 'threads', 'wasm'],
  runtimeInfo: ['threads', 'wasm'],
  listPlugins: ['wasm'],
  forward: ['typeIds', 'outputAttentions', 'outputHiddenStates', 'skipLayers', 'head', 'headPositions', 'sparse', 'attentionLengths'],
  sparse: ['pooling', 'activation'],
  positionScores: ['q', 'k', 'length'],
  init: ['outputScale'],
  configure: ['wasmPaths', 'build'],
  loadPretrained: [
    'onProgress',
    'hubUrl',
    'revision',
    'fetch',
    'cache',
    'signal',
    'stallTimeout',
    'maxLength',
    'dtype',
    'threads',
    'wasm',
    'token',
    'offline',
    'cacheDir',
    'task',
  ],
  embed: [
    'pooling',
    'normalize',
    'dimensions',
    'maxLength',
    'prompt',
    'promptName',
    'batchSize',
    'onProgress',
    'precision',
    'truncate',
    'chunking',
    'output',
    'maxActiveDims',
    'isQuery',
  ],
  embedStream: [
    'pooling',
    'normalize',
    'dimensions',
    'maxLength',
    'prompt',
    'promptName',
    'batchSize',
    'precision',
    'truncate',
    'output',
    'maxActiveDims',
    'isQuery',
  ],
  chunk: ['maxTokens', 'overlap'],
  chunking: ['maxTokens', 'overlap', 'pool'],
  withConfig: ['maxLength', 'dtype', 'threads', 'wasm'],
  encoderWithConfig: ['dtype', 'threads', 'wasm'],
  encode: ['pair', 'addSpecialTokens', 'maxLength', 'truncation'],
  decode: ['skipSpecialTokens'],
  fromJSON: ['tokenizerConfig', 'specialTokensMap'],
  similarity: [],
  semanticSearch: ['topK', 'scoreFunction', 'queryChunkSize', 'corpusChunkSize'],
  quantizeEmbeddings: ['ranges', 'calibrationEmbeddings'],
  maxSimSearch: ['topK'],
  sparseSearch: ['topK'],
});

/** Keys people reach for that swapformer does not need, or spells otherwise (Python's names). */
const HINTS = {
  quantized: "use dtype: 'q8' (int8 weights)",
  device: 'swapformer runs on the CPU, in WebAssembly (threads: n for more cores)',
  dtype: null,
};
const ALIASES = {
  normalizeEmbeddings: 'normalize',
  normalize_embeddings: 'normalize',
  batch_size: 'batchSize',
  prompt_name: 'promptName',
  top_k: 'topK',
  show_progress_bar: 'onProgress',
  convert_to_numpy: null,
  truncate_dim: 'dimensions',
  return_documents: 'returnDocuments',
  function_to_apply: 'functionToApply',
  aggregation_strategy: 'aggregationStrategy',
  multi_label: 'multiLabel',
  hypothesis_template: 'hypothesisTemplate',
  add_special_tokens: 'addSpecialTokens',
  skip_special_tokens: 'skipSpecialTokens',
  max_length: 'maxLength',
  max_active_dims: 'maxActiveDims',
  is_query: 'isQuery',
  doc_stride: 'docStride',
  max_answer_len: 'maxAnswerLen',
  max_seq_len: 'maxSeqLen',
  handle_impossible_answer: 'handleImpossibleAnswer',
  align_to_words: 'alignToWords',
};

/** Damerau-Levenshtein distance (optimal string alignment), for suggestions. */
export function distance(a, b) {
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...new Array(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.length][b.length];
}

/** ' (did you mean 'x'?)' for the closest known key, or a hint, or ''. */
function suggestion(key, known) {
  if (Object.hasOwn(HINTS, key) && HINTS[key] && !known.includes(key)) return ` (${HINTS[key]})`;
  if (Object.hasOwn(ALIASES, key) && known.includes(ALIASES[key])) return ` (did you mean '${ALIASES[key]}'?)`;
  const lower = key.toLowerCase().replace(/[_-]/g, '');
  let best = null,
    score = Infinity;
  for (const k of known) {
    const s = k.toLowerCase() === lower ? 0 : distance(key.toLowerCase(), k.toLowerCase());
    if (s < score) [best, score] = [k, s];
  }
  return best !== null && score <= Math.max(2, Math.floor(key.length / 3)) ? ` (did you mean '${best}'?)` : '';
}

/**
 * An options argument: undefined gives {}; anything else must be a plain
 * object (not an array) whose own keys are all known. `call` names the list
 * in OPTION_KEYS (or pass the keys), `where` the argument in messages.
 */
export function readOptions(options, call, where = 'options') {
  if (options === undefined) return {};
  if (options === null || typeof options !== 'object' || Array.isArray(options) || ArrayBuffer.isView(options)) {
    fail('BAD_ARGUMENT', `${where} must be an object, got ${options === null ? 'null' : Array.isArray(options) ? 'an array' : typeof options}`);
  }
  const known = typeof call === 'string' ? OPTION_KEYS[call] : call;
  for (const key of Object.keys(options)) {
    if (!known.includes(key)) fail('BAD_ARGUMENT', `${where} has an unknown option '${key}'${suggestion(key, known)}; known: ${known.join(', ') || 'none'}`);
  }
  return options;
}

/** An own property of a plain object (inherited ones, Object.prototype's included, never count). */
export const own = (obj, key) => (obj !== null && typeof obj === 'object' && Object.hasOwn(obj, key) ? obj[key] : undefined);
