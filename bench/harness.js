// The part of the benchmark that runs the same in Node and in the browser page:
// the model shapes, the FLOP count, the input ids, the alternating timing loop,
// the peak micro-benchmark driver, the cross-check and the statistics. No I/O.
import { random } from '../models/tasks.js';

/** The encoders of the issue. vocabSize and eps as in the real checkpoints. */
export const SHAPES = {
  'MiniLM-L6': {
    vocabSize: 30522, dModel: 384, heads: 12, layers: 6, ffDim: 1536, maxLen: 512,
    position: 'learned', norm: 'layernorm', normPlacement: 'post', activation: 'gelu', eps: 1e-12,
  },
  'BERT-base': {
    vocabSize: 30522, dModel: 768, heads: 12, layers: 12, ffDim: 3072, maxLen: 512,
    position: 'learned', norm: 'layernorm', normPlacement: 'post', activation: 'gelu', eps: 1e-12,
  },
  // the modern variant of the MiniLM shape (swapformer only: RoPE, pre-RMSNorm, SwiGLU)
  'MiniLM-L6 modern': {
    vocabSize: 30522, dModel: 384, heads: 12, layers: 6, ffDim: 1536,
    position: 'rope', norm: 'rmsnorm', normPlacement: 'pre', activation: 'swiglu', eps: 1e-6,
  },
};
SHAPES['MiniLM-L6 modern ALiBi'] = { ...SHAPES['MiniLM-L6 modern'], position: 'alibi', positionOptions: {} };
// a tiny BERT, for the cold start of the runtimes themselves (model loading ~ nothing)
SHAPES.tiny = {
  vocabSize: 1000, dModel: 64, heads: 4, layers: 2, ffDim: 256, maxLen: 512,
  position: 'learned', norm: 'layernorm', normPlacement: 'post', activation: 'gelu', eps: 1e-12,
};

export const SEEDS = { 'MiniLM-L6': 1, 'BERT-base': 2, 'MiniLM-L6 modern': 3, tiny: 4 };

/** File-name stem of a shape in bench/.cache/. */
export const stem = (shape) => shape.toLowerCase().replace(/[^a-z0-9]+/g, '-');

export const FLOP_FORMULA =
  'per layer 2*T*(4*d^2 + 2*d*ff) [q,k,v,o + FFN up/down; 3*d*ff for SwiGLU] + 4*T^2*d [q.k^T and p.v]; ' +
  'embeddings, norms, softmax, activations and biases not counted';

/** Multiply-adds x 2 of the matrix products of one forward of T tokens. */
export function flops(cfg, T) {
  const d = cfg.dModel, ff = cfg.ffDim;
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
  const a = [...xs].sort((x, y) => x - y), n = a.length;
  return n ? (n % 2 ? a[n >> 1] : (a[n / 2 - 1] + a[n / 2]) / 2) : NaN;
}

/** max |a - b| / max |b|. */
export function relDiff(a, b) {
  if (a.length !== b.length) return Infinity;
  let d = 0, s = 0;
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
    log(`    ${r.label.padEnd(26)} warm-up ${r.warm.map((t) => t.toFixed(0)).join(' ')} ms; median ${r.median.toFixed(1)} ms ` +
        `(min ${Math.min(...r.times).toFixed(1)}, max ${Math.max(...r.times).toFixed(1)}, n=${r.times.length})`);
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
  for (const [mr, nv] of [[4, 2], [6, 2], [4, 3]]) {
    const k = Math.floor(4096 / Math.max(mr, 4 * nv));
    const per = k * mr * 4 * nv * 2, reps = Math.max(1, Math.round(target / per));
    gemm[`${mr}x${4 * nv}`] = best(() => x[`gemm${mr}x${nv}`](reps, k), reps * per);
  }
  const [regN, regG] = top(reg), [gemmK, gemmG] = top(gemm);
  return { reg: regG, regN: +regN, gemm: gemmG, gemmKernel: gemmK, all: { reg, gemm } };
}

/** The better of two runPeak results per build, kernel by kernel. */
export function bestPeaks(a, b) {
  const max = (x, y) => Object.fromEntries(Object.keys(x).map((k) => [k, Math.max(x[k], y[k] ?? 0)]));
  return Object.fromEntries(Object.entries(a).map(([build, pa]) => {
    const all = { reg: max(pa.all.reg, b[build].all.reg), gemm: max(pa.all.gemm, b[build].all.gemm) };
    const [regN, reg] = top(all.reg), [gemmKernel, gemm] = top(all.gemm);
    return [build, { reg, regN: +regN, gemm, gemmKernel, all }];
  }));
}

/**
 * One comparison case, in Node or in the page. spec = {shape, cfg, T,
 * onnx: [{label, ...}], swap: [{label, relaxed?, ...}], warmup, runs};
 * openOrt(g) / openSwap(s) load one runtime and resolve to
 * {run: (ids) => Float32Array | Promise<Float32Array>, close}. The output of
 * every runtime is compared with the first one's (the first ORT graph when
 * there is one, else swapformer's SIMD build): max |a - b| / max |b|.
 */
export async function runCase(spec, { openOrt, openSwap, log = () => {} }) {
  const ids = makeIds(spec.T, spec.cfg.vocabSize);
  const runners = [];
  try {
    for (const g of spec.onnx) runners.push({ label: g.label, ort: true, ...(await openOrt(g, ids)) });
    for (const s of spec.swap) runners.push({ label: s.label, relaxed: !!s.relaxed, ...(await openSwap(s, ids)) });
    const outs = [];
    for (const r of runners) outs.push(await r.run());
    const diffs = outs.map((o, k) => (k === 0 ? undefined : relDiff(o, outs[0])));
    log(`    cross-check vs ${runners[0].label}: ${runners.slice(1).map((r, k) => `${r.label} ${diffs[k + 1]?.toExponential(2)}`).join(', ') || '-'}`);
    const res = await timeAlternating(runners, { warmup: spec.warmup, runs: spec.runs, log });
    return {
      shape: spec.shape, T: spec.T, flops: flops(spec.cfg, spec.T), ortGraphs: spec.onnx.length,
      results: res.map((r, k) => ({ ...r, diff: diffs[k], relaxed: !!runners[k].relaxed, ort: !!runners[k].ort })),
    };
  } finally {
    for (const r of runners) await r.close?.();
  }
}

/** The fastest ORT result of a finished case, or undefined. */
export function ortBest(c) {
  const o = (c.results ?? []).filter((r) => r.ort);
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
    const best = ortBest(c), ortMs = best?.median;
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
