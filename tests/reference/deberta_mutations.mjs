#!/usr/bin/env node
// Mutation check of tests/deberta.test.js: puts one plausible bug at a time into
// DeBERTa's math (the disentangled scheme's rows, its c2p and p2c terms and
// scale, the projected tables, the convolution) or its family and head tables,
// rebuilds the wasm when the file is C, runs tests/deberta.test.js, records
// which tests fail, and restores the file. Every mutation must be caught.
//
// It edits core/, plugins/ and bindings/ in place, so it runs only in a linked
// git worktree (about 45 minutes: a C mutation rebuilds all four wasm files):
//
//   git worktree add /tmp/mut HEAD && cd /tmp/mut && ln -s /path/to/checkout/node_modules .
//   node tests/reference/deberta_mutations.mjs [--only id,id]
//   cd - && git worktree remove /tmp/mut --force
//
// Exit code 1 when a mutation is not caught, the unmutated test fails, or a
// mutation no longer applies (its text is not in the file exactly once).
import { runMutations } from './mutation_harness.mjs';

const PLUGIN = 'plugins/position/disentangled.c';

/** id, file, what, and [old, new] exact replacements (each old text once in the file). */
export const MUTATIONS = [
  // the row of a distance (make_log_bucket_position)
  {
    id: 'bucket-floor',
    file: PLUGIN,
    what: 'the log step rounded down (floor) instead of up (ceil)',
    edits: [['float lp = ceilf(r) + (float)mid;', 'float lp = floorf(r) + (float)mid;']],
  },
  {
    id: 'bucket-mid',
    file: PLUGIN,
    what: 'the exact distances end at buckets instead of buckets / 2',
    edits: [['int span = o->rows / 2, mid = o->buckets / 2;', 'int span = o->rows / 2, mid = o->buckets;']],
  },
  {
    id: 'bucket-max-distance',
    file: PLUGIN,
    what: 'the log scale over maxDistance / mid instead of (maxDistance - 1) / mid',
    edits: [['(double)(float)((double)(o->max_distance - 1) / mid)', '(double)(float)((double)o->max_distance / mid)']],
  },
  {
    id: 'bucket-last-row',
    file: PLUGIN,
    what: "the rows clamped one short of the table's last",
    edits: [['b > 2 * span - 1 ? 2 * span - 1 : b;', 'b > 2 * span - 2 ? 2 * span - 2 : b;']],
  },
  // the terms
  {
    id: 'p2c-index',
    file: PLUGIN,
    what: 'p2c read at the mirrored row of the tile (c2p and p2c)',
    edits: [['sj[r] += cq[(size_t)r * n + k] + kj[k];', 'sj[r] += cq[(size_t)r * n + k] + kj[n - 1 - k];']],
  },
  {
    id: 'p2c-only-index',
    file: PLUGIN,
    what: 'p2c read at the mirrored row of the tile (p2c alone)',
    edits: [['for (int r = 0; r < ni; r++) sj[r] += kj[rj[r] - lo];', 'for (int r = 0; r < ni; r++) sj[r] += kj[n - 1 - (rj[r] - lo)];']],
  },
  {
    id: 'c2p-only-query',
    file: PLUGIN,
    what: "c2p (alone) read at the mirrored query's row",
    edits: [
      [
        'for (int r = 0; r < ni; r++) sj[r] += cq[(size_t)r * n + (rj[r] - lo)];',
        'for (int r = 0; r < ni; r++) sj[r] += cq[(size_t)r * n + (rj[ni - 1 - r] - lo)];',
      ],
    ],
  },
  {
    id: 'scale-factor',
    file: 'core/config.c',
    what: "the scheme's default scale counts c2p only: sqrt(d (1 + c2p))",
    edits: [['(1 + dis->c2p + dis->p2c)', '(1 + dis->c2p)']],
  },
  {
    id: 'p2c-unscaled',
    file: 'core/encoder.c',
    what: 'the p2c table not scaled by attnScale (the keys are not scaled in attention)',
    edits: [['float s = key ? 1.0f : (float)c->attn_scale;', 'float s = 1.0f;']],
  },
  {
    id: 'rel-norm-skipped',
    file: 'core/encoder.c',
    what: 'the relative table projected without embed.rel_norm',
    edits: [
      ['            if (o->norm_table) {\n                c->norm->forward(e->xn, a,', '            if (0) {\n                c->norm->forward(e->xn, a,'],
    ],
  },
  {
    id: 'p2c-key-projection',
    file: 'core/encoder.c',
    what: 'p2c projects the table by the key projection (shareKey)',
    edits: [['(o->share_key ? p->wq : p->pos_q_w)', '(o->share_key ? p->wk : p->pos_q_w)']],
  },
  {
    id: 'conv-past-end',
    file: 'core/encoder.c',
    what: "the convolution reads one row past a sequence's end",
    edits: [['hi = min_int(M, L + pad - kk - t0);', 'hi = min_int(M, L + pad - kk - t0 + 1);']],
  },
  {
    id: 'conv-input',
    file: 'core/encoder.c',
    what: "the convolution runs on layer 0's output instead of the embeddings",
    edits: [['e->x0 + (size_t)(off + t0 + lo + kk - pad) * C', 'e->x + (size_t)(off + t0 + lo + kk - pad) * C']],
  },
  // the family and its heads
  {
    id: 'family-scale',
    file: 'bindings/pretrained/families.js',
    what: 'attnScale 1 / sqrt(d) for a checkpoint with the terms',
    edits: [['attnScale: 1 / Math.sqrt(headDim * (1 + terms.length))', 'attnScale: 1 / Math.sqrt(headDim)']],
  },
  {
    id: 'family-absolute',
    file: 'bindings/pretrained/families.js',
    what: 'position_biased_input ignored (no absolute positions)',
    edits: [["position: r.absolute ? 'learned' : 'none',", "position: 'none',"]],
  },
  {
    id: 'family-max-relative',
    file: 'bindings/pretrained/families.js',
    what: 'max_relative_positions < 1 read as 512 instead of max_position_embeddings',
    edits: [['hf.max_relative_positions : maxPos;', 'hf.max_relative_positions : 512;']],
  },
  {
    id: 'family-share-default',
    file: 'bindings/pretrained/families.js',
    what: 'share_att_key true when config.json leaves it out',
    edits: [["shareKey: field(hf, 'share_att_key', false) === true", "shareKey: field(hf, 'share_att_key', true) !== false"]],
  },
  {
    id: 'family-terms-string',
    file: 'bindings/pretrained/families.js',
    what: 'pos_att_type as a string split on commas',
    edits: [["if (typeof t === 'string') t = t.toLowerCase().split('|');", "if (typeof t === 'string') t = t.toLowerCase().split(',');"]],
  },
  {
    id: 'head-pooler-tanh',
    file: 'bindings/pretrained/heads.js',
    what: "ContextPooler's activation tanh (BERT's pooler) instead of pooler_hidden_act",
    edits: [["return { dense: true, activation: act(hf, 'pooler_hidden_act', 'gelu') };", "return { dense: true, activation: 'tanh' };"]],
  },
  {
    id: 'head-legacy',
    file: 'bindings/pretrained/heads.js',
    what: 'the lm_predictions layout unless legacy is true (HF: legacy defaults to true)',
    edits: [['hf.legacy === false', 'hf.legacy !== true']],
  },
  {
    id: 'head-rtd',
    file: 'bindings/pretrained/heads.js',
    what: "a replaced-token detector's lm_predictions taken as a masked-LM head",
    edits: [['  if (table?.rtd && names.some((n) => table.rtd.test(n))) return null; // a replaced-token detector: no masked-LM head\n', '']],
  },
  // embed_proj (embedding_size != hidden_size)
  {
    id: 'embed-norm-before-proj',
    file: 'core/encoder.c',
    what: "the embeddings' norm before embed.proj, as ALBERT's and ELECTRA's (embedDim wide)",
    edits: [
      ['if (c->embed_norm && !c->embed_norm_after_proj) c->norm->forward(', 'if (c->embed_norm) c->norm->forward('],
      ['    if (c->embed_norm_after_proj) c->norm->forward(e->x, e->x, e->embed_norm_w, e->embed_norm_b, (float)c->eps, N, C);\n', ''],
    ],
  },
  {
    id: 'embed-proj-no-norm',
    file: 'core/encoder.c',
    what: "the embeddings' norm left out after embed.proj",
    edits: [['    if (c->embed_norm_after_proj) c->norm->forward(e->x, e->x, e->embed_norm_w, e->embed_norm_b, (float)c->eps, N, C);\n', '']],
  },
  {
    id: 'head-embed-width',
    file: 'bindings/pretrained/heads.js',
    what: "the legacy masked-LM head's transform hidden_size wide with embed_proj",
    edits: [["normEps: num(hf, 'layer_norm_eps', 1e-7), ...embeddingWidth(hf) };", "normEps: num(hf, 'layer_norm_eps', 1e-7) };"]],
  },
];

runMutations(MUTATIONS, { script: 'deberta_mutations.mjs', tests: ['tests/deberta.test.js'], idWidth: 22 });
