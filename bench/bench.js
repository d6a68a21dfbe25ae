// swapformer vs onnxruntime-web: `npm run bench`
// (node --experimental-wasm-relaxed-simd bench/bench.js). A benchmark, not a test.
//
//   --no-browser        Node only (skip headless Chromium)
//   --only=browser      Chromium only (still sets up the cache)
//   --skip-long         skip the long-sequence runs (RoPE / ALiBi at T=512 and T=8192)
//   --long-T=N          their length (default 8192)
//   --quick             few runs, and only the threads x dtypes comparison, int8
//                       accuracy and load memory (trying the script out: the
//                       figures are not for reporting)
//   --threads=1,2       the thread counts compared (default 1, 2 and 4, those the
//                       machine has cores for)
//   --wait-quiet[=L]    wait (up to an hour) for the 1-minute load average to fall
//                       below L (0.5) before measuring
//   --no-write          do not write bench/RESULTS.md
//   --update-readme     also replace the README "Performance" block (between
//                       <!-- bench:begin --> and <!-- bench:end -->, added at the
//                       end of the section if absent)
//   --from-json         measure nothing: rewrite RESULTS.md (and with
//                       --update-readme the README block) from the last run's
//                       raw figures, bench/.cache/results.json
//
// What it does, in order: builds the peak micro-benchmark (bench/peak.c, clang-16
// + wasm-ld-16) and the matrix products alone (bench/gemm.c); writes the model files
// (createEncoder with a seed, non-trivial biases and norm gains) and their ONNX
// exports, f32 and dynamically quantized (bench/export_onnx.py, Debian's PyTorch and
// python3-onnx) into bench/.cache/, only when missing or outdated; measures the peak;
// then MiniLM-L6 by thread count and dtype (f32, q8), swapformer against
// onnxruntime-web alternately on the same weights and ids after cross-checking their
// outputs, in a fresh Node process per thread count (bench/matrix.js) and a fresh
// Chromium page per thread count (bench/browser.js), with CPU profiles of the
// relaxed build in Chromium; int8 accuracy; the one-thread f32 cases of the other
// shapes; load memory, cold start and long sequences in fresh child processes
// (bench/probe.js); the same one-thread cases in headless Chromium; prints the
// tables, writes RESULTS.md and the README block (bench/.cache/README-performance.md).
// How busy the rest of the machine was is measured alongside (bench/quiet.js).
import { readFileSync, readdirSync, writeFileSync, existsSync, statSync, mkdirSync, copyFileSync, rmSync } from 'node:fs';
import { spawn, spawnSync, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import os from 'node:os';
import * as H from './harness.js';
import { cpuMeter, waitQuiet } from './quiet.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BENCH = join(ROOT, 'bench');
const CACHE = join(BENCH, '.cache');
const PYTHON = process.env.BENCH_PYTHON || '/usr/bin/python3';
const ORT_DIR = join(ROOT, 'node_modules', 'onnxruntime-web');
const ORT_WASM = join(ORT_DIR, 'dist', 'ort-wasm-simd-threaded.wasm');
const DIST = {
  plain: join(ROOT, 'dist', 'swapformer.wasm'), relaxed: join(ROOT, 'dist', 'swapformer-relaxed.wasm'),
  plainMt: join(ROOT, 'dist', 'swapformer-mt.wasm'), relaxedMt: join(ROOT, 'dist', 'swapformer-relaxed-mt.wasm'),
};
const DIST_NAME = { plain: 'dist/swapformer.wasm', relaxed: 'dist/swapformer-relaxed.wasm', plainMt: 'dist/swapformer-mt.wasm', relaxedMt: 'dist/swapformer-relaxed-mt.wasm' };
// The binaries measured: copied from dist/ at the start, so that Node, the child
// processes and Chromium all run the same ones even if dist/ is rebuilt meanwhile.
const SNAP_DIR = join(CACHE, 'dist');
const SNAP = Object.fromEntries(Object.entries(DIST).map(([k, f]) => [k, join(SNAP_DIR, f.split('/').pop())]));
/** configure()'s wasmPaths keys -> the copies. */
const SNAP_PATHS = { simd: SNAP.plain, relaxed: SNAP.relaxed, simdThreads: SNAP.plainMt, relaxedThreads: SNAP.relaxedMt };
const ORT_SETTINGS = "onnxruntime-web wasm backend: env.wasm.numThreads = 1 (the threads x dtypes comparison: its thread count), executionProviders ['wasm'], " +
  "graphOptimizationLevel 'all' (defaults otherwise: CPU memory arena and memory pattern on, sequential execution)";

const log = (...a) => console.log(...a);
const rel = (p) => p.replace(ROOT, '').replace(/^\//, '');
const mtime = (p) => (existsSync(p) ? statSync(p).mtimeMs : -1);
const sha = (s) => createHash('sha256').update(s).digest('hex').slice(0, 16);
/** Which swapformer binaries are measured (another engineer may rebuild them meanwhile). */
const distIds = () => Object.fromEntries(Object.entries(DIST).filter(([, f]) => existsSync(f))
  .map(([k, f]) => [k, `${sha(readFileSync(f)).slice(0, 12)} (${new Date(mtime(f)).toISOString().slice(0, 19)}Z)`]));

// ------------------------------------------------------------------ plan

/** Runs per case: [warm-up rounds, timed rounds]. */
const RUNS = {
  'MiniLM-L6': { 128: [3, 15], 512: [2, 10] },
  'BERT-base': { 128: [2, 10], 512: [1, 10] },
  'MiniLM-L6 modern': { 128: [3, 15], 512: [2, 10] },
  'MiniLM-L6 modern ALiBi': { 512: [2, 10] },
};
const ORT_CASES = [['MiniLM-L6', 128], ['MiniLM-L6', 512], ['BERT-base', 128], ['BERT-base', 512]];
const SWAP_CASES = [['MiniLM-L6 modern', 128], ['MiniLM-L6 modern', 512], ['MiniLM-L6 modern ALiBi', 512]];
const GRAPHS = ['fused', 'plain'];
/** The threads x dtype comparison (issue 11): MiniLM-L6 at these T, [warm-up rounds, timed rounds]. */
const MATRIX_SHAPE = 'MiniLM-L6';
const MATRIX_RUNS = { 128: [3, 15], 512: [2, 10] };
/** Thread counts compared: 1, 2 and 4 where the machine has the cores. */
const threadCounts = (cores, only) => (only ?? [1, 2, 4]).filter((t) => t <= cores);
/** The ONNX graphs of the comparison: ORT's f32 graphs and their dynamic quantization. */
const MATRIX_GRAPHS = [...GRAPHS, ...GRAPHS.map((g) => `${g}-q8`)];

/**
 * The threads x dtype runs, one process (page) per thread count: its cases [T, warm-up
 * rounds, timed rounds], and in the one of the most threads the smaller counts swapformer
 * runs at too (the scaling).
 */
const matrixPlan = (opts, counts) => counts.map((threads) => ({
  threads,
  Ts: Object.entries(MATRIX_RUNS).map(([T, [w, n]]) => [+T, ...(opts.quick ? [1, 3] : [w, n])]),
  scaling: threads === counts.at(-1) ? counts.filter((x) => x < threads) : [],
}));

/**
 * The one-thread cases' MiniLM-L6 rows (f32) out of the thread-count comparison's
 * one-thread run, in the form runCase returns (the same alternating rounds: measured
 * once), failed ones included: they stand first in planner()'s order.
 */
function oneThreadF32(matrix) {
  return (matrix ?? []).filter((c) => c.threads === 1).map((c) => (c.error ? c : {
    ...c, results: c.results.filter((r) => r.dtype === 'f32' && r.threads === 1),
  }));
}
const graphLabel = (g) => `ORT ${g}`;

/**
 * The cases in order, as a function (done) -> next spec | null: MiniLM with
 * both ONNX graphs, then BERT-base with the graph that was faster for MiniLM at
 * the same T (BERT-base T=512 is slow in ORT: one graph is enough there), then
 * the swapformer-only variants. make(shape, T, graphs) builds the spec.
 */
function planner(make) {
  const order = [...ORT_CASES, ...SWAP_CASES];
  return (done) => {
    if (done.length >= order.length) return null;
    const [shape, T] = order[done.length];
    if (shape === 'BERT-base') {
      const mini = done.find((c) => c.shape === 'MiniLM-L6' && c.T === T && !c.error);
      const best = mini && H.ortBest(mini);
      return make(shape, T, [best ? best.label.replace('ORT ', '') : GRAPHS[0]]);
    }
    return make(shape, T, shape === 'MiniLM-L6' ? GRAPHS : []);
  };
}

// ------------------------------------------------------------------ set-up

function machine() {
  const info = readFileSync('/proc/cpuinfo', 'utf8'), field = (k) => (info.match(new RegExp(`^${k}\\s*:\\s*(.*)$`, 'm')) ?? [])[1];
  const flags = ` ${field('flags') ?? ''} `;
  const cpu = `${field('model name') ?? os.cpus()[0]?.model} (family ${field('cpu family')}, model ${field('model')}` +
    `${field('cpu MHz') ? `, ${Math.round(+field('cpu MHz'))} MHz` : ''}; AVX2 ${flags.includes(' avx2 ') ? 'yes' : 'no'}, FMA ${flags.includes(' fma ') ? 'yes' : 'no'})`;
  const osName = existsSync('/etc/os-release') ? (readFileSync('/etc/os-release', 'utf8').match(/PRETTY_NAME="?([^"\n]*)/) ?? [])[1] : os.platform();
  let git = '';
  try {
    git = execFileSync('git', ['-C', ROOT, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['-C', ROOT, 'status', '--porcelain', '--', 'core', 'plugins', 'bindings'], { encoding: 'utf8' }).trim();
    if (dirty) git += ' + uncommitted changes in core/plugins/bindings';
  } catch { /* not a checkout */ }
  const version = (p) => { try { return JSON.parse(readFileSync(join(ROOT, 'node_modules', p, 'package.json'), 'utf8')).version; } catch { return 'not installed'; } };
  return {
    date: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    cpu, cores: os.cpus().length, memory: `${Math.round(os.totalmem() / 2 ** 30)} GB`, os: `${osName} (${os.release()})`,
    node: process.version, v8: process.versions.v8, nodeFlags: process.execArgv.join(' ') || '(none)',
    ort: version('onnxruntime-web'), playwright: version('playwright-core'), git,
    torch: (spawnSync(PYTHON, ['-c', 'import torch; print(torch.__version__)'], { encoding: 'utf8' }).stdout || 'not found').trim(),
  };
}

function buildPeak() {
  const src = join(BENCH, 'peak.c');
  for (const [name, flags] of [['peak', []], ['peak-relaxed', ['-mrelaxed-simd', '-DRELAXED']]]) {
    const out = join(CACHE, `${name}.wasm`), obj = join(CACHE, `${name}.o`);
    if (mtime(out) > mtime(src)) continue;
    log(`build: ${rel(out)} (clang-16 + wasm-ld-16)`);
    execFileSync('clang-16', ['--target=wasm32', '-O3', '-msimd128', ...flags, '-c', src, '-o', obj], { stdio: 'inherit' });
    execFileSync('wasm-ld-16', ['--no-entry', '--export-dynamic', obj, '-o', out], { stdio: 'inherit' });
  }
}

// The clang-16 + wasm-ld-16 builds link against emscripten's sysroot, as build.sh's clang16_build does.
const SYSROOT = '/usr/share/emscripten/cache/sysroot';
const EMSCRIPTEN_LINK = [`${SYSROOT}/lib/wasm32-emscripten/crt1_reactor.o`, `-L${SYSROOT}/lib/wasm32-emscripten`,
  '-lstandalonewasm-memgrow', '-lstubs', '-lnoexit', '-lc', '-lemmalloc', '-lcompiler_rt'];

// bench/gemm.c with core/kernels.c, built as the shipped wasm files are.
function buildGemm() {
  const srcs = [join(BENCH, 'gemm.c'), join(ROOT, 'core', 'kernels.c'), join(ROOT, 'core', 'error.c')];
  const newest = Math.max(...srcs.map(mtime), mtime(join(ROOT, 'core', 'kernels.h')), mtime(join(ROOT, 'core', 'simd.h')));
  const simd = join(CACHE, 'gemm.wasm'), relaxed = join(CACHE, 'gemm-relaxed.wasm');
  if (mtime(simd) < newest) {
    log(`build: ${rel(simd)} (emcc, as dist/swapformer.wasm)`);
    execFileSync('emcc', ['-O3', '-msimd128', '-std=c11', '-sSTANDALONE_WASM', '--no-entry', '-sALLOW_MEMORY_GROWTH', '-sMALLOC=emmalloc', ...srcs, '-o', simd],
      { stdio: 'inherit', env: { ...process.env, NODE_PATH: `${process.env.NODE_PATH ?? ''}:/usr/share/nodejs` } });
  }
  if (mtime(relaxed) < newest) {
    log(`build: ${rel(relaxed)} (clang-16 + wasm-ld-16, as dist/swapformer-relaxed.wasm)`);
    const objs = srcs.map((f, i) => {
      const o = join(CACHE, `gemm-${i}.o`);
      execFileSync('clang-16', ['--target=wasm32-unknown-emscripten', `--sysroot=${SYSROOT}`, '-O3', '-std=c11', '-msimd128', '-mrelaxed-simd', '-c', f, '-o', o], { stdio: 'inherit' });
      return o;
    });
    execFileSync('wasm-ld-16', ['-o', relaxed, ...objs, ...EMSCRIPTEN_LINK, '--gc-sections', '--entry=_initialize', '--max-memory=2147483648'], { stdio: 'inherit' });
  }
}

/**
 * dist/swapformer-relaxed.wasm as build.sh builds it (clang16_build: the same sources,
 * flags and link) but with its name section kept (no --strip-all), for the CPU profile:
 * V8 names wasm functions from it. Resolves to {file, sameCode}: sameCode, whether its
 * code section is byte for byte the shipped build's (the copy this run measures).
 */
export function buildNamed() {
  const out = join(CACHE, 'swapformer-relaxed-named.wasm'), dirs = ['core', 'plugins/position', 'plugins/norm'];
  const files = dirs.flatMap((d) => readdirSync(join(ROOT, d)).map((f) => `${d}/${f}`));
  const srcs = files.filter((f) => f.endsWith('.c')).sort();
  if (mtime(out) < Math.max(...[...files, 'build.sh', 'bench/bench.js'].map((f) => mtime(join(ROOT, f))))) {
    log(`build: ${rel(out)} (build.sh's relaxed build, name section kept)`);
    const obj = join(CACHE, 'named');
    rmSync(obj, { recursive: true, force: true });
    mkdirSync(obj, { recursive: true });
    const buildSh = readFileSync(join(ROOT, 'build.sh'), 'utf8');
    const HOT = new RegExp(buildSh.match(/^HOT='([^']*)'/m)[1]), HOT_OPT = buildSh.match(/^HOT_OPT=(\S+)/m)[1]; // build.sh's LTO files and their -O
    const objs = srcs.map((f) => {
      const o = join(obj, `${f.replace(/\//g, '_')}.o`);
      execFileSync('clang-16', ['--target=wasm32-unknown-emscripten', `--sysroot=${SYSROOT}`, ...(HOT.test(f) ? [HOT_OPT, '-flto'] : ['-Os']), '-std=c11',
        '-msimd128', '-mbulk-memory', '-mrelaxed-simd', '-c', join(ROOT, f), '-o', o], { stdio: 'inherit' });
      return o;
    });
    execFileSync('wasm-ld-16', ['-o', out, ...objs, ...EMSCRIPTEN_LINK, '--lto-O3', '--gc-sections', '--entry=_initialize', '-z', 'stack-size=262144', '--initial-memory=2097152', '--max-memory=2147483648', '--global-base=1024'], { stdio: 'inherit' });
  }
  const code = (f) => wasmSection(readFileSync(f), 10);
  const a = code(out), b = existsSync(SNAP.relaxed) ? code(SNAP.relaxed) : null;
  return { file: out, sameCode: !!b && a.equals(b) };
}

/** The bytes of a wasm module's section `id` (10: code). */
function wasmSection(bytes, id) {
  let i = 8;
  const leb = () => { let r = 0, sh = 0, x; do { x = bytes[i++]; r += (x & 127) * 2 ** sh; sh += 7; } while (x & 128); return r; };
  while (i < bytes.length) {
    const sid = bytes[i++], n = leb();
    if (sid === id) return bytes.subarray(i, i + n);
    i += n;
  }
  return Buffer.alloc(0);
}

/** GFLOP/s of the Linear layers of a forward (one layer's q,k,v,o,up,down for T rows), best of rounds. */
function runGemm(file, { T, C, F }, rounds = 40) {
  const x = new WebAssembly.Instance(new WebAssembly.Module(readFileSync(join(CACHE, file))), {}).exports;
  x._initialize?.();
  if (!x.setup(T, C, F)) throw new Error('gemm setup: out of memory');
  const flops = 2 * T * (4 * C * C + 2 * C * F);
  for (let i = 0; i < 3; i++) x.run(T, C, F, 1);
  let best = Infinity;
  for (let i = 0; i < rounds; i++) {
    const t = performance.now();
    x.run(T, C, F, 2);
    best = Math.min(best, (performance.now() - t) / 2);
  }
  return flops / best / 1e6;
}

async function relaxedAvailable() {
  try {
    await WebAssembly.compile(readFileSync(join(CACHE, 'peak-relaxed.wasm')));
    return true;
  } catch {
    return false;
  }
}

const modelPath = (shape) => join(CACHE, `${H.stem(shape)}.safetensors`);
const onnxPath = (shape, graph) => join(CACHE, `${H.stem(shape)}-${graph}.onnx`);

/** The model file of a shape, written when missing or made with another config/seed. */
async function ensureModel(shape, sf, wasm) {
  const path = modelPath(shape), keyPath = `${path}.key`;
  const source = shape === 'MiniLM-L6 modern ALiBi' ? 'MiniLM-L6 modern' : shape;
  const key = JSON.stringify({ cfg: H.SHAPES[shape], seed: H.SEEDS[source], perturb: 1 });
  if (existsSync(path) && existsSync(keyPath) && readFileSync(keyPath, 'utf8') === key) return path;
  log(`model: ${rel(path)}`);
  let weights;
  if (source !== shape) {
    // the same weights as the RoPE variant: only the position plugin differs
    const src = await sf.loadModel(readFileSync(await ensureModel(source, sf, wasm)), { wasm });
    weights = src.getWeights();
    src.dispose();
  } else {
    const init = await sf.createEncoder(H.SHAPES[shape], { seed: H.SEEDS[shape], wasm });
    weights = H.perturb(init.getWeights(), H.SEEDS[shape]);
    init.dispose();
  }
  const enc = await sf.createEncoder(H.SHAPES[shape], { weights, wasm });
  writeFileSync(path, enc.save());
  enc.dispose();
  writeFileSync(keyPath, key);
  return path;
}

/** The ONNX export of a model file, redone when the model or the exporter changed. */
function ensureOnnx(shape, graph) {
  const model = modelPath(shape), out = onnxPath(shape, graph), keyPath = `${out}.key`;
  const script = join(BENCH, 'export_onnx.py');
  const key = `${statSync(model).size}:${mtime(model)}:${sha(readFileSync(script))}:${graph}`;
  if (existsSync(out) && existsSync(keyPath) && readFileSync(keyPath, 'utf8') === key) return out;
  log(`onnx: ${rel(out)} (${rel(script)} with ${PYTHON})`);
  const r = spawnSync(PYTHON, [script, model, out, '--graph', graph], { stdio: ['ignore', 'inherit', 'pipe'], encoding: 'utf8' });
  if (r.status !== 0) {
    throw new Error(`export_onnx.py failed (${PYTHON} needs PyTorch: apt-get install python3-torch):\n${(r.stderr || '').split('\n').filter((l) => !/warn/i.test(l)).slice(-8).join('\n')}`);
  }
  writeFileSync(keyPath, key);
  return out;
}

/** Runs a bench script in a fresh Node process (same flags), its log lines passed on; resolves to its last line's JSON. */
function child(script, spec, timeoutMs = 30 * 60e3) {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [...process.execArgv, join(BENCH, script), JSON.stringify(spec)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let last = '', err = '', buf = '';
    const timer = setTimeout(() => p.kill(), timeoutMs);
    p.stdout.setEncoding('utf8').on('data', (d) => {
      buf += d;
      let i;
      while ((i = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        if (line.startsWith('{')) last = line;
        else log(line);
      }
    });
    p.stderr.setEncoding('utf8').on('data', (d) => { err += d; });
    p.on('close', (code) => {
      clearTimeout(timer);
      if (buf.startsWith('{')) last = buf;
      try {
        resolve(JSON.parse(last));
      } catch {
        resolve({ error: (err.trim().split('\n').slice(-3).join(' ') || `exit ${code}`).slice(0, 300) });
      }
    });
  });
}

/** Runs bench/probe.js in a fresh Node process (same flags as this one): one cold start or memory measurement. */
const probe = (spec, timeoutMs = 20 * 60e3) => child('probe.js', spec, timeoutMs);

// ------------------------------------------------------------------ Node runs

/** The thread-count x dtype comparison in Node: one child process (bench/matrix.js) per thread count. */
async function nodeMatrix(opts, counts, relaxedOn) {
  const out = [];
  const onnx = Object.fromEntries(MATRIX_GRAPHS.map((g) => [g, onnxPath(MATRIX_SHAPE, g)]));
  const snap = Object.fromEntries(Object.entries(SNAP_PATHS).filter(([k, f]) => existsSync(f) && (relaxedOn || !k.startsWith('relaxed'))));
  for (const { threads: t, Ts, scaling } of matrixPlan(opts, counts)) {
    const r = await child('matrix.js', { threads: t, shape: MATRIX_SHAPE, model: modelPath(MATRIX_SHAPE), onnx, Ts, snap, relaxed: relaxedOn, scaling });
    if (r.error) {
      log(`  ${t} threads: ${r.error}`);
      out.push(...Ts.map(([T]) => ({ shape: MATRIX_SHAPE, T, threads: t, error: r.error })));
    } else out.push(...r.cases);
  }
  return out;
}

/**
 * The cost of int8, on more inputs than the timed ones: `n` sequences of several
 * lengths, q8 against f32 (swapformer: each build's q8 encoder against its f32 one;
 * onnxruntime-web: the fused-q8 graph against the fused one): per-token cosine of
 * the hidden states (smallest and mean over every token of every sequence), the
 * cosine of the mean-pooled embeddings (smallest and mean over the sequences) and
 * max |q8 - f32| / max |f32|. One thread (the outputs are the same for any count).
 */
async function accuracyRuns(opts, sf, builds, ort) {
  const lengths = opts.quick ? [16, 128] : [8, 16, 32, 64, 128, 128, 256, 512];
  const out = [];
  for (const shape of ['MiniLM-L6', 'MiniLM-L6 modern']) {
    const cfg = H.SHAPES[shape], bytes = readFileSync(modelPath(shape));
    const pairs = [];
    for (const b of builds) {
      const f32 = await sf.loadModel(bytes, { wasm: b.module }), q8 = await sf.loadModel(bytes, { wasm: b.module, dtype: 'q8' });
      pairs.push({ label: `${b.label} q8 vs f32`, ref: (ids) => f32.forward(ids).data, test: (ids) => q8.forward(ids).data, close: () => { f32.dispose(); q8.dispose(); } });
    }
    if (shape === 'MiniLM-L6') {
      const session = async (g) => ort.InferenceSession.create(readFileSync(onnxPath(shape, g)), H.ORT_SESSION);
      const [f, q] = [await session('fused'), await session('fused-q8')];
      const run = (s) => async (ids) => (await s.run(H.ortFeeds(ort, ids))).last_hidden_state.data;
      pairs.push({ label: 'ORT fused q8 vs fused', ref: run(f), test: run(q), close: async () => { await f.release(); await q.release(); } });
    }
    for (const p of pairs) {
      const rows = { minCos: 1, sumCos: 0, tokens: 0, pooled: [], rel: 0 };
      for (const [i, T] of lengths.entries()) {
        const ids = H.makeIds(T, cfg.vocabSize, 100 + i);
        const a = H.agreement(await p.test(ids), await p.ref(ids), cfg.dModel);
        rows.minCos = Math.min(rows.minCos, a.minCos), rows.sumCos += a.meanCos * T, rows.tokens += T;
        rows.pooled.push(a.pooledCos), rows.rel = Math.max(rows.rel, a.rel);
      }
      await p.close();
      const r = { shape, label: p.label, sequences: lengths.length, tokens: rows.tokens, lengths,
        minCos: rows.minCos, meanCos: rows.sumCos / rows.tokens, minPooled: Math.min(...rows.pooled), meanPooled: rows.pooled.reduce((x, y) => x + y) / rows.pooled.length, rel: rows.rel };
      log(`  ${shape}, ${p.label}: row cosine min ${r.minCos.toFixed(5)} mean ${r.meanCos.toFixed(5)}; pooled min ${r.minPooled.toFixed(6)}; rel ${r.rel.toExponential(2)}`);
      out.push(r);
    }
  }
  return out;
}

/** The one-thread f32 cases (ORT_CASES, SWAP_CASES) in Node, after those measured already (pre). */
async function nodeRuns(builds, sf, pre = []) {
  const ort = await import('onnxruntime-web');
  ort.env.wasm.numThreads = 1;
  const make = (shape, T, graphs) => {
    const [warmup, runs] = RUNS[shape][T];
    // BERT-base (slow) with the build Node 20 uses by default only, the SIMD one (relaxed SIMD
    // needs a flag there); Chromium times BERT-base with its default, the relaxed build
    const swap = shape === 'BERT-base' ? builds.filter((b) => !b.relaxed) : builds;
    return { shape, T, cfg: H.SHAPES[shape], model: modelPath(shape), warmup, runs,
             onnx: graphs.map((g) => ({ label: graphLabel(g), path: onnxPath(shape, g) })), swap };
  };
  const next = planner(make), cases = [...pre];
  for (let spec = next(cases); spec; spec = next(cases)) {
    log(`  ${spec.shape} T=${spec.T} (node)`);
    const meter = cpuMeter();
    const modelBytes = readFileSync(spec.model);
    try {
      cases.push(await H.runCase(spec, {
        log,
        openOrt: (g, ids) => H.openOrtRunner(ort, readFileSync(g.path), ids),
        openSwap: async (s, ids) => {
          const enc = await sf.loadModel(modelBytes, { wasm: s.module });
          return { run: () => enc.forward(ids).data, close: () => enc.dispose() };
        },
      }));
      cases.at(-1).machine = meter.stop();
    } catch (e) {
      log(`  ${spec.shape} T=${spec.T}: ${e.code ?? e.name}: ${e.message}`);
      cases.push({ shape: spec.shape, T: spec.T, error: `${e.code ?? e.name}: ${e.message}`.slice(0, 200) });
    }
  }
  return cases;
}

/**
 * Load memory of MiniLM-L6 (issue 11): a fresh process per row: swapformer f32 and q8
 * (loadModel of the f32 file, with dtype 'q8'), onnxruntime-web's f32 and q8 graphs
 * (the faster graph at one thread), at one thread and at the most threads; each after
 * loading, after a forward of 128 tokens and after dispose + the same load + forward.
 */
async function loadMemoryRuns(counts, graph) {
  const rows = [];
  const shape = MATRIX_SHAPE, snap = { simd: SNAP.plain, simdThreads: SNAP.plainMt };
  for (const t of [...new Set([1, counts.at(-1)])]) {
    for (const dtype of ['f32', 'q8']) {
      const sw = await probe({ runtime: 'swapformer', T: 128, model: modelPath(shape), reload: true, dtype, threads: t, ...(t > 1 ? { snap } : { wasm: SNAP.plain }) });
      const g = dtype === 'q8' ? `${graph}-q8` : graph;
      const o = await probe({ runtime: 'ort', T: 128, model: onnxPath(shape, g), reload: true, threads: t });
      rows.push({ runtime: 'swapformer', dtype, threads: t, ...sw }, { runtime: 'ort', graph: g, dtype, threads: t, ...o });
      log(`  load memory ${shape} ${dtype}, ${t} thread${t > 1 ? 's' : ''}: swapformer ${sw.error ?? H.fmt.mb(sw.memAfter)}, ORT ${g} ${o.error ?? H.fmt.mb(o.memAfter)}`);
    }
  }
  return rows;
}

async function coldAndMemory(nodeCases, relaxedFile) {
  const chosen = (shape, T) => {
    const c = nodeCases.find((x) => x.shape === (shape === 'BERT-base' ? 'BERT-base' : 'MiniLM-L6') && x.T === T && !x.error);
    const b = c && H.ortBest(c);
    return b ? b.label.replace('ORT ', '') : GRAPHS[0];
  };
  // cold start, T=128, alternating, a fresh process each: MiniLM-L6, and a tiny
  // BERT whose loading costs ~nothing (the runtimes' own start-up)
  const coldRuns = 5, cold = {};
  const memory = [];
  for (const shape of ['MiniLM-L6', 'tiny']) {
    const c = cold[shape] = { swapformer: [], ort: [], graph: shape === 'tiny' ? 'fused' : chosen(shape, 128) };
    const last = {};
    for (let i = 0; i < coldRuns; i++) {
      for (const rt of i % 2 ? ['ort', 'swapformer'] : ['swapformer', 'ort']) {
        const p = await probe({ runtime: rt, T: 128, vocab: H.SHAPES[shape].vocabSize, model: rt === 'ort' ? onnxPath(shape, c.graph) : modelPath(shape), distDir: SNAP_DIR });
        if (p.error) log(`  cold start ${shape} ${rt}: ${p.error}`);
        else c[rt].push(p);
        last[rt] = p;
      }
    }
    c.build = last.swapformer?.build;
    log(`  cold start ${shape}: swapformer ${c.swapformer.map((p) => p.coldMs.toFixed(0)).join(' ')} ms; ORT ${c.ort.map((p) => p.coldMs.toFixed(0)).join(' ')} ms`);
  }
  // wasm memory per case: one fresh process per runtime and case (MiniLM-L6 T=128: the load memory rows)
  for (const [shape, T] of [...ORT_CASES.slice(1), ...SWAP_CASES]) {
    const m = { shape, T };
    m.swapformer = await probe({ runtime: 'swapformer', T, model: modelPath(shape), wasm: SNAP.plain });
    // the relaxed build's memory, once (same allocations, a different binary)
    if (relaxedFile && shape === 'MiniLM-L6' && T === 512) m.relaxed = await probe({ runtime: 'swapformer', T, model: modelPath(shape), wasm: relaxedFile });
    if (H.SHAPES[shape].position === 'learned') {
      m.graph = chosen(shape, T);
      m.ort = await probe({ runtime: 'ort', T, model: onnxPath(shape, m.graph) });
    }
    log(`  memory ${shape} T=${T}: swapformer ${m.swapformer.error ?? H.fmt.mb(m.swapformer.memAfter)}` +
        (m.ort ? `, ORT ${m.ort.error ?? H.fmt.mb(m.ort.memAfter)}` : ''));
    memory.push(m);
  }
  return { cold, memory };
}

async function longRuns(opts) {
  const out = [];
  if (opts.skipLong) return out;
  for (const T of [512, opts.longT]) {
    for (const shape of ['MiniLM-L6 modern', 'MiniLM-L6 modern ALiBi']) {
      log(`  ${shape} T=${T} (fresh process)`);
      const p = await probe({ runtime: 'swapformer', T, model: modelPath(shape), wasm: SNAP.plain, long: true }, 30 * 60e3);
      Object.assign(p, { shape, T });
      log(`    ${p.error ?? `${(p.ms / 1000).toFixed(1)} s, activation ${H.fmt.mb(p.memAfter - p.memBefore)} (wasm memory ${H.fmt.mb(p.memBefore)} -> ${H.fmt.mb(p.memAfter)})`}`);
      out.push(p);
    }
  }
  return out;
}

function sizes(relaxedBuilt) {
  const row = (what, file) => {
    if (!existsSync(file)) return { what, file: rel(file), missing: true };
    const b = readFileSync(file);
    return { what, file: rel(file).replace('bench/.cache/dist/', 'dist/'), raw: b.length, gzip: gzipSync(b, { level: 9 }).length };
  };
  const rows = [row('swapformer wasm (SIMD)', SNAP.plain)];
  rows.push(relaxedBuilt ? row('swapformer wasm (relaxed SIMD)', SNAP.relaxed) : { what: 'swapformer wasm (relaxed SIMD)', file: 'dist/swapformer-relaxed.wasm', missing: true });
  for (const [k, what] of [['plainMt', 'swapformer wasm (SIMD, threads)'], ['relaxedMt', 'swapformer wasm (relaxed SIMD, threads)']]) {
    rows.push(existsSync(SNAP[k]) ? row(what, SNAP[k]) : { what, file: DIST_NAME[k], missing: true });
  }
  rows.push(row('onnxruntime-web wasm', ORT_WASM));
  rows.push(row('swapformer JS (bindings/index.js)', join(ROOT, 'bindings', 'index.js')));
  const ortJs = [join(ORT_DIR, 'dist', 'ort.wasm.min.mjs'), join(ORT_DIR, 'dist', 'ort-wasm-simd-threaded.mjs')];
  const js = ortJs.map((f) => readFileSync(f));
  rows.push({ what: 'onnxruntime-web JS (ort.wasm.min.mjs + ort-wasm-simd-threaded.mjs)', file: ortJs.map(rel).join(' + '),
              raw: js.reduce((s, b) => s + b.length, 0), gzip: js.reduce((s, b) => s + gzipSync(b, { level: 9 }).length, 0) });
  return rows;
}

// ------------------------------------------------------------------ report

/** The targets of the first performance issue (one thread, f32): speed, matrix products, long sequences, cold start. */
function targets(R) {
  const rows = [];
  const find = (cases, shape, T) => cases?.find((c) => c.shape === shape && c.T === T && !c.error);
  const speedup = (cases, shape, T, relaxed) => {
    const c = find(cases, shape, T), best = c && H.ortBest(c);
    const s = c?.results.find((r) => !r.ort && r.relaxed === relaxed);
    return best && s ? best.median / s.median : undefined;
  };
  // for a shortfall: the throughput swapformer would need, against what it has
  const need = (cases, peaks, shape, T, relaxed, want) => {
    const c = find(cases, shape, T), best = c && H.ortBest(c);
    const s = c?.results.find((r) => !r.ort && r.relaxed === relaxed);
    if (!best || !s || !peaks) return '';
    const g = (ms) => c.flops / ms / 1e6, pk = H.peakOf(relaxed ? peaks.relaxed : peaks.plain);
    return `; needs ${H.fmt.g(g(best.median / want))} GFLOP/s (${H.fmt.pct(g(best.median / want) / pk)} of peak), ` +
      `runs at ${H.fmt.g(g(s.median))} (${H.fmt.pct(g(s.median) / pk)}); ORT at ${H.fmt.g(g(best.median))}`;
  };
  for (const [shape, T, want] of [['MiniLM-L6', 128, 1.3], ['MiniLM-L6', 512, 1.8], ['BERT-base', 128, 1.3], ['BERT-base', 512, 1.3]]) {
    const v = speedup(R.node, shape, T, false), vr = speedup(R.node, shape, T, true);
    rows.push([`Node, ${shape} T=${T}: >= ${want}x ORT`, v === undefined ? '-' : `${H.fmt.x(v)} (SIMD build)` +
      (v < want ? need(R.node, R.peaks.node, shape, T, false, want) : '') +
      (vr === undefined ? '' : `; the relaxed build (Node 20 with --experimental-wasm-relaxed-simd): ${H.fmt.x(vr)}`), status(v, v >= want)]);
  }
  // matrix products: swapformer's matmul_forward alone (bench/gemm.c), against the peak of the same build
  if (R.gemm) {
    const fp = R.gemm.plain / H.peakOf(R.peaks.node.plain), fr = R.gemm.relaxed && R.gemm.relaxed / H.peakOf(R.peaks.node.relaxed);
    rows.push(['Node: matrix products >= 80% of the mul+add peak',
      `${R.gemm.shape}: SIMD ${H.fmt.g(R.gemm.plain)} GFLOP/s = ${H.fmt.pct(fp)} of the mul+add peak` +
      (fr ? `; relaxed ${H.fmt.g(R.gemm.relaxed)} = ${H.fmt.pct(fr)} of the fma peak` : '') +
      (fp < 0.8 ? `; the best L1 micro-kernel V8 leaves room for (${R.peaks.node.plain.gemmKernel}) reaches ${H.fmt.g(R.peaks.node.plain.gemm)} = ${H.fmt.pct(R.peaks.node.plain.gemm / H.peakOf(R.peaks.node.plain))} of it` : ''),
      status(fp, fp >= 0.8)]);
  } else rows.push(['Node: matrix products >= 80% of the mul+add peak', '-', 'not measured']);
  for (const l of (R.long ?? []).filter((x) => x.T > 512)) {
    const grow = l.error ? undefined : l.memAfter - l.memBefore;
    rows.push([`T=${l.T} ${l.shape.includes('ALiBi') ? 'ALiBi' : 'RoPE'}: activation memory < 64 MB`,
      l.error ?? `${H.fmt.mb(grow)} growth, ${(l.ms / 1000).toFixed(1)} s`, l.error ? 'SHORT' : status(grow, grow < 64 * 2 ** 20)]);
  }
  const relaxedRow = R.sizes.find((s) => s.what.includes('relaxed'));
  rows.push(['dist/swapformer-relaxed.wasm, chosen by feature detection', relaxedRow.missing ? 'not built' : `built; picked by default where relaxed SIMD validates (Node ${R.features?.relaxedSimd ? 'with the flag: yes' : 'here: no'}${R.browser ? `, Chromium: ${R.browser.relaxed ? 'yes' : 'no'}` : ''})`,
    relaxedRow.missing ? 'SHORT' : 'met']);
  if (R.browser) {
    for (const [shape, T] of ORT_CASES) {
      const rx = speedup(R.browser.cases, shape, T, true) !== undefined;
      const v = rx ? speedup(R.browser.cases, shape, T, true) : speedup(R.browser.cases, shape, T, false);
      rows.push([`Chromium, ${shape} T=${T}: >= 2x ORT`, v === undefined ? '-' : `${H.fmt.x(v)}${rx ? ' (relaxed)' : ' (SIMD build)'}` +
        (v < 2 ? need(R.browser.cases, R.browser.peaks, shape, T, rx, 2) : ''), status(v, v >= 2)]);
    }
  }
  // for a shortfall: where swapformer's cold start goes
  const coldWhy = (c) => {
    const m = (k) => fmt0(H.median(c.swapformer.map((x) => x[k])));
    return `; swapformer ${m('coldMs')} ms = ${m('importMs')} import + ${m('fetchMs')} reading/fetching the model file + ${m('loadMs')} loading it + ${m('firstMs')} first forward; ORT ${fmt0(H.median(c.ort.map((x) => x.coldMs)))} ms`;
  };
  for (const [shape, c] of Object.entries(R.cold ?? {})) {
    const cr = H.median(c.ort.map((p) => p.coldMs)) / H.median(c.swapformer.map((p) => p.coldMs));
    rows.push([`Cold start >= 10x faster than ORT (Node, ${shape === 'tiny' ? 'tiny model: the runtimes alone' : shape})`, Number.isFinite(cr) ? H.fmt.x(cr) + (cr < 10 ? coldWhy(c) : '') : '-', status(Number.isFinite(cr) ? cr : undefined, cr >= 10)]);
  }
  for (const [shape, bc] of Object.entries(R.browser?.cold ?? {})) {
    const b = H.median(bc.ort.map((x) => x.coldMs)) / H.median(bc.swapformer.map((x) => x.coldMs));
    rows.push([`Cold start >= 10x faster than ORT (Chromium, ${shape === 'tiny' ? 'tiny model: the runtimes alone' : shape})`, H.fmt.x(b) + (b < 10 ? coldWhy(bc) : ''), status(b, b >= 10)]);
  }
  return rows;
}

const status = (v, ok) => (v === undefined ? 'not measured' : ok ? 'met' : 'SHORT');
const plural = (t) => `${t} thread${t > 1 ? 's' : ''}`;

// ------------------------------------------------------------------ threads x dtypes (issue 11)

/** A swapformer result of a threads x dtype case: the build, dtype and thread count asked (default: the case's). */
const swapResult = (c, relaxed, dtype, threads = c.threads) =>
  c.results?.find((r) => !r.ort && r.relaxed === relaxed && r.dtype === dtype && r.threads === threads);

/** The build a target is judged on: Node the SIMD build (Node 20 needs a flag for relaxed SIMD), Chromium the relaxed one (its default). */
const judged = (env, R) => (env === 'Chromium' ? !!R.browser?.relaxed : false);
const buildName = (relaxed) => (relaxed ? 'relaxed build' : 'SIMD build');

/** The threads x dtype cases of each environment that ran: [[env, cases]]. */
const matrixEnvs = (R) => [['Node', R.matrix?.node], ['Chromium', R.browser?.matrix]].filter(([, c]) => c?.length);

/** How a result checked out: rel. diff (f32), row cosine vs f32 (q8), same bits as at the case's thread count. */
function checkCell(r) {
  const parts = [];
  if (r.agree) parts.push(`min row cos ${r.agree.minCos.toFixed(5)} vs ${r.diffRef}`);
  else if (r.diff !== undefined) parts.push(`rel ${H.fmt.e(r.diff)}`);
  if (r.identical !== undefined) parts.push(r.identical ? 'same bits' : 'DIFFERENT bits');
  return parts.join('; ') || '-';
}

/** Rows of the threads x dtype table of one environment (the runners at each case's own thread count). */
function matrixRows(cases) {
  const rows = [];
  for (const c of cases) {
    const head = `T=${c.T}, ${plural(c.threads)}${c.machine?.foreign !== undefined ? ` (others ${H.fmt.pct(c.machine.foreign)})` : ''}`;
    if (c.error) {
      rows.push([head, '-', c.error, '', '', '', '']);
      continue;
    }
    for (const r of c.results.filter((x) => x.threads === c.threads)) {
      const ort = H.ortBest(c, r.dtype), g = c.flops / r.median / 1e6;
      rows.push([head, r.label, r.dtype, H.fmt.ms(r.median), H.fmt.g(g), ort ? H.fmt.x(ort.median / r.median) : '-', checkCell(r), String(r.times.length)]);
    }
  }
  return rows;
}
const MATRIX_HEAD = ['case', 'runtime', 'dtype', 'median ms', 'GFLOP/s (f32-equivalent)', 'vs ORT (same dtype and threads)', 'check', 'runs'];

/**
 * Thread scaling of one environment: swapformer's runners at fewer threads, timed in the same
 * rounds as their siblings at the case's count; ORT's fastest graph per dtype from the
 * cases of each thread count (separate processes / pages, so less exact).
 */
function scalingRows(cases) {
  const rows = [];
  for (const c of cases.filter((x) => !x.error)) {
    for (const r of c.results.filter((x) => x.same !== undefined)) {
      const s = c.results.find((x) => x.label === r.same);
      rows.push([`T=${c.T}`, s.label, s.dtype, `${H.fmt.ms(r.median)} (${plural(r.threads)})`, `${H.fmt.ms(s.median)} (${plural(s.threads)})`,
        H.fmt.x(r.median / s.median), r.identical ? 'yes' : 'NO']);
    }
    const one = cases.find((x) => x.T === c.T && x.threads === 1 && !x.error);
    if (c.threads === 1 || !one) continue;
    for (const dtype of ['f32', 'q8']) {
      const a = H.ortBest(one, dtype), b = H.ortBest(c, dtype);
      if (a && b) rows.push([`T=${c.T}`, `${b.label} (separate runs)`, dtype, `${H.fmt.ms(a.median)} (1 thread)`, `${H.fmt.ms(b.median)} (${plural(c.threads)})`, H.fmt.x(a.median / b.median), '-']);
    }
  }
  return rows;
}
const SCALING_HEAD = ['case', 'runtime', 'dtype', 'fewer threads, ms', 'more threads, ms', 'speed-up', 'same bits'];

/** The cost of int8 (accuracyRuns) as table rows. */
const accuracyRows = (R) => (R.accuracy ?? []).map((a) => [a.shape, a.label, `${a.sequences} (${a.lengths.join(', ')} tokens)`,
  a.minCos.toFixed(5), a.meanCos.toFixed(5), a.minPooled.toFixed(6), H.fmt.e(a.rel)]);
const ACCURACY_HEAD = ['model', 'q8 against f32', 'sequences', 'row cosine, min', 'row cosine, mean', 'pooled cosine, min', 'max |q8 - f32| / max |f32|'];

/** The heaviest functions of a Chromium CPU profile, as text. */
const heaviest = (p, n) => p.functions.slice(0, n).map((f) => `${f.name} ${H.fmt.pct(f.selfMs / p.ms)}`).join(', ');

/** What disagrees: {f32: f32 outputs beyond 1e-3 of the reference, q8: rows below 0.99 cosine vs f32, bits: thread counts that change bits}. */
function failures(R) {
  const all = [...(R.node ?? []), ...(R.browser?.cases ?? []), ...(R.matrix?.node ?? []), ...(R.browser?.matrix ?? [])];
  const out = { f32: new Set(), q8: new Set(), bits: new Set() };
  for (const c of all) {
    for (const r of c.results ?? []) {
      const where = `${c.shape} T=${c.T} ${r.label}${c.threads > 1 ? ` (${c.threads}-thread run)` : ''}`;
      if (r.dtype !== 'q8' && r.diff !== undefined && !(r.diff <= 1e-3)) out.f32.add(`${where}: rel. diff ${H.fmt.e(r.diff)}`);
      if (r.dtype === 'q8' && r.agree && !(r.agree.minCos >= 0.99)) out.q8.add(`${where}: row cosine ${r.agree.minCos.toFixed(4)} vs f32`);
      if (r.identical === false) out.bits.add(`${where}: not the same bits as ${r.same}`);
    }
  }
  for (const a of R.accuracy ?? []) if (!(a.minCos >= 0.99)) out.q8.add(`${a.shape} ${a.label}: row cosine ${a.minCos.toFixed(4)}`);
  return Object.fromEntries(Object.entries(out).map(([k, v]) => [k, [...v]]));
}

/** The targets of issue 11: speed against ORT at the same thread count (f32 and q8), thread scaling, load memory, sizes, agreement. */
function issue11Targets(R) {
  const rows = [];
  for (const [env, cases] of matrixEnvs(R)) {
    const rx = judged(env, R);
    for (const c of cases) {
      const what = `${env}, MiniLM-L6 T=${c.T}, ${plural(c.threads)}`;
      for (const dtype of ['f32', 'q8']) {
        const o = !c.error && H.ortBest(c, dtype), s = !c.error && swapResult(c, rx, dtype), other = !c.error && swapResult(c, !rx, dtype);
        const v = o && s ? o.median / s.median : undefined;
        rows.push([`${what}, ${dtype}: >= 1.3x ORT ${dtype}`, c.error ?? (v === undefined ? '-' : `${H.fmt.x(v)} (${buildName(rx)} ${H.fmt.ms(s.median)} ms, ${o.label} ${H.fmt.ms(o.median)} ms)` +
          (other ? `; the ${buildName(!rx)}: ${H.fmt.x(o.median / other.median)}` : '')), status(v, v >= 1.3)]);
      }
    }
    const two = cases.filter((c) => c.threads === 2 && !c.error);
    for (const c of two) {
      for (const dtype of ['f32', 'q8']) {
        const speed = (relaxed) => {
          const s = swapResult(c, relaxed, dtype), one = swapResult(c, relaxed, dtype, 1);
          return s && one ? one.median / s.median : undefined;
        };
        const v = speed(rx), w = speed(!rx);
        rows.push([`${env}, MiniLM-L6 T=${c.T}, ${dtype}: 2-thread speed-up >= 1.7x`, v === undefined ? '-' : `${H.fmt.x(v)} (${buildName(rx)})` +
          (w === undefined ? '' : `; the ${buildName(!rx)}: ${H.fmt.x(w)}`), status(v, v >= 1.7)]);
      }
    }
    if (!two.length) rows.push([`${env}: 2-thread speed-up >= 1.7x`, `not measured (${R.machine.cores} core${R.machine.cores > 1 ? 's' : ''})`, 'not measured']);
  }
  const chrome512 = R.browser?.matrix?.find((c) => c.T === 512 && c.threads === 1 && !c.error);
  if (chrome512) {
    const o = H.ortBest(chrome512, 'f32'), s = swapResult(chrome512, true, 'f32'), v = o && s ? o.median / s.median : undefined;
    const prof = R.browser.profiles?.find((p) => p.dtype === 'f32' && !p.error);
    rows.push(['Chromium, relaxed build, MiniLM-L6 T=512, 1 thread, f32: >= 1.8x ORT', v === undefined ? '-' : H.fmt.x(v) +
      (prof && v < 1.8 ? `; where the time goes (CPU profile): ${heaviest(prof, 4)}` : ''), status(v, v >= 1.8)]);
  }
  const load = loadMemory(R);
  if (load) {
    const r = load.swapformer.memAfter / load.weights;
    rows.push([`Peak wasm memory, MiniLM-L6 f32 (load + forward T=128) <= ${LOAD_MEMORY_BOUND}x the weights`,
      `${H.fmt.mb(load.swapformer.memAfter)} = ${r.toFixed(2)}x the ${H.fmt.mb(load.weights)} of weights` +
      (load.ort?.memAfter ? `; ORT ${H.fmt.mb(load.ort.memAfter)} = ${(load.ort.memAfter / load.weights).toFixed(2)}x` : ''), status(r, r <= LOAD_MEMORY_BOUND)]);
    const q8 = R.loadMemory?.find((x) => x.runtime === 'swapformer' && x.dtype === 'q8' && x.threads === 1);
    const rq = q8?.memAfter / load.weights;
    rows.push([`Peak wasm memory, MiniLM-L6 q8 (load + forward T=128) <= ${Q8_MEMORY_BOUND}x the f32 weights`, !q8 || q8.error ? q8?.error ?? '-' :
      `${H.fmt.mb(q8.memAfter)} = ${rq.toFixed(2)}x`, status(Number.isFinite(rq) ? rq : undefined, rq <= Q8_MEMORY_BOUND)]);
    const grew = load.swapformer.memReload - load.swapformer.memAfter;
    rows.push(['A second load after dispose does not grow wasm memory (f32, 1 thread)', Number.isFinite(grew) ? `grew ${H.fmt.mb(grew)}` : '-', status(Number.isFinite(grew) ? grew : undefined, grew === 0)]);
  } else rows.push([`Peak wasm memory, MiniLM-L6 f32 (load + forward T=128) <= ${LOAD_MEMORY_BOUND}x the weights`, '-', 'not measured']);
  for (const s of R.sizes.filter((x) => x.what.startsWith('swapformer wasm'))) {
    rows.push([`${s.file} <= 120 KB`, s.missing ? 'not built' : H.fmt.kb(s.raw), s.missing ? 'SHORT' : status(s.raw, s.raw <= 120 * 1024)]);
  }
  const f = failures(R);
  rows.push(['f32 outputs agree (relative max diff <= 1e-3)', f.f32.length ? `differ: ${f.f32.join(', ')}` : 'all cases', f.f32.length ? 'FAILED' : 'met']);
  rows.push(['q8 against f32: cosine of every row >= 0.99', f.q8.length ? `below: ${f.q8.join(', ')}` : 'all cases and accuracy runs', f.q8.length ? 'FAILED' : 'met']);
  rows.push(['The same bits for every thread count', f.bits.length ? `differ: ${f.bits.join(', ')}` : 'all runners timed at two thread counts', f.bits.length ? 'FAILED' : 'met']);
  return rows;
}

const LOAD_MEMORY_BOUND = 1.15; // issue 11: peak wasm memory of a MiniLM f32 load <= 1.15x its weights
const Q8_MEMORY_BOUND = 0.35; // issue 11: q8 <= 0.35x the f32 weights

/** The MiniLM-L6 f32 one-thread load memory probes (swapformer and ORT), or null. */
function loadMemory(R) {
  const lm = R.loadMemory ?? [], pick = (rt, dtype = 'f32', t = 1) => lm.find((x) => x.runtime === rt && x.dtype === dtype && x.threads === t);
  const sw = pick('swapformer'), o = pick('ort');
  if (sw?.weightBytes) return { shape: 'MiniLM-L6', T: 128, swapformer: sw, ort: o, graph: o?.graph, weights: sw.weightBytes };
  const m = R.memory?.find((x) => x.shape === 'MiniLM-L6' && x.T === 128 && x.swapformer?.weightBytes); // results.json of an older run
  return m && { ...m, weights: m.swapformer.weightBytes };
}

/** The table of a model's load: wasm memory after the load, after a forward, after dispose + a second load. */
function loadMemoryTable(load, R) {
  const w = load.weights, cell = (b) => (Number.isFinite(b) ? `${H.fmt.mb(b)} (${(b / w).toFixed(2)}x)` : '-');
  const row = (label, m) => (!m || m.error ? [label, m?.error?.slice(0, 60) ?? '-', '-', '-'] : [label, cell(m.memLoaded), cell(m.memAfter), cell(m.memReload)]);
  const rows = R?.loadMemory?.length
    ? R.loadMemory.map((m) => row(m.runtime === 'ort' ? `ORT ${m.graph}, ${m.threads} thread${m.threads > 1 ? 's' : ''}`
      : `swapformer ${m.dtype}, ${m.threads > 1 ? `${m.threads} threads (dist/swapformer-mt.wasm)` : '1 thread (dist/swapformer.wasm)'}`, m))
    : [row('swapformer (SIMD build)', load.swapformer), row(`ORT [${load.graph}]`, load.ort)];
  return H.mdTable(['runtime', 'after loading', 'after a forward (T=128): the peak', 'after dispose + the same load + forward'], rows);
}

/** The fastest forward split into the Linear layers (at matmul_forward's best measured speed) and the rest. */
function timeSplit(R) {
  const c = R.node?.find((x) => x.shape === 'MiniLM-L6' && x.T === 512 && !x.error);
  if (!c || !R.gemm) return [];
  const { layers, dModel: d, ffDim: f } = H.SHAPES['MiniLM-L6'];
  const linear = layers * 2 * 512 * (4 * d * d + 2 * d * f);
  return c.results.filter((r) => !r.ort).flatMap((r) => {
    const g = r.relaxed ? R.gemm.relaxed : R.gemm.plain;
    if (!g) return [];
    const ms = linear / g / 1e6, fast = Math.min(...r.times); // best against best: both the least disturbed
    return [[r.label, `${fmt0(fast)} ms`, `${H.fmt.g(g)} GFLOP/s: ${fmt0(ms)} ms (${H.fmt.pct(ms / fast)})`, `${fmt0(fast - ms)} ms (${H.fmt.pct(1 - ms / fast)})`]];
  });
}

function report(R) {
  const M = R.machine, out = [];
  const p = (s = '') => out.push(s);
  const peakRows = (env, peaks) => Object.entries(peaks ?? {}).map(([k, v]) => [
    `${env}, ${k === 'plain' ? 'SIMD mul+add' : 'relaxed-SIMD fma'}`, `${H.fmt.g(v.reg)} (N=${v.regN})`,
    v.all?.gemm ? Object.entries(v.all.gemm).map(([shape, g]) => (shape === v.gemmKernel ? `**${shape}: ${H.fmt.g(g)}**` : `${shape}: ${H.fmt.g(g)}`)).join(', ') : `${H.fmt.g(v.gemm)} (${v.gemmKernel})`,
    `**${H.fmt.g(H.peakOf(v))}**`]);
  p(`Machine: ${M.cpu}, ${M.cores} cores, ${M.memory}; ${M.os}; load average ${M.load?.toFixed(1)} at the start, ${M.loadEnd?.toFixed(1)} at the end` +
    `${M.load > 1.5 ? ' (other work was running at the start: figures are noisy)' : ' (the load at the end includes the benchmark\'s own Chromium)'}`);
  p(`Node ${M.node} (V8 ${M.v8}, flags ${M.nodeFlags}); onnxruntime-web ${M.ort}; ${R.browser ? `Chromium ${R.browser.version} (playwright-core ${M.playwright})` : 'Chromium not run'}; swapformer ${M.git}; ${M.date}${R.quick ? '; QUICK RUN (few runs: not for reporting)' : ''}`);
  p(`Binaries: ${Object.entries(M.dist).map(([k, v]) => `${DIST_NAME[k] ?? k} sha256 ${v}`).join('; ')}`);
  p();
  p('### Peak (bench/peak.c, GFLOP/s, one core)');
  p();
  p(H.mdTable(['', 'register-only, N accumulators', 'L1 gemm micro-kernels (rows x cols: GFLOP/s)', 'peak (the better)'],
    [...peakRows('Node', R.peaks.node), ...peakRows('Chromium', R.browser?.peaks)]));
  p();
  const kernels = [...Object.values(R.peaks.node ?? {}), ...Object.values(R.browser?.peaks ?? {})].filter((v) => v.all?.gemm);
  if (kernels.length && kernels.every((v) => v.gemmKernel === '4x8')) {
    p('The larger register tiles (6 x 8 and 4 x 12, 12 accumulators each) are slower than 4 x 8 in every row. V8 leaves wasm 15 of the ' +
      '16 xmm registers on x64 (xmm15 is its scratch) and loads all of a step\'s A splats and B vectors before the products, so its code ' +
      'for them (`node --print-wasm-code`) moves accumulators to and from the stack inside the inner loop, in both builds; the 4 x 8 loop ' +
      'stays in registers. 4 x 8 is the tile swapformer uses.');
    p();
  }
  for (const [env, cases] of matrixEnvs(R)) {
    p(`### ${env}${env === 'Chromium' ? ' (headless)' : ''}: threads x dtypes (MiniLM-L6; ${env === 'Node' ? 'a fresh process' : 'a fresh page'} per thread count)`);
    p();
    p(H.mdTable(MATRIX_HEAD, matrixRows(cases)));
    p();
    const sc = scalingRows(cases);
    if (sc.length) {
      p(`### ${env}: thread scaling`);
      p();
      p(H.mdTable(SCALING_HEAD, sc));
      p();
    }
  }
  if (R.accuracy?.length) {
    p('### int8 accuracy (Node, one thread; q8 against f32 on the same ids, hidden states per token and mean-pooled)');
    p();
    p(H.mdTable(ACCURACY_HEAD, accuracyRows(R)));
    p();
  }
  for (const prof of R.browser?.profiles ?? []) {
    p(`### Where the time goes in Chromium: ${prof.label}, MiniLM-L6 T=${prof.T}, 1 thread (CPU profile)`);
    p();
    if (prof.error) {
      p(`The profile failed: ${prof.error}`);
      p();
      continue;
    }
    p(`Chromium's sampling profiler (CDP, every ${prof.interval} us) over ${prof.runs} forwards (${prof.wallMs.map(fmt0).join(', ')} ms) of a build with its ` +
      `name section kept (bench/.cache/swapformer-relaxed-named.wasm: ${prof.sameCode ? 'its code section is byte for byte dist/swapformer-relaxed.wasm\'s' : 'its code section DIFFERS from dist/swapformer-relaxed.wasm\'s: read with care'}); ` +
      `self time of each function, ${prof.samples} samples.`);
    p();
    p(H.mdTable(['function', 'self ms per forward', 'share'], prof.functions.slice(0, 12).map((f) => [f.name, H.fmt.ms(f.selfMs / prof.runs), H.fmt.pct(f.selfMs / prof.ms)])));
    p();
  }
  const split = timeSplit(R);
  if (split.length) {
    p('### Where the time goes (Node, MiniLM-L6 T=512)');
    p();
    p('The fastest of the timed forwards, and in it the Linear layers\' time: their FLOPs at the best GFLOP/s `matmul_forward` reaches alone on the same shapes (bench/gemm.c, measured in this run); ' +
      'the rest of the forward is attention (the q.k and p.v products with 32-wide heads, softmax), the norms, GELU, bias adds and copies.');
    p();
    p(H.mdTable(['build', 'forward (fastest run)', 'Linear layers: GFLOP/s alone, ms', 'the rest, ms'], split));
    p();
  }
  const cmp = (title, cases) => {
    p(`### ${title}`);
    p();
    p(H.mdTable(H.COMPARISON_HEAD, H.comparisonRows(cases, title.startsWith('Node') ? R.peaks.node : R.browser.peaks)));
    p();
  };
  p(`FLOPs: ${H.FLOP_FORMULA}. "vs ORT": ORT's median / this median (ORT: the faster of the graphs measured). ` +
    '"% of peak": GFLOP/s of the whole forward / the peak of the same build (SIMD or relaxed; ORT: SIMD) in the same environment. ' +
    '"rel. diff": max |out - ref| / max |ref| against the first runtime of the case (an ORT graph; the swapformer SIMD build when ORT is not run).');
  p();
  cmp('Node, one thread', R.node ?? []);
  if (R.browser) cmp('Chromium (headless), one thread', R.browser.cases);
  if (R.long?.length) {
    p('### Long sequences (swapformer SIMD build, MiniLM-L6 modern shape, Node; one forward in a fresh process after 5 warm-up forwards of 16 tokens, the heap\'s free space filled first)');
    p();
    p(H.mdTable(['case', 'one forward', 'wasm memory before -> after', 'activation memory (growth)'], R.long.map((l) => [
      `${l.shape.includes('ALiBi') ? 'ALiBi' : 'RoPE'} T=${l.T}`, l.error ?? `${(l.ms / 1000).toFixed(2)} s`, l.error ? '-' : `${H.fmt.mb(l.memBefore)} -> ${H.fmt.mb(l.memAfter)}`,
      l.error ? '-' : H.fmt.mb(l.memAfter - l.memBefore)])));
    p();
  }
  p('### Size');
  p();
  p(H.mdTable(['file', 'raw', 'gzip -9'], R.sizes.map((s) => [`${s.what}`, s.missing ? 'not built' : H.fmt.kb(s.raw), s.missing ? '-' : H.fmt.kb(s.gzip)])));
  p();
  if (R.memory) {
    p('### Peak wasm memory (Node, fresh process: load the model, one forward)');
    p();
    const mem = (m) => (!m ? '-' : m.error ? m.error.slice(0, 60) : m.memAfter === m.memLoaded ? H.fmt.mb(m.memAfter) : `${H.fmt.mb(m.memAfter)} (${H.fmt.mb(m.memLoaded)} after loading)`);
    p(H.mdTable(['case', 'swapformer', ...(R.memory.some((m) => m.relaxed) ? ['swapformer relaxed'] : []), 'ORT'], R.memory.map((m) => [
      `${m.shape} T=${m.T}`, mem(m.swapformer), ...(R.memory.some((x) => x.relaxed) ? [mem(m.relaxed)] : []), m.ort ? `${mem(m.ort)} [${m.graph}]` : '-'])));
    p();
  }
  const load = loadMemory(R);
  if (load) {
    p(`### Load memory (Node, fresh process: MiniLM-L6, ${H.fmt.mb(load.weights)} of f32 weights; in parentheses, wasm memory / the weights)`);
    p();
    p(loadMemoryTable(load, R));
    p();
  }
  if (R.cold || R.browser?.cold) {
    p(`### Cold start (T=128; from \`import\` to the first output: import, read (Node) or fetch (Chromium, local server) the model file, compile + instantiate the wasm and load the model, first forward; median of fresh processes / browser contexts)`);
    p();
    const rows = [];
    for (const [shape, c] of Object.entries(R.cold ?? {})) {
      const part = (rt, k) => fmt0(H.median(c[rt].map((x) => x[k])));
      for (const rt of ['swapformer', 'ort']) {
        rows.push([`Node, ${shape === 'tiny' ? 'tiny BERT (2 x 64)' : shape}`, rt === 'ort' ? `ORT ${c.graph}` : `swapformer${c.build ? ` [${c.build}]` : ''}`,
          `${part(rt, 'coldMs')}`, `${part(rt, 'importMs')} / ${part(rt, 'fetchMs')} / ${part(rt, 'loadMs')} / ${part(rt, 'firstMs')}`, String(c[rt].length)]);
      }
    }
    for (const [shape, bc] of Object.entries(R.browser?.cold ?? {})) {
      const part = (rt, k) => fmt0(H.median(bc[rt].map((x) => x[k])));
      for (const rt of ['swapformer', 'ort']) {
        rows.push([`Chromium, ${shape === 'tiny' ? 'tiny BERT (2 x 64)' : shape}`,
          rt === 'ort' ? `ORT ${shape === 'tiny' ? 'fused' : R.cold?.[shape]?.graph ?? 'fused'}` : `swapformer [default${R.browser.relaxed ? ' (relaxed)' : ''}]`,
          part(rt, 'coldMs'), `${part(rt, 'importMs')} / ${part(rt, 'fetchMs')} / ${part(rt, 'loadMs')} / ${part(rt, 'firstMs')}`, String(bc[rt].length)]);
      }
    }
    p(H.mdTable(['model', 'runtime', 'import to first output, ms', 'import / read or fetch the model file / load / first forward, ms', 'runs'], rows));
    p();
  }
  if (R.sections) {
    p('### The machine while it measured (other processes: CPU time outside the benchmark\'s own processes, as a share of all cores)');
    p();
    const parts = Object.entries(R.sections);
    if (M.whole) parts.push(['the whole run', { ...M.whole, minutes: M.minutes }]);
    p(H.mdTable(['part', 'minutes', 'other processes', '1-min load average'], parts.map(([k, x]) => [
      k, x.minutes.toFixed(1), x.foreign === undefined ? '?' : H.fmt.pct(x.foreign), x.load.map((l) => l.toFixed(2)).join(' -> ')])));
    if (M.waited) p(`\nThe run waited for the 1-minute load average to fall below ${M.waited.below} first (${M.waited.load.toFixed(2)} when measuring began).`);
    p();
  }
  p('### Targets (issue 11: threads, int8, memory)');
  p();
  p(H.mdTable(['target', 'measured', 'status'], issue11Targets(R), ['l', 'l', 'l']));
  p();
  p('### Targets of the first performance issue (one thread, f32)');
  p();
  p(H.mdTable(['target', 'measured', 'status'], targets(R), ['l', 'l', 'l']));
  return out.join('\n');
}
const fmt0 = (x) => (Number.isFinite(x) ? x.toFixed(0) : '-');

function resultsMd(R, table) {
  const M = R.machine;
  return `# swapformer benchmark results

Written by \`npm run bench\` (bench/bench.js) on ${M.date}. Do not edit by hand: rerun.

| | |
|:--|:--|
| CPU | ${M.cpu}, ${M.cores} cores (thread counts measured: ${(R.threadCounts ?? [1]).join(', ')}), ${M.memory}; 1-min load average ${M.load?.toFixed(1)} at the start, ${M.loadEnd?.toFixed(1)} at the end |
| OS | ${M.os} |
| Node | ${M.node} (V8 ${M.v8}), flags \`${M.nodeFlags}\` |
| Chromium | ${R.browser ? `${R.browser.version}, headless, via playwright-core ${M.playwright}` : 'not run'} |
| onnxruntime-web | ${M.ort} |
| swapformer | ${M.git} |
| binaries | ${Object.entries(M.dist).map(([k, v]) => `${DIST_NAME[k] ?? k} sha256 ${v}`).join('<br>')} |

## How it was measured

- **Models**: MiniLM-L6 shape (6 layers, dModel 384, 12 heads, ffDim 1536) and BERT-base shape
  (12, 768, 12, 3072), vocab 30522, learned positions, post-LayerNorm (eps 1e-12), GELU (erf); a
  modern MiniLM variant (RoPE, pre-RMSNorm, SwiGLU) for swapformer alone. Weights from
  \`createEncoder(config, {seed})\` with non-zero biases and norm gains, saved to
  \`bench/.cache/*.safetensors\`; both runtimes load those weights.
- **ONNX**: \`bench/export_onnx.py\` (Debian's PyTorch ${M.torch}, \`torch.onnx.export\`, opset 17,
  dynamic T axis, input int64 \`input_ids\` [1, T]). Two graphs with the same weights: *fused*, the
  graph onnxruntime's offline transformer optimiser produces for BERT (com.microsoft \`Attention\`,
  \`SkipLayerNormalization\`, \`BiasGelu\`), and *plain*, the module exported as is (native
  \`LayerNormalization\`), left to ORT's own graph optimiser. MiniLM runs both; BERT-base runs the
  one that was faster for MiniLM at the same T. "vs ORT" uses the faster ORT graph.
- **ORT settings**: ${ORT_SETTINGS}. In Node \`import * as ort from 'onnxruntime-web'\`
  (\`ort.node.min.mjs\`, which loads \`ort-wasm-simd-threaded.wasm\`); in Chromium \`ort.wasm.min.mjs\`.
- **Builds**: swapformer's SIMD build (\`dist/swapformer.wasm\`) and its relaxed-SIMD build
  (\`dist/swapformer-relaxed.wasm\`), copied at the start of the run (hashes above). The MiniLM shapes run
  both everywhere; BERT-base runs each environment's default only: the SIMD build in Node (relaxed SIMD
  needs \`--experimental-wasm-relaxed-simd\` in Node 20), the relaxed build in Chromium. With more than one
  thread, their threaded twins (\`dist/swapformer-mt.wasm\`, \`dist/swapformer-relaxed-mt.wasm\`).
- **Threads x dtypes** (MiniLM-L6, T=128 and T=512, ${(R.threadCounts ?? [1]).map(plural).join(', ')}): one fresh Node
  process (\`bench/matrix.js\`) and one fresh Chromium page per thread count (onnxruntime-web fixes its threads when
  its wasm starts), the page cross-origin isolated (COOP/COEP) so that it has SharedArrayBuffer. Runners alternate run by run:
  ORT's fused and plain f32 graphs and their q8 versions (\`env.wasm.numThreads\`); swapformer's SIMD and relaxed builds in f32
  and q8, \`loadModel(bytes, {dtype, threads})\` of the f32 file (one thread: \`dist/swapformer.wasm\` /
  \`-relaxed.wasm\`; more: \`dist/swapformer-mt.wasm\` / \`-relaxed-mt.wasm\` and their worker pool). In the process of the most
  threads the swapformer runners run again at each smaller count, in the same rounds: the thread scaling, and
  their outputs must be the same bits. "vs ORT": the fastest ORT graph of the same dtype at the same thread count.
- **q8 ONNX**: \`bench/export_onnx.py --graph plain-q8 / fused-q8\` writes onnxruntime's dynamic quantization of the
  f32 graphs with Debian's \`python3-onnx\`: every MatMul with a constant weight becomes DynamicQuantizeLinear (the
  activation, u8, per tensor) + MatMulInteger with per-column int8 weights (symmetric, zero point 0) + Cast + Mul by
  the scales (ORT's optimiser fuses them into DynamicQuantizeMatMul); the fused graph's Attention becomes com.microsoft
  QAttention on the quantized input and QKV weights. swapformer q8: int8 weights per output row, activations per row (u8 in the SIMD build, u7 in
  the relaxed one), int32 accumulation.
- **int8 accuracy**: q8 against f32 of the same runtime and build, on the timed ids (the "check" column) and on
  ${R.accuracy?.[0] ? `${R.accuracy[0].sequences} other sequences (${R.accuracy[0].lengths.join(', ')} tokens)` : 'other sequences'}: cosine of every row (token) of the
  hidden states (>= 0.99 required), of the mean-pooled embeddings, and max |q8 - f32| / max |f32|.
- **CPU profile** (Chromium): the relaxed build rebuilt with its name section (build.sh's flags, \`bench.js buildNamed\`),
  MiniLM-L6 T=512, one thread, CDP \`Profiler\` sampling over a few forwards after warm-up; self time per function.
- **Other processes**: \`bench/quiet.js\` reads /proc: the CPU time of every process outside the benchmark's own
  tree over each part of the run, as a share of all cores (this machine is shared); \`--wait-quiet[=LOAD]\` waits for
  the 1-minute load average to fall below LOAD (0.5) before measuring.
- **Cross-check**: every f32 output against the first ORT graph's (swapformer-only cases: against the SIMD
  build's): max |a - b| / max |b| (<= 1e-3 required), on the same ids before timing.
- **Timing**: warm-up rounds first (V8 starts wasm in its baseline tier), then the runtimes alternate run
  by run (order reversed every other round), one thread (threads x dtypes: the case's thread count), batch 1; medians. Input copy-in and output
  copy-out are inside the timed call for both (\`forward(ids)\` / \`await session.run(feeds)\`).
- **GFLOP/s**: ${H.FLOP_FORMULA}.
- **Peak**: \`bench/peak.c\` (clang-16, wasm-ld-16): register-only kernels with N independent f32x4
  accumulators, \`acc = acc*a + b\` (SIMD mul + add) or \`relaxed_madd\` (relaxed SIMD), best N; and an
  L1-resident matrix-product micro-kernel (splat-load A, vector-load B, 4 x 8 ... accumulators). The
  peak of a build is the better of the two, measured in the same environment (best of 10 calls each, in Node three passes alternating with the matrix products alone:
  the machine is noisy, the best is the least disturbed). "% of peak" divides the GFLOP/s of the whole
  forward (matrix products only counted) by it, so it is a lower bound for the matrix products.
  The issue's "near 25 GFLOP/s" for a plain mul+add loop is close to the gemm micro-kernel here.
- **Matrix products alone**: \`bench/gemm.c\` built with \`core/kernels.c\` as each shipped wasm is (emcc;
  clang-16 + wasm-ld-16 with relaxed SIMD) runs \`matmul_forward\` on one MiniLM layer's Linear shapes
  (q, k, v, o: four 384 -> 384, up: 384 -> 1536, down: 1536 -> 384) for T=512 in 64-row chunks as the
  encoder does, weights packed; best of 40 rounds. The peak and this alternate, three passes each, best kept.
- **Memory**: the byte length of each runtime's wasm memory (caught at instantiation; wasm memory
  never grows back, so it is the peak) in a fresh Node process after loading the model and one
  forward. JS-heap copies (the model file bytes, ORT's JS tensors) are not counted for either.
  Each runtime's memory is caught at instantiation: \`bench/probe.js\` wraps \`WebAssembly.instantiate\`
  (and \`instantiateStreaming\`) and keeps every \`WebAssembly.Memory\` the instance exports or imports
  (swapformer exports its memory; onnxruntime-web's module keeps its own private, \`ort.env.wasm\` has no
  handle to it). Load memory (MiniLM-L6): after loading, after one forward of 128 tokens, and after the
  encoder is disposed (ORT: the session released) and the same file loaded again with one forward; the
  weights are the f32 bytes of every tensor (swapformer's \`weightShapes()\`, the same weights in both).
- **Cold start**: fresh Node processes (and fresh Chromium contexts: no HTTP or code cache) from
  \`import\` of the runtime to the first output, including reading the model file.
- **Long sequences**: T=512 and T=${R.long?.at(-1)?.T ?? 8192} with RoPE and ALiBi (same weights), the SIMD build, in a
  fresh process: five forwards of 16 tokens, then the heap's free space is filled with held
  allocations (\`sf_alloc\` in 1 MB ... 256 B blocks until the memory grows), so that the next forward
  must grow the memory for whatever it allocates; one forward of T tokens (timed, a single run), and
  the growth of the wasm memory across it is its activation memory (to within the last growth's
  slack, under 1 MB).

## Results

${table}
`;
}

/** Puts block into the README's "Performance" section (exported for the owner's use). */
export function updateReadme(block, path = join(ROOT, 'README.md')) {
  let md = readFileSync(path, 'utf8');
  const begin = '<!-- bench:begin -->', end = '<!-- bench:end -->';
  const body = `${begin}\n${block}\n${end}`;
  if (md.includes(begin) && md.includes(end)) {
    md = md.slice(0, md.indexOf(begin)) + body + md.slice(md.indexOf(end) + end.length);
  } else {
    const h = md.indexOf('\n## Performance');
    if (h < 0) md += `\n## Performance\n\n${body}\n`;
    else {
      const nextH = md.indexOf('\n## ', h + 3);
      const at = nextH < 0 ? md.length : nextH;
      md = `${md.slice(0, at).replace(/\s*$/, '')}\n\n${body}\n${md.slice(at)}`;
    }
  }
  writeFileSync(path, md);
}

/** The README block: the Node table, sizes, cold start, a pointer to RESULTS.md. */
function readmeBlock(R) {
  const M = R.machine;
  const lines = [`Measured by \`npm run bench\` on ${M.cpu}, ${M.cores} cores, Node ${M.node}, onnxruntime-web ${M.ort}` +
    ` (wasm backend, graph optimisations 'all'), same random weights, batch 1, medians; details and the Chromium figures in` +
    ' [bench/RESULTS.md](https://github.com/swapformer/swapformer/blob/main/bench/RESULTS.md).', ''];
  const nodeMatrix = R.matrix?.node ?? [];
  if (nodeMatrix.length) {
    lines.push(`MiniLM-L6 with ${R.threadCounts.map(plural).join(' and ')}, f32 and q8 (swapformer \`loadModel(bytes, {dtype, threads})\`; ORT: its f32 graphs and their dynamic quantization), Node:`, '');
    lines.push(H.mdTable(MATRIX_HEAD, matrixRows(nodeMatrix)));
    const sc = scalingRows(nodeMatrix);
    if (sc.length) lines.push('', 'Thread scaling, Node:', '', H.mdTable(SCALING_HEAD, sc));
    lines.push('', 'One thread, f32, Node:', '');
  }
  lines.push(H.mdTable(H.COMPARISON_HEAD, H.comparisonRows(R.node ?? [], R.peaks.node)));
  lines.push('');
  lines.push(H.mdTable(['file', 'raw', 'gzip -9'], R.sizes.filter((s) => s.what.includes('wasm')).map((s) => [s.what, s.missing ? 'not built' : H.fmt.kb(s.raw), s.missing ? '-' : H.fmt.kb(s.gzip)])));
  const split = timeSplit(R);
  if (split.length) {
    lines.push('', 'Where the time goes (Node, MiniLM-L6 T=512; Linear layers at the speed `matmul_forward` reaches alone on their shapes):', '');
    lines.push(H.mdTable(['build', 'forward (fastest run)', 'Linear layers: GFLOP/s alone, ms', 'the rest, ms'], split));
  }
  for (const [shape, c] of Object.entries(R.cold ?? {})) {
    lines.push('');
    lines.push(`Cold start (import to first output, ${shape === 'tiny' ? 'a tiny 2-layer model' : shape}, T=128, Node): swapformer ${fmt0(H.median(c.swapformer.map((p) => p.coldMs)))} ms, ` +
      `onnxruntime-web ${fmt0(H.median(c.ort.map((p) => p.coldMs)))} ms.`);
  }
  const load = loadMemory(R);
  if (load) {
    lines.push('', `Wasm memory loading MiniLM-L6 (${H.fmt.mb(load.weights)} of f32 weights; in parentheses, / the weights), Node:`, '');
    lines.push(loadMemoryTable(load, R));
  }
  lines.push('', 'The targets of issue 11 (threads, int8, memory), as measured in this run (Node and Chromium):', '');
  lines.push(H.mdTable(['target', 'measured', 'status'], issue11Targets(R), ['l', 'l', 'l']));
  lines.push('', 'The targets of the first performance issue (one thread, f32):', '');
  lines.push(H.mdTable(['target', 'measured', 'status'], targets(R), ['l', 'l', 'l']));
  return lines.join('\n');
}

// ------------------------------------------------------------------ main

export async function main(argv = process.argv.slice(2)) {
  const flag = (n) => argv.includes(`--${n}`);
  const val = (n, d) => (argv.find((a) => a.startsWith(`--${n}=`)) ?? `=${d}`).split('=')[1];
  const opts = {
    quick: flag('quick'), skipLong: flag('skip-long') || flag('quick'), longT: +val('long-T', 8192),
    only: val('only', 'all'), browser: !flag('no-browser'), write: !flag('no-write'), readme: flag('update-readme'),
    fromJson: flag('from-json'), threads: argv.some((a) => a.startsWith('--threads=')) ? val('threads', '1').split(',').map(Number) : undefined,
    waitQuiet: argv.some((a) => a === '--wait-quiet' || a.startsWith('--wait-quiet=')) ? +(val('wait-quiet', '0.5') || 0.5) : 0,
  };
  if (opts.fromJson) { // no measuring: rewrite the reports from the last run's raw figures
    const R = JSON.parse(readFileSync(join(CACHE, 'results.json'), 'utf8'));
    writeFileSync(join(BENCH, 'RESULTS.md'), resultsMd(R, report(R)));
    if (opts.readme) updateReadme(readmeBlock(R));
    log(`rewrote bench/RESULTS.md${opts.readme ? ' and the README block' : ''} from bench/.cache/results.json (${R.machine.date})`);
    return;
  }
  process.env.BENCH_PID = String(process.pid); // bench/quiet.js: this process's tree is the benchmark
  mkdirSync(CACHE, { recursive: true });
  if (!existsSync(DIST.plain)) throw new Error('dist/swapformer.wasm is missing: run ./build.sh first');
  if (!existsSync(ORT_WASM)) throw new Error('onnxruntime-web is not installed: npm ci');

  mkdirSync(SNAP_DIR, { recursive: true });
  for (const [k, f] of Object.entries(DIST)) {
    if (existsSync(f)) copyFileSync(f, SNAP[k]);
    else rmSync(SNAP[k], { force: true });
  }
  const R = { machine: machine(), quick: opts.quick, peaks: {} };
  R.machine.dist = distIds();
  const counts = threadCounts(R.machine.cores, opts.threads);
  R.threadCounts = counts;
  log(`bench: ${R.machine.cpu}, ${R.machine.cores} cores (thread counts ${counts.join(', ')}); Node ${R.machine.node}; onnxruntime-web ${R.machine.ort}`);

  buildPeak();
  buildGemm();
  const relaxedOn = await relaxedAvailable();
  const relaxedBuilt = existsSync(DIST.relaxed);
  if (!relaxedOn) log('note: this Node has no relaxed SIMD (run with --experimental-wasm-relaxed-simd)');
  log(`swapformer relaxed build: ${relaxedBuilt ? rel(DIST.relaxed) : 'not built'}`);
  let named = null;
  if (relaxedBuilt && opts.browser && opts.only !== 'node') {
    try {
      named = buildNamed();
      log(`profile build: ${rel(named.file)}, code section ${named.sameCode ? 'identical to' : 'DIFFERENT from'} dist/swapformer-relaxed.wasm's`);
    } catch (e) {
      log(`profile build failed: ${e.message.split('\n')[0]}`);
    }
  }

  const sf = await import('../bindings/index.js');
  R.features = sf.features;
  const plainModule = await WebAssembly.compile(readFileSync(SNAP.plain));
  const builds = [{ label: 'swapformer', module: plainModule, file: 'swapformer.wasm' }];
  if (relaxedBuilt && relaxedOn) {
    try {
      builds.push({ label: 'swapformer relaxed', module: await WebAssembly.compile(readFileSync(SNAP.relaxed)), file: 'swapformer-relaxed.wasm', relaxed: true });
    } catch (e) {
      log(`note: ${rel(DIST.relaxed)} does not compile here: ${e.message}`);
    }
  }

  for (const shape of Object.keys(H.SHAPES)) await ensureModel(shape, sf, plainModule);
  for (const [shape] of ORT_CASES.filter(([, T]) => T === 128)) for (const g of GRAPHS) ensureOnnx(shape, g);
  for (const g of MATRIX_GRAPHS) ensureOnnx(MATRIX_SHAPE, g);
  ensureOnnx('tiny', 'fused');

  if (opts.waitQuiet) R.machine.waited = { below: opts.waitQuiet, load: await waitQuiet({ below: opts.waitQuiet, log }) };
  const t0 = performance.now();
  R.machine.load = os.loadavg()[0];
  const whole = cpuMeter();
  const section = async (name, fn) => {
    const m = cpuMeter(), t = performance.now();
    try {
      return await fn();
    } finally {
      (R.sections ??= {})[name] = { ...m.stop(), minutes: (performance.now() - t) / 60e3 };
      const x = R.sections[name];
      log(`  [${name}: ${x.minutes.toFixed(1)} min; other processes ${x.foreign === undefined ? '?' : H.fmt.pct(x.foreign)} of the CPUs; load ${x.load.map((l) => l.toFixed(2)).join(' -> ')}]`);
    }
  };
  const browserOn = opts.browser && opts.only !== 'node', nodeOn = opts.only !== 'browser';
  const url = (p) => `/${rel(p)}`;
  const { runBrowser } = browserOn ? await import('./browser.js') : {};

  // 1. the comparison of thread counts and dtypes (issue 11), Node then Chromium: first, while the machine is
  //    as quiet as it will be
  if (nodeOn) {
    await section('node peak', () => {
      log('peak (node):');
      const peak = (f) => {
        const x = new WebAssembly.Instance(new WebAssembly.Module(readFileSync(join(CACHE, f))), {}).exports;
        return H.runPeak(x);
      };
      // The peak and swapformer's matmul_forward alone (MiniLM's Linear shapes, T = 512), in three
      // alternating passes; each keeps its best. The host's speed drifts over seconds to minutes:
      // alternating puts both best figures in the same undisturbed moments.
      const mm = { T: 512, C: 384, F: 1536 };
      R.gemm = { shape: 'MiniLM-L6 Linear layers (q, k, v, o, up, down), T=512, 64-row chunks', plain: 0 };
      for (let pass = 0; pass < (opts.quick ? 1 : 3); pass++) {
        const p = { plain: peak('peak.wasm'), ...(relaxedOn ? { relaxed: peak('peak-relaxed.wasm') } : {}) };
        R.peaks.node = pass ? H.bestPeaks(R.peaks.node, p) : p;
        R.gemm.plain = Math.max(R.gemm.plain, runGemm('gemm.wasm', mm));
        if (relaxedOn) R.gemm.relaxed = Math.max(R.gemm.relaxed ?? 0, runGemm('gemm-relaxed.wasm', mm));
      }
      for (const [k, v] of Object.entries(R.peaks.node)) log(`  ${k}: reg ${v.reg.toFixed(1)} GFLOP/s (N=${v.regN}), gemm ${v.gemm.toFixed(1)} (${v.gemmKernel})`);
      log(`  matmul_forward: SIMD ${R.gemm.plain.toFixed(1)} GFLOP/s${R.gemm.relaxed ? `, relaxed ${R.gemm.relaxed.toFixed(1)}` : ''}`);
    });
    R.matrix = { node: await section('node threads x dtypes', async () => {
      log(`threads x dtypes (node, ${MATRIX_SHAPE}, ${counts.join(' and ')} thread(s), a fresh process each):`);
      return nodeMatrix(opts, counts, relaxedOn && builds.some((b) => b.relaxed));
    }) };
  }
  if (browserOn) {
    await section('chromium threads x dtypes', async () => {
      log('chromium: threads x dtypes, CPU profiles:');
      const onnx = Object.fromEntries(MATRIX_GRAPHS.map((g) => [g, url(onnxPath(MATRIX_SHAPE, g))]));
      const matrix = matrixPlan(opts, counts).map(({ threads, Ts, scaling }) => ({
        threads,
        cases: Ts.map(([T, warmup, runs]) => ({ threads, shape: MATRIX_SHAPE, T, warmup, runs, model: url(modelPath(MATRIX_SHAPE)), onnx, relaxed: relaxedBuilt, scaling })),
      }));
      // where the relaxed build's time goes at T=512, one thread, f32 and q8 (the build with its name section)
      const profiles = named ? ['f32', 'q8'].map((dtype) => ({
        label: `swapformer relaxed ${dtype}`, dtype, T: 512, vocab: H.SHAPES[MATRIX_SHAPE].vocabSize, model: url(modelPath(MATRIX_SHAPE)), wasm: url(named.file),
        sameCode: named.sameCode, runs: opts.quick ? 2 : 5, warmup: 2,
      })) : [];
      try {
        R.browser = await runBrowser({ matrix, profiles }, { log });
        R.machine.chromium = R.browser.version;
      } catch (e) {
        log(`chromium: ${e.message.split('\n')[0]}`);
      }
    });
  }

  // 2. the rest: int8 accuracy, the one-thread cases of the earlier issue, memory, cold start, long sequences
  if (nodeOn) {
    const ort = await import('onnxruntime-web');
    ort.env.wasm.numThreads = 1;
    R.accuracy = await section('node int8 accuracy', async () => {
      log('int8 accuracy (node):');
      return accuracyRuns(opts, sf, builds, ort);
    });
    R.node = opts.quick ? oneThreadF32(R.matrix?.node) : await section('node one thread', async () => {
      log('timing (node, one thread):');
      return nodeRuns(builds, sf, oneThreadF32(R.matrix?.node));
    });
    R.loadMemory = await section('node load memory', async () => {
      log('load memory (node, fresh processes):');
      const c = (R.node ?? []).find((x) => x.shape === MATRIX_SHAPE && x.T === 128 && !x.error);
      return loadMemoryRuns(counts, c && H.ortBest(c) ? H.ortBest(c).label.replace('ORT ', '') : GRAPHS[0]);
    });
    if (!opts.quick) {
      await section('node cold start and memory', async () => {
        log('cold start and memory (node, fresh processes):');
        Object.assign(R, await coldAndMemory(R.node, builds.find((b) => b.relaxed) ? SNAP.relaxed : null));
      });
    }
    if (!opts.skipLong) {
      await section('node long sequences', async () => {
        log('long sequences (node):');
        R.long = await longRuns(opts);
      });
    }
  }
  if (browserOn && !opts.quick && R.browser) {
    await section('chromium one thread', async () => {
      log('chromium: one thread, cold start:');
      const make = (shape, T, graphs) => {
        const [warmup, runs] = RUNS[shape][T];
        return { shape, T, cfg: H.SHAPES[shape], model: url(modelPath(shape)), warmup, runs,
                 onnx: graphs.map((g) => ({ label: graphLabel(g), url: url(onnxPath(shape, g)) })), swap: [] };
      };
      const browserBuilds = [{ label: 'swapformer', file: 'swapformer.wasm' }];
      if (relaxedBuilt) browserBuilds.push({ label: 'swapformer relaxed', file: 'swapformer-relaxed.wasm', relaxed: true });
      const plan = {
        peaks: false,
        seed: oneThreadF32(R.browser.matrix),
        cases: (done) => {
          const spec = planner(make)(done);
          // BERT-base (slow) with the build Chromium picks by default only: relaxed when built
          if (spec) spec.swap = spec.shape === 'BERT-base' && browserBuilds.length > 1 ? browserBuilds.filter((b) => b.relaxed) : browserBuilds;
          return spec;
        },
        cold: ['MiniLM-L6', 'tiny'].map((name) => ({
          name, model: url(modelPath(name)), onnx: url(onnxPath(name, name === 'tiny' ? 'fused' : R.cold?.[name]?.graph ?? 'fused')),
          T: 128, vocab: H.SHAPES[name].vocabSize, runs: 5, relaxedBuilt,
        })),
      };
      try {
        const b = await runBrowser(plan, { log });
        Object.assign(R.browser, { cases: b.cases, cold: b.cold, wasmFiles: [...new Set([...(R.browser.wasmFiles ?? []), ...b.wasmFiles])] });
      } catch (e) {
        log(`chromium: ${e.message.split('\n')[0]}`);
      }
    });
  } else if (R.browser) R.browser.cases = oneThreadF32(R.browser.matrix);
  R.sizes = sizes(relaxedBuilt);
  R.machine.loadEnd = os.loadavg()[0];
  R.machine.whole = whole.stop();
  R.machine.minutes = (performance.now() - t0) / 60e3;
  if (JSON.stringify(distIds()) !== JSON.stringify(R.machine.dist)) {
    log('note: dist/*.wasm was rebuilt during the run; every figure here is of the copies taken at the start (bench/.cache/dist/)');
  }
  if (!R.peaks.node) R.peaks.node = { plain: { reg: NaN, gemm: NaN } };

  const table = report(R);
  log('');
  log(table);
  if (opts.write) {
    writeFileSync(join(BENCH, 'RESULTS.md'), resultsMd(R, table));
    writeFileSync(join(CACHE, 'results.json'), JSON.stringify(R, null, 1));
    log(`\nwrote bench/RESULTS.md (raw figures: bench/.cache/results.json)`);
  }
  if (opts.readme) {
    updateReadme(readmeBlock(R));
    log('updated the README "Performance" block');
  } else if (opts.write) {
    writeFileSync(join(CACHE, 'README-performance.md'), `${readmeBlock(R)}\n`);
    log('README block: bench/.cache/README-performance.md (apply with --update-readme)');
  }
  log(`bench: ${R.machine.minutes.toFixed(1)} min of measuring`);
  const failed = Object.values(failures(R)).flat();
  if (failed.length) {
    log(`CROSS-CHECK FAILED: ${failed.join('; ')}`);
    process.exitCode = 1;
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await main();
