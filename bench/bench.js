// swapformer vs onnxruntime-web: `npm run bench`
// (node --experimental-wasm-relaxed-simd bench/bench.js). A benchmark, not a test.
//
//   --no-browser        Node only (skip headless Chromium)
//   --only=browser      Chromium only (still sets up the cache)
//   --skip-long         skip the long-sequence runs (RoPE / ALiBi at T=512 and T=8192)
//   --long-T=N          their length (default 8192)
//   --quick             few runs, for trying the script out (figures not for reporting)
//   --no-write          do not write bench/RESULTS.md
//   --update-readme     also replace the README "Performance" block (between
//                       <!-- bench:begin --> and <!-- bench:end -->, added at the
//                       end of the section if absent)
//   --from-json         measure nothing: rewrite RESULTS.md (and with
//                       --update-readme the README block) from the last run's
//                       raw figures, bench/.cache/results.json
//
// What it does, in order: builds the peak micro-benchmark (bench/peak.c, clang-16
// + wasm-ld-16) and measures the wasm SIMD peak; writes the model files
// (createEncoder with a seed, non-trivial biases and norm gains) and their ONNX
// exports (bench/export_onnx.py, Debian's PyTorch) into bench/.cache/, only when
// missing or outdated; times swapformer and onnxruntime-web alternately on the
// same weights and ids after cross-checking their outputs; measures cold start
// and wasm memory in fresh child processes (bench/probe.js); the same timing in
// headless Chromium (bench/browser.js); prints the tables and writes RESULTS.md.
import { readFileSync, writeFileSync, existsSync, statSync, mkdirSync, copyFileSync, rmSync } from 'node:fs';
import { spawnSync, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import os from 'node:os';
import * as H from './harness.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BENCH = join(ROOT, 'bench');
const CACHE = join(BENCH, '.cache');
const PYTHON = process.env.BENCH_PYTHON || '/usr/bin/python3';
const ORT_DIR = join(ROOT, 'node_modules', 'onnxruntime-web');
const ORT_WASM = join(ORT_DIR, 'dist', 'ort-wasm-simd-threaded.wasm');
const DIST = { plain: join(ROOT, 'dist', 'swapformer.wasm'), relaxed: join(ROOT, 'dist', 'swapformer-relaxed.wasm') };
// The binaries measured: copied from dist/ at the start, so that Node, the child
// processes and Chromium all run the same ones even if dist/ is rebuilt meanwhile.
const SNAP_DIR = join(CACHE, 'dist');
const SNAP = { plain: join(SNAP_DIR, 'swapformer.wasm'), relaxed: join(SNAP_DIR, 'swapformer-relaxed.wasm') };
const ORT_SESSION = { executionProviders: ['wasm'], graphOptimizationLevel: 'all' };
const ORT_SETTINGS = "onnxruntime-web wasm backend: env.wasm.numThreads = 1, executionProviders ['wasm'], " +
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
    const sys = '/usr/share/emscripten/cache/sysroot', lib = `${sys}/lib/wasm32-emscripten`;
    const objs = srcs.map((f, i) => {
      const o = join(CACHE, `gemm-${i}.o`);
      execFileSync('clang-16', ['--target=wasm32-unknown-emscripten', `--sysroot=${sys}`, '-O3', '-std=c11', '-msimd128', '-mrelaxed-simd', '-c', f, '-o', o], { stdio: 'inherit' });
      return o;
    });
    execFileSync('wasm-ld-16', ['-o', relaxed, ...objs, `${lib}/crt1_reactor.o`, `-L${lib}`, '-lstandalonewasm-memgrow', '-lstubs', '-lnoexit', '-lc',
      '-lemmalloc', '-lcompiler_rt', '--gc-sections', '--entry=_initialize', '--max-memory=2147483648'], { stdio: 'inherit' });
  }
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

/** Runs bench/probe.js in a fresh Node process (same flags as this one). */
function probe(spec, timeoutMs = 20 * 60e3) {
  const r = spawnSync(process.execPath, [...process.execArgv, join(BENCH, 'probe.js'), JSON.stringify(spec)], {
    encoding: 'utf8', timeout: timeoutMs, maxBuffer: 1 << 24,
  });
  const line = (r.stdout || '').trim().split('\n').pop();
  try {
    return JSON.parse(line);
  } catch {
    return { error: (r.error?.message || (r.stderr || '').trim().split('\n').slice(-3).join(' ') || `exit ${r.status}`).slice(0, 300) };
  }
}

// ------------------------------------------------------------------ Node runs

async function nodeRuns(opts, builds, sf) {
  const ort = await import('onnxruntime-web');
  ort.env.wasm.numThreads = 1;
  const q = opts.quick;
  const make = (shape, T, graphs) => {
    const [warmup, runs] = q ? [1, 3] : RUNS[shape][T];
    // BERT-base (slow) with the build Node 20 uses by default only, the SIMD one (relaxed SIMD
    // needs a flag there); Chromium times BERT-base with its default, the relaxed build
    const swap = shape === 'BERT-base' ? builds.filter((b) => !b.relaxed) : builds;
    return { shape, T, cfg: H.SHAPES[shape], model: modelPath(shape), warmup, runs,
             onnx: graphs.map((g) => ({ label: graphLabel(g), path: onnxPath(shape, g) })), swap };
  };
  const next = planner(make), cases = [];
  for (let spec = next(cases); spec; spec = next(cases)) {
    log(`  ${spec.shape} T=${spec.T} (node)`);
    const modelBytes = readFileSync(spec.model);
    try {
      cases.push(await H.runCase(spec, {
        log,
        openOrt: async (g, ids) => {
          const session = await ort.InferenceSession.create(readFileSync(g.path), ORT_SESSION);
          const feeds = { input_ids: new ort.Tensor('int64', BigInt64Array.from(ids, BigInt), [1, ids.length]) };
          return { run: async () => (await session.run(feeds)).last_hidden_state.data, close: () => session.release() };
        },
        openSwap: async (s, ids) => {
          const enc = await sf.loadModel(modelBytes, { wasm: s.module });
          return { run: () => enc.forward(ids).data, close: () => enc.dispose() };
        },
      }));
    } catch (e) {
      log(`  ${spec.shape} T=${spec.T}: ${e.code ?? e.name}: ${e.message}`);
      cases.push({ shape: spec.shape, T: spec.T, error: `${e.code ?? e.name}: ${e.message}`.slice(0, 200) });
    }
  }
  return cases;
}

function coldAndMemory(opts, nodeCases, relaxedFile) {
  const chosen = (shape, T) => {
    const c = nodeCases.find((x) => x.shape === (shape === 'BERT-base' ? 'BERT-base' : 'MiniLM-L6') && x.T === T && !x.error);
    const b = c && H.ortBest(c);
    return b ? b.label.replace('ORT ', '') : GRAPHS[0];
  };
  // cold start, T=128, alternating, a fresh process each: MiniLM-L6, and a tiny
  // BERT whose loading costs ~nothing (the runtimes' own start-up)
  const coldRuns = opts.quick ? 2 : 5, cold = {};
  const memory = [];
  for (const shape of ['MiniLM-L6', 'tiny']) {
    const c = cold[shape] = { swapformer: [], ort: [], graph: shape === 'tiny' ? 'fused' : chosen(shape, 128) };
    const last = {};
    for (let i = 0; i < coldRuns; i++) {
      for (const rt of i % 2 ? ['ort', 'swapformer'] : ['swapformer', 'ort']) {
        const p = probe({ runtime: rt, T: 128, vocab: H.SHAPES[shape].vocabSize, model: rt === 'ort' ? onnxPath(shape, c.graph) : modelPath(shape), distDir: SNAP_DIR });
        if (p.error) log(`  cold start ${shape} ${rt}: ${p.error}`);
        else c[rt].push(p);
        last[rt] = p;
      }
    }
    c.build = last.swapformer?.build;
    log(`  cold start ${shape}: swapformer ${c.swapformer.map((p) => p.coldMs.toFixed(0)).join(' ')} ms; ORT ${c.ort.map((p) => p.coldMs.toFixed(0)).join(' ')} ms`);
    if (shape === 'MiniLM-L6') { // with a second load after dispose (ORT: after release)
      memory.push({ shape, T: 128, swapformer: probe({ runtime: 'swapformer', T: 128, model: modelPath(shape), wasm: SNAP.plain, reload: true }),
                    ort: probe({ runtime: 'ort', T: 128, model: onnxPath(shape, c.graph), reload: true }), graph: c.graph });
    }
  }
  // wasm memory per case: one fresh process per runtime and case
  for (const [shape, T] of [...ORT_CASES.slice(1), ...SWAP_CASES]) {
    const m = { shape, T };
    m.swapformer = probe({ runtime: 'swapformer', T, model: modelPath(shape), wasm: SNAP.plain });
    // the relaxed build's memory, once (same allocations, a different binary)
    if (relaxedFile && shape === 'MiniLM-L6' && T === 512) m.relaxed = probe({ runtime: 'swapformer', T, model: modelPath(shape), wasm: relaxedFile });
    if (H.SHAPES[shape].position === 'learned') {
      m.graph = chosen(shape, T);
      m.ort = probe({ runtime: 'ort', T, model: onnxPath(shape, m.graph) });
    }
    log(`  memory ${shape} T=${T}: swapformer ${m.swapformer.error ?? H.fmt.mb(m.swapformer.memAfter)}` +
        (m.ort ? `, ORT ${m.ort.error ?? H.fmt.mb(m.ort.memAfter)}` : ''));
    memory.push(m);
  }
  return { cold, memory };
}

function longRuns(opts) {
  const out = [];
  if (opts.skipLong) return out;
  for (const T of [512, opts.longT]) {
    for (const shape of ['MiniLM-L6 modern', 'MiniLM-L6 modern ALiBi']) {
      log(`  ${shape} T=${T} (fresh process)`);
      const p = probe({ runtime: 'swapformer', T, model: modelPath(shape), wasm: SNAP.plain, long: true }, 30 * 60e3);
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
  rows.push(row('onnxruntime-web wasm', ORT_WASM));
  rows.push(row('swapformer JS (bindings/index.js)', join(ROOT, 'bindings', 'index.js')));
  const ortJs = [join(ORT_DIR, 'dist', 'ort.wasm.min.mjs'), join(ORT_DIR, 'dist', 'ort-wasm-simd-threaded.mjs')];
  const js = ortJs.map((f) => readFileSync(f));
  rows.push({ what: 'onnxruntime-web JS (ort.wasm.min.mjs + ort-wasm-simd-threaded.mjs)', file: ortJs.map(rel).join(' + '),
              raw: js.reduce((s, b) => s + b.length, 0), gzip: js.reduce((s, b) => s + gzipSync(b, { level: 9 }).length, 0) });
  return rows;
}

// ------------------------------------------------------------------ report

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
  const status = (v, ok) => (v === undefined ? 'not measured' : ok ? 'met' : 'SHORT');
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
  for (const s of R.sizes.filter((x) => x.what.startsWith('swapformer wasm') && !x.missing)) {
    rows.push([`${s.file} <= 100 KB`, H.fmt.kb(s.raw), status(s.raw, s.raw <= 100 * 1024)]);
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
  const load = loadMemory(R);
  if (load) {
    const r = load.swapformer.memAfter / load.weights;
    rows.push([`Peak wasm memory, MiniLM-L6 f32 (load + forward T=128) <= ${LOAD_MEMORY_BOUND}x the weights`,
      `${H.fmt.mb(load.swapformer.memAfter)} = ${r.toFixed(2)}x the ${H.fmt.mb(load.weights)} of weights` +
      (load.ort?.memAfter ? `; ORT ${H.fmt.mb(load.ort.memAfter)} = ${(load.ort.memAfter / load.weights).toFixed(2)}x` : ''), status(r, r <= LOAD_MEMORY_BOUND)]);
    const grew = load.swapformer.memReload - load.swapformer.memAfter;
    rows.push(['A second load after dispose does not grow wasm memory', Number.isFinite(grew) ? `grew ${H.fmt.mb(grew)}` : '-', status(Number.isFinite(grew) ? grew : undefined, grew === 0)]);
  } else rows.push([`Peak wasm memory, MiniLM-L6 f32 (load + forward T=128) <= ${LOAD_MEMORY_BOUND}x the weights`, '-', 'not measured']);
  const failed = [...(R.node ?? []), ...(R.browser?.cases ?? [])].flatMap((c) => (c.results ?? []).filter((r) => r.diff !== undefined && !(r.diff <= 1e-3)).map((r) => `${c.shape} T=${c.T} ${r.label}`));
  rows.push(['Outputs agree (relative max diff <= 1e-3)', failed.length ? `differ: ${failed.join(', ')}` : 'all cases', failed.length ? 'FAILED' : 'met']);
  return rows;
}

const LOAD_MEMORY_BOUND = 1.15; // issue 11: peak wasm memory of a MiniLM f32 load <= 1.15x its weights

/** The MiniLM-L6 T=128 memory probes with a second load, or null. */
function loadMemory(R) {
  const m = R.memory?.find((x) => x.shape === 'MiniLM-L6' && x.T === 128 && x.swapformer?.weightBytes);
  return m && { ...m, weights: m.swapformer.weightBytes };
}

/** The table of a model's load: wasm memory after the load, after a forward, after dispose + a second load. */
function loadMemoryTable(load) {
  const w = load.weights, cell = (b) => (Number.isFinite(b) ? `${H.fmt.mb(b)} (${(b / w).toFixed(2)}x)` : '-');
  const row = (label, m) => (!m || m.error ? [label, m?.error?.slice(0, 60) ?? '-', '-', '-'] : [label, cell(m.memLoaded), cell(m.memAfter), cell(m.memReload)]);
  return H.mdTable(['runtime', 'after loading', 'after a forward (T=128): the peak', 'after dispose + the same load + forward'],
    [row('swapformer (SIMD build)', load.swapformer), row(`ORT [${load.graph}]`, load.ort)]);
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
  p(`Binaries: ${Object.entries(M.dist).map(([k, v]) => `${k === 'plain' ? 'dist/swapformer.wasm' : 'dist/swapformer-relaxed.wasm'} sha256 ${v}`).join('; ')}`);
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
    p(loadMemoryTable(load));
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
  p('### Targets');
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
| CPU | ${M.cpu}, ${M.cores} cores (one used), ${M.memory}; 1-min load average ${M.load?.toFixed(1)} at the start, ${M.loadEnd?.toFixed(1)} at the end |
| OS | ${M.os} |
| Node | ${M.node} (V8 ${M.v8}), flags \`${M.nodeFlags}\` |
| Chromium | ${R.browser ? `${R.browser.version}, headless, via playwright-core ${M.playwright}` : 'not run'} |
| onnxruntime-web | ${M.ort} |
| swapformer | ${M.git} |
| binaries | ${Object.entries(M.dist).map(([k, v]) => `${k === 'plain' ? 'dist/swapformer.wasm' : 'dist/swapformer-relaxed.wasm'} sha256 ${v}`).join('<br>')} |

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
  needs \`--experimental-wasm-relaxed-simd\` in Node 20), the relaxed build in Chromium.
- **Cross-check**: every output against the first ORT graph's (swapformer-only cases: against the SIMD
  build's): max |a - b| / max |b| (<= 1e-3 required), on the same ids before timing.
- **Timing**: warm-up rounds first (V8 starts wasm in its baseline tier), then the runtimes alternate run
  by run (order reversed every other round), one thread, batch 1; medians. Input copy-in and output
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
  const lines = [`Measured by \`npm run bench\` on ${M.cpu} (one thread), Node ${M.node}, onnxruntime-web ${M.ort}` +
    ` (wasm backend, graph optimisations 'all'), same random weights, batch 1, medians; details and the Chromium figures in` +
    ' [bench/RESULTS.md](https://github.com/swapformer/swapformer/blob/main/bench/RESULTS.md).', ''];
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
    lines.push(loadMemoryTable(load));
  }
  lines.push('', 'The targets of the performance issue, as measured in this run (Node and Chromium):', '');
  lines.push(H.mdTable(['target', 'measured', 'status'], targets(R), ['l', 'l', 'l']));
  return lines.join('\n');
}

// ------------------------------------------------------------------ main

export async function main(argv = process.argv.slice(2)) {
  const flag = (n) => argv.includes(`--${n}`);
  const val = (n, d) => (argv.find((a) => a.startsWith(`--${n}=`)) ?? `=${d}`).split('=')[1];
  const opts = {
    quick: flag('quick'), skipLong: flag('skip-long'), longT: +val('long-T', 8192),
    only: val('only', 'all'), browser: !flag('no-browser'), write: !flag('no-write'), readme: flag('update-readme'),
    fromJson: flag('from-json'),
  };
  if (opts.fromJson) { // no measuring: rewrite the reports from the last run's raw figures
    const R = JSON.parse(readFileSync(join(CACHE, 'results.json'), 'utf8'));
    writeFileSync(join(BENCH, 'RESULTS.md'), resultsMd(R, report(R)));
    if (opts.readme) updateReadme(readmeBlock(R));
    log(`rewrote bench/RESULTS.md${opts.readme ? ' and the README block' : ''} from bench/.cache/results.json (${R.machine.date})`);
    return;
  }
  const t0 = performance.now();
  mkdirSync(CACHE, { recursive: true });
  if (!existsSync(DIST.plain)) throw new Error('dist/swapformer.wasm is missing: run ./build.sh first');
  if (!existsSync(ORT_WASM)) throw new Error('onnxruntime-web is not installed: npm ci');

  mkdirSync(SNAP_DIR, { recursive: true });
  for (const [k, f] of Object.entries(DIST)) {
    if (existsSync(f)) copyFileSync(f, SNAP[k]);
    else rmSync(SNAP[k], { force: true });
  }
  const R = { machine: machine(), quick: opts.quick, peaks: {} };
  R.machine.load = os.loadavg()[0];
  R.machine.dist = distIds();
  log(`bench: ${R.machine.cpu}, ${R.machine.cores} cores; Node ${R.machine.node}; onnxruntime-web ${R.machine.ort}`);

  buildPeak();
  buildGemm();
  const relaxedOn = await relaxedAvailable();
  const relaxedBuilt = existsSync(DIST.relaxed);
  if (!relaxedOn) log('note: this Node has no relaxed SIMD (run with --experimental-wasm-relaxed-simd)');
  log(`swapformer relaxed build: ${relaxedBuilt ? rel(DIST.relaxed) : 'not built'}`);

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
  ensureOnnx('tiny', 'fused');

  if (opts.only !== 'browser') {
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
    for (let pass = 0; pass < 3; pass++) {
      const p = { plain: peak('peak.wasm'), ...(relaxedOn ? { relaxed: peak('peak-relaxed.wasm') } : {}) };
      R.peaks.node = pass ? H.bestPeaks(R.peaks.node, p) : p;
      R.gemm.plain = Math.max(R.gemm.plain, runGemm('gemm.wasm', mm));
      if (relaxedOn) R.gemm.relaxed = Math.max(R.gemm.relaxed ?? 0, runGemm('gemm-relaxed.wasm', mm));
    }
    for (const [k, v] of Object.entries(R.peaks.node)) log(`  ${k}: reg ${v.reg.toFixed(1)} GFLOP/s (N=${v.regN}), gemm ${v.gemm.toFixed(1)} (${v.gemmKernel})`);
    log(`  matmul_forward: SIMD ${R.gemm.plain.toFixed(1)} GFLOP/s${R.gemm.relaxed ? `, relaxed ${R.gemm.relaxed.toFixed(1)}` : ''}`);
    log('timing (node):');
    R.node = await nodeRuns(opts, builds, sf);
    log('cold start and memory (node, fresh processes):');
    Object.assign(R, coldAndMemory(opts, R.node, builds.find((b) => b.relaxed) ? SNAP.relaxed : null));
    log('long sequences (node):');
    R.long = longRuns(opts);
  }
  if (opts.browser && opts.only !== 'node') {
    log('chromium:');
    const { runBrowser } = await import('./browser.js');
    const url = (p) => `/${rel(p)}`;
    const make = (shape, T, graphs) => {
      const [warmup, runs] = opts.quick ? [1, 3] : RUNS[shape][T];
      return { shape, T, cfg: H.SHAPES[shape], model: url(modelPath(shape)), warmup, runs,
               onnx: graphs.map((g) => ({ label: graphLabel(g), url: url(onnxPath(shape, g)) })), swap: [] };
    };
    let browserBuilds;
    const plan = {
      cases: (done) => {
        const spec = planner(make)(done);
        // BERT-base (slow) with the build Chromium picks by default only: relaxed when built
        if (spec) spec.swap = spec.shape === 'BERT-base' && browserBuilds.length > 1 ? browserBuilds.filter((b) => b.relaxed) : browserBuilds;
        return spec;
      },
      cold: ['MiniLM-L6', 'tiny'].map((name) => ({
        name, model: url(modelPath(name)), onnx: url(onnxPath(name, name === 'tiny' ? 'fused' : R.cold?.[name]?.graph ?? 'fused')),
        T: 128, vocab: H.SHAPES[name].vocabSize, runs: opts.quick ? 1 : 5, relaxedBuilt,
      })),
    };
    // relaxed SIMD is on by default in Chromium: bench the relaxed build there when it exists
    browserBuilds = [{ label: 'swapformer', file: 'swapformer.wasm' }];
    if (relaxedBuilt) browserBuilds.push({ label: 'swapformer relaxed', file: 'swapformer-relaxed.wasm', relaxed: true });
    try {
      R.browser = await runBrowser(plan, { log });
      if (!R.browser.relaxed) {
        // the relaxed rows would have failed; say so
        log('note: Chromium reports no relaxed SIMD');
      }
      R.machine.chromium = R.browser.version;
    } catch (e) {
      log(`chromium: ${e.message.split('\n')[0]}`);
    }
  }
  R.sizes = sizes(relaxedBuilt);
  R.machine.loadEnd = os.loadavg()[0];
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
  log(`bench: ${((performance.now() - t0) / 60e3).toFixed(1)} min`);
  const bad = [...(R.node ?? []), ...(R.browser?.cases ?? [])].some((c) => (c.results ?? []).some((r) => r.diff !== undefined && !(r.diff <= 1e-3)));
  if (bad) {
    log('CROSS-CHECK FAILED: the runtimes disagree by more than 1e-3 (see "rel. diff")');
    process.exitCode = 1;
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await main();
