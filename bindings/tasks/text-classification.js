// Text classification: the logits of a sequence-classification head -> the
// labels with their scores, as Hugging Face's TextClassificationPipeline
// (transformers src/transformers/pipelines/text_classification.py).
//
//   const { items, single } = classificationInputs(inputs);       // what to tokenize
//   classifyOptions(options);                                      // checks them before the forward pass
//   const rows = classifyLogits(logits, [B, L], hfConfig, options); // one array per input
//   return single ? rows[0] : rows;
import { fail } from '../utils/errors.js';
import { sigmoid, softmax, topIndices, readOptions, topKOption, choiceOption, checkLogits, checkConfig, own, labelNames } from './scores.js';

export const FUNCTIONS = ['softmax', 'sigmoid', 'none'];
const PROBLEM_TYPES = ['regression', 'single_label_classification', 'multi_label_classification'];

/** classify's options: {topK = 1 (null: every label), functionToApply?}. */
export function classifyOptions(options) {
  const o = readOptions(options, ['topK', 'functionToApply'], 'classify');
  return {
    topK: o.topK === undefined ? 1 : topKOption(o.topK, 'options.topK', { nullable: true }),
    functionToApply: o.functionToApply === undefined ? undefined : choiceOption(o.functionToApply, 'options.functionToApply', FUNCTIONS),
  };
}

/**
 * The inputs of classify: a string, a {text, textPair} object, or an array of
 * either (preprocess: a dict is a text pair). `single` is true for a lone
 * string or object, whose result is one array of {label, score}.
 */
export function classificationInputs(inputs) {
  const one = (x, field) => {
    if (typeof x === 'string') return { text: x };
    if (x === null || typeof x !== 'object' || Array.isArray(x)) fail('BAD_ARGUMENT', `${field} must be a string or a {text, textPair} object`);
    for (const k of Object.keys(x))
      if (k !== 'text' && k !== 'textPair') fail('BAD_ARGUMENT', `${field}: unknown key ${JSON.stringify(k)} (known: text, textPair)`);
    if (typeof x.text !== 'string') fail('BAD_ARGUMENT', `${field}.text must be a string`);
    if (x.textPair !== undefined && typeof x.textPair !== 'string') fail('BAD_ARGUMENT', `${field}.textPair must be a string`);
    return x.textPair === undefined ? { text: x.text } : { text: x.text, textPair: x.textPair };
  };
  if (Array.isArray(inputs)) {
    if (inputs.length === 0) fail('BAD_ARGUMENT', 'inputs must not be empty');
    return { items: inputs.map((x, i) => one(x, `inputs[${i}]`)), single: false };
  }
  return { items: [one(inputs, 'inputs')], single: true };
}

/**
 * The function applied by default (postprocess, first match): problem_type
 * regression -> none; multi_label_classification or one label -> sigmoid;
 * single_label_classification or several labels -> softmax; then
 * config.function_to_apply; else none. `numLabels` is the head's output count.
 */
export function defaultFunction(config, numLabels) {
  const problemType = own(config, 'problem_type') ?? null;
  if (problemType !== null && !PROBLEM_TYPES.includes(problemType)) {
    fail('BAD_CONFIG', `config.problem_type must be one of ${PROBLEM_TYPES.join(', ')} or null, got ${JSON.stringify(problemType)}`);
  }
  if (problemType === 'regression') return 'none';
  if (problemType === 'multi_label_classification' || numLabels === 1) return 'sigmoid';
  if (problemType === 'single_label_classification' || numLabels > 1) return 'softmax';
  const configured = own(config, 'function_to_apply');
  if (configured !== undefined && configured !== null) {
    if (!FUNCTIONS.includes(configured))
      fail('BAD_CONFIG', `config.function_to_apply must be one of ${FUNCTIONS.join(', ')}, got ${JSON.stringify(configured)}`);
    return configured;
  }
  return 'none';
}

/** The scores of one row of logits under softmax / sigmoid / none, in float64. */
export function applyFunction(logits, offset, length, fn) {
  if (fn === 'softmax') return softmax(logits, offset, length);
  const out = new Float64Array(length);
  for (let i = 0; i < length; i++) out[i] = fn === 'sigmoid' ? sigmoid(logits[offset + i]) : logits[offset + i];
  return out;
}

/**
 * The result per row of `logits` ([B, L], row-major): [{label, score}] sorted
 * by score, descending (equal scores in label order, Python's stable sort), the
 * first topK of them (null: all).
 */
export function classifyLogits(logits, shape, config, options) {
  const { topK, functionToApply } = classifyOptions(options);
  const cfg = checkConfig(config);
  if (!Array.isArray(shape) || shape.length !== 2 || shape[1] < 1)
    fail('BAD_ARGUMENT', `logits: the shape must be [batch, labels] with labels >= 1, got ${JSON.stringify(shape)}`);
  checkLogits(logits, shape);
  const [rows, n] = shape;
  const labels = labelNames(cfg, n);
  const fn = functionToApply ?? defaultFunction(cfg, n);
  return Array.from({ length: rows }, (_, r) => {
    const scores = applyFunction(logits, r * n, n, fn);
    return topIndices(scores, topK === null ? n : Math.min(topK, n)).map((i) => ({ label: labels[i], score: scores[i] }));
  });
}
