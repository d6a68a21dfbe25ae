// Extractive question answering: Hugging Face's question-answering pipeline
// (transformers pipelines/question_answering.py, the last 4.x / 5.2 code: the
// pipeline is gone from 5.3) after the model, over the start and end logits of
// each window of the context (Tokenizer.encodeWindows makes the windows).
//
// Per window (select_starts_ends, decode_spans):
//   - p_mask: 1 for the question and the special tokens when the question comes
//     first (the tokenizer pads on the right), all 0 when the context comes first
//     (upstream's quirk: the question is not masked then); every [CLS] 0 again;
//   - the masked logits set to -10000, softmax of the starts and of the ends;
//   - the null score p_start[0] p_end[0] kept (handleImpossibleAnswer), then
//     position 0 zeroed;
//   - span scores p_start[i] p_end[j] for i <= j <= i + maxAnswerLen - 1, 0
//     elsewhere; the k best (k = topK * 2 + 10 with alignToWords, else topK),
//     then those whose start or end is masked dropped; index 0 always passes
//     that filter (numpy's isin against the nonzero() of a [1, T] mask takes its
//     row indices, all 0, as well);
//   - characters: the words of the start and end tokens within this window
//     (alignToWords), else, or when a token has no word, the tokens' offsets;
//   - an answer whose text equals one found already, ignoring case, adds its
//     score to that one (merged across windows).
// Then the null answer {score: the lowest null score, start: 0, end: 0,
// answer: ''} when asked, the answers by score (stable), the first topK.
//
// Choices (marked CHOICE in tests/reference/pipeline_rules.py too): equal span
// scores keep the lower flat index (i * T + j) first, where numpy's argpartition
// leaves the order open; offsets count UTF-16 units, so that
// context.slice(start, end) is the answer (Python counts code points).
import { fail } from '../utils/errors.js';
import { readOptions, topKOption, booleanOption, checkLogits } from './scores.js';

const KEYS = ['topK', 'maxAnswerLen', 'maxSeqLen', 'docStride', 'handleImpossibleAnswer', 'alignToWords'];
const bad = (message) => fail('BAD_ARGUMENT', message);
const positive = (v, field) => {
  if (!Number.isSafeInteger(v) || v < 1) bad(`${field} must be a positive integer, got ${String(v)}`);
  return v;
};

/** The options, checked as _sanitize_parameters and preprocess check them: topK, maxAnswerLen, maxSeqLen >= 1, docStride >= 0 and at most maxSeqLen. */
export function questionAnsweringOptions(options) {
  const o = readOptions(options, KEYS, 'answerQuestion');
  const topK = o.topK === undefined ? 1 : positive(topKOption(o.topK, 'options.topK'), 'options.topK');
  const maxAnswerLen = o.maxAnswerLen === undefined ? 15 : positive(o.maxAnswerLen, 'options.maxAnswerLen');
  const maxSeqLen = o.maxSeqLen === undefined ? undefined : positive(o.maxSeqLen, 'options.maxSeqLen');
  const docStride = o.docStride === undefined ? undefined : topKOption(o.docStride, 'options.docStride');
  if (maxSeqLen !== undefined && docStride !== undefined && docStride > maxSeqLen)
    bad(`options.docStride (${docStride}) is larger than options.maxSeqLen (${maxSeqLen})`);
  return {
    topK,
    maxAnswerLen,
    maxSeqLen,
    docStride,
    handleImpossibleAnswer: o.handleImpossibleAnswer === undefined ? false : booleanOption(o.handleImpossibleAnswer, 'options.handleImpossibleAnswer'),
    alignToWords: o.alignToWords === undefined ? true : booleanOption(o.alignToWords, 'options.alignToWords'),
  };
}

/** The question and the context: non-empty strings (QuestionAnsweringArgumentHandler.normalize). */
export function questionAnsweringInputs(question, context) {
  for (const [name, v] of [
    ['question', question],
    ['context', context],
  ]) {
    if (typeof v !== 'string') bad(`${name} must be a string, got ${v === null ? 'null' : typeof v}`);
    if (v.length === 0) bad(`${name} cannot be empty`);
  }
}

/** maxSeqLen and docStride as preprocess defaults them: min(the model's limit, 384), min(maxSeqLen / 2, 128). */
export function windowSettings(options, modelMaxLength) {
  const maxSeqLen = options.maxSeqLen ?? Math.min(Number.isFinite(modelMaxLength) ? modelMaxLength : 384, 384);
  const docStride = options.docStride ?? Math.min(Math.floor(maxSeqLen / 2), 128);
  if (docStride > maxSeqLen) bad(`options.docStride (${docStride}) is larger than maxSeqLen (${maxSeqLen})`);
  return { maxSeqLen, docStride };
}

/** Rust's Encoding.word_to_chars(word, seq) within a window: [start, end] of the word's tokens there, or null. */
function wordToChars(w, word, seq) {
  let first = -1,
    last = -1;
  const n = w.ids.length;
  for (let t = 0; t < n; t++) {
    if (w.sequenceIds[t] !== seq) continue;
    if (w.wordIds[t] > word) break; // take_while(word <= target): the words of a sequence never go down
    if (w.wordIds[t] === word) {
      if (first < 0) first = t;
      last = t;
    }
  }
  return first < 0 ? null : [w.offsets[first][0], w.offsets[last][1]];
}

/** The k best span candidates of one window: [i, j, score], as decode_spans orders them (ties: the lower flat index). */
function bestSpans(ps, pe, T, maxAnswerLen, k) {
  const spans = [];
  for (let i = 0; i < T; i++)
    for (let j = i; j < T && j < i + maxAnswerLen; j++) {
      const s = ps[i] * pe[j];
      if (s > 0) spans.push([i, j, s]);
    }
  spans.sort((a, b) => b[2] - a[2] || a[0] * T + a[1] - (b[0] * T + b[1]));
  if (spans.length >= k) return spans.slice(0, k);
  // fewer positive scores than k: the zero ones follow, by flat index
  const positive = new Set(spans.map(([i, j]) => i * T + j));
  for (let f = 0; f < T * T && spans.length < k; f++) if (!positive.has(f)) spans.push([Math.floor(f / T), f % T, 0]);
  return spans;
}

/**
 * The answers of the question-answering pipeline from its windows and their
 * logits: windows from Tokenizer.encodeWindows ({ids, offsets, sequenceIds,
 * wordIds}), logits[w] a Float32Array [T, 2] (start, end per token),
 * questionFirst (the tokenizer pads on the right), clsTokenId (or null).
 * Returns the answers best first, at most options.topK: [{score, start, end, answer}].
 */
export function questionAnsweringAnswers(context, windows, logits, options, { questionFirst, clsTokenId }) {
  const { topK, maxAnswerLen, handleImpossibleAnswer, alignToWords } = options;
  const k = alignToWords ? topK * 2 + 10 : topK;
  const seq = questionFirst ? 1 : 0;
  let minNull = 1000000;
  const answers = [];
  windows.forEach((w, wi) => {
    const T = w.ids.length;
    checkLogits(logits[wi], [T, 2], `logits[${wi}]`);
    const allowed = new Uint8Array(T);
    let any = false;
    for (let t = 0; t < T; t++) {
      allowed[t] = !questionFirst || w.sequenceIds[t] === 1 || (clsTokenId !== null && w.ids[t] === clsTokenId) ? 1 : 0;
      any ||= allowed[t] === 1;
    }
    const probs = (col) => {
      const out = new Float64Array(T);
      let max = -Infinity;
      for (let t = 0; t < T; t++) max = Math.max(max, (out[t] = allowed[t] ? logits[wi][2 * t + col] : -10000));
      let sum = 0;
      for (let t = 0; t < T; t++) sum += out[t] = Math.exp(out[t] - max);
      for (let t = 0; t < T; t++) out[t] /= sum;
      return out;
    };
    const ps = probs(0),
      pe = probs(1);
    if (handleImpossibleAnswer) minNull = Math.min(minNull, ps[0] * pe[0]);
    ps[0] = pe[0] = 0;
    const passes = (t) => allowed[t] === 1 || (t === 0 && any);
    for (const [i, j, score] of bestSpans(ps, pe, T, maxAnswerLen, k)) {
      if (!passes(i) || !passes(j)) continue;
      let span = null;
      if (alignToWords && w.wordIds[i] >= 0 && w.wordIds[j] >= 0) {
        const a = wordToChars(w, w.wordIds[i], seq),
          b = wordToChars(w, w.wordIds[j], seq);
        if (a && b) span = [a[0], b[1]];
      }
      const [start, end] = span ?? [w.offsets[i][0], w.offsets[j][1]];
      const text = context.slice(start, end);
      const same = answers.find((a) => a.answer.toLowerCase() === text.toLowerCase());
      if (same) same.score += score;
      else answers.push({ score, start, end, answer: text });
    }
  });
  if (handleImpossibleAnswer) answers.push({ score: minNull, start: 0, end: 0, answer: '' });
  return answers
    .map((a, i) => [a, i])
    .sort((x, y) => y[0].score - x[0].score || x[1] - y[1])
    .slice(0, topK)
    .map(([a]) => a);
}
