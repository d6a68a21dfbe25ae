// Cross-encoders: the logits of a sequence-classification head over
// [query, passage] pairs -> scores, and a ranking of documents, as
// sentence-transformers' CrossEncoder.predict / rank
// (UKPLab/sentence-transformers sentence_transformers/cross_encoder/CrossEncoder.py,
// read at 85ec645; the same in 6.x cross_encoder/model.py).
//
//   const { pairs, single } = crossEncoderPairs(input);              // what to tokenize (pair each)
//   const scores = crossEncoderScores(logits, [B, L], hfConfig, options); // Float32Array
//   const pairs = rankInputs(query, documents);                      // rank: one pair per document
//   rankResults(logits, [D, 1], documents, hfConfig, options)
import { fail } from '../utils/errors.js';
import { sigmoid, softmax, readOptions, topKOption, choiceOption, booleanOption, checkLogits, checkConfig, own } from './scores.js';

export const ACTIVATIONS = ['sigmoid', 'softmax', 'tanh', 'none'];

/**
 * The torch classes a config may name (get_default_activation_fn imports the
 * dotted path; these are the ones we compute), by both of their import paths.
 */
const TORCH_ACTIVATIONS = {
  'torch.nn.Identity': 'none',
  'torch.nn.modules.linear.Identity': 'none',
  'torch.nn.Sigmoid': 'sigmoid',
  'torch.nn.modules.activation.Sigmoid': 'sigmoid',
  'torch.nn.Tanh': 'tanh',
  'torch.nn.modules.activation.Tanh': 'tanh',
  'torch.nn.Softmax': 'softmax',
  'torch.nn.modules.activation.Softmax': 'softmax',
};

/** The activation a dotted class path names; null for a path ST itself would not import. */
function activationOfPath(path, field) {
  if (typeof path !== 'string') fail('BAD_CONFIG', `${field} must be a string (a torch class path), got ${JSON.stringify(path)}`);
  // Without trust_remote_code, ST imports only torch.* paths and warns and
  // falls back to the default for any other.
  if (!path.startsWith('torch.')) return null;
  if (!Object.hasOwn(TORCH_ACTIVATIONS, path)) {
    fail('UNSUPPORTED_MODEL', `${field} = ${JSON.stringify(path)} is not supported (supported: ${Object.keys(TORCH_ACTIVATIONS).join(', ')})`);
  }
  return TORCH_ACTIVATIONS[path];
}

/**
 * get_default_activation_fn: config.json's sentence_transformers.activation_fn,
 * else the legacy sbert_ce_default_activation_function (ST < 4), else Sigmoid
 * for one label and Identity otherwise.
 */
export function defaultActivation(config, numLabels) {
  const cfg = checkConfig(config);
  const st = own(cfg, 'sentence_transformers');
  let path = null,
    field = null;
  if (st !== null && typeof st === 'object' && !Array.isArray(st) && Object.hasOwn(st, 'activation_fn')) {
    [path, field] = [st.activation_fn, 'config.sentence_transformers.activation_fn'];
  } else if (own(cfg, 'sbert_ce_default_activation_function') != null) {
    [path, field] = [cfg.sbert_ce_default_activation_function, 'config.sbert_ce_default_activation_function'];
  }
  const named = path === null ? null : activationOfPath(path, field);
  return named ?? (numLabels === 1 ? 'sigmoid' : 'none');
}

/** predict's options: {activation?}. */
export function predictOptions(options) {
  const o = readOptions(options, ['activation'], 'predict');
  return { activation: o.activation === undefined ? undefined : choiceOption(o.activation, 'options.activation', ACTIVATIONS) };
}

/**
 * predict's input: an array of [query, passage] pairs, or one pair (ST's
 * "input_was_singular": then `single` is true and the caller returns one score
 * row).
 */
export function crossEncoderPairs(input) {
  const pair = (p, field) => {
    if (!Array.isArray(p) || p.length !== 2 || typeof p[0] !== 'string' || typeof p[1] !== 'string') {
      fail('BAD_ARGUMENT', `${field} must be a [query, passage] pair of strings`);
    }
    return [p[0], p[1]];
  };
  if (!Array.isArray(input)) fail('BAD_ARGUMENT', 'pairs must be an array of [query, passage] pairs');
  if (input.length === 2 && typeof input[0] === 'string') return { pairs: [pair(input, 'pairs')], single: true };
  return { pairs: input.map((p, i) => pair(p, `pairs[${i}]`)), single: false };
}

/**
 * The scores of logits [B, L] under the activation (option, else the config's
 * default): Float32Array [B] for one label, [B * L] row-major otherwise (ST
 * returns float32; softmax is over each row, nn.Softmax's dim 1 for 2-D input).
 */
export function crossEncoderScores(logits, shape, config, options) {
  const { activation } = predictOptions(options);
  if (!Array.isArray(shape) || shape.length !== 2 || shape[1] < 1)
    fail('BAD_ARGUMENT', `logits: the shape must be [pairs, labels] with labels >= 1, got ${JSON.stringify(shape)}`);
  checkLogits(logits, shape);
  const [rows, n] = shape;
  const fn = activation ?? defaultActivation(config, n);
  const out = new Float32Array(rows * n);
  for (let r = 0; r < rows; r++) {
    if (fn === 'softmax') {
      out.set(softmax(logits, r * n, n), r * n);
      continue;
    }
    for (let i = r * n; i < (r + 1) * n; i++) out[i] = fn === 'sigmoid' ? sigmoid(logits[i]) : fn === 'tanh' ? Math.tanh(logits[i]) : logits[i];
  }
  return out;
}

/** rank's options: {topK? (null / absent: all), returnDocuments = false, activation?}. */
export function rankOptions(options) {
  const o = readOptions(options, ['topK', 'returnDocuments', 'activation'], 'rank');
  return {
    topK: o.topK === undefined ? null : topKOption(o.topK, 'options.topK', { nullable: true }),
    returnDocuments: o.returnDocuments === undefined ? false : booleanOption(o.returnDocuments, 'options.returnDocuments'),
    activation: o.activation === undefined ? undefined : choiceOption(o.activation, 'options.activation', ACTIVATIONS),
  };
}

/** rank's input: a query string and an array of document strings. */
export function rankInputs(query, documents) {
  if (typeof query !== 'string') fail('BAD_ARGUMENT', 'query must be a string');
  if (!Array.isArray(documents)) fail('BAD_ARGUMENT', 'documents must be an array of strings');
  documents.forEach((d, i) => {
    if (typeof d !== 'string') fail('BAD_ARGUMENT', `documents[${i}] must be a string`);
  });
  return documents.map((d) => [query, d]);
}

/**
 * rank: [{corpusId, score, text?}] sorted by score, descending (equal scores
 * in corpus order: Python's stable sorted), the first topK. `logits` [D, 1]
 * are the head's outputs for the D [query, document] pairs of rankInputs.
 */
export function rankResults(logits, shape, documents, config, options) {
  const { topK, returnDocuments, activation } = rankOptions(options);
  if (!Array.isArray(documents)) fail('BAD_ARGUMENT', 'documents must be an array of strings');
  if (Array.isArray(shape) && shape.length === 2 && shape[1] !== 1) {
    fail('UNSUPPORTED_MODEL', `rank needs a cross-encoder with one label (CrossEncoder.rank), this one has ${shape[1]}`);
  }
  if (!Array.isArray(shape) || shape[0] !== documents.length)
    fail('BAD_ARGUMENT', `logits: the shape must be [${documents.length}, 1], one row per document, got ${JSON.stringify(shape)}`);
  const scores = crossEncoderScores(logits, shape, config, { activation });
  const order = Array.from(scores, (_, i) => i).sort((a, b) => scores[b] - scores[a] || a - b);
  return order
    .slice(0, topK ?? order.length)
    .map((i) => (returnDocuments ? { corpusId: i, score: scores[i], text: documents[i] } : { corpusId: i, score: scores[i] }));
}
