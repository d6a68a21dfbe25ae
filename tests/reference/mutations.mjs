#!/usr/bin/env node
// Mutation check of the golden suite: puts one small, plausible bug at a time
// into the C core or a plugin, rebuilds, runs tests/golden.test.js (and, for
// the mutations marked browser, tests/browser.test.js), records which tests
// fail, and restores the file. Every mutation must be caught.
//
// It edits core/*.c and plugins/*.c in place, so it runs only in a linked git
// worktree, never in the shared checkout:
//
//   git worktree add /tmp/mut HEAD && cd /tmp/mut && ln -s /path/to/checkout/node_modules .
//   node tests/reference/mutations.mjs [--only id,id] [--browser] [--json out.json]
//   cd - && git worktree remove /tmp/mut --force
//
// --browser also runs the browser test for every mutation (by default only for
// those marked browser: true). --also <test file> runs one more test file on
// each mutant and reports whether it failed (e.g. an older golden test, to
// compare). --allow-baseline-failures: tests that already fail unmutated (say,
// a fixture waiting for a binding) are listed, and ignored on every mutant,
// instead of stopping the run. Exit code 1 when a mutation is not caught, the
// unmutated build or golden test fails (unless allowed), or a mutation no
// longer applies (its text is not in the source exactly once: update it here).
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { NODE_FLAGS } from '../../tools/node-flags.js';

/** id, file, where (shown in the table), the bug, and [old, new] exact replacements
 * (applied in order; each old text must occur exactly once in the unmutated file). */
export const MUTATIONS = [
  {
    id: 'alibi-chunk-offset',
    file: 'plugins/position/alibi.c',
    where: 'alibi_score_bias',
    what: 'ALiBi distance from the chunk-local query index i - i0 instead of i',
    edits: [
      ['v4_splat((float)(i0 - (j0 + j)))', 'v4_splat((float)(0 - (j0 + j)))'],
      ['int dd = i0 + i - (j0 + j);', 'int dd = i - (j0 + j);'],
      ['const float *slopes = ctx->table; /* (H) */', 'const float *slopes = ctx->table; /* (H) */\n    (void)i0;'],
    ],
  },
  {
    id: 'softmax-no-rescale',
    file: 'core/kernels.c',
    where: 'attention_forward, online softmax',
    what: 'no alpha rescale of earlier key tiles (alpha = 1 for the output and the running sum)',
    edits: [
      ['v4 al = v4_exp(v4_load(m + r) - mx);', 'v4 al = v4_splat(1.0f);'],
      ['alpha[r] = v4_exp(v4_splat(m[r] - mx))[0];', 'alpha[r] = 1.0f;'],
    ],
  },
  {
    id: 'softmax-no-rescale-output',
    file: 'core/kernels.c',
    where: 'attention_forward, online softmax',
    what: 'the output accumulator not rescaled by alpha (the running sum still is)',
    edits: [['for (r = 0; r < R; r++) scale_forward(oh + (size_t)r * ld, alpha[r], (size_t)D);', '']],
  },
  {
    id: 'rope-query-chunk-offset',
    file: 'core/encoder.c',
    where: 'attention_block',
    what: 'queries rotated at chunk-local position t instead of i0 + t',
    edits: [['pos->rotate(e->q, A, &ctx, i0, M);', 'pos->rotate(e->q, A, &ctx, 0, M);']],
  },
  {
    id: 'softmax-no-max',
    file: 'core/kernels.c',
    where: 'attention_forward, online softmax',
    what: 'softmax without max subtraction (m = 0)',
    edits: [
      ['v4 mx = v4_load(m + r);\n                for (int j = 0; j < n; j++) mx = v4_max(mx, v4_load(sT + (size_t)j * R + r));', 'v4 mx = v4_zero();'],
      [
        'float mx = m[r], sum = 0;\n                for (int j = 0; j < n; j++) mx = sT[(size_t)j * R + r] > mx ? sT[(size_t)j * R + r] : mx;',
        'float mx = 0, sum = 0;',
      ],
    ],
  },
  {
    id: 'layernorm-eps-outside',
    file: 'plugins/norm/layernorm.c',
    where: 'layernorm_forward',
    what: 'eps outside the square root: 1 / (sqrt(var) + eps)',
    edits: [['1.0f / sqrtf(var / (float)C + eps)', '1.0f / (sqrtf(var / (float)C) + eps)']],
  },
  {
    id: 'rmsnorm-eps-outside',
    file: 'plugins/norm/rmsnorm.c',
    where: 'rmsnorm_forward',
    what: 'eps outside the square root: 1 / (sqrt(mean(x^2)) + eps)',
    edits: [['1.0f / sqrtf(ss / (float)C + eps)', '1.0f / (sqrtf(ss / (float)C) + eps)']],
  },
  {
    id: 'o-bias-skipped',
    file: 'core/encoder.c',
    where: 'attention_block',
    browser: true,
    what: 'the o projection without its bias',
    edits: [['matmul_forward(e->o, C, e->ao, A, p->wo, p->bo, M, A, C);', 'matmul_forward(e->o, C, e->ao, A, p->wo, NULL, M, A, C);']],
  },
  {
    id: 'key-tile-off-by-one',
    file: 'core/kernels.c',
    where: 'score_tile',
    what: 'keys of the previous tile scored from the second tile on (j0 >= 64)',
    edits: [
      [
        'kv + (size_t)j0 * a->kv_ld + (size_t)(h / a->group) * D',
        'kv + (size_t)(j0 >= SF_ATT_BK ? j0 - SF_ATT_BK : j0) * a->kv_ld + (size_t)(h / a->group) * D',
      ],
    ],
  },
  {
    id: 'last-partial-chunk-skipped',
    file: 'core/encoder.c',
    where: 'attention_block',
    what: 'the last, partial query chunk of a sequence longer than 64 skipped',
    edits: [['for (int i0 = 0; i0 < L; i0 += SF_CHUNK) {', 'for (int i0 = 0; i0 < L && (i0 == 0 || i0 + SF_CHUNK <= L); i0 += SF_CHUNK) {']],
  },
  // our own
  {
    id: 'gelu-gelu_tanh-swapped',
    file: 'core/kernels.c',
    where: 'act4 (activation_forward)',
    what: 'gelu and gelu_tanh swapped (so geglu and geglu_tanh too)',
    edits: [
      [
        'case SF_ACT_GELU: return v4_gelu(x);\n    case SF_ACT_GELU_TANH: return v4_gelu_tanh(x);',
        'case SF_ACT_GELU: return v4_gelu_tanh(x);\n    case SF_ACT_GELU_TANH: return v4_gelu(x);',
      ],
    ],
  },
  {
    id: 'glu-gate-up-swapped',
    file: 'core/encoder.c',
    where: 'ffn_block',
    what: 'swiglu / geglu / geglu_tanh: gate and up projections swapped',
    edits: [
      [
        'matmul_forward(e->h, F, a, C, p->up_w, p->up_b, M, C, F);',
        'matmul_forward(e->h, F, a, C, p->gate_w ? p->gate_w : p->up_w, p->gate_w ? p->gate_b : p->up_b, M, C, F);',
      ],
      [
        'if (p->gate_w) matmul_forward(e->g, F, a, C, p->gate_w, p->gate_b, M, C, F);',
        'if (p->gate_w) matmul_forward(e->g, F, a, C, p->up_w, p->up_b, M, C, F);',
      ],
    ],
  },
  {
    id: 'keys-past-sequence-end',
    file: 'core/encoder.c',
    where: 'attention_block',
    what: "padded key rows attended: keys up to the batch's longest length T, not the sequence's L",
    edits: [['(size_t)T, perm, &spec, i0, M, L);', '(size_t)T, perm, &spec, i0, M, T);']],
  },
  {
    id: 'learned-offset-after-64',
    file: 'plugins/position/learned.c',
    where: 'learned_embed',
    what: 'learned positions one row off from row 64 on',
    edits: [
      [
        'for (size_t i = 0; i < n; i++) x[i] += pos[i];',
        'for (size_t i = 0; i < n; i++) x[i] += pos[i >= 64 * (size_t)c->d_model ? i + (size_t)c->d_model : i];',
      ],
    ],
  },
  {
    id: 'rope-keys-first-chunk-only',
    file: 'core/encoder.c',
    where: 'attention_block',
    what: 'keys rotated for the first 64 positions only',
    edits: [['pos->rotate(kv, K2, &kctx, 0, L);', 'pos->rotate(kv, K2, &kctx, 0, L < SF_CHUNK ? L : SF_CHUNK);']],
  },
  {
    id: 'value-tile-offset',
    file: 'core/kernels.c',
    where: 'attention_forward',
    what: 'every key tile weighs the values of the first tile',
    edits: [
      [
        'gemm_forward(oh, ld, p, SF_ATT_BK, v + (size_t)j0 * ld2, ld2, 8, NULL, 1, R, n, D);',
        'gemm_forward(oh, ld, p, SF_ATT_BK, v, ld2, 8, NULL, 1, R, n, D);',
      ],
    ],
  },
  {
    id: 'alibi-key-tile-offset',
    file: 'plugins/position/alibi.c',
    where: 'alibi_score_bias',
    what: 'ALiBi distance from the tile-local key index j instead of j0 + j',
    edits: [
      ['v4_splat((float)(i0 - (j0 + j)))', 'v4_splat((float)(i0 - j))'],
      ['int dd = i0 + i - (j0 + j);', 'int dd = i0 + i - j;'],
      ['const float *slopes = ctx->table; /* (H) */', 'const float *slopes = ctx->table; /* (H) */\n    (void)j0;'],
    ],
  },
  {
    id: 'alibi-slopes-not-interleaved',
    file: 'plugins/position/alibi.c',
    where: 'alibi_table_init',
    what: 'non-power-of-two heads: the first n - p slopes of 2p instead of every other one',
    edits: [['-8.0 * (2 * (k - p) + 1) / (2.0 * p)', '-8.0 * (k - p + 1) / (2.0 * p)']],
  },
  // the fields of the Hugging Face families
  {
    id: 'window-off-by-one',
    family: true,
    file: 'core/kernels.c',
    where: 'score_tile',
    what: 'local window |i - j| < window instead of <= window',
    edits: [['int lo = j0 + j - a->window - i0, hi = j0 + j + a->window - i0;', 'int lo = j0 + j - a->window + 1 - i0, hi = j0 + j + a->window - 1 - i0;']],
  },
  {
    id: 'window-on-global-layers',
    family: true,
    file: 'core/encoder.c',
    where: 'attention_block',
    what: 'the window applied to the global layers too',
    edits: [['c->local[l] ? c->local_window : 0', 'c->local_window']],
  },
  {
    id: 'local-layers-global-base',
    family: true,
    file: 'plugins/position/rope.c',
    where: 'rope_rotate',
    what: 'local layers rotated with the global RoPE base (localBase ignored)',
    edits: [['int local = ctx->local && two_tables(c);', 'int local = 0;']],
  },
  {
    id: 'types-skipped',
    family: true,
    file: 'core/encoder.c',
    where: 'embed_block',
    what: 'token-type embeddings not added',
    edits: [['if (e->types) embed_add_forward(x, e->type_ids, e->types, N, E);', '']],
  },
  {
    id: 'embed-norm-skipped',
    family: true,
    file: 'core/encoder.c',
    where: 'embed_block',
    what: 'the embedding norm skipped',
    edits: [['if (c->embed_norm) c->norm->forward(x, x, e->embed_norm_w, e->embed_norm_b, (float)c->eps, N, E);', '']],
  },
  {
    id: 'embed-norm-before-positions',
    family: true,
    file: 'core/encoder.c',
    where: 'embed_block',
    what: 'the embedding norm before the position vectors are added (after tokens + types)',
    edits: [
      ['if (c->embed_norm) c->norm->forward(x, x, e->embed_norm_w, e->embed_norm_b, (float)c->eps, N, E);', ''],
      [
        'if (e->types) embed_add_forward(x, e->type_ids, e->types, N, E);',
        'if (e->types) embed_add_forward(x, e->type_ids, e->types, N, E);\n    if (c->embed_norm) c->norm->forward(x, x, e->embed_norm_w, e->embed_norm_b, (float)c->eps, N, E);',
      ],
    ],
  },
  {
    id: 'first-layer-normed',
    family: true,
    file: 'core/encoder.c',
    where: 'attn_input',
    what: "layer 0 normed (with its FFN norm's weights) although firstAttnNorm is false",
    edits: [
      [
        'if (!c->pre_norm || !p->norm1_w) return x;\n    c->norm->forward(e->xn, x, p->norm1_w, p->norm1_b,',
        'if (!c->pre_norm) return x;\n    c->norm->forward(e->xn, x, p->norm1_w ? p->norm1_w : p->norm2_w, p->norm1_w ? p->norm1_b : p->norm2_b,',
      ],
    ],
  },
  {
    id: 'attn-scale-ignored',
    family: true,
    file: 'core/encoder.c',
    where: 'attention_block',
    what: 'attnScale ignored: scores always scaled by 1/sqrt(headDim)',
    edits: [['scale_forward(e->q, (float)c->attn_scale, (size_t)M * A);', 'scale_forward(e->q, (float)(1.0 / sqrt((double)sf_head_dim(c))), (size_t)M * A);']],
  },
  {
    id: 't5-bucket-sign',
    family: true,
    file: 'plugins/position/t5.c',
    where: 't5_score_bias',
    what: 'T5 bucket of i - j instead of j - i (the two halves swapped)',
    edits: [['bucket[(j0 + j) - (i0 + i)]', 'bucket[(i0 + i) - (j0 + j)]']],
  },
  {
    id: 't5-no-clamp',
    family: true,
    file: 'plugins/position/t5.c',
    where: 't5_table_init',
    what: 'T5 log buckets without the clamp at buckets/2 - 1 (offsets past maxDistance)',
    edits: [['b += large < half - 1 ? large : half - 1;', 'b += large;']],
  },
  {
    id: 'dynamic-ntk-batch-length',
    family: true,
    file: 'core/encoder.c',
    where: 'attention_block',
    what: "dynamic NTK from the batch's longest length T instead of the sequence's own length",
    edits: [['sf_pos_ctx ctx = pos_ctx(e, l, L), kctx = ctx;', 'sf_pos_ctx ctx = pos_ctx(e, l, T), kctx = ctx;']],
  },
  {
    id: 'learned-offset-ignored',
    family: true,
    file: 'plugins/position/learned.c',
    where: 'learned_embed',
    what: 'learned positionOptions.offset ignored (rows from 0)',
    edits: [['ctx->params[0] + (size_t)offset_of(c) * c->d_model', 'ctx->params[0] + (size_t)0 * c->d_model']],
  },
  // the normalisation levers (issue 14): qkNorm, residualScale, skipLayers
  {
    id: 'qk-norm-skipped',
    lever: true,
    file: 'core/encoder.c',
    where: 'attention_block',
    what: 'qkNorm ignored: neither q nor k normed',
    edits: [
      ["if (c->qk_norm) /* each kv head's key, (kvHeads, D) per row */", "if (0) /* each kv head's key, (kvHeads, D) per row */"],
      ['if (c->qk_norm) c->qk_norm->forward(e->q, e->q,', 'if (0) c->qk_norm->forward(e->q, e->q,'],
    ],
  },
  {
    id: 'qk-norm-queries-only',
    lever: true,
    file: 'core/encoder.c',
    where: 'attention_block',
    what: 'qkNorm on the queries only (the keys not normed)',
    edits: [["if (c->qk_norm) /* each kv head's key, (kvHeads, D) per row */", "if (0) /* each kv head's key, (kvHeads, D) per row */"]],
  },
  {
    id: 'qk-norm-after-rope',
    lever: true,
    file: 'core/encoder.c',
    where: 'attention_block',
    what: 'qkNorm after the rotation instead of before (q and k)',
    edits: [
      ["if (c->qk_norm) /* each kv head's key, (kvHeads, D) per row */", "if (0) /* each kv head's key, (kvHeads, D) per row */"],
      [
        'if (pos->rotate) pos->rotate(kv, K2, &kctx, 0, L);',
        'if (pos->rotate) pos->rotate(kv, K2, &kctx, 0, L);\n' +
          '        if (c->qk_norm) for (int t = 0; t < L; t++) c->qk_norm->forward(kv + (size_t)t * K2, kv + (size_t)t * K2, p->k_norm_w, p->k_norm_b, (float)c->eps, c->kv_heads, sf_head_dim(c));',
      ],
      [
        'if (c->qk_norm) c->qk_norm->forward(e->q, e->q, p->q_norm_w, p->q_norm_b, (float)c->eps, M * c->heads, sf_head_dim(c)); /* (M H, D) */\n            if (pos->rotate) pos->rotate(e->q, A, &ctx, i0, M);',
        'if (pos->rotate) pos->rotate(e->q, A, &ctx, i0, M);\n            if (c->qk_norm) c->qk_norm->forward(e->q, e->q, p->q_norm_w, p->q_norm_b, (float)c->eps, M * c->heads, sf_head_dim(c));',
      ],
    ],
  },
  {
    id: 'qk-norm-weights-swapped',
    lever: true,
    file: 'core/encoder.c',
    where: 'attention_block',
    what: 'the queries normed with the k_norm weights',
    edits: [['p->q_norm_w, p->q_norm_b, (float)c->eps', 'p->k_norm_w, p->k_norm_b, (float)c->eps']],
  },
  {
    id: 'qk-norm-fixed-eps',
    lever: true,
    file: 'core/encoder.c',
    where: 'attention_block',
    what: "qkNorm with eps 1e-5 instead of the config's",
    edits: [
      ['p->k_norm_w, p->k_norm_b, (float)c->eps, c->kv_heads', 'p->k_norm_w, p->k_norm_b, 1e-5f, c->kv_heads'],
      ['p->q_norm_w, p->q_norm_b, (float)c->eps, M * c->heads', 'p->q_norm_w, p->q_norm_b, 1e-5f, M * c->heads'],
    ],
  },
  {
    id: 'residual-scale-wrong-side',
    lever: true,
    file: 'core/kernels.c',
    where: 'residual_scaled_forward',
    what: "residualScale on the sub-layer's output: x + a f(x) instead of a x + f(x)",
    edits: [
      ['v4_madd(a4, v4_load(x + i), v4_load(y + i))', 'v4_madd(a4, v4_load(y + i), v4_load(x + i))'],
      ['x[i] = a * x[i] + y[i];', 'x[i] = x[i] + a * y[i];'],
    ],
  },
  {
    id: 'residual-scale-attention-only',
    lever: true,
    file: 'core/encoder.c',
    where: 'ffn_block',
    what: "residualScale on the attention residual only (the FFN's plain x + f(x))",
    edits: [
      [
        'residual_scaled_forward(x, e->o, (float)c->residual_scale, (size_t)M * C);\n        if (!c->pre_norm) c->norm->forward(x, x, p->norm2_w',
        'residual_forward(x, e->o, (size_t)M * C);\n        if (!c->pre_norm) c->norm->forward(x, x, p->norm2_w',
      ],
    ],
  },
  {
    id: 'deepnorm-alpha-sqrt',
    lever: true,
    file: 'core/config.c',
    where: 'parse_normalisation',
    what: 'DeepNorm alpha (2L)^(1/2) instead of (2L)^(1/4)',
    edits: [['c->residual_scale = sqrt(sqrt(2.0 * (c->layers ? c->layers : 1)));', 'c->residual_scale = sqrt(2.0 * (c->layers ? c->layers : 1));']],
  },
  {
    id: 'skip-ignored',
    lever: true,
    file: 'core/encoder.c',
    where: 'sf_encoder_forward',
    what: 'skipLayers ignored: every layer runs',
    edits: [['if (e->skip[l]) { /* removed', 'if (0 && e->skip[l]) { /* removed']],
  },
  {
    id: 'skip-off-by-one',
    lever: true,
    file: 'core/encoder.c',
    where: 'sf_encoder_forward',
    what: 'skipLayers read one layer late (skipping layer l removes layer l + 1)',
    edits: [['if (e->skip[l]) { /* removed', 'if (l > 0 && e->skip[l - 1]) { /* removed']],
  },
];

const args = process.argv.slice(2);
const opt = (name) => {
  const i = args.indexOf(name);
  return i < 0 ? undefined : args[i + 1];
};
const only = opt('--only')?.split(',');
const browserAll = args.includes('--browser');
const jsonOut = opt('--json');
const also = opt('--also');
const allowBaseline = args.includes('--allow-baseline-failures');

const sh = (cmd, a, extra = {}) => spawnSync(cmd, a, { encoding: 'utf8', maxBuffer: 1 << 28, ...extra });
const gitDir = sh('git', ['rev-parse', '--absolute-git-dir']).stdout.trim();
const commonDir = resolve(sh('git', ['rev-parse', '--git-common-dir']).stdout.trim());
if (!gitDir || gitDir === commonDir) {
  console.error('mutations.mjs edits core/ and plugins/: run it in a linked worktree (git worktree add /tmp/mut HEAD), not in the main checkout');
  process.exit(2);
}

function build() {
  const r = sh('./build.sh', []);
  if (r.status !== 0) return `${r.stdout}${r.stderr}`.trim().split('\n').slice(-15).join('\n');
  return null;
}

/** Runs a test file; returns the names of the failing tests (top level and subtests). */
function runTest(file) {
  const r = sh(process.execPath, [...NODE_FLAGS, '--test', '--test-reporter=tap', file], { timeout: 600_000 });
  const failed = [];
  let last = null;
  for (const line of r.stdout.split('\n')) {
    const m = /^(\s*)not ok \d+ - (.*?)(\s+# .*)?$/.exec(line);
    if (m) failed.push((last = { depth: m[1].length / 4, name: m[2], ratio: 0, code: null }));
    else if (/^\s*ok \d+ - /.test(line)) last = null;
    // helpers.js assertClose: '...: per-element error 3.1e-2 > 0.00001 at element ...'
    const e = last && /per-element error (\S+) > (\S+) at/.exec(line);
    if (e) last.ratio = Math.max(last.ratio, Number(e[1]) / Number(e[2]));
    const c = last && /^\s*code: '(\w+)'/.exec(line); // forward threw (e.g. NON_FINITE)
    if (c && c[1] !== 'ERR_ASSERTION') last.code = c[1];
  }
  const pass = /^# pass (\d+)/m.exec(r.stdout)?.[1],
    fail = /^# fail (\d+)/m.exec(r.stdout)?.[1];
  return { status: r.status, failed, pass: Number(pass ?? 0), fail: Number(fail ?? 0) };
}

/** Golden test names 'golden [build]: case' -> the case names, builds merged. */
function summarizeGolden(res) {
  const cases = new Map();
  const other = [];
  let ratio = 0;
  const codes = new Set();
  for (const { name, ratio: q, code } of res.failed) {
    if (code) codes.add(code);
    const m = /^golden \[(\w+)\]: (.*)$/.exec(name);
    if (m) cases.set(m[2], [...(cases.get(m[2]) ?? []), m[1]]);
    else other.push(name);
    ratio = Math.max(ratio, q);
  }
  return { cases: [...cases.entries()].map(([c, builds]) => ({ case: c, builds })), other, worstRatio: ratio, codes: [...codes] };
}

const selected = MUTATIONS.filter((m) => !only || only.includes(m.id));
const originals = new Map();
for (const m of selected) if (!originals.has(m.file)) originals.set(m.file, readFileSync(m.file, 'utf8'));
// every mutation must still apply, before anything is built
for (const m of selected) {
  for (const [from] of m.edits) {
    const n = originals.get(m.file).split(from).length - 1;
    if (n !== 1) {
      console.error(`${m.id}: '${from.slice(0, 70)}' occurs ${n} times in ${m.file}: update the mutation`);
      process.exit(1);
    }
  }
}

const restore = (file) => writeFileSync(file, originals.get(file));
process.on('SIGINT', () => {
  for (const f of originals.keys()) restore(f);
  process.exit(130);
});

console.error('baseline: build and golden test, unmutated');
let err = build();
if (err) {
  console.error(`the unmutated build fails:\n${err}`);
  process.exit(1);
}
const base = runTest('tests/golden.test.js');
const baseFailed = new Set(base.failed.map((f) => f.name));
if (base.fail || (base.status !== 0 && !allowBaseline)) {
  console.error(`the unmutated golden test fails: ${base.failed.map((f) => f.name).join('; ')}`);
  if (!allowBaseline) process.exit(1);
  console.error('--allow-baseline-failures: those tests are ignored on every mutant');
}
console.error(`baseline: ${base.pass} golden tests pass`);
/** A mutant's golden run without the tests that fail unmutated. */
const beyondBaseline = (g) => {
  const failed = g.failed.filter((f) => !baseFailed.has(f.name));
  return { ...g, failed, fail: failed.filter((f) => f.depth === 0).length };
};

const results = [];
try {
  for (const m of selected) {
    let src = originals.get(m.file);
    for (const [from, to] of m.edits) src = src.replace(from, to);
    writeFileSync(m.file, src);
    const t0 = Date.now();
    const r = { id: m.id, file: m.file, where: m.where, what: m.what };
    err = build();
    if (err) {
      r.buildError = err;
    } else {
      const g = beyondBaseline(runTest('tests/golden.test.js'));
      r.golden = { fail: g.fail, pass: g.pass, ...summarizeGolden(g) };
      if (also) r.also = runTest(also).fail;
      if (browserAll || m.browser) {
        const b = runTest('tests/browser.test.js');
        r.browser = { fail: b.fail, failed: b.failed.filter((f) => f.depth === 1).map((f) => f.name) };
      }
    }
    restore(m.file);
    r.caught = !r.buildError && (r.golden.fail > 0 || (r.browser?.fail ?? 0) > 0) && (!r.browser || r.browser.fail > 0);
    results.push(r);
    console.error(
      `${m.id}: ${r.buildError ? 'BUILD FAILED' : r.caught ? 'caught' : 'NOT CAUGHT'}` +
        (r.golden ? ` (golden: ${r.golden.cases.length} cases failing${r.browser ? `; browser: ${r.browser.failed.length} subtests failing` : ''})` : '') +
        ` in ${((Date.now() - t0) / 1000).toFixed(0)} s`,
    );
  }
} finally {
  for (const f of originals.keys()) restore(f);
  console.error('rebuilding unmutated');
  build();
}

// the markdown table of tests/reference/README.md. Case groups: the normalisation
// levers (qkNorm, residualScale, skipLayers), the families' fields (a config using
// any of them), the long / overflow cases, the short ones.
const NEW_FIELDS = ['headDim', 'attnScale', 'typeVocabSize', 'embedNorm', 'firstAttnNorm', 'localWindow', 'localLayers'];
const group = new Map(
  JSON.parse(readFileSync('tests/fixtures/golden.json', 'utf8')).cases.map((c) => {
    const po = c.config.positionOptions ?? {};
    if ('qkNorm' in c.config || 'residualScale' in c.config || c.skipLayers) return [c.name, 'lever'];
    const family =
      NEW_FIELDS.some((k) => k in c.config) ||
      c.config.position === 't5' ||
      'offset' in po ||
      'localBase' in po ||
      po.scaling?.type === 'dynamic' ||
      ['silu', 'geglu_tanh'].includes(c.config.activation);
    return [c.name, family ? 'family' : /^(long|overflow)/.test(c.name) ? 'long' : 'short'];
  }),
);
const lines = [`| mutation | where | caught by (golden.test.js, both builds) |${also ? ` ${also} |` : ''}`, `|---|---|---|${also ? '---|' : ''}`];
for (const r of results) {
  let by;
  if (r.buildError) by = '**build failed**';
  else if (!r.caught) by = '**NOT CAUGHT**';
  else {
    const cs = r.golden.cases.map((c) => c.case);
    const of = (g) => cs.filter((c) => group.get(c) === g);
    const list = (a, n) =>
      a
        .slice(0, n)
        .map((c) => `\`${c}\``)
        .join(', ') + (a.length > n ? ` and ${a.length - n} more` : '');
    const worst = [
      r.golden.worstRatio === Infinity
        ? 'NaN or infinite output'
        : r.golden.worstRatio
          ? `worst ${Math.round(r.golden.worstRatio).toLocaleString('en')}x the tolerance`
          : '',
      ...r.golden.codes.map((c) => `forward throws ${c}`),
    ]
      .filter(Boolean)
      .join(', ');
    const part = (g, label, n) => `${of(g).length} ${label}${of(g).length && of(g).length <= n ? ` (${list(of(g), n)})` : ''}`;
    by = r.golden.fail
      ? `${part('lever', 'lever', 3)} + ${part('family', 'family', 3)} + ${part('long', 'long/overflow', 2)} + ${part('short', 'short', 2)}; ${worst}`
      : 'golden.test.js: none';
    if (r.golden.other.length) by += `; also ${r.golden.other.map((o) => `'${o}'`).join(', ')}`;
    if (r.browser) by += `; browser.test.js: ${r.browser.failed.length ? r.browser.failed.map((f) => `'${f}'`).join(', ') : 'none'}`;
  }
  lines.push(`| ${r.what} (\`${r.id}\`) | ${r.file}: ${r.where} | ${by} |${also ? ` ${r.also ? `caught (${r.also} tests fail)` : 'not caught'} |` : ''}`);
}
console.log(lines.join('\n'));
if (jsonOut) writeFileSync(jsonOut, JSON.stringify(results, null, 1));
const missed = results.filter((r) => !r.caught);
if (missed.length) {
  console.error(`not caught: ${missed.map((r) => r.id).join(', ')}`);
  process.exit(1);
}
console.error(`all ${results.length} mutations caught`);
