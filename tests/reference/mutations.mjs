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
// compare). Exit code 1 when a mutation is not caught, the
// unmutated build fails, or a mutation no longer applies (its text is not in
// the source exactly once: update it here).
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';

/** id, file, where (shown in the table), the bug, and [old, new] exact replacements. */
export const MUTATIONS = [
  {
    id: 'alibi-chunk-offset', file: 'plugins/position/alibi.c', where: 'alibi_score_bias',
    what: 'ALiBi distance from the chunk-local query index i - i0 instead of i',
    edits: [['v4_splat((float)(i0 - (j0 + j)))', 'v4_splat((float)(0 - (j0 + j)))'],
      ['int dd = i0 + i - (j0 + j);', 'int dd = i - (j0 + j);'], ['(void)c;\n    v4 m = v4_splat', '(void)c, (void)i0;\n    v4 m = v4_splat']],
  },
  {
    id: 'softmax-no-rescale', file: 'core/kernels.c', where: 'attention_forward, online softmax',
    what: 'no alpha rescale of earlier key tiles (alpha = 1 for the output and the running sum)',
    edits: [['v4 al = v4_exp(v4_load(m + r) - mx);', 'v4 al = v4_splat(1.0f);'],
      ['alpha[r] = v4_exp(v4_splat(m[r] - mx))[0];', 'alpha[r] = 1.0f;']],
  },
  {
    id: 'softmax-no-rescale-output', file: 'core/kernels.c', where: 'attention_forward, online softmax',
    what: 'the output accumulator not rescaled by alpha (the running sum still is)',
    edits: [['for (r = 0; r < R; r++) scale_forward(oh + (size_t)r * C, alpha[r], (size_t)D);', '']],
  },
  {
    id: 'rope-query-chunk-offset', file: 'core/encoder.c', where: 'attention_block',
    what: 'queries rotated at chunk-local position t instead of i0 + t',
    edits: [['pos->rotate(e->q, C, e->table, c, i0, M);', 'pos->rotate(e->q, C, e->table, c, 0, M);']],
  },
  {
    id: 'softmax-no-max', file: 'core/kernels.c', where: 'attention_forward, online softmax',
    what: 'softmax without max subtraction (m = 0)',
    edits: [['v4 mx = v4_load(m + r);\n                for (int j = 0; j < n; j++) mx = v4_max(mx, v4_load(sT + (size_t)j * R + r));', 'v4 mx = v4_zero();'],
      ['float mx = m[r], sum = 0;\n                for (int j = 0; j < n; j++) mx = sT[(size_t)j * R + r] > mx ? sT[(size_t)j * R + r] : mx;', 'float mx = 0, sum = 0;']],
  },
  {
    id: 'layernorm-eps-outside', file: 'plugins/norm/layernorm.c', where: 'layernorm_forward',
    what: 'eps outside the square root: 1 / (sqrt(var) + eps)',
    edits: [['1.0f / sqrtf(var / (float)C + eps)', '1.0f / (sqrtf(var / (float)C) + eps)']],
  },
  {
    id: 'rmsnorm-eps-outside', file: 'plugins/norm/rmsnorm.c', where: 'rmsnorm_forward',
    what: 'eps outside the square root: 1 / (sqrt(mean(x^2)) + eps)',
    edits: [['1.0f / sqrtf(ss / (float)C + eps)', '1.0f / (sqrtf(ss / (float)C) + eps)']],
  },
  {
    id: 'o-bias-skipped', file: 'core/encoder.c', where: 'attention_block', browser: true,
    what: 'the o projection without its bias',
    edits: [['matmul_forward(e->o, C, e->ao, C, p->wo, p->bo, M, C, C);', 'matmul_forward(e->o, C, e->ao, C, p->wo, NULL, M, C, C);']],
  },
  {
    id: 'key-tile-off-by-one', file: 'core/kernels.c', where: 'score_tile',
    what: 'keys of the previous tile scored from the second tile on (j0 >= 64)',
    edits: [['kv + (size_t)j0 * C2 + (size_t)h * D, C2, qpack', 'kv + (size_t)(j0 >= SF_ATT_BK ? j0 - SF_ATT_BK : j0) * C2 + (size_t)h * D, C2, qpack']],
  },
  {
    id: 'last-partial-chunk-skipped', file: 'core/encoder.c', where: 'attention_block',
    what: 'the last, partial query chunk of a sequence longer than 64 skipped',
    edits: [['for (int i0 = 0; i0 < L; i0 += SF_CHUNK) {', 'for (int i0 = 0; i0 < L && (i0 == 0 || i0 + SF_CHUNK <= L); i0 += SF_CHUNK) {']],
  },
  // our own
  {
    id: 'gelu-gelu_tanh-swapped', file: 'core/kernels.c', where: 'activation_forward',
    what: 'gelu and gelu_tanh swapped',
    edits: [['case SF_ACT_GELU: g = NULL; MAP(v4_gelu(x)); break;\n    case SF_ACT_GELU_TANH: g = NULL; MAP(v4_gelu_tanh(x)); break;',
      'case SF_ACT_GELU: g = NULL; MAP(v4_gelu_tanh(x)); break;\n    case SF_ACT_GELU_TANH: g = NULL; MAP(v4_gelu(x)); break;']],
  },
  {
    id: 'glu-gate-up-swapped', file: 'core/encoder.c', where: 'ffn_block',
    what: 'swiglu / geglu: gate and up projections swapped',
    edits: [['matmul_forward(e->h, F, a, C, p->up_w, p->up_b, M, C, F);', 'matmul_forward(e->h, F, a, C, p->gate_w ? p->gate_w : p->up_w, p->gate_w ? p->gate_b : p->up_b, M, C, F);'],
      ['if (p->gate_w) matmul_forward(e->g, F, a, C, p->gate_w, p->gate_b, M, C, F);', 'if (p->gate_w) matmul_forward(e->g, F, a, C, p->up_w, p->up_b, M, C, F);']],
  },
  {
    id: 'keys-past-sequence-end', file: 'core/encoder.c', where: 'attention_block',
    what: 'padded key rows attended: keys up to the batch\'s longest length T, not the sequence\'s L',
    edits: [['perm, pos, e->table, c, i0, M, L);', 'perm, pos, e->table, c, i0, M, T);']],
  },
  {
    id: 'learned-offset-after-64', file: 'plugins/position/learned.c', where: 'learned_embed',
    what: 'learned positions one row off from row 64 on',
    edits: [['for (size_t i = 0; i < n; i++) x[i] += pos[i];', 'for (size_t i = 0; i < n; i++) x[i] += pos[i >= 64 * (size_t)c->d_model ? i + (size_t)c->d_model : i];']],
  },
  {
    id: 'rope-keys-first-chunk-only', file: 'core/encoder.c', where: 'attention_block',
    what: 'keys rotated for the first 64 positions only',
    edits: [['pos->rotate(kv, C2, e->table, c, 0, L);', 'pos->rotate(kv, C2, e->table, c, 0, L < SF_CHUNK ? L : SF_CHUNK);']],
  },
  {
    id: 'value-tile-offset', file: 'core/kernels.c', where: 'attention_forward',
    what: 'every key tile weighs the values of the first tile',
    edits: [['gemm_forward(oh, (size_t)C, p, SF_ATT_BK, v + (size_t)j0 * C2, C2, 8, NULL, 1, R, n, D);', 'gemm_forward(oh, (size_t)C, p, SF_ATT_BK, v, C2, 8, NULL, 1, R, n, D);']],
  },
  {
    id: 'alibi-key-tile-offset', file: 'plugins/position/alibi.c', where: 'alibi_score_bias',
    what: 'ALiBi distance from the tile-local key index j instead of j0 + j',
    edits: [['v4_splat((float)(i0 - (j0 + j)))', 'v4_splat((float)(i0 - j))'],
      ['int dd = i0 + i - (j0 + j);', 'int dd = i0 + i - j;'], ['(void)c;\n    v4 m = v4_splat', '(void)c, (void)j0;\n    v4 m = v4_splat']],
  },
  {
    id: 'alibi-slopes-not-interleaved', file: 'plugins/position/alibi.c', where: 'alibi_table_init',
    what: 'non-power-of-two heads: the first n - p slopes of 2p instead of every other one',
    edits: [['-8.0 * (2 * (k - p) + 1) / (2.0 * p)', '-8.0 * (k - p + 1) / (2.0 * p)']],
  },
];

const args = process.argv.slice(2);
const opt = (name) => { const i = args.indexOf(name); return i < 0 ? undefined : args[i + 1]; };
const only = opt('--only')?.split(',');
const browserAll = args.includes('--browser');
const jsonOut = opt('--json');
const also = opt('--also');

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
  const r = sh(process.execPath, ['--experimental-wasm-relaxed-simd', '--test', '--test-reporter=tap', file], { timeout: 600_000 });
  const failed = [];
  let last = null;
  for (const line of r.stdout.split('\n')) {
    const m = /^(\s*)not ok \d+ - (.*?)(\s+# .*)?$/.exec(line);
    if (m) failed.push(last = { depth: m[1].length / 4, name: m[2], ratio: 0, code: null });
    else if (/^\s*ok \d+ - /.test(line)) last = null;
    // helpers.js assertClose: '...: per-element error 3.1e-2 > 0.00001 at element ...'
    const e = last && /per-element error (\S+) > (\S+) at/.exec(line);
    if (e) last.ratio = Math.max(last.ratio, Number(e[1]) / Number(e[2]));
    const c = last && /^\s*code: '(\w+)'/.exec(line); // forward threw (e.g. NON_FINITE)
    if (c && c[1] !== 'ERR_ASSERTION') last.code = c[1];
  }
  const pass = /^# pass (\d+)/m.exec(r.stdout)?.[1], fail = /^# fail (\d+)/m.exec(r.stdout)?.[1];
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
process.on('SIGINT', () => { for (const f of originals.keys()) restore(f); process.exit(130); });

console.error('baseline: build and golden test, unmutated');
let err = build();
if (err) { console.error(`the unmutated build fails:\n${err}`); process.exit(1); }
const base = runTest('tests/golden.test.js');
if (base.status !== 0 || base.fail) { console.error(`the unmutated golden test fails: ${base.failed.map((f) => f.name).join('; ')}`); process.exit(1); }
console.error(`baseline: ${base.pass} golden tests pass`);

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
      const g = runTest('tests/golden.test.js');
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
    console.error(`${m.id}: ${r.buildError ? 'BUILD FAILED' : r.caught ? 'caught' : 'NOT CAUGHT'}` +
      (r.golden ? ` (golden: ${r.golden.cases.length} cases failing${r.browser ? `; browser: ${r.browser.failed.length} subtests failing` : ''})` : '') +
      ` in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  }
} finally {
  for (const f of originals.keys()) restore(f);
  console.error('rebuilding unmutated');
  build();
}

// the markdown table of tests/reference/README.md
const lines = [`| mutation | where | caught by |${also ? ` ${also} |` : ''}`, `|---|---|---|${also ? '---|' : ''}`];
for (const r of results) {
  let by;
  if (r.buildError) by = '**build failed**';
  else if (!r.caught) by = '**NOT CAUGHT**';
  else {
    const cs = r.golden.cases.map((c) => c.case);
    const isNew = (c) => /^(long|overflow)/.test(c);
    const fresh = cs.filter(isNew), old = cs.filter((c) => !isNew(c));
    const list = (a, n) => a.slice(0, n).map((c) => `\`${c}\``).join(', ') + (a.length > n ? ` and ${a.length - n} more` : '');
    const worst = [r.golden.worstRatio === Infinity ? 'NaN or infinite output'
      : r.golden.worstRatio ? `worst error ${Math.round(r.golden.worstRatio).toLocaleString('en')}x the tolerance` : '',
    ...r.golden.codes.map((c) => `forward throws ${c}`)].filter(Boolean).join(', ');
    by = r.golden.fail ? `golden.test.js, ${fresh.length} of the T > 64 / overflow cases${fresh.length ? ` (${list(fresh, 3)})` : ''}` +
      ` + ${old.length} of the short ones${old.length && old.length <= 2 ? ` (${list(old, 2)})` : ''}; ${worst}` : 'golden.test.js: none';
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
