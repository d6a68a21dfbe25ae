// Token classification: the logits of a token-classification head -> entities,
// as Hugging Face's TokenClassificationPipeline (transformers
// src/transformers/pipelines/token_classification.py: postprocess,
// gather_pre_entities, aggregate, aggregate_word(s), group_sub_entities,
// get_tag, group_entities). Offsets are UTF-16 units of the input string, as
// our tokenizer gives them (HF's are code points of the Python str).
//
//   tokenClassificationOptions(options);                  // checks them before the forward pass
//   const encoding = view.encode(text, { maxLength });
//   classifyTokenLogits(text, encoding, logits, [T, L], hfConfig, view, options);
import { fail } from '../utils/errors.js';
import { softmax, readOptions, choiceOption, checkLogits, checkConfig, labelNames } from './scores.js';

export const AGGREGATION_STRATEGIES = ['none', 'simple', 'first', 'average', 'max'];

/** classifyTokens' options: {aggregationStrategy = 'simple', ignoreLabels = ['O']}. */
export function tokenClassificationOptions(options) {
  const o = readOptions(options, ['aggregationStrategy', 'ignoreLabels'], 'classifyTokens');
  const ignoreLabels = o.ignoreLabels ?? ['O'];
  if (!Array.isArray(ignoreLabels) || ignoreLabels.some((l) => typeof l !== 'string')) fail('BAD_ARGUMENT', 'options.ignoreLabels must be an array of strings');
  return {
    aggregationStrategy:
      o.aggregationStrategy === undefined ? 'simple' : choiceOption(o.aggregationStrategy, 'options.aggregationStrategy', AGGREGATION_STRATEGIES),
    ignoreLabels: [...ignoreLabels],
  };
}

/** Python's len(): code points, not UTF-16 units. */
const pyLen = (s) => {
  let n = 0;
  for (const _ of s) n++;
  return n;
};

/**
 * gather_pre_entities: one entry per token that is not special, with its
 * softmax scores, its word (convert_ids_to_tokens; the text itself for an
 * unknown token) and whether it continues the previous word: with a
 * continuing_subword_prefix, when the token's length differs from its text's
 * (len(word) != len(word_ref)); without, when neither the character before it
 * nor its first is a space (start > 0 and " " not in text[start-1:start+1]).
 */
function preEntities(text, encoding, scores, numLabels, mask, view) {
  const out = [];
  for (let idx = 0; idx < encoding.ids.length; idx++) {
    if (mask[idx]) continue;
    const id = encoding.ids[idx];
    const [start, end] = encoding.offsets[idx];
    let word = view.idToToken(id);
    if (word === null) fail('BAD_ARGUMENT', `encoding.ids[${idx}] = ${id} is not in the vocabulary`);
    const ref = text.slice(start, end);
    let isSubword = view.subwordPrefix ? pyLen(word) !== pyLen(ref) : start > 0 && text[start - 1] !== ' ' && text[start] !== ' '; // a surrogate half is never " ": the UTF-16 test is the code point one
    if (id === view.unkTokenId) {
      word = ref;
      isSubword = false;
    }
    out.push({ word, scores: scores.subarray(idx * numLabels, (idx + 1) * numLabels), start, end, index: idx, isSubword });
  }
  return out;
}

/** numpy argmax: the first index of the largest value. */
function argmax(v) {
  let best = 0;
  for (let i = 1; i < v.length; i++) if (v[i] > v[best]) best = i;
  return best;
}

/** aggregate_word: one word's tokens -> one entity (first / max / average). */
function aggregateWord(tokens, strategy, labels, view) {
  const word = view.tokensToString(tokens.map((t) => t.word));
  let scores = tokens[0].scores;
  if (strategy === 'max') {
    // Python's max(entities, key=scores.max()): the first token with the largest top score
    let best = 0,
      bestMax = -Infinity;
    tokens.forEach((t, i) => {
      const m = t.scores[argmax(t.scores)];
      if (m > bestMax) {
        best = i;
        bestMax = m;
      }
    });
    scores = tokens[best].scores;
  } else if (strategy === 'average') {
    scores = new Float64Array(scores.length);
    for (const t of tokens) for (let i = 0; i < scores.length; i++) scores[i] += t.scores[i];
    for (let i = 0; i < scores.length; i++) scores[i] /= tokens.length;
  }
  const best = argmax(scores);
  return { entity: labels[best], score: scores[best], word, start: tokens[0].start, end: tokens[tokens.length - 1].end };
}

/** aggregate_words: a word starts at each token that is not a sub-word (and at the first token). */
function aggregateWords(pre, strategy, labels, view) {
  const words = [];
  let group = null;
  for (const e of pre) {
    if (group !== null && e.isSubword) {
      group.push(e);
      continue;
    }
    if (group !== null) words.push(aggregateWord(group, strategy, labels, view));
    group = [e];
  }
  if (group !== null) words.push(aggregateWord(group, strategy, labels, view));
  return words;
}

/** get_tag: "B-X" -> (B, X), "I-X" -> (I, X), anything else -> (I, itself). */
function tag(label) {
  if (label.startsWith('B-')) return ['B', label.slice(2)];
  if (label.startsWith('I-')) return ['I', label.slice(2)];
  return ['I', label];
}

/** group_sub_entities: the group's name (the label after its first "-"), mean score, joined words. */
function groupOf(entities, view) {
  const label = entities[0].entity;
  const dash = label.indexOf('-');
  let sum = 0;
  for (const e of entities) sum += e.score;
  return {
    entityGroup: dash < 0 ? label : label.slice(dash + 1),
    score: sum / entities.length,
    word: view.tokensToString(entities.map((e) => e.word)),
    start: entities[0].start,
    end: entities[entities.length - 1].end,
  };
}

/** group_entities: an entity joins the current group when its tag is the group's last and it is not a B. */
function groupEntities(entities, view) {
  const groups = [];
  let current = [];
  for (const e of entities) {
    if (current.length > 0) {
      const [bi, t] = tag(e.entity);
      const [, lastTag] = tag(current[current.length - 1].entity);
      if (t === lastTag && bi !== 'B') {
        current.push(e);
        continue;
      }
      groups.push(groupOf(current, view));
    }
    current = [e];
  }
  if (current.length > 0) groups.push(groupOf(current, view));
  return groups;
}

/**
 * The entities of one text: `logits` [T, L] for the T tokens of `encoding`
 * (our Tokenizer's {ids, offsets} of `text`, with the special tokens), `view`
 * a tokenizerView. aggregationStrategy 'none' gives {entity, score, index,
 * word, start, end} per token; the others {entityGroup, score, word, start,
 * end} per group. Entities whose label is in ignoreLabels go after grouping.
 */
export function classifyTokenLogits(text, encoding, logits, shape, config, view, options) {
  const { aggregationStrategy: strategy, ignoreLabels } = tokenClassificationOptions(options);
  if (typeof text !== 'string') fail('BAD_ARGUMENT', 'text must be a string');
  if (
    !encoding ||
    !(Array.isArray(encoding.ids) || ArrayBuffer.isView(encoding.ids)) ||
    !Array.isArray(encoding.offsets) ||
    encoding.offsets.length !== encoding.ids.length
  ) {
    fail('BAD_ARGUMENT', 'encoding must have ids and one [start, end] offset per id');
  }
  if (!Array.isArray(shape) || shape.length !== 2 || shape[0] !== encoding.ids.length || shape[1] < 1) {
    fail('BAD_ARGUMENT', `logits: the shape must be [${encoding.ids.length}, labels], one row per token, got ${JSON.stringify(shape)}`);
  }
  encoding.offsets.forEach((off, i) => {
    if (!Array.isArray(off) || !Number.isSafeInteger(off[0]) || !Number.isSafeInteger(off[1]) || off[0] < 0 || off[1] < off[0] || off[1] > text.length) {
      fail('BAD_ARGUMENT', `encoding.offsets[${i}] must be [start, end] within the text, got ${JSON.stringify(off)}`);
    }
  });
  checkLogits(logits, shape);
  const [tokens, n] = shape;
  const labels = labelNames(checkConfig(config), n);
  const scores = new Float64Array(tokens * n);
  for (let t = 0; t < tokens; t++) scores.set(softmax(logits, t * n, n), t * n);
  const pre = preEntities(text, encoding, scores, n, view.specialTokensMask(encoding), view);
  let entities;
  if (strategy === 'none' || strategy === 'simple') {
    entities = pre.map((p) => {
      const best = argmax(p.scores);
      return { entity: labels[best], score: p.scores[best], index: p.index, word: p.word, start: p.start, end: p.end };
    });
  } else {
    entities = aggregateWords(pre, strategy, labels, view);
  }
  if (strategy !== 'none') entities = groupEntities(entities, view);
  return entities.filter((e) => !ignoreLabels.includes(strategy === 'none' ? e.entity : e.entityGroup));
}
