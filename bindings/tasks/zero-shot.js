// Zero-shot classification: an NLI sequence classifier's logits over
// (text, hypothesis) pairs, one per candidate label -> the labels ranked, as
// Hugging Face's ZeroShotClassificationPipeline (transformers
// src/transformers/pipelines/zero_shot_classification.py:
// ZeroShotClassificationArgumentHandler, entailment_id, postprocess).
//
//   const { hypothesisTemplate } = zeroShotOptions(options);
//   const labels = candidateLabelList(candidateLabels);
//   const pairs = hypotheses(hypothesisTemplate, labels).map((h) => [text, h]); // truncate the text only
//   zeroShotResult(text, labels, logits, [labels.length, L], hfConfig, options);
import { fail } from '../utils/errors.js';
import { softmax, topIndices, readOptions, booleanOption, checkLogits, checkConfig, own, labelNames } from './scores.js';

export const DEFAULT_TEMPLATE = 'This example is {}.';

/** zeroShot's options: {hypothesisTemplate = 'This example is {}.', multiLabel = false}. */
export function zeroShotOptions(options) {
  const o = readOptions(options, ['hypothesisTemplate', 'multiLabel'], 'zeroShot');
  if (o.hypothesisTemplate !== undefined && typeof o.hypothesisTemplate !== 'string') fail('BAD_ARGUMENT', 'options.hypothesisTemplate must be a string');
  return {
    hypothesisTemplate: o.hypothesisTemplate ?? DEFAULT_TEMPLATE,
    multiLabel: o.multiLabel === undefined ? false : booleanOption(o.multiLabel, 'options.multiLabel'),
  };
}

/** _parse_labels: a string is split on "," (each part stripped, empty parts dropped); at least one label. */
export function candidateLabelList(candidateLabels) {
  let labels = candidateLabels;
  if (typeof labels === 'string')
    labels = labels
      .split(',')
      .map((l) => l.trim())
      .filter((l) => l !== '');
  if (!Array.isArray(labels) || labels.some((l) => typeof l !== 'string')) fail('BAD_ARGUMENT', 'candidateLabels must be a string or an array of strings');
  if (labels.length === 0) fail('BAD_ARGUMENT', 'candidateLabels: at least one label is needed');
  return labels;
}

/**
 * Python's template.format(label) for the fields a hypothesis template uses:
 * "{}" / "{0}" (the label), "{{" and "}}" (a brace). Anything else Python
 * would refuse or we do not compute (named or other fields, conversions,
 * format specs, a lone brace) is an error.
 */
function formatTemplate(template, label) {
  let out = '',
    auto = false,
    manual = false;
  for (let i = 0; i < template.length; i++) {
    const c = template[i];
    if (c === '{' && template[i + 1] === '{') {
      out += '{';
      i++;
      continue;
    }
    if (c === '}' && template[i + 1] === '}') {
      out += '}';
      i++;
      continue;
    }
    if (c === '}') fail('BAD_ARGUMENT', `options.hypothesisTemplate: a lone "}" at ${i} (write "}}" for a brace)`);
    if (c !== '{') {
      out += c;
      continue;
    }
    const close = template.indexOf('}', i);
    const field = close < 0 ? null : template.slice(i + 1, close);
    if (field !== '' && field !== '0') {
      fail('BAD_ARGUMENT', `options.hypothesisTemplate: the field at ${i} is not supported (use "{}" or "{0}" for the label, "{{" / "}}" for braces)`);
    }
    // Python: a second "{}" asks for a second argument; "{}" and "{0}" together mix the numberings
    if (field === '' && auto) fail('BAD_ARGUMENT', 'options.hypothesisTemplate: a second "{}" has no label to take (use "{0}" to repeat the label)');
    if ((field === '' && manual) || (field === '0' && auto))
      fail('BAD_ARGUMENT', 'options.hypothesisTemplate: "{}" and "{0}" together mix automatic and manual field numbering');
    if (field === '') auto = true;
    else manual = true;
    out += label;
    i = close;
  }
  return out;
}

/**
 * The hypothesis of each label. As the argument handler, a template that
 * formatting the first label leaves unchanged is refused.
 */
export function hypotheses(template, labels) {
  if (typeof template !== 'string') fail('BAD_ARGUMENT', 'options.hypothesisTemplate must be a string');
  if (formatTemplate(template, labels[0]) === template) {
    fail('BAD_ARGUMENT', `options.hypothesisTemplate ${JSON.stringify(template)} could not be formatted with the labels: it needs a {} where the label goes`);
  }
  return labels.map((l) => formatTemplate(template, l));
}

/**
 * entailment_id: the label2id value of the first key whose lowercase starts
 * with "entail", else -1 (the last logit); as an index into the L logits.
 * Without label2id (upstream would fail), it is built from id2label.
 */
export function entailmentId(config, numLabels) {
  const cfg = checkConfig(config);
  let label2id = own(cfg, 'label2id');
  if (label2id === undefined || label2id === null) label2id = Object.fromEntries(labelNames(cfg, numLabels).map((l, i) => [l, i]));
  if (typeof label2id !== 'object' || Array.isArray(label2id)) fail('BAD_CONFIG', 'config.label2id must be an object');
  let id = -1;
  for (const [label, value] of Object.entries(label2id)) {
    if (label.toLowerCase().startsWith('entail')) {
      id = value;
      break;
    }
  }
  if (!Number.isSafeInteger(id) || id < -numLabels || id >= numLabels) {
    fail('BAD_CONFIG', `config.label2id: the entailment id ${JSON.stringify(id)} is not an index of the ${numLabels} logits`);
  }
  return id;
}

/** A Python index (negative from the end) into n values. */
const at = (i, n) => (i < 0 ? n + i : i);

/**
 * postprocess for one text: `logits` [N, L] for the N labels' pairs. With
 * multiLabel or one label, each label's softmax([contradiction, entailment])
 * (contradiction id 0, or -1 when entailment is 0); otherwise the softmax of
 * the entailment logits across the labels. {sequence, labels, scores}
 * descending (equal scores in label order).
 */
export function zeroShotResult(text, labels, logits, shape, config, options) {
  const { multiLabel } = zeroShotOptions(options);
  if (!Array.isArray(labels) || labels.length === 0) fail('BAD_ARGUMENT', 'labels must be the candidate labels (at least one)');
  if (!Array.isArray(shape) || shape.length !== 2 || shape[0] !== labels.length || shape[1] < 1) {
    fail('BAD_ARGUMENT', `logits: the shape must be [${labels.length}, labels], one row per candidate label, got ${JSON.stringify(shape)}`);
  }
  checkLogits(logits, shape);
  const [n, l] = shape;
  const entail = entailmentId(config, l);
  const e = at(entail, l);
  let scores;
  if (multiLabel || n === 1) {
    const c = at(entail === 0 ? -1 : 0, l);
    scores = Float64Array.from({ length: n }, (_, r) => softmax([logits[r * l + c], logits[r * l + e]])[1]);
  } else {
    scores = softmax(Float64Array.from({ length: n }, (_, r) => logits[r * l + e]));
  }
  const order = topIndices(scores, n);
  return { sequence: text, labels: order.map((i) => labels[i]), scores: order.map((i) => scores[i]) };
}
