#!/usr/bin/env node
// Mutation check of tests/tasks.test.js: puts one plausible bug at a time into
// bindings/tasks/*.js (one per upstream rule; question answering's windows in
// bindings/tokenizers/tokenizer.js), runs the test, records which
// tests fail, and restores the file. Every mutation must be caught.
//
// It edits bindings/tasks/ in place, so it runs only in a linked git worktree:
//
//   git worktree add /tmp/mut HEAD && cd /tmp/mut && ln -s /path/to/checkout/node_modules .
//   node tests/reference/task_mutations.mjs [--only id,id]
//   cd - && git worktree remove /tmp/mut --force
//
// Exit code 1 when a mutation is not caught, the unmutated test fails, or a
// mutation no longer applies (its text is not in the file exactly once).
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';

const T = (f) => `bindings/tasks/${f}.js`;
/** id, file, what (the rule it breaks), and [old, new] exact replacements. */
export const MUTATIONS = [
  // scores.js
  {
    id: 'softmax-unshifted',
    file: T('scores'),
    what: 'softmax without the max shift (overflows on large logits)',
    edits: [['Math.exp(logits[offset + i] - max)', 'Math.exp(logits[offset + i])']],
  },
  { id: 'sigmoid-sign', file: T('scores'), what: 'sigmoid of -x', edits: [['1 / (1 + Math.exp(-x))', '1 / (1 + Math.exp(x))']] },
  {
    id: 'ties-sort-reversed',
    file: T('scores'),
    what: 'equal scores in descending index order (full sort)',
    edits: [['scores[b] - scores[a] || a - b', 'scores[b] - scores[a] || b - a']],
  },
  {
    id: 'ties-buffer-late',
    file: T('scores'),
    what: 'the insertion buffer lets a later equal score in',
    edits: [
      ['!(s > scores[top[k - 1]])', '!(s >= scores[top[k - 1]])'],
      ['while (j > 0 && s > scores[top[j - 1]])', 'while (j > 0 && s >= scores[top[j - 1]])'],
    ],
  },
  { id: 'label-default-name', file: T('scores'), what: 'LABEL_i without id2label', edits: [['`LABEL_${i}`', '`LABEL${i}`']] },
  // text-classification.js
  {
    id: 'tc-regression',
    file: T('text-classification'),
    what: 'problem_type regression -> none',
    edits: [["if (problemType === 'regression') return 'none';", '']],
  },
  {
    id: 'tc-multi-label',
    file: T('text-classification'),
    what: 'multi_label_classification -> sigmoid',
    edits: [["problemType === 'multi_label_classification' || numLabels === 1", 'numLabels === 1']],
  },
  {
    id: 'tc-one-label',
    file: T('text-classification'),
    what: 'one label -> sigmoid',
    edits: [["problemType === 'multi_label_classification' || numLabels === 1", "problemType === 'multi_label_classification'"]],
  },
  {
    id: 'tc-function-option',
    file: T('text-classification'),
    what: 'options.functionToApply overrides the default',
    edits: [['const fn = functionToApply ?? defaultFunction(cfg, n);', 'const fn = defaultFunction(cfg, n);']],
  },
  {
    id: 'tc-topk-null',
    file: T('text-classification'),
    what: 'topK null: every label',
    edits: [['topK === null ? n : Math.min(topK, n)', 'topK === null ? 1 : Math.min(topK, n)']],
  },
  {
    id: 'tc-topk-default',
    file: T('text-classification'),
    what: 'topK default 1',
    edits: [['topK: o.topK === undefined ? 1 :', 'topK: o.topK === undefined ? null :']],
  },
  // cross-encoder.js
  {
    id: 'ce-default-one',
    file: T('cross-encoder'),
    what: 'no activation configured, one label: Sigmoid',
    edits: [["return named ?? (numLabels === 1 ? 'sigmoid' : 'none');", "return named ?? 'none';"]],
  },
  {
    id: 'ce-legacy-key',
    file: T('cross-encoder'),
    what: 'the legacy sbert_ce_default_activation_function',
    edits: [["} else if (own(cfg, 'sbert_ce_default_activation_function') != null) {", '} else if (false) {']],
  },
  {
    id: 'ce-not-torch',
    file: T('cross-encoder'),
    what: 'a non-torch path falls back to the default',
    edits: [["if (!path.startsWith('torch.')) return null;", '']],
  },
  {
    id: 'ce-softmax-rows',
    file: T('cross-encoder'),
    what: 'Softmax over each row (dim 1)',
    edits: [['out.set(softmax(logits, r * n, n), r * n)', 'out.set(softmax(logits, 0, n), r * n)']],
  },
  { id: 'ce-tanh', file: T('cross-encoder'), what: 'Tanh', edits: [["fn === 'tanh' ? Math.tanh(logits[i])", "fn === 'tanh' ? logits[i]"]] },
  {
    id: 'rank-ties',
    file: T('cross-encoder'),
    what: 'rank: equal scores in corpus order',
    edits: [['scores[b] - scores[a] || a - b);\n  return order', 'scores[b] - scores[a] || b - a);\n  return order']],
  },
  { id: 'rank-topk', file: T('cross-encoder'), what: 'rank: the first topK', edits: [['order.slice(0, topK ?? order.length)', 'order']] },
  { id: 'rank-text', file: T('cross-encoder'), what: 'rank: text with returnDocuments', edits: [['(returnDocuments ? {', '(false ? {']] },
  // token-classification.js
  { id: 'tok-special', file: T('token-classification'), what: 'special tokens skipped', edits: [['if (mask[idx]) continue;', '']] },
  {
    id: 'tok-subword-utf16',
    file: T('token-classification'),
    what: 'is_subword compares Python lengths (code points)',
    edits: [['pyLen(word) !== pyLen(ref)', 'word.length !== ref.length']],
  },
  {
    id: 'tok-subword-prefix',
    file: T('token-classification'),
    what: 'is_subword by length only with a continuing_subword_prefix',
    edits: [['let isSubword = view.subwordPrefix\n', 'let isSubword = true\n']],
  },
  {
    id: 'tok-subword-space-after',
    file: T('token-classification'),
    what: 'fallback: " " not in text[start-1:start+1] (not only the char before)',
    edits: [[" && text[start] !== ' ';", ';']],
  },
  {
    id: 'tok-unk-word',
    file: T('token-classification'),
    what: 'an unknown token is its text',
    edits: [['{ word = ref; isSubword = false; }', '{ isSubword = false; }']],
  },
  {
    id: 'tok-unk-subword',
    file: T('token-classification'),
    what: 'an unknown token starts a word',
    edits: [['{ word = ref; isSubword = false; }', '{ word = ref; }']],
  },
  {
    id: 'tok-argmax-last',
    file: T('token-classification'),
    what: 'argmax: the first of equal maxima',
    edits: [['if (v[i] > v[best]) best = i;', 'if (v[i] >= v[best]) best = i;']],
  },
  {
    id: 'tok-first',
    file: T('token-classification'),
    what: 'first: the first token of the word',
    edits: [['let scores = tokens[0].scores;', 'let scores = tokens[tokens.length - 1].scores;']],
  },
  {
    id: 'tok-max-first',
    file: T('token-classification'),
    what: 'max: the first token with the largest score',
    edits: [['if (m > bestMax) { best = i;', 'if (m >= bestMax) { best = i;']],
  },
  {
    id: 'tok-average',
    file: T('token-classification'),
    what: "average: the mean of the word's scores",
    edits: [['for (let i = 0; i < scores.length; i++) scores[i] /= tokens.length;', 'for (let i = 0; i < scores.length; i++) scores[i] /= tokens.length + 1;']],
  },
  {
    id: 'tok-word-start',
    file: T('token-classification'),
    what: 'aggregate_words: a sub-word joins the word',
    edits: [['if (group !== null && e.isSubword)', 'if (group !== null && !e.isSubword)']],
  },
  {
    id: 'tok-word-string',
    file: T('token-classification'),
    what: 'a word is convert_tokens_to_string of its tokens',
    edits: [['const word = view.tokensToString(tokens.map((t) => t.word));', "const word = tokens.map((t) => t.word).join('');"]],
  },
  {
    id: 'tok-b-splits',
    file: T('token-classification'),
    what: 'a B- tag starts a new group',
    edits: [["if (t === lastTag && bi !== 'B')", 'if (t === lastTag)']],
  },
  {
    id: 'tok-i-tag',
    file: T('token-classification'),
    what: 'get_tag: I-X is (I, X)',
    edits: [["if (label.startsWith('I-')) return ['I', label.slice(2)];", '']],
  },
  {
    id: 'tok-group-name',
    file: T('token-classification'),
    what: 'entity_group: the label after its first "-"',
    edits: [["label.indexOf('-')", "label.lastIndexOf('-')"]],
  },
  {
    id: 'tok-group-score',
    file: T('token-classification'),
    what: "a group's score: the mean",
    edits: [['score: sum / entities.length,', 'score: entities[0].score,']],
  },
  {
    id: 'tok-group-word',
    file: T('token-classification'),
    what: "a group's word: convert_tokens_to_string",
    edits: [['word: view.tokensToString(entities.map((e) => e.word)),', "word: entities.map((e) => e.word).join(' '),"]],
  },
  {
    id: 'tok-ignore-group',
    file: T('token-classification'),
    what: 'ignore_labels against the group name',
    edits: [["strategy === 'none' ? e.entity : e.entityGroup", 'e.entity']],
  },
  {
    id: 'tok-simple-groups',
    file: T('token-classification'),
    what: 'simple groups (none does not)',
    edits: [
      [
        "if (strategy !== 'none') entities = groupEntities(entities, view);",
        "if (strategy !== 'none' && strategy !== 'simple') entities = groupEntities(entities, view);",
      ],
    ],
  },
  {
    id: 'tok-default-simple',
    file: T('token-classification'),
    what: "the default strategy is 'simple'",
    edits: [["o.aggregationStrategy === undefined ? 'simple'", "o.aggregationStrategy === undefined ? 'none'"]],
  },
  // fill-mask.js
  {
    id: 'fm-skip-special',
    file: T('fill-mask'),
    what: 'sequence: special tokens skipped only for one mask',
    edits: [['{ skipSpecialTokens: single }', '{ skipSpecialTokens: true }']],
  },
  { id: 'fm-pad', file: T('fill-mask'), what: 'sequence: pad ids removed', edits: [['filled.filter((id) => id !== pad)', 'filled']] },
  {
    id: 'fm-token-str',
    file: T('fill-mask'),
    what: 'token_str = decode([id])',
    edits: [['tokenStr: view.decode([token]),', 'tokenStr: view.idToToken(token),']],
  },
  {
    id: 'fm-renormalise',
    file: T('fill-mask'),
    what: 'target scores not renormalised',
    edits: [['Float64Array.from(targetIds, (id) => probs[id])', 'softmax(Float64Array.from(targetIds, (id) => logits[r * vocab + id]))']],
  },
  { id: 'fm-target-first-id', file: T('fill-mask'), what: 'an unknown target: the first id of its tokenization', edits: [['.ids[0];', '.ids.at(-1);']] },
  {
    id: 'fm-target-vocab-first',
    file: T('fill-mask'),
    what: 'a target in the vocabulary is its id (not its tokenization)',
    edits: [['view.tokenToId(t) ?? view.encode', 'view.encode']],
  },
  { id: 'fm-one-array', file: T('fill-mask'), what: 'one mask: one array', edits: [['return single ? rows[0] : rows;', 'return rows;']] },
  {
    id: 'fm-fill-this-mask',
    file: T('fill-mask'),
    what: 'sequence: only this mask filled',
    edits: [['filled[pos] = token;', 'for (const q of positions) filled[q] = token;']],
  },
  // tokenizer-view.js
  {
    id: 'view-cleanup',
    file: T('tokenizer-view'),
    what: 'decode cleans up when the config says so',
    edits: [['return cleanUp ? cleanUpTokenization(text) : text;', 'return text;']],
  },
  { id: 'view-cleanup-bpe', file: T('tokenizer-view'), what: 'no clean-up for a BPE model', edits: [["&& (own(model, 'type') !== 'BPE' ||", '&& (true ||']] },
  {
    id: 'view-mask-first',
    file: T('tokenizer-view'),
    what: "the special-tokens mask: the post-processor's tokens",
    edits: [['(i < k || i >= m - n + k ? 1 : 0)', '(i === 0 || i === m - 1 ? 1 : 0)']],
  },
  {
    id: 'view-bpe-prefix',
    file: T('tokenizer-view'),
    what: "a BPE's continuing_subword_prefix counts",
    edits: [["if (type === 'BPE') return typeof prefix === 'string' && prefix !== '' ? prefix : null;", '']],
  },
  {
    id: 'view-decoder',
    file: T('tokenizer-view'),
    what: 'convert_tokens_to_string is the decoder',
    edits: [
      ["tokensToString: (tokens) => (decoder ? decoder.decodeChain(tokens).join('') : tokens.join(' ')),", "tokensToString: (tokens) => tokens.join(' '),"],
    ],
  },
  // zero-shot.js
  { id: 'zs-contradiction', file: T('zero-shot'), what: 'contradiction id -1 when entailment is 0', edits: [['at(entail === 0 ? -1 : 0, l)', 'at(0, l)']] },
  { id: 'zs-one-label', file: T('zero-shot'), what: 'one label: the two-way softmax', edits: [['if (multiLabel || n === 1) {', 'if (multiLabel) {']] },
  { id: 'zs-entail-default', file: T('zero-shot'), what: 'no entailment label: -1 (the last)', edits: [['let id = -1;', 'let id = 0;']] },
  {
    id: 'zs-entail-prefix',
    file: T('zero-shot'),
    what: 'entailment: lowercase starts with "entail"',
    edits: [[".toLowerCase().startsWith('entail')", " === 'entailment'"]],
  },
  {
    id: 'zs-split-trim',
    file: T('zero-shot'),
    what: 'string labels: stripped, empty ones dropped',
    edits: [[".map((l) => l.trim()).filter((l) => l !== '')", '']],
  },
  {
    id: 'zs-template-check',
    file: T('zero-shot'),
    what: 'a template formatting leaves unchanged is refused',
    edits: [['if (formatTemplate(template, labels[0]) === template) {', 'if (false) {']],
  },
  {
    id: 'zs-braces',
    file: T('zero-shot'),
    what: '"{{" / "}}" are braces',
    edits: [["if (c === '{' && template[i + 1] === '{') { out += '{'; i++; continue; }", '']],
  },
  {
    id: 'zs-single-softmax',
    file: T('zero-shot'),
    what: 'single-label: the softmax of the entailment logits across the labels',
    edits: [
      [
        'scores = softmax(Float64Array.from({ length: n }, (_, r) => logits[r * l + e]));',
        'scores = Float64Array.from({ length: n }, (_, r) => 1 / (1 + Math.exp(-logits[r * l + e])));',
      ],
    ],
  },
  {
    id: 'zs-ties',
    file: T('zero-shot'),
    what: 'equal scores in label order',
    edits: [['const order = topIndices(scores, n);', 'const order = topIndices(scores, n).reverse().sort((a, b) => scores[b] - scores[a]);']],
  },
  // question-answering.js (and the windows of tokenizers/tokenizer.js)
  {
    id: 'qa-cls-masked',
    file: T('question-answering'),
    what: 'p_mask keeps [CLS] masked (the null answer never scores)',
    edits: [[' || (clsTokenId !== null && w.ids[t] === clsTokenId)', '']],
  },
  {
    id: 'qa-question-masked',
    file: T('question-answering'),
    what: 'the question masked when the context comes first too',
    edits: [['!questionFirst || w.sequenceIds[t] === 1', 'w.sequenceIds[t] === (questionFirst ? 1 : 0)']],
  },
  { id: 'qa-mask-value', file: T('question-answering'), what: 'masked logits -10 instead of -10000', edits: [[': -10000))', ': -10))']] },
  { id: 'qa-cls-not-zeroed', file: T('question-answering'), what: 'position 0 not zeroed after the null score', edits: [['ps[0] = pe[0] = 0;', '']] },
  { id: 'qa-null-max', file: T('question-answering'), what: 'the null score the largest of the windows', edits: [['Math.min(minNull', 'Math.max(minNull']] },
  { id: 'qa-answer-len', file: T('question-answering'), what: 'spans of maxAnswerLen + 1 tokens', edits: [['j < i + maxAnswerLen', 'j <= i + maxAnswerLen']] },
  {
    id: 'qa-candidates',
    file: T('question-answering'),
    what: 'topK * 2 candidates instead of topK * 2 + 10',
    edits: [['alignToWords ? topK * 2 + 10 : topK', 'alignToWords ? topK * 2 : topK']],
  },
  { id: 'qa-isin-quirk', file: T('question-answering'), what: 'index 0 filtered as the other masked tokens', edits: [[' || (t === 0 && any)', '']] },
  {
    id: 'qa-span-ties',
    file: T('question-answering'),
    what: 'equal span scores by the higher flat index',
    edits: [['a[0] * T + a[1] - (b[0] * T + b[1])', 'b[0] * T + b[1] - (a[0] * T + a[1])']],
  },
  { id: 'qa-word-end', file: T('question-answering'), what: "the span ends at the start word's end", edits: [['span = [a[0], b[1]]', 'span = [a[0], a[1]]']] },
  {
    id: 'qa-word-seq',
    file: T('question-answering'),
    what: "word_to_chars in the other sequence's words",
    edits: [['const seq = questionFirst ? 1 : 0;', 'const seq = questionFirst ? 0 : 1;']],
  },
  {
    id: 'qa-merge-case',
    file: T('question-answering'),
    what: 'answers merged only when the case matches too',
    edits: [['a.answer.toLowerCase() === text.toLowerCase()', 'a.answer === text']],
  },
  {
    id: 'qa-merge-max',
    file: T('question-answering'),
    what: 'a merged answer keeps the larger score instead of the sum',
    edits: [['same.score += score', 'same.score = Math.max(same.score, score)']],
  },
  {
    id: 'qa-window-step',
    file: 'bindings/tokenizers/tokenizer.js',
    what: 'windows step one token too far (the stride one short)',
    edits: [['start += room - stride)', 'start += room - stride + 1)']],
  },
  {
    id: 'qa-window-end',
    file: 'bindings/tokenizers/tokenizer.js',
    what: "the last window stops once the stride covers the context's end",
    edits: [['if (stop === n) break;', 'if (stop + stride >= n) break;']],
  },
  {
    id: 'qa-window-fits',
    file: 'bindings/tokenizers/tokenizer.js',
    what: 'a context that fits exactly is split',
    edits: [['if (n + other.ids.length + added <= maxLength)', 'if (n + other.ids.length + added < maxLength)']],
  },
];

const sh = (cmd, args, opts = {}) => spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 1 << 28, ...opts });
const gitDir = sh('git', ['rev-parse', '--absolute-git-dir']).stdout.trim();
const commonDir = resolve(sh('git', ['rev-parse', '--git-common-dir']).stdout.trim());
if (!gitDir || gitDir === commonDir) {
  console.error('task_mutations.mjs edits bindings/tasks/: run it in a linked worktree (git worktree add /tmp/mut HEAD), not in the main checkout');
  process.exit(1);
}
const onlyArg = process.argv.indexOf('--only');
const only = onlyArg > 0 ? process.argv[onlyArg + 1].split(',') : null;

function runTest() {
  const r = sh(process.execPath, ['--test', '--test-reporter=tap', 'tests/tasks.test.js'], { timeout: 300_000 });
  const failed = [...r.stdout.matchAll(/^not ok \d+ - (.*)$/gm)].map((m) => m[1]);
  return { status: r.status, failed };
}

const selected = MUTATIONS.filter((m) => !only || only.includes(m.id));
const originals = new Map();
for (const m of selected) if (!originals.has(m.file)) originals.set(m.file, readFileSync(m.file, 'utf8'));
for (const m of selected) {
  const src = originals.get(m.file);
  for (const [from] of m.edits) {
    const n = src.split(from).length - 1;
    if (n !== 1) {
      console.error(`${m.id}: '${from.slice(0, 70)}' occurs ${n} times in ${m.file}: update the mutation`);
      process.exit(1);
    }
  }
}
const restore = () => {
  for (const [f, s] of originals) writeFileSync(f, s);
};
process.on('SIGINT', () => {
  restore();
  process.exit(130);
});

const base = runTest();
if (base.status !== 0) {
  console.error(`the unmutated test fails: ${base.failed.join('; ')}`);
  process.exit(1);
}
let missed = 0;
try {
  for (const m of selected) {
    let src = originals.get(m.file);
    for (const [from, to] of m.edits) src = src.replace(from, () => to);
    writeFileSync(m.file, src);
    const r = runTest();
    restore();
    const caught = r.status !== 0;
    if (!caught) missed++;
    console.log(`${caught ? 'caught' : 'MISSED'}  ${m.id.padEnd(24)} ${m.what}${caught ? `  <- ${r.failed.join(' | ').slice(0, 160)}` : ''}`);
  }
} finally {
  restore();
}
console.log(`${selected.length - missed}/${selected.length} mutations caught`);
process.exit(missed ? 1 : 0);
