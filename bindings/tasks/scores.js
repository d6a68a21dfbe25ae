// The numbers and checks every task shares: softmax / sigmoid in float64, the
// descending order with its tie rule, and the checks of options, logits and
// the labels of a Hugging Face config.json.
//
// Ties: the descending order keeps the lower index first, as Python's
// sorted(..., reverse=True) does (a stable sort: text_classification.py
// postprocess, CrossEncoder.rank). Where upstream uses torch.topk (fill_mask.py)
// or numpy's argsort reversed (zero_shot_classification.py) the order of equal
// scores is the library's, not specified; we keep the same lower-index-first
// rule there.
import { fail } from '../utils/errors.js';
import { readOptions as checkKeys } from '../utils/options.js';

/** softmax of logits[offset .. offset + length) in float64, shifted by the max (no overflow). */
export function softmax(logits, offset = 0, length = logits.length - offset) {
  const out = new Float64Array(length);
  let max = -Infinity;
  for (let i = 0; i < length; i++) max = Math.max(max, logits[offset + i]);
  let sum = 0;
  for (let i = 0; i < length; i++) sum += out[i] = Math.exp(logits[offset + i] - max);
  for (let i = 0; i < length; i++) out[i] /= sum;
  return out;
}

/** 1 / (1 + exp(-x)), as text_classification.py's sigmoid (exact 0 and 1 far out, never NaN). */
export const sigmoid = (x) => 1 / (1 + Math.exp(-x));

/**
 * The indices of the k largest scores, largest first, equal scores by
 * ascending index. k is at most scores.length. An insertion buffer: O(n k),
 * cheap for the small k of a pipeline, a full sort past that.
 */
export function topIndices(scores, k) {
  const n = scores.length;
  if (k >= n / 8)
    return Array.from({ length: n }, (_, i) => i)
      .sort((a, b) => scores[b] - scores[a] || a - b)
      .slice(0, k);
  const top = [];
  for (let i = 0; i < n && k > 0; i++) {
    const s = scores[i];
    if (top.length === k && !(s > scores[top[k - 1]])) continue;
    let j = top.length === k ? k - 1 : top.length;
    while (j > 0 && s > scores[top[j - 1]]) {
      top[j] = top[j - 1];
      j--;
    }
    top[j] = i;
  }
  return top;
}

const bad = (message) => fail('BAD_ARGUMENT', message);
const show = (v) =>
  typeof v === 'string' ? JSON.stringify(v) : typeof v === 'object' && v !== null ? (Array.isArray(v) ? 'an array' : 'an object') : String(v);

/**
 * The own, defined keys of an options object, each in `allowed`; any other key
 * is refused by name. undefined / null options are {}.
 */
export function readOptions(options, allowed, where) {
  if (options === undefined || options === null) return {};
  if (typeof options !== 'object' || Array.isArray(options)) bad(`${where}: options must be an object, got ${show(options)}`);
  checkKeys(options, allowed, `${where}: options`); // the unknown key named, with the known one it resembles
  const out = {};
  for (const key of Object.keys(options)) if (options[key] !== undefined) out[key] = options[key];
  return out;
}

/** A top-k option: a non-negative integer, or null when `nullable` (every entry). */
export function topKOption(value, field, { nullable = false } = {}) {
  if (value === null && nullable) return null;
  if (!Number.isSafeInteger(value) || value < 0) bad(`${field} must be a non-negative integer${nullable ? ' or null' : ''}, got ${show(value)}`);
  return value;
}

/** A boolean option. */
export function booleanOption(value, field) {
  if (typeof value !== 'boolean') bad(`${field} must be a boolean, got ${show(value)}`);
  return value;
}

/** One of a fixed list of strings. */
export function choiceOption(value, field, choices) {
  if (!choices.includes(value)) bad(`${field} must be one of ${choices.map((c) => JSON.stringify(c)).join(', ')}, got ${show(value)}`);
  return value;
}

/**
 * Checks a logits array against its shape: a Float32Array / Float64Array (or
 * an array of numbers) of exactly shape's product, every value finite.
 */
export function checkLogits(logits, shape, field = 'logits') {
  if (!(logits instanceof Float32Array || logits instanceof Float64Array || Array.isArray(logits))) bad(`${field} must be a Float32Array, got ${show(logits)}`);
  if (!Array.isArray(shape) || shape.some((d) => !Number.isSafeInteger(d) || d < 0))
    bad(`${field}: the shape must be an array of non-negative integers, got ${show(shape)}`);
  const n = shape.reduce((a, d) => a * d, 1);
  if (logits.length !== n) bad(`${field} has ${logits.length} values, the shape [${shape.join(', ')}] needs ${n}`);
  if (Array.isArray(logits)) {
    for (let i = 0; i < n; i++) if (typeof logits[i] !== 'number') bad(`${field}[${i}] must be a number, got ${show(logits[i])}`);
  }
  for (let i = 0; i < n; i++) {
    if (!Number.isFinite(logits[i])) fail('NON_FINITE', `${field}[${i}] is ${logits[i]}: the scores of non-finite logits are undefined`);
  }
  return logits;
}

/** An own property of a config object (never the prototype's), or undefined. */
export const own = (obj, key) => (obj !== null && typeof obj === 'object' && Object.hasOwn(obj, key) ? obj[key] : undefined);

/** The config object itself: a plain object (a parsed config.json); null / undefined are {}. */
export function checkConfig(config) {
  if (config === undefined || config === null) return {};
  if (typeof config !== 'object' || Array.isArray(config)) bad(`config must be the parsed config.json object, got ${show(config)}`);
  return config;
}

/** Python's int(key) for the integer strings config.json's id2label keys are. */
function idKey(key) {
  if (!/^\s*[+-]?\d+\s*$/.test(key)) fail('BAD_CONFIG', `config.id2label: the key ${JSON.stringify(key)} is not an integer`);
  return Number(key);
}

/**
 * The label names of `n` outputs: config.id2label (string keys -> int, as
 * PretrainedConfig.__init__ in transformers configuration_utils.py), or
 * LABEL_i when it is absent (_create_id_label_maps). transformers' num_labels
 * is len(id2label), and a classifier whose rows are not that many does not
 * load there (a size mismatch): so id2label must have exactly n labels, one
 * for each id below n, else the head and the config disagree.
 */
export function labelNames(config, n) {
  const id2label = own(config, 'id2label');
  if (id2label === undefined || id2label === null) return Array.from({ length: n }, (_, i) => `LABEL_${i}`);
  if (typeof id2label !== 'object' || Array.isArray(id2label)) fail('BAD_CONFIG', 'config.id2label must be an object');
  const byId = new Map();
  for (const [key, label] of Object.entries(id2label)) {
    if (typeof label !== 'string') fail('BAD_CONFIG', `config.id2label[${JSON.stringify(key)}] must be a string, got ${show(label)}`);
    byId.set(idKey(key), label);
  }
  if (byId.size !== n)
    fail('BAD_CONFIG', `config.id2label has ${byId.size} label${byId.size === 1 ? '' : 's'}, but the head has ${n} output${n === 1 ? '' : 's'}`);
  return Array.from({ length: n }, (_, i) => {
    if (!byId.has(i)) fail('BAD_CONFIG', `config.id2label has no label for id ${i}, but the head has ${n} outputs`);
    return byId.get(i);
  });
}
