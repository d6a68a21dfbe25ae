#!/usr/bin/env node
// Mutation check of tests/heads.test.js: puts one plausible bug at a time into
// the heads, MPNet, the task glue, withConfig, the length rules or the
// converter (C or JS), rebuilds the wasm when the file is C, runs
// tests/heads.test.js, records which tests fail, and restores the file. Every
// mutation must be caught.
//
// It edits core/, plugins/ and bindings/ in place, so it runs only in a linked
// git worktree (about 10 minutes: a C mutation rebuilds all four wasm files):
//
//   git worktree add /tmp/mut HEAD && cd /tmp/mut && ln -s /path/to/checkout/node_modules .
//   node tests/reference/heads_mutations.mjs [--only id,id]
//   cd - && git worktree remove /tmp/mut --force
//
// Exit code 1 when a mutation is not caught, the unmutated test fails, or a
// mutation no longer applies (its text is not in the file exactly once).
import { runMutations } from './mutation_harness.mjs';

/** id, file, what, and [old, new] exact replacements (each old text once in the file). */
export const MUTATIONS = [
  // core/heads.c
  {
    id: 'seq-tanh-identity',
    file: 'core/heads.c',
    what: 'the head activation tanh run as the identity (BERT pooler, RoBERTa / MPNet classifier)',
    edits: [['if (h->activation == SF_HEAD_ACT_TANH) tanh_forward(y, (size_t)M * C);', 'if (h->activation == SF_HEAD_ACT_TANH) (void)tanh_forward;']],
  },
  {
    id: 'mean-pool-row',
    file: 'core/heads.c',
    what: 'mean pooling one row short (the last real row left out, still / n)',
    edits: [['for (int t = 0; t < n; t++) s += x[(size_t)t * C + k];', 'for (int t = 0; t < n - 1; t++) s += x[(size_t)t * C + k];']],
  },
  {
    id: 'tied-bias-dropped',
    file: 'core/heads.c',
    what: "the tied decoder's bias dropped (f32)",
    edits: [['e->tokens, (size_t)W, e->head_out_b, j->M, W, v0, v1);', 'e->tokens, (size_t)W, NULL, j->M, W, v0, v1);']],
  },
  {
    id: 'q8-tied-scale',
    file: 'core/heads.c',
    what: "the q8 tied decoder without its rows' scales",
    edits: [['out[(size_t)m * ldo + n] = r[0] * dot_i8_forward(', 'out[(size_t)m * ldo + n] = dot_i8_forward(']],
  },
  {
    id: 'q8-tied-bias',
    file: 'core/heads.c',
    what: "the q8 tied decoder's bias dropped",
    edits: [['e->tokens, sf_q8_row_floats(W), e->head_out_b, j->M, W, v0, v1);', 'e->tokens, sf_q8_row_floats(W), NULL, j->M, W, v0, v1);']],
  },
  {
    id: 'token-head-rows',
    file: 'core/heads.c',
    what: "the token head reads sequence 0's rows for every sequence",
    edits: [['e->out + ((size_t)b * T + t) * C, (size_t)C, M);', 'e->out + ((size_t)t) * C, (size_t)C, M);']],
  },
  {
    id: 'mlm-head-rows',
    file: 'core/heads.c',
    what: "the mlm head runs every chosen row at the chunk's first position",
    edits: [['e->out + (size_t)e->head_rows[r0 + m] * C', 'e->out + (size_t)e->head_rows[r0] * C']],
  },
  {
    id: 'token-out-chunk',
    file: 'core/heads.c',
    what: "the token head writes each 64-token chunk's logits at the sequence's first rows (NER wrong from token 65 on)",
    edits: [['head_rows_forward(e, e->head_out + ((size_t)b * T + t) * L,', 'head_rows_forward(e, e->head_out + ((size_t)b * T) * L,']],
  },
  {
    id: 'mlm-out-chunk',
    file: 'core/heads.c',
    what: 'the mlm head writes each chunk of 64 mask rows at the first rows',
    edits: [['head_rows_forward(e, e->head_out + (size_t)r0 * L, e->head_in', 'head_rows_forward(e, e->head_out, e->head_in']],
  },
  {
    id: 'seq-out-chunk',
    file: 'core/heads.c',
    what: 'the sequence head writes each chunk of 64 sequences at the first rows',
    edits: [['head_rows_forward(e, e->head_out + (size_t)b0 * L, e->head_in', 'head_rows_forward(e, e->head_out, e->head_in']],
  },
  {
    id: 'mean-pool-64',
    file: 'core/heads.c',
    what: "mean pooling over a sequence's first 64 rows only",
    edits: [['for (int t = 0; t < n; t++) s += x[(size_t)t * C + k];', 'for (int t = 0; t < (n < 64 ? n : 64); t++) s += x[(size_t)t * C + k];']],
  },
  {
    id: 'vocab-split',
    file: 'core/heads.c',
    what: 'the tied projection split between threads leaves the last column of each task but the last (with workers only)',
    edits: [['v1 = (int)((long long)j->V * (t + 1) / n);', 'v1 = (int)((long long)j->V * (t + 1) / n) - (n > 4 && t + 1 < n);']],
  },
  // MPNet: the relative bias
  {
    id: 'bucket-sign',
    file: 'plugins/position/t5.c',
    what: "the bucket's direction flipped (keys before the query in the upper half)",
    edits: [['int n = d < 0 ? -d : d, b = d > 0 ? half : 0;', 'int n = d < 0 ? -d : d, b = d < 0 ? half : 0;']],
  },
  {
    id: 'relbias-layer0',
    file: 'core/encoder.c',
    what: 'relativeBias applied in layer 0 only',
    edits: [
      [
        'score_biases sb = {ctx, c->bias ? bias_ctx(e, l, L) : (sf_pos_ctx){0}};',
        'score_biases sb = {ctx, c->bias && l == 0 ? bias_ctx(e, l, L) : (sf_pos_ctx){0}};',
      ],
    ],
  },
  {
    id: 'mpnet-offset',
    file: 'bindings/pretrained/families.js',
    what: "MPNet's positions from 0 (not padding_idx + 1 = 2)",
    edits: [['        positionOptions: { offset: 2 },\n        relativeBias', '        positionOptions: { offset: 0 },\n        relativeBias']],
  },
  // heads.js
  {
    id: 'roberta-lm-gelu-tanh',
    file: 'bindings/pretrained/heads.js',
    what: "RoBERTa / MPNet LM head's erf GELU as the tanh form",
    edits: [
      [
        "config: (hf) => ({ dense: true, activation: 'gelu', norm: 'layernorm', normEps: num(hf, 'layer_norm_eps', 1e-12) }), // erf",
        "config: (hf) => ({ dense: true, activation: 'gelu_tanh', norm: 'layernorm', normEps: num(hf, 'layer_norm_eps', 1e-12) }), // erf",
      ],
    ],
  },
  {
    id: 'distilbert-pre-relu',
    file: 'bindings/pretrained/heads.js',
    what: "DistilBERT's pre_classifier ReLU as GELU",
    edits: [["config: () => ({ dense: true, activation: 'relu' })", "config: () => ({ dense: true, activation: 'gelu' })"]],
  },
  {
    id: 'modernbert-pooling',
    file: 'bindings/pretrained/heads.js',
    what: "ModernBERT's classifier_pooling ignored (cls always)",
    edits: [['return { ...modernbertHead(hf), pooling };', "return { ...modernbertHead(hf), pooling: 'cls' };"]],
  },
  // the embedding recipe's mean pooling (mpnet-embed)
  {
    id: 'recipe-mean',
    file: 'bindings/pretrained/recipe.js',
    what: "the recipe's mean pooling over one row fewer",
    edits: [['for (let t = from; t < to; t++) {\n          const w =', 'for (let t = from; t < to - 1; t++) {\n          const w =']],
  },
  // the task glue and Pretrained
  {
    id: 'types-dropped',
    file: 'bindings/pretrained/task-runs.js',
    what: 'the tasks pass no token types (BERT pairs as one segment)',
    edits: [['if (typeVocabSize > 1) options.typeIds = batch.map((e) => e.typeIds);', '']],
  },
  {
    id: 'zero-shot-longest-first',
    file: 'bindings/pretrained/task-runs.js',
    what: 'zeroShot truncates longest first (the hypothesis cut too)',
    edits: [["maxLength: limit(model), truncation: 'only_first' }));", 'maxLength: limit(model) }));']],
  },
  {
    id: 'only-first-ignored',
    file: 'bindings/tokenizers/tokenizer.js',
    what: "the tokenizer ignores truncation 'only_first'",
    edits: [
      ["(truncation === 'only_first' ? truncateOnlyFirst : truncateLongestFirst)(a, b, maxLength - added)", 'truncateLongestFirst(a, b, maxLength - added)'],
    ],
  },
  {
    id: 'async-no-types',
    file: 'bindings/pretrained/pretrained.js',
    what: 'the async twins lose the token types',
    edits: [
      [
        'runAsync(run, async (ids, opts) => (await forward(ids, opts)).result)',
        'runAsync(run, async (ids, opts) => (await forward(ids, { ...opts, typeIds: undefined })).result)',
      ],
    ],
  },
  {
    id: 'labels-default',
    file: 'bindings/pretrained/pretrained.js',
    what: '.labels without config.json (LABEL_i)',
    edits: [['labelNames(this.hfConfig ?? {}, head.labels)', 'labelNames({}, head.labels)']],
  },
  {
    id: 'labels-unchecked',
    file: 'bindings/pretrained/pretrained.js',
    what: "config.json's id2label not checked against the classifier at load",
    edits: [['    checkLabels(m.hfConfig, encoder.config.head, label);\n', '']],
  },
  {
    id: 'swapped-limit',
    file: 'bindings/pretrained/pretrained.js',
    what: "a swapped model keeps the checkpoint's limits",
    edits: [['return this.#swapped ? plugin : smallest(...this.#checkpointLimits, plugin);', 'return smallest(...this.#checkpointLimits, plugin);']],
  },
  {
    id: 'max-length-lowered',
    file: 'bindings/pretrained/pretrained.js',
    what: "maxLength past the plugin's limit silently lowered to it",
    edits: [["if (n > plugin) fail('SEQUENCE_TOO_LONG',", "if (n > plugin) return plugin; if (0) fail('SEQUENCE_TOO_LONG',"]],
  },
  {
    id: 'withconfig-keeps-scheme',
    file: 'bindings/pretrained/pretrained.js',
    what: 'withConfig keeps the swapped-out scheme and its table (the old config wins the merge)',
    edits: [['const config = { ...before, ...changes };', 'const config = { ...changes, ...before };']],
  },
  {
    id: 'new-table-seeded',
    file: 'bindings/runtime/encoder.js',
    what: "a new plugin's table seeded instead of zero",
    edits: [['if (x.sf_param_plugin(h, i)) { // zeros past the old table', 'if (x.sf_param_plugin(h, i) && data) { // zeros past the old table']],
  },
  {
    id: 'converter-drops-head',
    file: 'bin/swapformer.js',
    what: 'the converter writes the encoder without its head',
    edits: [
      [
        'writeModelFile(ck.config, ck.tensors, ck.metadata, args.dtype)',
        "writeModelFile({ ...ck.config, head: null }, ck.tensors.filter((t) => !t.name.startsWith('head.')), ck.metadata, args.dtype)",
      ],
    ],
  },
];

runMutations(MUTATIONS, { script: 'heads_mutations.mjs', tests: ['tests/heads.test.js'] });
