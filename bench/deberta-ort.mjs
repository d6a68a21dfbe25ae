#!/usr/bin/env node
// DeBERTa-v3-xsmall's shape (384 wide, 12 layers, 6 heads of 64, ffDim 1536, the disentangled
// scheme with buckets 256 over 512: c2p and p2c, share_att_key, the table normed; no absolute
// positions; post-LayerNorm, eps 1e-7; GELU) and BERT's layout of the same shape (learned
// positions), f32, on the same random weights in swapformer (the native addon and the wasm, one
// thread each) and in onnxruntime-web (bench/node_modules/onnxruntime-web: its wasm backend in
// Node, env.wasm.numThreads 1, graphOptimizationLevel 'all'). One sequence of T tokens, the
// forward pass alone (no tokenizer, no head); a vocabulary of 8,192 rows (as bench/deberta.mjs).
//
//   node tools/node.mjs bench/deberta-ort.mjs [--dtype f32|q8] [--runs 7] [--lengths 128,512] [--warmup 1] [--dir bench/.cache/deberta]
//
// --dtype q8: swapformer loads the same files with dtype 'q8' (int8 weights, a scale per row);
// ORT runs the plain graphs as its quantize_dynamic writes them (*-q8.onnx: per-channel int8
// weights, activations quantized per tensor at run time, DynamicQuantizeMatMul). The check is then
// against the f32 graph's outputs with a q8 bound: every token row's cosine at least 0.995.
//
// The model files and ONNX graphs come from bench/export_deberta.py (Debian's PyTorch and
// python3-onnx, /usr/bin/python3), run first when a file is missing (--export: always). ORT's
// DeBERTa graph is DebertaV2Model's forward unfused (the c2p and p2c products and gathers as
// separate nodes: onnxruntime has no fused disentangled attention); BERT has two graphs, the
// plain export and the fused one (com.microsoft Attention, SkipLayerNormalization, BiasGelu:
// onnxruntime's own BERT optimisation), each a row of the table.
//
// At every T, before timing, every contender's hidden states are checked against ORT's (plain
// graph): max |a - b|, max |a - b| / max |ORT|, the smallest cosine of a token's row and that of
// the mean-pooled rows. A case whose relative difference passes 1e-4 (or a row cosine falls below
// 0.99999) is not timed (exit code 1). Then one warm-up round and --runs timed rounds, every
// contender once a round, the order reversed every other round (bench/harness.js
// timeAlternating); the table shows medians in ms and ORT's time over swapformer's.
import { readFileSync, existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import os from 'node:os';
import * as H from './harness.js';
import { configure, loadModel, runtimeInfo } from '../bindings/index.js';

const BENCH = fileURLToPath(new URL('.', import.meta.url));
const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const RUNS = Number(arg('runs', 7));
const WARMUP = Number(arg('warmup', 1));
const LENGTHS = arg('lengths', '128,512').split(',').map(Number);
const DIR = arg('dir', join(BENCH, '.cache', 'deberta'));
const DTYPE = arg('dtype', 'f32');
if (DTYPE !== 'f32' && DTYPE !== 'q8') throw new Error(`--dtype ${DTYPE}: f32 or q8`);
const Q8 = DTYPE === 'q8';
const REL_MAX = Q8 ? Infinity : 1e-4,
  COS_MIN = Q8 ? 0.995 : 0.99999;

const MODELS = Q8
  ? [
      { name: 'deberta-v3-xsmall', file: 'deberta-v3-xsmall', check: 'deberta-v3-xsmall.onnx', graphs: [['ORT', 'deberta-v3-xsmall-q8.onnx']] },
      { name: 'bert (same shape)', file: 'bert-xsmall', check: 'bert-xsmall.onnx', graphs: [['ORT', 'bert-xsmall-q8.onnx']] },
    ]
  : [
      { name: 'deberta-v3-xsmall', file: 'deberta-v3-xsmall', graphs: [['ORT', 'deberta-v3-xsmall.onnx']] },
      {
        name: 'bert (same shape)',
        file: 'bert-xsmall',
        graphs: [
          ['ORT', 'bert-xsmall.onnx'],
          ['ORT fused', 'bert-xsmall-fused.onnx'],
        ],
      },
    ];
const FILES = MODELS.flatMap((m) => [`${m.file}.safetensors`, ...(m.check ? [m.check] : []), ...m.graphs.map((g) => g[1])]);
if (process.argv.includes('--export') || FILES.some((f) => !existsSync(join(DIR, f)))) {
  const py = spawnSync('/usr/bin/python3', [join(BENCH, 'export_deberta.py'), '--out', DIR], { stdio: 'inherit' });
  if (py.status !== 0) throw new Error(`bench/export_deberta.py failed (exit ${py.status})`);
}

// onnxruntime-web, the root's devDependency (bench/bench.js's too)
const ORT_DIR = join(BENCH, '..', 'node_modules', 'onnxruntime-web');
const ortPkg = JSON.parse(readFileSync(join(ORT_DIR, 'package.json'), 'utf8'));
const ort = await import(pathToFileURL(join(ORT_DIR, ortPkg.exports['.'].node.import)).href);
ort.env.wasm.numThreads = 1;

/** swapformer on one backend (null where it does not load), one thread. */
async function swapformer(backend, bytes) {
  configure({ backend });
  try {
    const enc = await loadModel(bytes, { threads: 1, dtype: DTYPE });
    const info = await runtimeInfo({ threads: 1 });
    return { enc, info };
  } catch (e) {
    console.log(`swapformer ${backend}: ${e.code ?? e.name}: ${e.message}`);
    return null;
  } finally {
    configure({ backend: undefined });
  }
}

const ms = (x) => (x === undefined ? '-' : x.toFixed(1));
const ratio = (a, b) => (a === undefined || b === undefined ? '-' : (a / b).toFixed(2));
const rows = [];
let failed = false;
console.log(
  `${os.cpus()[0]?.model}, Node ${process.version}, onnxruntime-web ${ortPkg.version}; ${DTYPE}; ${RUNS} runs after ${WARMUP} warm-up, median ms of one forward; load ${os.loadavg()[0].toFixed(2)}`,
);

for (const m of MODELS) {
  const bytes = readFileSync(join(DIR, `${m.file}.safetensors`));
  const sf = { native: await swapformer('native', bytes), wasm: await swapformer('wasm', bytes) };
  const sessions = [];
  for (const [label, file] of m.graphs) sessions.push({ label, session: await ort.InferenceSession.create(readFileSync(join(DIR, file)), H.ORT_SESSION) });
  // q8: the outputs checked against the f32 graph's
  const checkSession = m.check ? await ort.InferenceSession.create(readFileSync(join(DIR, m.check)), H.ORT_SESSION) : null;
  console.log(
    `\n${m.name}: swapformer ${['native', 'wasm']
      .map((b) => (sf[b] ? `${b} ${sf[b].info.isa}${b === 'wasm' ? ` (${sf[b].info.build})` : ''}` : `${b} unavailable`))
      .join(', ')}; ${m.graphs.map((g) => `${g[0]}: ${g[1]}`).join(', ')}`,
  );
  try {
    for (const T of LENGTHS) {
      const ids = Array.from({ length: T }, (_, t) => 1 + ((t * 7919) % 8000));
      const feeds = H.ortFeeds(ort, ids);
      const runners = [
        ...['native', 'wasm'].filter((b) => sf[b]).map((b) => ({ label: `swapformer ${b}`, key: b, run: () => sf[b].enc.forward(ids).data })),
        ...sessions.map((s) => ({ label: s.label, key: s.label, run: async () => (await s.session.run(feeds)).last_hidden_state.data })),
      ];
      // the check: every contender against ORT's plain graph, on these ids, before any timing
      const outs = {};
      for (const r of runners) outs[r.key] = (await r.run()).slice();
      const ref = checkSession ? (await checkSession.run(feeds)).last_hidden_state.data.slice() : outs.ORT;
      let ok = true;
      for (const r of runners.filter((x) => checkSession || x.key !== 'ORT')) {
        const a = outs[r.key];
        let maxAbs = 0;
        for (let i = 0; i < a.length; i++) maxAbs = Math.max(maxAbs, Math.abs(a[i] - ref[i]));
        const g = H.agreement(a, ref, 384);
        const good = a.length === ref.length && g.rel <= REL_MAX && g.minCos >= COS_MIN;
        ok &&= good;
        console.log(
          `  T=${T} check ${r.label} vs ORT${checkSession ? ' f32' : ''}: max |diff| ${maxAbs.toExponential(2)}, relative ${g.rel.toExponential(2)}, ` +
            `cosine: min row ${g.minCos.toFixed(9)}, pooled ${g.pooledCos.toFixed(9)} (1 - min row ${(1 - g.minCos).toExponential(1)})${good ? '' : '  CHECK FAILED'}`,
        );
      }
      if (!ok) {
        failed = true;
        console.log(`  T=${T}: not timed (the outputs disagree)`);
        continue;
      }
      const res = await H.timeAlternating(runners, { warmup: WARMUP, runs: RUNS, log: (s) => console.log(`  T=${T}${s.slice(3)}`) });
      const med = Object.fromEntries(res.map((r, k) => [runners[k].key, r.median]));
      for (const [label] of m.graphs) rows.push([m.graphs.length > 1 ? `${m.name}, ${label}` : m.name, T, med.native, med.wasm, med[label]]);
    }
  } finally {
    for (const b of ['native', 'wasm']) sf[b]?.enc.dispose();
    for (const s of sessions) await s.session.release();
    await checkSession?.release();
  }
}

console.log('\nmodel (ORT graph)               T     swapformer native  swapformer wasm  ORT-web  ORT/native  ORT/wasm');
for (const [name, T, n, w, o] of rows)
  console.log(
    `${name.padEnd(31)} ${String(T).padEnd(5)} ${ms(n).padStart(17)}  ${ms(w).padStart(15)}  ${ms(o).padStart(7)}  ${ratio(o, n).padStart(10)}  ${ratio(o, w).padStart(8)}`,
  );
if (failed) {
  console.log('CHECK FAILED: a case was not timed');
  process.exitCode = 1;
}
