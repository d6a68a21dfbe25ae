// The encoder tasks of a Pretrained, from text to scores: tokenize, run the
// checkpoint's head (config.head, core/heads.c) batch by batch, hand the logits
// to the post-processing of bindings/tasks/ (thin, as transformers.js
// pipelines are).
//
// Each task is a generator that yields forward requests [ids, options] and
// receives their results, so that one body serves the sync method (forward)
// and the async twin (the passes of one call in one exclusive job of the
// runtime: Encoder's EXCLUSIVE):
//
//   classify:        text | {text, textPair} | array -> sequence head -> tasks/text-classification.js
//   predict, rank:   [query, passage] pairs           -> sequence head -> tasks/cross-encoder.js
//   zeroShot:        (text, "This example is {label}.") pairs -> NLI sequence head -> tasks/zero-shot.js
//   classifyTokens:  text -> token head -> tasks/token-classification.js
//   fillMask:        text with mask tokens -> mlm head at the masks -> tasks/fill-mask.js
//   answerQuestion:  (question, context) windows -> qa head -> tasks/question-answering.js
import { SwapformerError, fail } from '../utils/errors.js';
import { classificationInputs, classifyOptions, classifyLogits } from '../tasks/text-classification.js';
import { crossEncoderPairs, predictOptions, crossEncoderScores, rankInputs, rankOptions, rankResults } from '../tasks/cross-encoder.js';
import { zeroShotOptions, candidateLabelList, hypotheses, zeroShotResult } from '../tasks/zero-shot.js';
import { tokenClassificationOptions, classifyTokenLogits } from '../tasks/token-classification.js';
import { fillMaskOptions, resolveTargets, maskPositions, fillMaskResults } from '../tasks/fill-mask.js';
import { questionAnsweringOptions, questionAnsweringInputs, windowSettings, questionAnsweringAnswers } from '../tasks/question-answering.js';

const BATCH = 32; // inputs per forward pass: bounds the activations

/** The task names of the heads (transformers.js's pipeline names). */
export const TASKS = {
  sequence: 'text-classification',
  token: 'token-classification',
  mlm: 'fill-mask',
  qa: 'question-answering',
  colbert: 'feature-extraction',
};

/** Refuses a call on a model without the head it needs, naming what the folder has. */
function needHead(model, task, method) {
  const head = model.encoder.config.head;
  if (head?.task === task) return head;
  const archs = Array.isArray(model.hfConfig?.architectures) ? ` (config.json architectures: ${JSON.stringify(model.hfConfig.architectures)})` : '';
  const has = head ? `a ${TASKS[head.task]} head` : 'no task head: it embeds (embed, embedAsync)';
  const wants = {
    sequence: 'a sequence-classification head (…ForSequenceClassification)',
    token: 'a token-classification head (…ForTokenClassification)',
    mlm: 'a masked-LM head (…ForMaskedLM)',
    qa: 'a question-answering head (…ForQuestionAnswering)',
  }[task];
  // DeBERTa-v3 was pre-trained as ELECTRA is (its mask_predictions.* head tells replaced tokens from original ones)
  const why =
    task === 'mlm' && model.family === 'deberta-v2'
      ? '. DeBERTa-v3 and mDeBERTa-v3 checkpoints are replaced-token detectors: they were pre-trained to tell replaced tokens from original ones, not to predict masked ones, and have no masked-LM head (a DeBERTa-v2 checkpoint saved as DebertaV2ForMaskedLM has one)'
      : '';
  throw new SwapformerError('UNSUPPORTED_MODEL', `${method} needs ${wants}; this model has ${has}${archs}${why}`);
}

/**
 * Yields the forward passes of the head over `encodings` ({ids, typeIds});
 * returns one Float32Array of logits per encoding: [labels] (sequence),
 * [T * labels] (token), [masks * vocab] (mlm, at positions[i]).
 */
function* headLogits(model, encodings, positions) {
  const { head, typeVocabSize } = model.encoder.config;
  const L = head.labels,
    out = [];
  for (let s = 0; s < encodings.length; s += BATCH) {
    const batch = encodings.slice(s, s + BATCH);
    const options = head.task === 'mlm' ? { headPositions: positions.slice(s, s + BATCH) } : { head: true };
    // token types only where the model has a table for them (MPNet's template gives pairs 1, its model none)
    if (typeVocabSize > 1) options.typeIds = batch.map((e) => e.typeIds);
    const { head: logits } = yield [batch.map((e) => e.ids), options];
    if (head.task === 'sequence') batch.forEach((_, b) => out.push(logits.data.slice(b * L, (b + 1) * L)));
    else if (head.task !== 'mlm') {
      const T = logits.shape[1];
      batch.forEach((e, b) => out.push(logits.data.slice(b * T * L, (b * T + e.ids.length) * L)));
    } else {
      let row = 0;
      batch.forEach((_, b) => {
        const n = positions[s + b].length;
        out.push(logits.data.slice(row * L, (row + n) * L));
        row += n;
      });
    }
  }
  return out;
}

/** Rows of logits as one Float32Array [n, L]. */
function stack(rows, L) {
  const data = new Float32Array(rows.length * L);
  rows.forEach((r, i) => data.set(r, i * L));
  return data;
}

const limit = (model) => (Number.isFinite(model.maxLength) ? model.maxLength : undefined);
const encodePair = (model, text, pair) => model.tokenizer.encode(text, { pair, maxLength: limit(model) });

/** classify(inputs, {topK, functionToApply}): per input [{label, score}] sorted; one input: that array. */
export function* classifyRun(model, inputs, options) {
  const head = needHead(model, 'sequence', 'classify');
  classifyOptions(options);
  const { items, single } = classificationInputs(inputs);
  const rows = yield* headLogits(
    model,
    items.map((x) => encodePair(model, x.text, x.textPair)),
  );
  const results = classifyLogits(stack(rows, head.labels), [rows.length, head.labels], model.hfConfig, options);
  return single ? results[0] : results;
}

/** predict(pairs, {activation}): CrossEncoder.predict's scores, [B] for one label, [B * labels] otherwise. */
export function* predictRun(model, input, options) {
  const head = needHead(model, 'sequence', 'predict');
  predictOptions(options);
  const { pairs } = crossEncoderPairs(input);
  const rows = yield* headLogits(
    model,
    pairs.map(([q, p]) => encodePair(model, q, p)),
  );
  return crossEncoderScores(stack(rows, head.labels), [rows.length, head.labels], model.hfConfig, options);
}

/** rank(query, documents, {topK, returnDocuments, activation}): CrossEncoder.rank. */
export function* rankRun(model, query, documents, options) {
  const head = needHead(model, 'sequence', 'rank');
  rankOptions(options);
  const pairs = rankInputs(query, documents);
  if (head.labels !== 1) fail('UNSUPPORTED_MODEL', `rank needs a cross-encoder with one output (CrossEncoder.rank); this head has ${head.labels} labels`);
  if (!pairs.length) return [];
  const rows = yield* headLogits(
    model,
    pairs.map(([q, d]) => encodePair(model, q, d)),
  );
  return rankResults(stack(rows, 1), [rows.length, 1], documents, model.hfConfig, options);
}

/** zeroShot(text, candidateLabels, {hypothesisTemplate, multiLabel}): {sequence, labels, scores}. */
export function* zeroShotRun(model, text, candidateLabels, options) {
  const head = needHead(model, 'sequence', 'zeroShot');
  const { hypothesisTemplate } = zeroShotOptions(options);
  if (typeof text !== 'string') fail('BAD_ARGUMENT', 'text must be a string');
  const labels = candidateLabelList(candidateLabels);
  // the pipeline truncates the premise only (ONLY_FIRST): the hypotheses stay whole
  const pairs = hypotheses(hypothesisTemplate, labels).map((h) => {
    try {
      return model.tokenizer.encode(text, { pair: h, maxLength: limit(model), truncation: 'only_first' });
    } catch (e) {
      // a hypothesis longer than the limit alone: the pipeline encodes the pair whole
      if (!(e instanceof SwapformerError && e.code === 'SEQUENCE_TOO_LONG')) throw e;
      return model.tokenizer.encode(text, { pair: h });
    }
  });
  const rows = yield* headLogits(model, pairs);
  return zeroShotResult(text, labels, stack(rows, head.labels), [rows.length, head.labels], model.hfConfig, options);
}

/** classifyTokens(text, {aggregationStrategy, ignoreLabels}): entities with offsets into text. */
export function* classifyTokensRun(model, text, options) {
  const head = needHead(model, 'token', 'classifyTokens');
  tokenClassificationOptions(options);
  if (typeof text !== 'string') fail('BAD_ARGUMENT', 'text must be a string');
  const encoding = model.tokenizer.encode(text, { maxLength: limit(model) });
  const [rows] = yield* headLogits(model, [encoding]);
  return classifyTokenLogits(text, encoding, rows, [encoding.ids.length, head.labels], model.hfConfig, model.tokenizerView, options);
}

/** fillMask(text, {topK, targets}): [{score, token, tokenStr, sequence}] (one mask), one array per mask otherwise. */
export function* fillMaskRun(model, text, options) {
  const head = needHead(model, 'mlm', 'fillMask');
  const { targets } = fillMaskOptions(options);
  if (typeof text !== 'string') fail('BAD_ARGUMENT', 'text must be a string');
  const view = model.tokenizerView;
  if (targets) resolveTargets(targets, view); // refused before any pass, as upstream
  const encoding = model.tokenizer.encode(text);
  if (encoding.ids.length > model.encoder.maxSequenceLength) {
    fail(
      'SEQUENCE_TOO_LONG',
      `text has ${encoding.ids.length} tokens; this model encodes at most ${model.encoder.maxSequenceLength} (the fill-mask pipeline does not truncate: the masks must stay)`,
    );
  }
  const positions = maskPositions(encoding.ids, view);
  const [rows] = yield* headLogits(model, [encoding], [positions]);
  return fillMaskResults(Array.from(encoding.ids), positions, rows, [positions.length, head.labels], view, options);
}

/**
 * answerQuestion(question, context, {topK, maxAnswerLen, maxSeqLen, docStride,
 * handleImpossibleAnswer, alignToWords}): the question-answering pipeline;
 * topK 1 gives the best answer {score, start, end, answer} (or null), more a
 * list, best first; start and end are UTF-16 offsets into context.
 */
export function* answerQuestionRun(model, question, context, options) {
  needHead(model, 'qa', 'answerQuestion');
  const o = questionAnsweringOptions(options);
  questionAnsweringInputs(question, context);
  const { maxSeqLen, docStride } = windowSettings(o, model.maxLength);
  const questionFirst = model.tokenizer.paddingSide !== 'left'; // the pipeline's padding_side == "right"
  const [text, pair] = questionFirst ? [question, context] : [context, question];
  let windows;
  try {
    windows = model.tokenizer.encodeWindows(text, pair, { maxLength: maxSeqLen, stride: docStride, truncation: questionFirst ? 'only_second' : 'only_first' });
  } catch (e) {
    if (!(e instanceof SwapformerError)) throw e;
    const q = model.tokenizer.encode(question, { addSpecialTokens: false }).ids.length;
    if (e.code === 'SEQUENCE_TOO_LONG')
      fail(
        'SEQUENCE_TOO_LONG',
        `the question has ${q} tokens: with the special tokens it leaves no room for the context in a window of maxSeqLen ${maxSeqLen}`,
      );
    throw new SwapformerError(e.code, `options.docStride = ${docStride}: ${e.message}`);
  }
  const longest = Math.max(...windows.map((w) => w.ids.length));
  if (longest > model.encoder.maxSequenceLength)
    fail(
      'SEQUENCE_TOO_LONG',
      `options.maxSeqLen = ${maxSeqLen}: a window has ${longest} tokens; this model encodes at most ${model.encoder.maxSequenceLength}`,
    );
  const logits = yield* headLogits(model, windows);
  const answers = questionAnsweringAnswers(context, windows, logits, o, { questionFirst, clsTokenId: model.tokenizer.clsTokenId ?? null });
  return o.topK === 1 ? (answers[0] ?? null) : answers;
}

/** Runs a task generator with sync forward passes. */
export function runSync(run, forward) {
  let step = run.next();
  while (!step.done) step = run.next(forward(...step.value));
  return step.value;
}

/** Runs a task generator with async forward passes (awaited one after the other). */
export async function runAsync(run, forward) {
  let step = run.next();
  while (!step.done) step = run.next(await forward(...step.value));
  return step.value;
}
