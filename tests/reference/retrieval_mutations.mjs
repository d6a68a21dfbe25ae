#!/usr/bin/env node
// Mutation check of tests/retrieval.test.js and tests/torch-pt.test.js: puts
// one plausible bug at a time into SPLADE's pooling, the ColBERT and bge-m3
// heads, attention lengths, sparse rows and search, MaxSim (C: the four wasm
// files rebuilt), the PyLate, ColBERT and bge-m3 encodings, the Dense fold or
// the .pt reader (JS), runs both suites on the wasm backend, records which
// tests fail, and restores the file. Every mutation must be caught.
//
// It edits core/ and bindings/ in place, so it runs only in a linked git
// worktree (a C mutation rebuilds all four wasm files: minutes each):
//
//   git worktree add /tmp/mut HEAD && cd /tmp/mut && ln -s /path/to/checkout/node_modules .
//   node tests/reference/retrieval_mutations.mjs [--only id,id]
//   cd - && git worktree remove /tmp/mut --force
//
// Exit code 1 when a mutation is not caught, the unmutated tests fail, or a
// mutation no longer applies (its text is not in the file exactly once).
import { runMutations } from './mutation_harness.mjs';

const RUN = 'bindings/pretrained/retrieval-run.js';

/** id, file, what, and [old, new] exact replacements (each old text once in the file). */
export const MUTATIONS = [
  // core/heads.c: SPLADE's pooling and the ColBERT rows
  { id: 'splade-no-log1p', file: 'core/heads.c', what: "SPLADE's activation relu alone (no log1p)", edits: [['    x = sf_log1p(x);\n', '']] },
  {
    id: 'splade-first-chunk',
    file: 'core/heads.c',
    what: "every chunk of a text pooled from the first chunk's rows",
    edits: [['const float *rows = e->out + ((size_t)b * T + t) * C;', 'const float *rows = e->out + ((size_t)b * T) * C;']],
  },
  {
    id: 'splade-min',
    file: 'core/heads.c',
    what: 'the min over tokens instead of the max',
    edits: [['v > acc || v != v ? v : acc', 'v < acc || v != v ? v : acc']],
  },
  {
    id: 'splade-bias-dropped',
    file: 'core/heads.c',
    what: "the tied projection's bias left out of the pooled logits",
    edits: [['bias = gemm && e->head_out_b ? e->head_out_b[n] : 0.0f', 'bias = 0.0f']],
  },
  {
    id: 'colbert-unnormalised',
    file: 'core/heads.c',
    what: 'ColBERT rows not L2-normalised',
    edits: [['for (int i = k; i < L; i++) r[i] *= inv;', '(void)inv;']],
  },
  {
    id: 'm3-weight-normalised',
    file: 'core/heads.c',
    what: "bge-m3's token weight column normalised with the ColBERT vector",
    edits: [['int k = token_weights ? 1 : 0;', 'int k = 0 * token_weights;']],
  },
  // core/encoder.c: attention lengths
  {
    id: 'attention-lengths-ignored',
    file: 'core/encoder.c',
    what: 'every key attended whatever attentionLengths says',
    edits: [['K = e->att_lens[b] ? e->att_lens[b] : L;', 'K = L;']],
  },
  // core/retrieval.c
  {
    id: 'sparse-topk-ties',
    file: 'core/retrieval.c',
    what: 'top-k keeps a later index among equal |values|',
    edits: [['(fabsf(r[v]) == worst && v <= last)', '(fabsf(r[v]) == worst && v >= last)']],
  },
  {
    id: 'sparse-search-scratch',
    file: 'core/retrieval.c',
    what: 'the dense scratch not cleared after a query (the next query adds to it)',
    edits: [['for (int j = qoff[m]; j < qoff[m + 1]; j++) dense[qidx[j]] = 0;', '']],
  },
  {
    id: 'maxsim-zero-floor',
    file: 'core/retrieval.c',
    what: "MaxSim's max starts at 0 (as zero-padded documents score)",
    edits: [['for (int i = 0; i < nq; i++) best[i] = -INFINITY;', 'for (int i = 0; i < nq; i++) best[i] = 0;']],
  },
  {
    id: 'maxsim-first-block',
    file: 'core/retrieval.c',
    what: "a document's rows past the first 64 left out",
    edits: [['r < doff[c + 1]; r += MAXSIM_ROWS)', 'r < doff[c + 1] && r < doff[c] + MAXSIM_ROWS; r += MAXSIM_ROWS)']],
  },
  // bindings/pretrained/retrieval-run.js
  { id: 'colbert-skiplist', file: RUN, what: "documents keep the skiplist's tokens", edits: [['(isQuery || !c.skiplist.has(ids[t]))', 'true']] },
  {
    id: 'colbert-expansion-attended',
    file: RUN,
    what: 'expansion tokens always attended',
    edits: [['const attend = isQuery && c.attendToExpansionTokens ? ids.length : real;', 'const attend = ids.length;']],
  },
  {
    id: 'colbert-prefix-first',
    file: RUN,
    what: 'the query / document marker before [CLS] instead of after it',
    edits: [
      ['ids = [ids[0], prefix, ...ids.slice(1)];', 'ids = [prefix, ...ids];'],
      ['types = [types[0], 0, ...types.slice(1)];', 'types = [0, ...types];'],
    ],
  },
  {
    id: 'colbert-no-expansion',
    file: RUN,
    what: 'queries not padded with the mask token',
    edits: [['if (expand) while (ids.length < max)', 'if (false) while (ids.length < max)']],
  },
  {
    id: 'm3-specials-kept',
    file: RUN,
    what: "bge-m3's lexical weights keep the special tokens",
    edits: [['if (unused.has(id) || !(w > 0)) return;', 'if (!(w > 0)) return;']],
  },
  {
    id: 'm3-lexical-last',
    file: RUN,
    what: "a token id's lexical weight the last occurrence's, not the largest",
    edits: [['if (!best.has(id) || w > best.get(id)) best.set(id, w);', 'best.set(id, w);']],
  },
  { id: 'm3-colbert-sum', file: RUN, what: "bge-m3's ColBERT score not divided by the query's tokens", edits: [['.map((x) => x / nq)', '']] },
  {
    id: 'm3-cls-vector',
    file: RUN,
    what: "bge-m3's ColBERT vectors from CLS on (one too many, the last dropped)",
    edits: [['for (let t = 1; t <= n; t++) v.set(row(t).subarray(1), (t - 1) * d);', 'for (let t = 0; t < n; t++) v.set(row(t).subarray(1), t * d);']],
  },
  // bindings/pretrained/retrieval.js, torch-pt.js
  {
    id: 'dense-residual',
    file: 'bindings/pretrained/retrieval.js',
    what: "PyLate Dense's use_residual ignored",
    edits: [['if (inF === outF) for (let i = 0; i < outF; i++) W[i * inF + i] += 1;', 'if (inF === outF);']],
  },
  {
    id: 'pt-any-global',
    file: 'bindings/pretrained/torch-pt.js',
    what: 'any GLOBAL accepted by name',
    edits: [['if (!GLOBALS.has(key)) bad(', 'if (false) bad(']],
  },
];

runMutations(MUTATIONS, {
  script: 'retrieval_mutations.mjs',
  tests: ['tests/retrieval.test.js', 'tests/torch-pt.test.js'],
  timeout: 900_000,
  env: { ...process.env, SWAPFORMER_BACKEND: 'wasm' },
});
