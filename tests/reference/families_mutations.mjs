#!/usr/bin/env node
// Mutation check of tests/families.test.js: puts one plausible bug at a time
// into the mechanisms the families of ELECTRA, RoFormer, GTE, EuroBERT,
// NeoBERT, ALBERT and jina-embeddings-v3 brought (grouped-query attention,
// fixed-NTK RoPE, factorized embeddings, shared layer groups, the head's width,
// 'late' pooling, the task adapters, the families' name tables), rebuilds the
// two single-threaded wasm files when the file is C, runs the test file on the
// wasm, records which tests fail, and restores the file. Every mutation must
// be caught.
//
// It edits core/, plugins/ and bindings/ in place, so it runs only in a linked
// git worktree; a C mutant is built here with build.sh's flags for
// dist/swapformer.wasm and dist/swapformer-relaxed.wasm (objects cached per
// file, about 30 s each), and the native prebuilds are set aside while it runs
// (the test compares native and wasm when both are there):
//
//   node tests/reference/families_mutations.mjs [--only id,id]
//   ./build.sh   # afterwards: the four wasm files as build.sh makes them
//
// Exit code 1 when a mutation is not caught, the unmutated test fails, or a
// mutation no longer applies (its text is not in the file exactly once).
import { existsSync, mkdirSync, renameSync, statSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { sh, requireLinkedWorktree, prepare } from './mutation_harness.mjs';
import { NODE_FLAGS } from '../../tools/node-flags.js';

/** id, file, what, and [old, new] exact replacements (each old text once in the file). */
export const MUTATIONS = [
  // grouped-query attention
  {
    id: 'gqa-key-head',
    file: 'core/kernels.c',
    what: 'query head h scores the keys of kv head h mod kvHeads (interleaved groups) instead of h / group',
    edits: [['kv + (size_t)j0 * a->kv_ld + (size_t)(h / a->group) * D', 'kv + (size_t)j0 * a->kv_ld + (size_t)(h % (a->heads / a->group)) * D']],
  },
  {
    id: 'gqa-value-head',
    file: 'core/kernels.c',
    what: 'the values of kv head 0 for every query head',
    edits: [['const float *v = kv + ldkv / 2 + (size_t)(h / a->group) * D;', 'const float *v = kv + ldkv / 2 + (size_t)(h * 0) * D;']],
  },
  {
    id: 'gqa-keys-rotated-as-queries',
    file: 'core/encoder.c',
    what: "the keys rotated as rows of every query head (the kv view's head count dropped)",
    edits: [['kctx.cfg = &e->kv_view;', 'kctx.cfg = &e->pos_view;']],
  },
  // fixed NTK
  {
    id: 'ntk-base',
    file: 'plugins/position/rope.c',
    what: 'fixed NTK without the base scaled by the factor',
    edits: [['if (r->scaling == SCALE_FIXED_NTK) b *= r->factor;', '']],
  },
  {
    id: 'ntk-positions',
    file: 'plugins/position/rope.c',
    what: 'fixed NTK without the frequencies divided by factor^(2/D)',
    edits: [['if (r->scaling == SCALE_FIXED_NTK) return theta / sf_pow(r->factor, 2.0 / D);', '']],
  },
  {
    id: 'gte-ntk-as-ntk',
    file: 'bindings/pretrained/families.js',
    what: "GTE's rope_scaling ntk read as swapformer's NTK-aware scaling",
    edits: [
      ["ntk = { scaling: { type: 'fixed-ntk', factor: field(scaling, 'factor') } };", "ntk = { scaling: { type: 'ntk', factor: field(scaling, 'factor') } };"],
    ],
  },
  // factorized embeddings and the head's width
  {
    id: 'embed-proj-before-norm',
    file: 'core/encoder.c',
    what: "the embeddings' norm skipped when they are projected (the projection of the raw sum)",
    edits: [['if (c->embed_norm) c->norm->forward(x, x, e->embed_norm_w', 'if (c->embed_norm && !e->emb) c->norm->forward(x, x, e->embed_norm_w']],
  },
  {
    id: 'embed-proj-bias',
    file: 'core/encoder.c',
    what: "embed.proj's bias dropped",
    edits: [['e->embed_proj_w, e->embed_proj_b,', 'e->embed_proj_w, NULL,']],
  },
  {
    id: 'tied-width',
    file: 'core/heads.c',
    what: 'the tied decoder reads the token table at dModel floats a row instead of its width',
    edits: [['e->tokens, (size_t)W, e->head_out_b, j->M, W, v0, v1);', 'e->tokens, (size_t)e->cfg.d_model, e->head_out_b, j->M, W, v0, v1);']],
  },
  // shared layers
  {
    id: 'albert-groups-interleaved',
    file: 'core/config.h',
    what: 'layer l runs set l mod groups instead of l x groups / layers',
    edits: [['return (int)((long long)l * c->layer_groups / c->layers);', 'return l % c->layer_groups;']],
  },
  {
    id: 'albert-family-groups',
    file: 'bindings/pretrained/families.js',
    what: "ALBERT's num_hidden_groups ignored (every layer its own set: the checkpoint has too few)",
    edits: [['        layerGroups: G,\n', '']],
  },
  // 'late' pooling
  {
    id: 'late-as-mean',
    file: 'bindings/pretrained/heads.js',
    what: "EuroBERT's 'late' pooling run as 'mean' (the head on the mean hidden state)",
    edits: [
      ["const pooling = lookup({ bos: 'cls', mean: 'mean', late: 'late' }, p);", "const pooling = lookup({ bos: 'cls', mean: 'mean', late: 'mean' }, p);"],
    ],
  },
  {
    id: 'late-divisor',
    file: 'core/heads.c',
    what: "'late' pooling divides by the padded length instead of the sequence's",
    edits: [['+= y[(size_t)m * L + k] / (float)n;', '+= y[(size_t)m * L + k] / (float)T;']],
  },
  {
    id: 'late-default-bos',
    file: 'bindings/pretrained/heads.js',
    what: "EuroBERT's classifier_pooling defaulting to 'bos' instead of 'late'",
    edits: [[": 'late';\n", ": 'bos';\n"]],
  },
  // the task adapters
  {
    id: 'adapter-scale',
    file: 'bindings/pretrained/lora.js',
    what: 'the adapter merged without its scale lora_alpha / lora_rank',
    edits: [['merge(w, lora.A, lora.B, k, alpha / rank, embedding)', 'merge(w, lora.A, lora.B, k, 1, embedding)']],
  },
  {
    id: 'adapter-task-index',
    file: 'bindings/pretrained/lora.js',
    what: "every task gets the first adapter's matrices",
    edits: [['const lo = k * rows * r,\n    ro = k * r * cols;', 'const lo = 0,\n    ro = 0;']],
  },
  {
    id: 'adapter-embedding-order',
    file: 'bindings/pretrained/lora.js',
    what: "the embeddings' update as a Linear's (B A instead of A B)",
    edits: [['const [left, right] = embedding ? [A, B] : [B, A];', 'const [left, right] = [B, A];']],
  },
  // the families' name tables and configs
  {
    id: 'gte-gate-up-swapped',
    file: 'bindings/pretrained/families.js',
    what: "GTE's up_gate_proj split gate first (JinaBERT's order)",
    edits: [["['layers.{i}.ffn.up.{p}', 'layers.{i}.ffn.gate.{p}']", "['layers.{i}.ffn.gate.{p}', 'layers.{i}.ffn.up.{p}']"]],
  },
  {
    id: 'neobert-qkv-blocks',
    file: 'bindings/pretrained/families.js',
    what: "NeoBERT's fused qkv split as [Q | K | V] blocks instead of per head",
    edits: [['const parts = hit.e.split ? splitHeads(', 'const parts = false ? splitHeads(']],
  },
  {
    id: 'roformer-half',
    file: 'bindings/pretrained/families.js',
    what: "RoFormer's rotation in rotate_half pairs instead of interleaved ones",
    edits: [
      ["positionOptions: { base: 10000, style: 'interleaved' }, ...embedDim(hf) };", "positionOptions: { base: 10000, style: 'half' }, ...embedDim(hf) };"],
    ],
  },
  {
    id: 'electra-head-tanh',
    file: 'bindings/pretrained/heads.js',
    what: "ELECTRA's classification head with BERT's tanh instead of gelu",
    edits: [
      [
        "sequence: { tensors: CLASSIFIER_DENSE, config: () => ({ dense: true, activation: 'gelu' }) },",
        "sequence: { tensors: CLASSIFIER_DENSE, config: () => ({ dense: true, activation: 'tanh' }) },",
      ],
    ],
  },
  {
    id: 'eurobert-kv-heads',
    file: 'bindings/pretrained/families.js',
    what: "EuroBERT's num_key_value_heads ignored",
    edits: [["kvHeads: requireInt(hf, 'num_key_value_heads', heads),", 'kvHeads: heads,']],
  },
];

requireLinkedWorktree('families_mutations.mjs', 'core/, plugins/ and bindings/');
const onlyArg = process.argv.indexOf('--only');
const only = onlyArg > 0 ? process.argv[onlyArg + 1].split(',') : null;
const isC = (file) => /\.[ch]$/.test(file);

// build.sh's single-threaded wasm builds, objects cached per source text
const CACHE = '/tmp/sf-families-mutations';
const SOURCES = sh('bash', ['-c', 'ls core/*.c plugins/position/*.c plugins/norm/*.c']).stdout.trim().split('\n');
const COLD = /^core\/(config|json|modelfile|api|error|registry|sfmath|heads)\.c$/;
const SYS = existsSync('/usr/share/emscripten/cache/sysroot') ? '/usr/share/emscripten/cache/sysroot' : null;
function build() {
  const headers = SOURCES.concat(sh('bash', ['-c', 'ls core/*.h']).stdout.trim().split('\n')).map((f) => readFileSync(f));
  const hh = createHash('sha1');
  for (const h of headers.slice(SOURCES.length)) hh.update(h);
  const hdr = hh.digest('hex').slice(0, 12);
  const objs = { s: [], r: [] };
  for (const f of SOURCES) {
    const key = createHash('sha1').update(readFileSync(f)).update(hdr).digest('hex').slice(0, 16);
    const hot = f === 'core/kernels.c',
      opt = COLD.test(f) ? '-Oz' : hot ? '-O3' : '-Os';
    for (const [kind, args] of [
      ['s', ['emcc', opt, '-std=c11', '-Wall', '-Wextra', '-Werror', '-msimd128', '-c', f]],
      [
        'r',
        [
          'clang-16',
          '--target=wasm32-unknown-emscripten',
          `--sysroot=${SYS}`,
          ...(hot ? ['-O2', '-flto'] : [opt]),
          '-std=c11',
          '-Wall',
          '-Wextra',
          '-Werror',
          '-msimd128',
          '-mbulk-memory',
          '-mrelaxed-simd',
          '-c',
          f,
        ],
      ],
    ]) {
      const dir = `${CACHE}/${kind}`;
      mkdirSync(dir, { recursive: true });
      const o = `${dir}/${f.replace(/\//g, '_')}.${key}.o`;
      if (!existsSync(o)) {
        const r = sh(args[0], [...args.slice(1), '-o', o]);
        if (r.status !== 0) return r.stderr.split('\n').slice(0, 10).join('\n');
      }
      objs[kind].push(o);
    }
  }
  const wasmFlags = [
    '-sSTANDALONE_WASM',
    '--no-entry',
    '-sALLOW_MEMORY_GROWTH',
    '-sABORTING_MALLOC=0',
    '-sTOTAL_STACK=256KB',
    '-sINITIAL_MEMORY=2MB',
    '-sMAXIMUM_MEMORY=2GB',
    '-sMALLOC=emmalloc',
  ];
  let r = sh('emcc', ['-O3', '-msimd128', ...wasmFlags, ...objs.s, '-o', 'dist/swapformer.wasm']);
  if (r.status !== 0) return r.stderr;
  const lib = `${SYS}/lib/wasm32-emscripten`;
  r = sh('wasm-ld-16', [
    '-o',
    `${CACHE}/linked.wasm`,
    ...objs.r,
    `${lib}/crt1_reactor.o`,
    `-L${lib}`,
    '-lstandalonewasm-memgrow',
    '-lstubs',
    '-lnoexit',
    '-lc',
    '-lemmalloc',
    '-lcompiler_rt',
    '--lto-O3',
    '--strip-all',
    '--gc-sections',
    '--entry=_initialize',
    '-z',
    'stack-size=262144',
    '--initial-memory=2097152',
    '--max-memory=2147483648',
    '--global-base=1024',
  ]);
  if (r.status !== 0) return r.stderr;
  r = sh(process.execPath, [
    'node_modules/binaryen/bin/wasm-opt',
    '-O3',
    '--enable-simd',
    '--enable-relaxed-simd',
    '--enable-bulk-memory',
    '--enable-threads',
    '--enable-mutable-globals',
    '--enable-sign-ext',
    '--enable-nontrapping-float-to-int',
    `${CACHE}/linked.wasm`,
    '-o',
    'dist/swapformer-relaxed.wasm',
  ]);
  return r.status === 0 ? null : r.stderr;
}

function runTest() {
  const r = sh(process.execPath, [...NODE_FLAGS, '--test', '--test-reporter=tap', 'tests/families.test.js'], {
    timeout: 600_000,
    env: { ...process.env, SWAPFORMER_BACKEND: 'wasm' },
  });
  const failed = [...r.stdout.matchAll(/^not ok \d+ - (.*)$/gm)].map((m) => m[1]);
  return { status: r.status, failed };
}

const selected = MUTATIONS.filter((m) => !only || only.includes(m.id));
const prebuilds = existsSync('prebuilds') && statSync('prebuilds').isDirectory();
const putBack = () => prebuilds && existsSync('prebuilds.mutations') && renameSync('prebuilds.mutations', 'prebuilds');
const { apply, restore } = prepare(selected, putBack);
if (prebuilds) renameSync('prebuilds', 'prebuilds.mutations');

let missed = 0;
try {
  let err = build();
  if (err) throw new Error(`the unmutated build fails:\n${err}`);
  const base = runTest();
  if (base.status !== 0) throw new Error(`the unmutated test fails: ${base.failed.join('; ')}`);
  for (const m of selected) {
    apply(m);
    err = isC(m.file) ? build() : null;
    const r = err ? { status: 0, failed: [] } : runTest();
    restore();
    const caught = !err && r.status !== 0;
    if (!caught) missed++;
    console.log(
      `${err ? 'BUILD FAILED' : caught ? 'caught' : 'MISSED'}  ${m.id.padEnd(28)} ${m.what}${caught ? `  <- ${r.failed.join(' | ').slice(0, 300)}` : ''}${err ? `\n${err}` : ''}`,
    );
  }
} finally {
  restore();
  build(); // the unmutated wasm again
  putBack();
}
console.log(`${selected.length - missed}/${selected.length} mutations caught`);
process.exit(missed ? 1 : 0);
