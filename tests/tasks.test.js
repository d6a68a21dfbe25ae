// bindings/tasks/ against tests/tasks/vectors.json: every post-processing
// function on random and crafted logits, its output compared with the upstream
// rules re-implemented in Python (tests/reference/pipeline_rules.py, regenerate
// with tests/reference/make_task_vectors.py), with the tokenizations of Hugging
// Face's Rust tokenizers. Scores within 1e-6 (relative past 1), labels, words,
// ids, offsets and sequences exact. Then the option and argument errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Tokenizer } from '../bindings/tokenizers/tokenizer.js';
import { SwapformerError } from '../bindings/utils/errors.js';
import { softmax, topIndices, readOptions, labelNames, checkLogits } from '../bindings/tasks/scores.js';
import { classifyLogits, classifyOptions, classificationInputs, defaultFunction } from '../bindings/tasks/text-classification.js';
import {
  crossEncoderScores,
  crossEncoderPairs,
  rankResults,
  rankInputs,
  predictOptions,
  rankOptions,
  defaultActivation,
} from '../bindings/tasks/cross-encoder.js';
import { classifyTokenLogits, tokenClassificationOptions } from '../bindings/tasks/token-classification.js';
import { fillMaskResults, fillMaskOptions, maskPositions, resolveTargets } from '../bindings/tasks/fill-mask.js';
import { zeroShotResult, zeroShotOptions, candidateLabelList, hypotheses, entailmentId } from '../bindings/tasks/zero-shot.js';
import { questionAnsweringOptions, questionAnsweringInputs, questionAnsweringAnswers, windowSettings } from '../bindings/tasks/question-answering.js';
import { tokenizerView, cleanUpTokenization } from '../bindings/tasks/tokenizer-view.js';
import * as real from './tokenizers/real.js';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const vectors = JSON.parse(readFileSync(path.join(REPO, 'tests/tasks/vectors.json'), 'utf8')).problems;
const readJson = (p) => (existsSync(p) ? JSON.parse(readFileSync(p, 'utf8')) : undefined);

// ------------------------------------------------------------------ helpers

/** Our Tokenizer and its view for a vector's tokenizer spec, as pipeline_rules.py builds the Python one. */
const views = new Map();
function viewOf(problem) {
  const key = JSON.stringify([problem.tokenizer, problem.tokenizerConfig ?? null]);
  if (views.has(key)) return views.get(key);
  const spec = problem.tokenizer;
  let json,
    tokenizerConfig = problem.tokenizerConfig,
    specialTokensMap;
  if (spec.file) {
    json = JSON.parse(readFileSync(path.join(REPO, spec.file), 'utf8'));
    if (tokenizerConfig === undefined) {
      const folder = path.dirname(path.join(REPO, spec.file));
      tokenizerConfig = readJson(path.join(folder, 'tokenizer_config.json'));
      specialTokensMap = readJson(path.join(folder, 'special_tokens_map.json'));
    }
  } else {
    json = { 'bert-base-uncased': real.bertBaseUncased, roberta: () => real.roberta() }[spec.real]();
  }
  const tokenizer = Tokenizer.fromJSON(json, { tokenizerConfig, specialTokensMap });
  const view = tokenizerView(tokenizer, { tokenizerJson: json, tokenizerConfig });
  views.set(key, view);
  return view;
}

/** Code point offsets in `text` -> UTF-16 offsets (ours are UTF-16, Python's code points). */
function utf16Of(text) {
  const map = [0];
  let u = 0;
  for (const c of text) {
    u += c.length;
    map.push(u);
  }
  return (i) => map[i];
}

/** UTF-16 offsets in `text` -> code point offsets. */
function codePointsOf(text) {
  const map = new Map([[0, 0]]);
  let u = 0,
    n = 0;
  for (const c of text) {
    u += c.length;
    map.set(u, ++n);
  }
  return (i) => map.get(i);
}

/** The logits of a vector as a flat Float32Array and its shape (sparse form expanded). */
function logitsOf(problem) {
  const l = problem.logits;
  if (!Array.isArray(l)) {
    const [rows, vocab] = l.shape;
    const out = new Float32Array(rows * vocab).fill(l.fill);
    for (const [r, i, v] of l.set) out[r * vocab + i] = v;
    return { logits: out, shape: l.shape };
  }
  return { logits: Float32Array.from(l.flat()), shape: [l.length, l.length ? l[0].length : 0] };
}

const SCORE_KEYS = new Set(['score', 'scores']);
/** Deep equality, numbers under a score key within 1e-6 (relative past 1). */
function assertClose(actual, expected, where, key = '') {
  if (typeof expected === 'number') {
    assert.equal(typeof actual, 'number', `${where}: a number`);
    if (SCORE_KEYS.has(key)) assert.ok(Math.abs(actual - expected) <= 1e-6 * Math.max(1, Math.abs(expected)), `${where}: ${actual} vs ${expected}`);
    else assert.equal(actual, expected, where);
    return;
  }
  if (Array.isArray(expected)) {
    assert.ok(Array.isArray(actual) || ArrayBuffer.isView(actual), `${where}: an array, got ${JSON.stringify(actual)}`);
    assert.equal(actual.length, expected.length, `${where}: length (${JSON.stringify(actual).slice(0, 400)} vs ${JSON.stringify(expected).slice(0, 400)})`);
    expected.forEach((e, i) => assertClose(actual[i], e, `${where}[${i}]`, key));
    return;
  }
  if (expected !== null && typeof expected === 'object') {
    assert.deepEqual(Object.keys(actual).sort(), Object.keys(expected).sort(), `${where}: keys`);
    for (const k of Object.keys(expected)) assertClose(actual[k], expected[k], `${where}.${k}`, k);
    return;
  }
  assert.equal(actual, expected, where);
}

/** The cases of a vector: one per variant, or the problem itself. */
const casesOf = (p) =>
  p.variants
    ? p.variants.map((v, i) => ({ ...v, where: `${p.id} #${i} ${JSON.stringify(v.options)}` }))
    : [{ options: p.options, expected: p.expected, error: p.error, where: p.id }];

/** Runs `run` on every case of every vector of `kind`: the expected output, or a SwapformerError where upstream fails. */
function checkKind(kind, run, key = '') {
  const problems = vectors.filter((p) => p.kind === kind);
  assert.ok(problems.length > 0, `vectors of ${kind}`);
  let n = 0;
  for (const p of problems) {
    for (const c of casesOf(p)) {
      n++;
      if (c.error !== undefined) {
        assert.throws(
          () => run(p, c.options),
          (e) => e instanceof SwapformerError && ['BAD_ARGUMENT', 'UNSUPPORTED_MODEL'].includes(e.code),
          `${c.where}: upstream fails (${c.error})`,
        );
      } else {
        assertClose(run(p, c.options), c.expected, c.where, key);
      }
    }
  }
  return n;
}

// ------------------------------------------------------------------ the vectors

test('text classification: classifyLogits as TextClassificationPipeline.postprocess', () => {
  const n = checkKind('text-classification', (p, options) => {
    const { logits, shape } = logitsOf(p);
    return classifyLogits(logits, shape, p.config, options);
  });
  assert.ok(n >= 60, `${n} cases`);
});

test('cross-encoder: crossEncoderScores as CrossEncoder.predict, rankResults as CrossEncoder.rank', () => {
  checkKind(
    'cross-encoder-predict',
    (p, options) => {
      const { logits, shape } = logitsOf(p);
      const scores = crossEncoderScores(logits, shape, p.config, options);
      assert.ok(scores instanceof Float32Array);
      return Array.from(scores);
    },
    'scores',
  );
  checkKind('cross-encoder-rank', (p, options) => {
    const { logits, shape } = logitsOf(p);
    assert.equal(rankInputs('q', p.documents).length, p.documents.length);
    return rankResults(logits, shape, p.documents, p.config, options);
  });
});

/** Our encoding of a vector's text, checked against the Rust one; its offsets in UTF-16 and a code point -> UTF-16 map. */
function encodingOf(p) {
  const view = viewOf(p);
  const enc = view.encode(p.text);
  assert.deepEqual(Array.from(enc.ids), p.encoding.ids, `${p.id}: our ids are Rust's`);
  const u = utf16Of(p.text);
  assert.deepEqual(
    enc.offsets,
    p.encoding.offsets.map(([s, e]) => [u(s), u(e)]),
    `${p.id}: our offsets are Rust's (in UTF-16)`,
  );
  return { view, enc, u };
}

test('token classification: classifyTokenLogits as TokenClassificationPipeline (every strategy), special-tokens mask as Rust', () => {
  const n = checkKind('token-classification', (p, options) => {
    const { view, enc } = encodingOf(p);
    assert.deepEqual(view.specialTokensMask(enc), p.encoding.specialTokensMask, `${p.id}: the mask is Rust's special_tokens_mask`);
    const { logits, shape } = logitsOf(p);
    const cp = codePointsOf(p.text);
    return classifyTokenLogits(p.text, enc, logits, shape, p.config, view, options).map((e) => ({ ...e, start: cp(e.start), end: cp(e.end) }));
  });
  assert.ok(n >= 500, `${n} cases`);
});

test('token classification: expected offsets are code points; ours are their UTF-16 units', () => {
  // the vectors' start/end are Python's; map them before comparing
  for (const p of vectors.filter((x) => x.kind === 'token-classification' && /[\u{10000}-\u{10FFFF}]/u.test(x.text))) {
    const { view, enc, u } = encodingOf(p);
    const { logits, shape } = logitsOf(p);
    for (const c of casesOf(p)) {
      const out = classifyTokenLogits(p.text, enc, logits, shape, p.config, view, c.options);
      assertClose(
        out,
        c.expected.map((e) => ({ ...e, start: u(e.start), end: u(e.end) })),
        c.where,
      );
    }
  }
});

test('fill-mask: fillMaskResults as FillMaskPipeline.postprocess (one and several masks, targets)', () => {
  checkKind('fill-mask', (p, options) => {
    const view = viewOf(p);
    const enc = view.encode(p.text);
    assert.deepEqual(Array.from(enc.ids), p.encoding.ids, `${p.id}: our ids are Rust's`);
    const { targets } = fillMaskOptions(options);
    if (targets) resolveTargets(targets, view);
    const positions = maskPositions(enc.ids, view);
    const { logits, shape } = logitsOf(p);
    return fillMaskResults(enc.ids, positions, logits, shape, view, options);
  });
});

test('zero-shot: zeroShotResult as ZeroShotClassificationPipeline (entailment anywhere, single and multi-label)', () => {
  checkKind('zero-shot', (p, options) => {
    const { hypothesisTemplate } = zeroShotOptions(options);
    const labels = candidateLabelList(p.candidateLabels);
    const hyps = hypotheses(hypothesisTemplate, labels);
    const { logits, shape } = logitsOf(p);
    return { ...zeroShotResult(p.text, labels, logits, shape, p.config, options), hypotheses: hyps };
  });
});

/** Our windows of a question-answering vector, checked against Rust's (ids, type ids, sequence and word ids, offsets in UTF-16). */
function windowsOf(p) {
  const view = viewOf(p);
  const [text, pair] = p.questionFirst ? [p.question, p.context] : [p.context, p.question];
  const windows = view.tokenizer.encodeWindows(text, pair, {
    maxLength: p.maxSeqLen,
    stride: p.docStride,
    truncation: p.questionFirst ? 'only_second' : 'only_first',
  });
  if (p.windowsError) return windows; // the caller expects the throw
  assert.equal(windows.length, p.windows.length, `${p.id}: as many windows as Rust's`);
  const [uq, uc] = [utf16Of(p.question), utf16Of(p.context)];
  const ctxSeq = p.questionFirst ? 1 : 0;
  windows.forEach((w, k) => {
    const r = p.windows[k];
    assert.deepEqual(Array.from(w.ids), r.ids, `${p.id} window ${k}: ids`);
    assert.deepEqual(Array.from(w.typeIds), r.typeIds, `${p.id} window ${k}: type ids`);
    assert.deepEqual(
      Array.from(w.wordIds),
      r.wordIds.map((x) => x ?? -1),
      `${p.id} window ${k}: word ids`,
    );
    assert.deepEqual(
      Array.from(w.sequenceIds),
      r.sequenceIds.map((x) => x ?? -1),
      `${p.id} window ${k}: sequence ids`,
    );
    const offsets = r.offsets.map(([a, b], t) => (r.specialTokensMask[t] ? [a, b] : r.sequenceIds[t] === ctxSeq ? [uc(a), uc(b)] : [uq(a), uq(b)]));
    assert.deepEqual(w.offsets, offsets, `${p.id} window ${k}: offsets (UTF-16)`);
  });
  return windows;
}

/**
 * Answers compared in order, except that answers whose expected scores are
 * equal to 1e-12 (relative) may come in either order: the span scores are
 * products of probabilities, and logits on a 1/64 grid make exact ties that
 * the last bit of float64 rounding (Python's, ours) orders either way.
 */
function assertAnswers(actual, expected, where) {
  if (!Array.isArray(expected)) return assertClose(actual, expected, where);
  assert.ok(Array.isArray(actual) && actual.length === expected.length, `${where}: ${actual?.length} answers, expected ${expected.length}`);
  const near = (a, b) => Math.abs(a - b) <= 1e-12 * Math.max(1e-300, Math.abs(a), Math.abs(b));
  for (let i = 0; i < expected.length;) {
    let j = i + 1;
    while (j < expected.length && near(expected[j].score, expected[i].score)) j++;
    const key = (a) => `${a.start}:${a.end}:${a.answer}`;
    const got = actual.slice(i, j).sort((a, b) => key(a).localeCompare(key(b)));
    const want = expected.slice(i, j).sort((a, b) => key(a).localeCompare(key(b)));
    assertClose(got, want, `${where}[${i}..${j})`);
    i = j;
  }
}

test('question answering: the windows of long contexts as tokenizers <= 0.22 cut them (Rust Encoding.truncate + postProcess)', () => {
  const problems = vectors.filter((p) => p.kind === 'question-answering');
  let windows = 0,
    refused = 0;
  for (const p of problems) {
    if (p.windowsError) {
      const code = /SequenceTooShort/.test(p.windowsError) ? 'SEQUENCE_TOO_LONG' : 'BAD_ARGUMENT';
      assert.throws(() => windowsOf(p), { code }, `${p.id}: Rust refuses (${p.windowsError})`);
      refused++;
    } else windows += windowsOf(p).length;
  }
  assert.ok(windows >= 200 && refused >= 15, `${windows} windows, ${refused} refusals`);
});

test('question answering: questionAnsweringAnswers as QuestionAnsweringPipeline.postprocess (spans, filters, words, merging, the null answer)', () => {
  let n = 0;
  for (const p of vectors.filter((x) => x.kind === 'question-answering' && !x.windowsError)) {
    const windows = windowsOf(p);
    const logits = p.logits.map((w) => Float32Array.from(w.flat()));
    const clsTokenId = p.clsTokenId ?? null;
    for (const c of casesOf(p)) {
      n++;
      const run = () => {
        const o = questionAnsweringOptions(c.options);
        const out = questionAnsweringAnswers(p.context, windows, logits, o, { questionFirst: p.questionFirst, clsTokenId });
        for (const a of out) assert.equal(p.context.slice(a.start, a.end), a.answer, `${c.where}: context.slice(start, end) is the answer`);
        return o.topK === 1 ? (out[0] ?? null) : out;
      };
      if (c.error !== undefined) assert.throws(run, { code: 'BAD_ARGUMENT' }, `${c.where}: upstream fails (${c.error})`);
      else assertAnswers(run(), c.expected, c.where);
    }
  }
  assert.ok(n >= 400, `${n} cases`);
});

test('question answering: options and inputs refused as upstream refuses them', () => {
  assert.throws(() => questionAnsweringOptions({ topK: 0 }), { code: 'BAD_ARGUMENT', message: /topK/ });
  assert.throws(() => questionAnsweringOptions({ maxAnswerLen: 0 }), { code: 'BAD_ARGUMENT', message: /maxAnswerLen/ });
  assert.throws(() => questionAnsweringOptions({ docStride: 10, maxSeqLen: 8 }), { code: 'BAD_ARGUMENT', message: /docStride \(10\) is larger/ });
  assert.throws(() => questionAnsweringOptions({ doc_stride: 1 }), { code: 'BAD_ARGUMENT', message: /did you mean 'docStride'/ });
  assert.throws(() => questionAnsweringOptions({ maxQuestionLen: 64 }), { code: 'BAD_ARGUMENT', message: /unknown option 'maxQuestionLen'/ });
  assert.throws(() => questionAnsweringInputs('', 'ctx'), { code: 'BAD_ARGUMENT', message: /question cannot be empty/ });
  assert.throws(() => questionAnsweringInputs('q', ''), { code: 'BAD_ARGUMENT', message: /context cannot be empty/ });
  assert.throws(() => questionAnsweringInputs('q', null), { code: 'BAD_ARGUMENT', message: /context must be a string/ });
  assert.deepEqual(windowSettings({}, 512), { maxSeqLen: 384, docStride: 128 }, 'min(model_max_length, 384), min(384 / 2, 128)');
  assert.deepEqual(windowSettings({}, 100), { maxSeqLen: 100, docStride: 50 });
  assert.deepEqual(windowSettings({ maxSeqLen: 64 }, 512), { maxSeqLen: 64, docStride: 32 });
  assert.throws(() => windowSettings({ docStride: 200 }, 128), { code: 'BAD_ARGUMENT', message: /docStride \(200\) is larger than maxSeqLen \(128\)/ });
});

// ------------------------------------------------------------------ the shared pieces

test('scores: softmax is shifted (no overflow), topIndices keeps ties in index order', () => {
  assert.deepEqual(Array.from(softmax([1000, 1000])), [0.5, 0.5]);
  assert.deepEqual(Array.from(softmax(Float32Array.of(-1e30, 0))), [0, 1]);
  const s = [0.1, 0.3, 0.3, 0.2, 0.3, 0.1];
  assert.deepEqual(topIndices(s, 3), [1, 2, 4]);
  assert.deepEqual(topIndices(s, 6), [1, 2, 4, 3, 0, 5]);
  const big = new Float64Array(1000).fill(0.5);
  big[700] = 1;
  big[3] = 1;
  big[999] = 0.75;
  assert.deepEqual(topIndices(big, 5), [3, 700, 999, 0, 1], 'the insertion buffer (k small against n)');
  assert.deepEqual(topIndices(big, 0), []);
});

test('labels: id2label string keys, LABEL_i without it, a missing id is a config error', () => {
  assert.deepEqual(labelNames({ id2label: { 1: 'b', 0: 'a' } }, 2), ['a', 'b']);
  assert.deepEqual(labelNames({}, 3), ['LABEL_0', 'LABEL_1', 'LABEL_2']);
  assert.throws(() => labelNames({ id2label: { 0: 'a' } }, 2), { code: 'BAD_CONFIG', message: /config\.id2label has 1 label, but the head has 2 outputs/ });
  assert.throws(() => labelNames({ id2label: { 0: 'a', 1: 'b', 2: 'c' } }, 2), {
    code: 'BAD_CONFIG',
    message: /config\.id2label has 3 labels, but the head has 2 outputs/,
  });
  assert.throws(() => labelNames({ id2label: { 0: 'a', 2: 'c' } }, 2), { code: 'BAD_CONFIG', message: /no label for id 1/ });
  assert.throws(() => labelNames({ id2label: { x: 'a' } }, 1), { code: 'BAD_CONFIG', message: /"x" is not an integer/ });
  assert.throws(() => labelNames({ id2label: JSON.parse('{"__proto__": "a"}') }, 1), { code: 'BAD_CONFIG' });
  assert.throws(() => labelNames({ id2label: { 0: 5 } }, 1), { code: 'BAD_CONFIG', message: /id2label\["0"\] must be a string/ });
  assert.equal(defaultFunction({ problem_type: 'regression' }, 1), 'none');
  assert.throws(() => defaultFunction({ problem_type: 'ordinal' }, 2), { code: 'BAD_CONFIG', message: /problem_type/ });
});

test('the tokenizer view: clean-up as tokenizer_config says (never for BPE), tokens to string by the decoder alone', () => {
  assert.equal(
    cleanUpTokenization("a . b , c ' d is n't i 'm do not ? !"),
    "a. b, c'd isn't i'm do not?!",
    'no " do not" (that one is the Rust WordPiece decoder\'s)',
  );
  const bert = tokenizerView(Tokenizer.fromJSON(real.bertBaseUncased()), {
    tokenizerJson: real.bertBaseUncased(),
    tokenizerConfig: { clean_up_tokenization_spaces: true },
  });
  assert.equal(bert.cleanUp, true);
  assert.equal(bert.subwordPrefix, '##');
  assert.equal(bert.tokensToString(['hello', '##ing', ',', 'world']), 'helloing, world', 'the WordPiece decoder (its own cleanup)');
  const roberta = real.roberta({ merges: 100 });
  const rv = tokenizerView(Tokenizer.fromJSON(roberta), { tokenizerJson: JSON.stringify(roberta), tokenizerConfig: { clean_up_tokenization_spaces: true } });
  assert.equal(rv.cleanUp, false, 'BPE: TokenizersBackend._decode skips the clean-up');
  assert.equal(rv.subwordPrefix, null, 'an empty continuing_subword_prefix is none');
  const rvForced = tokenizerView(Tokenizer.fromJSON(roberta), {
    tokenizerJson: roberta,
    tokenizerConfig: { clean_up_tokenization_spaces: true, clean_up_tokenization_spaces_for_bpe_even_though_it_will_corrupt_output: true },
  });
  assert.equal(rvForced.cleanUp, true);
  const off = tokenizerView(Tokenizer.fromJSON(real.bertBaseUncased()), { tokenizerJson: real.bertBaseUncased() });
  assert.equal(off.cleanUp, false, 'absent: false (PreTrainedTokenizerBase)');
  // decode: the special tokens kept unless skipSpecialTokens (transformers' default); options as strict as the Tokenizer's
  const hello = bert.encode('hello').ids;
  assert.equal(bert.decode(hello), '[CLS] hello [SEP]');
  assert.equal(bert.decode(hello, { skipSpecialTokens: true }), 'hello');
  assert.throws(() => bert.decode(hello, { skipSpecial: true }), { code: 'BAD_ARGUMENT', message: /'skipSpecial'.*skipSpecialTokens/ });
  assert.throws(() => bert.decode(hello, null), { code: 'BAD_ARGUMENT', message: /decode: options must be an object/ });
  const tok = Tokenizer.fromJSON(roberta);
  assert.throws(() => tokenizerView(null, { tokenizerJson: roberta }), { code: 'BAD_ARGUMENT', message: /tokenizer must be a Tokenizer/ });
  assert.throws(() => tokenizerView(tok, { tokenizerJson: '{' }), { code: 'BAD_ARGUMENT', message: /tokenizerJson/ });
  assert.throws(() => tokenizerView(tok, { tokenizerJson: {}, tokenizerConfig: { clean_up_tokenization_spaces: 'yes' } }), {
    code: 'BAD_CONFIG',
    message: /clean_up_tokenization_spaces/,
  });
  // an encoding carrying the mask keeps it; one whose specials are not the tokenizer's is refused
  assert.deepEqual(
    bert.specialTokensMask({
      ids: [1, 2],
      offsets: [
        [0, 0],
        [0, 0],
      ],
      specialTokensMask: [0, 1],
    }),
    [0, 1],
  );
  assert.throws(() => bert.specialTokensMask({ ids: [7592], offsets: [[0, 5]] }), { code: 'BAD_ARGUMENT' });
});

// ------------------------------------------------------------------ options and arguments

const bad = (fn, field, code = 'BAD_ARGUMENT') =>
  assert.throws(fn, (e) => {
    assert.ok(e instanceof SwapformerError, `a SwapformerError, got ${e}`);
    assert.equal(e.code, code);
    assert.match(e.message, field instanceof RegExp ? field : new RegExp(field.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
    return true;
  });

test('options objects refuse unknown keys by name and bad values by field', () => {
  for (const [parse, where] of [
    [classifyOptions, 'classify'],
    [predictOptions, 'predict'],
    [rankOptions, 'rank'],
    [tokenClassificationOptions, 'classifyTokens'],
    [fillMaskOptions, 'fillMask'],
    [zeroShotOptions, 'zeroShot'],
  ]) {
    bad(() => parse({ top_k: 1 }), `${where}: options has an unknown option 'top_k'`);
    bad(() => parse('topK'), `${where}: options must be an object`);
    bad(() => parse([]), `${where}: options must be an object`);
    assert.doesNotThrow(() => parse(undefined));
    assert.doesNotThrow(() => parse({ [Object.keys(parse())[0]]: undefined }), 'an undefined option is absent');
  }
  assert.deepEqual(readOptions({ __proto__: { topK: 1 } }, ['x'], 'w'), {}, 'own keys only: an inherited key is not an option');
});

test('options: the values', () => {
  bad(() => classifyOptions({ topK: -1 }), 'options.topK');
  bad(() => classifyOptions({ topK: 1.5 }), 'options.topK');
  bad(() => classifyOptions({ topK: '3' }), 'options.topK');
  assert.equal(classifyOptions({ topK: null }).topK, null);
  bad(() => classifyOptions({ functionToApply: 'SOFTMAX' }), 'options.functionToApply');
  bad(() => predictOptions({ activation: 'relu' }), 'options.activation');
  bad(() => rankOptions({ returnDocuments: 1 }), 'options.returnDocuments');
  bad(() => rankOptions({ topK: -2 }), 'options.topK');
  bad(() => tokenClassificationOptions({ aggregationStrategy: 'mean' }), 'options.aggregationStrategy');
  bad(() => tokenClassificationOptions({ ignoreLabels: 'O' }), 'options.ignoreLabels');
  bad(() => tokenClassificationOptions({ ignoreLabels: [1] }), 'options.ignoreLabels');
  assert.equal(tokenClassificationOptions().aggregationStrategy, 'simple', "the default is 'simple'");
  bad(() => fillMaskOptions({ topK: null }), 'options.topK');
  bad(() => fillMaskOptions({ targets: [1] }), 'options.targets');
  bad(() => fillMaskOptions({ targets: {} }), 'options.targets');
  bad(() => zeroShotOptions({ multiLabel: 'yes' }), 'options.multiLabel');
  bad(() => zeroShotOptions({ hypothesisTemplate: 3 }), 'options.hypothesisTemplate');
});

test('inputs: classify, predict, rank and zero-shot labels', () => {
  assert.deepEqual(classificationInputs('a'), { items: [{ text: 'a' }], single: true });
  assert.deepEqual(classificationInputs({ text: 'a', textPair: 'b' }), { items: [{ text: 'a', textPair: 'b' }], single: true });
  assert.deepEqual(classificationInputs(['a', { text: 'b' }]), { items: [{ text: 'a' }, { text: 'b' }], single: false });
  bad(() => classificationInputs([]), 'inputs must not be empty');
  bad(() => classificationInputs(3), 'inputs must be a string');
  bad(() => classificationInputs([{ text: 'a', text_pair: 'b' }]), 'inputs[0]: unknown key "text_pair"');
  bad(() => classificationInputs({ text: 1 }), 'inputs.text');
  bad(() => classificationInputs({ text: 'a', textPair: null }), 'inputs.textPair');
  assert.deepEqual(crossEncoderPairs(['q', 'p']), { pairs: [['q', 'p']], single: true });
  assert.deepEqual(
    crossEncoderPairs([
      ['q', 'p'],
      ['q', 'r'],
    ]),
    {
      pairs: [
        ['q', 'p'],
        ['q', 'r'],
      ],
      single: false,
    },
  );
  assert.deepEqual(crossEncoderPairs([]), { pairs: [], single: false });
  bad(() => crossEncoderPairs([['q']]), 'pairs[0]');
  bad(() => crossEncoderPairs('q'), 'pairs must be an array');
  bad(() => rankInputs(1, []), 'query');
  bad(() => rankInputs('q', ['a', 2]), 'documents[1]');
  assert.deepEqual(candidateLabelList(' a, b ,,c '), ['a', 'b', 'c']);
  bad(() => candidateLabelList(', ,'), 'candidateLabels: at least one label');
  bad(() => candidateLabelList([1]), 'candidateLabels');
});

test('cross-encoder activation from the config: supported torch paths, others refused, non-torch paths ignored as ST does', () => {
  const st = (p) => ({ sentence_transformers: { activation_fn: p } });
  assert.equal(defaultActivation(st('torch.nn.modules.activation.Sigmoid'), 3), 'sigmoid');
  assert.equal(defaultActivation(st('torch.nn.modules.linear.Identity'), 1), 'none');
  assert.equal(defaultActivation(st('some.Custom'), 1), 'sigmoid', 'not torch.*: the default, as without trust_remote_code');
  assert.equal(defaultActivation({ sbert_ce_default_activation_function: 'torch.nn.Tanh' }, 1), 'tanh');
  assert.equal(defaultActivation({}, 2), 'none');
  bad(
    () => defaultActivation(st('torch.nn.modules.activation.ReLU'), 1),
    'config.sentence_transformers.activation_fn = "torch.nn.modules.activation.ReLU" is not supported',
    'UNSUPPORTED_MODEL',
  );
  bad(() => defaultActivation(st('torch.nn.modules.activation.Identity'), 1), 'is not supported', 'UNSUPPORTED_MODEL');
  bad(() => defaultActivation(st(5), 1), 'config.sentence_transformers.activation_fn must be a string', 'BAD_CONFIG');
  bad(() => rankResults(Float32Array.of(1, 2), [2, 1], ['a'], {}), 'logits: the shape must be [1, 1]');
});

test('logits: size, shape and finiteness are checked', () => {
  bad(() => classifyLogits(new Float32Array(5), [2, 3], {}), 'logits has 5 values, the shape [2, 3] needs 6');
  bad(() => classifyLogits(new Float32Array(6), [6], {}), 'logits: the shape must be [batch, labels]');
  bad(() => classifyLogits('x', [1, 1], {}), 'logits must be a Float32Array');
  bad(() => classifyLogits(Float32Array.of(0, NaN), [1, 2], {}), 'logits[1] is NaN', 'NON_FINITE');
  bad(() => crossEncoderScores(Float32Array.of(Infinity), [1, 1], {}), 'logits[0] is Infinity', 'NON_FINITE');
  bad(() => checkLogits([0, 'a'], [2]), 'logits[1] must be a number');
  bad(
    () => classifyLogits(new Float32Array(3), [1, 3], { id2label: { 0: 'a', 1: 'b' } }),
    'config.id2label has 2 labels, but the head has 3 outputs',
    'BAD_CONFIG',
  );
  bad(() => classifyLogits(new Float32Array(2), [1, 2], 'config'), 'config must be the parsed config.json object');
  bad(() => rankResults(new Float32Array(6), [2, 3], ['a', 'b'], {}), 'rank needs a cross-encoder with one label', 'UNSUPPORTED_MODEL');
});

test('token classification: the encoding, the shape and the text are checked', () => {
  const p = vectors.find((x) => x.id === 'tok/hf-example');
  const view = viewOf(p);
  const enc = view.encode(p.text);
  const { logits, shape } = logitsOf(p);
  bad(() => classifyTokenLogits(p.text, enc, logits, [shape[0] - 1, shape[1]], p.config, view), `logits: the shape must be [${shape[0]}, labels]`);
  bad(() => classifyTokenLogits(p.text, { ids: enc.ids }, logits, shape, p.config, view), 'encoding must have ids and one [start, end] offset per id');
  bad(() => classifyTokenLogits(5, enc, logits, shape, p.config, view), 'text must be a string');
  bad(
    () => classifyTokenLogits(p.text, { ids: enc.ids, offsets: enc.offsets.map((o, i) => (i === 3 ? [5, 2] : o)) }, logits, shape, p.config, view),
    'encoding.offsets[3] must be [start, end] within the text, got [5,2]',
  );
  bad(
    () => classifyTokenLogits(p.text, { ids: enc.ids, offsets: enc.offsets.map((o, i) => (i === 0 ? null : o)) }, logits, shape, p.config, view),
    'encoding.offsets[0]',
  );
  const ids = Array.from(enc.ids);
  ids[2] = 999999;
  bad(() => classifyTokenLogits(p.text, { ids, offsets: enc.offsets }, logits, shape, p.config, view), 'encoding.ids[2] = 999999 is not in the vocabulary');
  bad(() => classifyTokenLogits(p.text, enc, logits, shape, p.config, view, { aggregationStrategy: 'MAX' }), 'options.aggregationStrategy');
  // the default options are { aggregationStrategy: 'simple', ignoreLabels: ['O'] }
  assertClose(classifyTokenLogits(p.text, enc, logits, shape, p.config, view), p.expected, 'default options');
});

test('fill-mask: mask, targets and sizes are checked', () => {
  const p = vectors.find((x) => x.id === 'fm/bert-minilm/0/0');
  const view = viewOf(p);
  const enc = view.encode(p.text);
  const positions = maskPositions(enc.ids, view);
  const { logits, shape } = logitsOf(p);
  bad(() => maskPositions(view.encode('no mask').ids, view), 'text: no mask token ([MASK]) in the input');
  const t5 = viewOf({ tokenizer: { file: 'tests/pretrained/sentence-t5/tokenizer.json' } });
  bad(() => maskPositions(t5.encode('x').ids, t5), 'fillMask: the tokenizer defines no mask token', 'UNSUPPORTED_MODEL');
  bad(() => resolveTargets(['', ' '], view), 'options.targets: none of');
  assert.deepEqual(
    Array.from(resolveTargets(['world', 'hello', 'world', 'unaffable'], view)),
    [view.tokenToId('un'), view.tokenToId('hello'), view.tokenToId('world')].sort((a, b) => a - b),
  );
  bad(
    () => fillMaskResults(enc.ids, positions, logits, shape, view, { topK: shape[1] + 1 }),
    `options.topK = ${shape[1] + 1} is more than the vocabulary size ${shape[1]}`,
  );
  bad(() => fillMaskResults(enc.ids, [], logits, shape, view), 'positions must be the mask positions');
  bad(() => fillMaskResults('ids', positions, logits, shape, view), 'ids must be the token ids');
  bad(() => fillMaskResults(enc.ids, positions, logits, [2, shape[1] / 2], view), 'logits: the shape must be [1, vocabulary]');
  const documentId = view.tokenToId('document');
  assert.ok(documentId > 100);
  bad(
    () => fillMaskResults(enc.ids, positions, logits.subarray(0, 100), [1, 100], view, { targets: ['[MASK]', 'document'] }),
    `a target's id (${documentId}) is past the head's vocabulary (100)`,
  );
  assert.equal(fillMaskResults(enc.ids, positions, logits, shape, view, { targets: ['dog'], topK: 50 }).length, 1, 'topK capped at the targets');
});

test('zero-shot: templates, entailment id and shapes', () => {
  assert.deepEqual(hypotheses('{0} or {0}? {{x}}', ['a']), ['a or a? {x}']);
  assert.deepEqual(hypotheses('{{}}', ['a', 'b']), ['{}', '{}'], "formatting changes it ('{{}}' -> '{}'): accepted, as upstream");
  bad(() => hypotheses('none', ['a']), 'could not be formatted with the labels');
  bad(() => hypotheses('{:>5}', ['a']), 'not supported');
  bad(() => hypotheses('{!r}', ['a']), 'not supported');
  bad(() => hypotheses('{} {}', ['a']), 'a second "{}"');
  bad(() => hypotheses('{0} {}', ['a']), 'mix automatic and manual');
  bad(() => hypotheses('{} {0}', ['a']), 'mix automatic and manual');
  assert.equal(entailmentId({ label2id: { contradiction: 0, Entailment: 2 } }, 3), 2);
  assert.equal(entailmentId({ label2id: { a: 0, b: 1 } }, 2), -1);
  assert.equal(entailmentId({ id2label: { 0: 'x', 1: 'entailment' } }, 2), 1, 'label2id built from id2label when absent');
  bad(() => entailmentId({ label2id: { entailment: 3 } }, 3), 'config.label2id: the entailment id 3 is not an index', 'BAD_CONFIG');
  bad(() => entailmentId({ label2id: { entailment: '1' } }, 3), 'config.label2id: the entailment id "1"', 'BAD_CONFIG');
  bad(() => entailmentId({ label2id: [] }, 3), 'config.label2id must be an object', 'BAD_CONFIG');
  bad(() => zeroShotResult('t', ['a', 'b'], new Float32Array(3), [1, 3], {}), 'logits: the shape must be [2, labels]');
  bad(() => zeroShotResult('t', [], new Float32Array(0), [0, 3], {}), 'labels must be the candidate labels');
});

test('errors leave the functions usable', () => {
  const cfg = { id2label: { 0: 'a', 1: 'b' } };
  assert.throws(() => classifyLogits(Float32Array.of(NaN, 0), [1, 2], cfg));
  assert.deepEqual(
    classifyLogits(Float32Array.of(0, 0), [1, 2], cfg, { topK: null })[0].map((e) => e.label),
    ['a', 'b'],
  );
});
