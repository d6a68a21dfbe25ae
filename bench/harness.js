// The part of the benchmark that runs the same in Node and in the browser page:
// the model shapes, the FLOP count, the input ids, the alternating timing loop,
// the peak micro-benchmark driver, the cross-check and the statistics. No I/O.
import { random } from '../models/tasks.js';

/** The encoders of the issue. vocabSize and eps as in the real checkpoints. */
export const SHAPES = {
  'MiniLM-L6': {
    vocabSize: 30522,
    dModel: 384,
    heads: 12,
    layers: 6,
    ffDim: 1536,
    maxLen: 512,
    position: 'learned',
    norm: 'layernorm',
    normPlacement: 'post',
    activation: 'gelu',
    eps: 1e-12,
  },
  'BERT-base': {
    vocabSize: 30522,
    dModel: 768,
    heads: 12,
    layers: 12,
    ffDim: 3072,
    maxLen: 512,
    position: 'learned',
    norm: 'layernorm',
    normPlacement: 'post',
    activation: 'gelu',
    eps: 1e-12,
  },
  // the modern variant of the MiniLM shape (swapformer only: RoPE, pre-RMSNorm, SwiGLU)
  'MiniLM-L6 modern': {
    vocabSize: 30522,
    dModel: 384,
    heads: 12,
    layers: 6,
    ffDim: 1536,
    position: 'rope',
    norm: 'rmsnorm',
    normPlacement: 'pre',
    activation: 'swiglu',
    eps: 1e-6,
  },
};
SHAPES['MiniLM-L6 modern ALiBi'] = { ...SHAPES['MiniLM-L6 modern'], position: 'alibi', positionOptions: {} };
// a tiny BERT, for the cold start of the runtimes themselves (model loading ~ nothing)
SHAPES.tiny = {
  vocabSize: 1000,
  dModel: 64,
  heads: 4,
  layers: 2,
  ffDim: 256,
  maxLen: 512,
  position: 'learned',
  norm: 'layernorm',
  normPlacement: 'post',
  activation: 'gelu',
  eps: 1e-12,
};

export const SEEDS = { 'MiniLM-L6': 1, 'BERT-base': 2, 'MiniLM-L6 modern': 3, tiny: 4 };

/** File-name stem of a shape in bench/.cache/. */
export const stem = (shape) => shape.toLowerCase().replace(/[^a-z0-9]+/g, '-');

export const FLOP_FORMULA =
  'per layer 2*T*(4*d^2 + 2*d*ff) [q,k,v,o + FFN up/down; 3*d*ff for SwiGLU] + 4*T^2*d [q.k^T and p.v]; ' +
  'embeddings, norms, softmax, activations and biases not counted';

/** Multiply-adds x 2 of the matrix products of one forward of T tokens. */
export function flops(cfg, T) {
  const d = cfg.dModel,
    ff = cfg.ffDim;
  const ffnMats = cfg.activation === 'swiglu' || cfg.activation === 'geglu' ? 3 : 2;
  return cfg.layers * (2 * T * (4 * d * d + ffnMats * d * ff) + 4 * T * T * d);
}

/** T token ids in [1, vocab), the same for every runtime. */
export function makeIds(T, vocab, seed = 7) {
  const r = random(seed * 1000003 + T);
  return Int32Array.from({ length: T }, () => 1 + Math.floor(r() * (vocab - 1)));
}

/** Non-trivial biases and norm gains (createEncoder initialises them to 0 and
 * 1, which would let a bias or gain mistake pass the cross-check). */
export function perturb(weights, seed) {
  const r = random(seed + 99);
  for (const [name, w] of Object.entries(weights)) {
    if (name.endsWith('.bias')) for (let i = 0; i < w.length; i++) w[i] = 0.1 * (r() - 0.5);
    else if (/norm\d?\.weight$|final_norm\.weight$/.test(name)) for (let i = 0; i < w.length; i++) w[i] = 1 + 0.2 * (r() - 0.5);
  }
  return weights;
}

export function median(xs) {
  const a = [...xs].sort((x, y) => x - y),
    n = a.length;
  return n ? (n % 2 ? a[n >> 1] : (a[n / 2 - 1] + a[n / 2]) / 2) : NaN;
}

/** max |a - b| / max |b|. */
export function relDiff(a, b) {
  if (a.length !== b.length) return Infinity;
  let d = 0,
    s = 0;
  for (let i = 0; i < a.length; i++) {
    const x = Math.abs(a[i] - b[i]);
    if (!(x <= d)) d = x; // NaN propagates
    s = Math.max(s, Math.abs(b[i]));
  }
  return d / (s || 1);
}

const now = () => performance.now();

/**
 * Times runners [{label, run: () => output | Promise<output>}] alternately:
 * `warmup` untimed rounds, then `runs` timed rounds in which every runner runs
 * once, the order reversed every other round (ABBA). Returns per runner
 * {label, times, median, warm} (warm: the warm-up times).
 */
export async function timeAlternating(runners, { warmup = 3, runs = 10, log = () => {} } = {}) {
  const res = runners.map((r) => ({ label: r.label, times: [], warm: [] }));
  for (let w = 0; w < warmup; w++) {
    for (let k = 0; k < runners.length; k++) {
      const t0 = now();
      await runners[k].run();
      res[k].warm.push(now() - t0);
    }
  }
  for (let i = 0; i < runs; i++) {
    const order = runners.map((_, k) => k);
    if (i % 2) order.reverse();
    for (const k of order) {
      const t0 = now();
      await runners[k].run();
      res[k].times.push(now() - t0);
    }
  }
  for (const r of res) {
    r.median = median(r.times);
    log(
      `    ${r.label.padEnd(26)} warm-up ${r.warm.map((t) => t.toFixed(0)).join(' ')} ms; median ${r.median.toFixed(1)} ms ` +
        `(min ${Math.min(...r.times).toFixed(1)}, max ${Math.max(...r.times).toFixed(1)}, n=${r.times.length})`,
    );
  }
  return res;
}

/** The [key, value] of an object's largest value. */
const top = (o) => Object.entries(o).reduce((a, b) => (b[1] > a[1] ? b : a));

/**
 * The peak micro-benchmark (bench/peak.c) on the exports of one of its builds.
 * reg: register-only acc = acc*a + b (mul + add, or fma) with N accumulators, best N;
 * gemm: the best of the L1-resident matrix-product micro-kernels. GFLOP/s,
 * best of `tries` calls of about `ms` each (the machine is noisy: the best is
 * the least disturbed).
 */
export function runPeak(x, { ms = 50, tries = 10 } = {}) {
  const best = (fn, flopsPerCall) => {
    fn();
    fn(); // tier-up
    let g = 0;
    for (let t = 0; t < tries; t++) {
      const t0 = now();
      fn();
      g = Math.max(g, flopsPerCall / (now() - t0) / 1e6);
    }
    return g;
  };
  const target = ms * 30e6; // flops per call at a rough 30 GFLOP/s
  const reg = {};
  for (const n of [4, 6, 8, 10, 12, 14, 16]) {
    const iters = Math.max(1, Math.round(target / x.flops_per_iter(n)));
    reg[n] = best(() => x[`peak${n}`](iters, 0.999, 0.001), iters * x.flops_per_iter(n));
  }
  x.fill();
  const gemm = {};
  for (const [mr, nv] of [
    [4, 2],
    [6, 2],
    [4, 3],
  ]) {
    const k = Math.floor(4096 / Math.max(mr, 4 * nv));
    const per = k * mr * 4 * nv * 2,
      reps = Math.max(1, Math.round(target / per));
    gemm[`${mr}x${4 * nv}`] = best(() => x[`gemm${mr}x${nv}`](reps, k), reps * per);
  }
  const [regN, regG] = top(reg),
    [gemmK, gemmG] = top(gemm);
  return { reg: regG, regN: +regN, gemm: gemmG, gemmKernel: gemmK, all: { reg, gemm } };
}

/** The better of two runPeak results per build, kernel by kernel. */
export function bestPeaks(a, b) {
  const max = (x, y) => Object.fromEntries(Object.keys(x).map((k) => [k, Math.max(x[k], y[k] ?? 0)]));
  return Object.fromEntries(
    Object.entries(a).map(([build, pa]) => {
      const all = { reg: max(pa.all.reg, b[build].all.reg), gemm: max(pa.all.gemm, b[build].all.gemm) };
      const [regN, reg] = top(all.reg),
        [gemmKernel, gemm] = top(all.gemm);
      return [build, { reg, regN: +regN, gemm, gemmKernel, all }];
    }),
  );
}

/**
 * How close an output is to a reference, both [T, C] row-major: max |a - b| / max |b|
 * (rel), the cosine similarity of each row (a token's hidden state: the smallest,
 * minCos, and the mean, meanCos) and of the mean-pooled rows (pooledCos, the
 * sentence embedding of mean pooling).
 */
export function agreement(a, b, C) {
  const T = a.length / C;
  let minCos = 1,
    sumCos = 0;
  const pa = new Float64Array(C),
    pb = new Float64Array(C);
  for (let t = 0; t < T; t++) {
    let ab = 0,
      aa = 0,
      bb = 0;
    for (let c = 0, i = t * C; c < C; c++, i++) {
      ((ab += a[i] * b[i]), (aa += a[i] * a[i]), (bb += b[i] * b[i]));
      ((pa[c] += a[i]), (pb[c] += b[i]));
    }
    const cos = ab / Math.sqrt(aa * bb);
    ((minCos = Math.min(minCos, cos)), (sumCos += cos));
  }
  let ab = 0,
    aa = 0,
    bb = 0;
  for (let c = 0; c < C; c++) ((ab += pa[c] * pb[c]), (aa += pa[c] * pa[c]), (bb += pb[c] * pb[c]));
  return { rel: relDiff(a, b), minCos, meanCos: sumCos / T, pooledCos: ab / Math.sqrt(aa * bb) };
}

/** Whether two outputs are the same bits. */
export function identical(a, b) {
  if (a.length !== b.length) return false;
  const x = new Uint32Array(a.buffer, a.byteOffset, a.length),
    y = new Uint32Array(b.buffer, b.byteOffset, b.length);
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false;
  return true;
}

/**
 * One comparison case, in Node or in the page. spec = {shape, cfg, T,
 * onnx: [{label, dtype?, ref?, ...}], swap: [{label, relaxed?, dtype?, threads?, ref?, same?, ...}],
 * warmup, runs}; openOrt(g) / openSwap(s) load one runtime and resolve to
 * {run: () => Float32Array | Promise<Float32Array>, close}.
 *
 * Cross-check, on the same ids before timing: every f32 output against the first
 * runner's (an ORT f32 graph when there is one, else swapformer's SIMD build):
 * diff = max |a - b| / max |b|. A q8 runner names its f32 sibling (ref): diff and
 * agree (row and pooled cosines) are against that output, the cost of int8.
 * A runner with `same` (another runner's label: the same build at another
 * thread count) must give the same bits: identical.
 */
export async function runCase(spec, { openOrt, openSwap, log = () => {} }) {
  const ids = makeIds(spec.T, spec.cfg.vocabSize);
  const runners = [];
  try {
    for (const g of spec.onnx) runners.push({ ...g, label: g.label, ort: true, ...(await openOrt(g, ids)) });
    for (const s of spec.swap) runners.push({ ...s, label: s.label, relaxed: !!s.relaxed, ...(await openSwap(s, ids)) });
    const outs = [];
    for (const r of runners) outs.push((await r.run()).slice());
    const at = (label) => runners.findIndex((r) => r.label === label);
    const checks = runners.map((r, k) => {
      const c = {};
      const ref = r.ref !== undefined ? at(r.ref) : (r.dtype ?? 'f32') === 'f32' && k > 0 ? 0 : -1;
      if (ref >= 0) {
        c.diff = relDiff(outs[k], outs[ref]);
        c.diffRef = runners[ref].label;
        if (r.ref !== undefined) c.agree = agreement(outs[k], outs[ref], spec.cfg.dModel);
      }
      if (r.same !== undefined && at(r.same) >= 0) c.identical = identical(outs[k], outs[at(r.same)]);
      return c;
    });
    log(
      `    cross-check: ${
        runners
          .map((r, k) => [k, checks[k]])
          .filter(([, c]) => c.diff !== undefined || c.identical !== undefined)
          .map(
            ([k, c]) =>
              `${runners[k].label}${c.diff !== undefined ? ` ${c.diff.toExponential(2)} vs ${c.diffRef}` : ''}` +
              `${c.agree ? ` (min row cos ${c.agree.minCos.toFixed(5)}, pooled ${c.agree.pooledCos.toFixed(6)})` : ''}` +
              `${c.identical !== undefined ? ` ${c.identical ? 'same bits as' : 'DIFFERENT bits from'} ${runners[k].same}` : ''}`,
          )
          .join('; ') || '-'
      }`,
    );
    const res = await timeAlternating(runners, { warmup: spec.warmup, runs: spec.runs, log });
    return {
      shape: spec.shape,
      T: spec.T,
      threads: spec.threads ?? 1,
      flops: flops(spec.cfg, spec.T),
      ortGraphs: spec.onnx.filter((g) => (g.dtype ?? 'f32') === 'f32').length,
      results: res.map((r, k) => ({
        ...r,
        ...checks[k],
        relaxed: !!runners[k].relaxed,
        ort: !!runners[k].ort,
        dtype: runners[k].dtype ?? 'f32',
        threads: runners[k].threads ?? spec.threads ?? 1,
        graph: runners[k].graph,
        same: runners[k].same,
        ...(runners[k].info ? { info: runners[k].info } : {}),
      })),
    };
  } finally {
    for (const r of runners) await r.close?.();
  }
}

/** onnxruntime-web's session options in every comparison. */
export const ORT_SESSION = { executionProviders: ['wasm'], graphOptimizationLevel: 'all' };

/** onnxruntime-web's input for ids: int64 input_ids [1, T]. */
export const ortFeeds = (ort, ids) => ({ input_ids: new ort.Tensor('int64', BigInt64Array.from(ids, BigInt), [1, ids.length]) });

/** An onnxruntime-web runner of a comparison (ort: the module, bytes: the ONNX file): {run: () => the output for ids, close}. */
export async function openOrtRunner(ort, bytes, ids) {
  const session = await ort.InferenceSession.create(bytes, ORT_SESSION),
    feeds = ortFeeds(ort, ids);
  return { run: async () => (await session.run(feeds)).last_hidden_state.data, close: () => session.release() };
}

/** The fastest ORT result of a finished case (of one dtype), or undefined. */
export function ortBest(c, dtype = 'f32') {
  const o = (c.results ?? []).filter((r) => r.ort && (r.dtype ?? 'f32') === dtype);
  return o.length ? o.reduce((a, b) => (b.median < a.median ? b : a)) : undefined;
}

// ------------------------------------------------------------------ formatting

export const fmt = {
  ms: (x) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2)),
  g: (x) => x.toFixed(1),
  x: (x) => `${x.toFixed(2)}x`,
  pct: (x) => `${Math.round(100 * x)}%`,
  mb: (b) => `${(b / 2 ** 20).toFixed(1)} MB`,
  kb: (b) => `${(b / 1024).toFixed(1)} KB`,
  e: (x) => (Number.isFinite(x) ? x.toExponential(1) : String(x)),
};

/** A markdown table from a header row and data rows. */
export function mdTable(head, rows, align) {
  const al = align || head.map((_, i) => (i === 0 ? 'l' : 'r'));
  const line = (cells) => `| ${cells.join(' | ')} |`;
  return [line(head), line(al.map((a) => (a === 'l' ? ':--' : '--:'))), ...rows.map(line)].join('\n');
}

/** The comparison rows of one environment (Node or Chromium). */
export function comparisonRows(cases, peaks) {
  const rows = [];
  for (const c of cases) {
    if (c.error) {
      rows.push([`${c.shape} T=${c.T}`, '-', c.error, '', '', '', '', '']);
      continue;
    }
    const best = ortBest(c),
      ortMs = best?.median;
    for (const r of c.results) {
      const peak = r.relaxed ? peaks.relaxed : peaks.plain;
      const g = c.flops / r.median / 1e6;
      rows.push([
        `${c.shape} T=${c.T}`,
        r.label + (best && r === best && c.ortGraphs > 1 ? ' (faster graph)' : ''),
        fmt.ms(r.median),
        fmt.g(g),
        ortMs ? fmt.x(ortMs / r.median) : '-',
        peak ? fmt.pct(g / peakOf(peak)) : '-',
        r.diff === undefined ? '-' : fmt.e(r.diff),
        String(r.times.length),
      ]);
    }
  }
  return rows;
}

export const COMPARISON_HEAD = ['case', 'runtime', 'median ms', 'GFLOP/s', 'vs ORT', '% of peak', 'rel. diff', 'runs'];

/** The peak of a build: the best of its kernels (register-only or L1 gemm). */
export const peakOf = (p) => Math.max(p.reg, p.gemm);

// ------------------------------------------------------------------ threads and dtypes

/**
 * Opens a swapformer runner of the thread/dtype comparison (Node and the page alike):
 * s = {label, relaxed, dtype: 'f32' | 'q8', threads}; wasmPaths = configure()'s
 * {simd, relaxed, simdThreads, relaxedThreads} (the copies of dist/ the run
 * measures: bytes or compiled modules in Node, URLs in the page). One thread runs
 * the single-threaded build, more the threaded one (its pool), as a user gets them:
 * loadModel(bytes, {dtype, threads}) of the f32 file (q8: quantized as it loads).
 */
export async function openSwapformer(sf, s, ids, { bytes, wasmPaths }) {
  sf.configure({ wasmPaths, build: s.relaxed ? 'relaxed-simd' : 'simd128' });
  const threads = s.threads ?? 1,
    dtype = s.dtype ?? 'f32';
  const enc = await sf.loadModel(bytes, { threads, dtype });
  if (enc.dtype !== dtype) throw new Error(`${s.label}: loadModel gave a ${enc.dtype} encoder`);
  const info = await sf.runtimeInfo({ threads });
  return {
    run: () => enc.forward(ids).data,
    close: () => enc.dispose(),
    info: { build: info.build, threaded: info.threaded, threads: info.threads, threadsFallback: info.threadsFallback, q8Kernel: info.q8Kernel },
  };
}

/**
 * The runners of one thread count's comparison: onnxruntime-web's f32 and q8
 * graphs (the q8 one names its f32 sibling as ref), swapformer's SIMD and relaxed
 * builds in f32 and q8 (q8: ref its f32 sibling), all at `threads`; with
 * `scaling` (thread counts below it), the same swapformer runners again at those,
 * each of which must give the same bits as its sibling at `threads`.
 */
export function matrixRunners({ threads, graphs, relaxed, scaling = [] }) {
  const onnx = [];
  for (const g of graphs) onnx.push({ label: `ORT ${g}`, graph: g, dtype: 'f32' });
  for (const g of graphs) onnx.push({ label: `ORT ${g} q8`, graph: `${g}-q8`, dtype: 'q8', ref: `ORT ${g}` });
  const swap = [];
  const builds = relaxed ? [false, true] : [false];
  const name = (rx, q8, t) => `swapformer${rx ? ' relaxed' : ''}${q8 ? ' q8' : ''}${t === threads ? '' : ` (${t} thread${t > 1 ? 's' : ''})`}`;
  for (const t of [threads, ...scaling]) {
    for (const q8 of [false, true]) {
      for (const rx of builds) {
        swap.push({
          label: name(rx, q8, t),
          relaxed: rx,
          dtype: q8 ? 'q8' : 'f32',
          threads: t,
          ...(q8 ? { ref: name(rx, false, t) } : {}),
          ...(t === threads ? {} : { same: name(rx, q8, threads) }),
        });
      }
    }
  }
  return { onnx, swap };
}

/**
 * A V8 CPU profile (CDP Profiler.stop's, or node:inspector's) by function: {samples,
 * ms, functions: [{name, url, selfMs}] by self time, heaviest first}: the time of each
 * sample is that of its leaf function (V8 names wasm functions from the module's name section).
 */
export function selfTimes(profile) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const n = byId.get(id),
      dt = (profile.timeDeltas[i] ?? 0) / 1000;
    const key = `${n.callFrame.functionName || '(anonymous)'}\u0000${n.callFrame.url}`;
    self.set(key, (self.get(key) ?? 0) + dt);
    total += dt;
  });
  const functions = [...self.entries()]
    .map(([k, ms]) => {
      const [name, url] = k.split('\u0000');
      return { name, url: url.replace(/^https?:\/\/[^/]+/, ''), selfMs: ms };
    })
    .sort((a, b) => b.selfMs - a.selfMs);
  return { samples: profile.samples.length, ms: total, functions };
}
