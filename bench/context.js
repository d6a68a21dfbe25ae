// What every part of the benchmark shares: the paths (bench/.cache/, the copies of
// dist/ that a run measures), small helpers, the plan of cases, and the child
// processes (bench/matrix.js, bench/probe.js). Imports nothing of the benchmark
// but the harness, so that every group and the report can import it.
import { readFileSync, existsSync, statSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as H from './harness.js';
import { NODE_FLAGS } from '../tools/node-flags.js';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const BENCH = join(ROOT, 'bench');
export const CACHE = join(BENCH, '.cache');
export const PYTHON = process.env.BENCH_PYTHON || '/usr/bin/python3';
export const ORT_DIR = join(ROOT, 'node_modules', 'onnxruntime-web');
export const ORT_WASM = join(ORT_DIR, 'dist', 'ort-wasm-simd-threaded.wasm');
export const DIST = {
  plain: join(ROOT, 'dist', 'swapformer.wasm'),
  relaxed: join(ROOT, 'dist', 'swapformer-relaxed.wasm'),
  plainMt: join(ROOT, 'dist', 'swapformer-mt.wasm'),
  relaxedMt: join(ROOT, 'dist', 'swapformer-relaxed-mt.wasm'),
};
export const DIST_NAME = {
  plain: 'dist/swapformer.wasm',
  relaxed: 'dist/swapformer-relaxed.wasm',
  plainMt: 'dist/swapformer-mt.wasm',
  relaxedMt: 'dist/swapformer-relaxed-mt.wasm',
};
// The binaries measured: copied from dist/ at the start, so that Node, the child
// processes and Chromium all run the same ones even if dist/ is rebuilt meanwhile.
export const SNAP_DIR = join(CACHE, 'dist');
export const SNAP = Object.fromEntries(Object.entries(DIST).map(([k, f]) => [k, join(SNAP_DIR, f.split('/').pop())]));
/** configure()'s wasmPaths keys -> the copies. */
export const SNAP_PATHS = { simd: SNAP.plain, relaxed: SNAP.relaxed, simdThreads: SNAP.plainMt, relaxedThreads: SNAP.relaxedMt };
export const ORT_SETTINGS =
  "onnxruntime-web wasm backend: env.wasm.numThreads = 1 (the threads x dtypes comparison: its thread count), executionProviders ['wasm'], " +
  "graphOptimizationLevel 'all' (defaults otherwise: CPU memory arena and memory pattern on, sequential execution)";

export const log = (...a) => console.log(...a);
export const rel = (p) => p.replace(ROOT, '').replace(/^\//, '');
export const mtime = (p) => (existsSync(p) ? statSync(p).mtimeMs : -1);
export const sha = (s) => createHash('sha256').update(s).digest('hex').slice(0, 16);
/** Which swapformer binaries are measured (another engineer may rebuild them meanwhile). */
export const distIds = () =>
  Object.fromEntries(
    Object.entries(DIST)
      .filter(([, f]) => existsSync(f))
      .map(([k, f]) => [k, `${sha(readFileSync(f)).slice(0, 12)} (${new Date(mtime(f)).toISOString().slice(0, 19)}Z)`]),
  );

// ------------------------------------------------------------------ plan

/** Runs per case: [warm-up rounds, timed rounds]. */
export const RUNS = {
  'MiniLM-L6': { 128: [3, 15], 512: [2, 10] },
  'BERT-base': { 128: [2, 10], 512: [1, 10] },
  'MiniLM-L6 modern': { 128: [3, 15], 512: [2, 10] },
  'MiniLM-L6 modern ALiBi': { 512: [2, 10] },
};
export const ORT_CASES = [
  ['MiniLM-L6', 128],
  ['MiniLM-L6', 512],
  ['BERT-base', 128],
  ['BERT-base', 512],
];
export const SWAP_CASES = [
  ['MiniLM-L6 modern', 128],
  ['MiniLM-L6 modern', 512],
  ['MiniLM-L6 modern ALiBi', 512],
];
export const GRAPHS = ['fused', 'plain'];
/** The threads x dtype comparison: MiniLM-L6 at these T, [warm-up rounds, timed rounds]. */
export const MATRIX_SHAPE = 'MiniLM-L6';
export const MATRIX_RUNS = { 128: [3, 15], 512: [2, 10] };
/** Thread counts compared: 1, 2 and 4 where the machine has the cores. */
export const threadCounts = (cores, only) => (only ?? [1, 2, 4]).filter((t) => t <= cores);
/** The ONNX graphs of the comparison: ORT's f32 graphs and their dynamic quantization. */
export const MATRIX_GRAPHS = [...GRAPHS, ...GRAPHS.map((g) => `${g}-q8`)];

/**
 * The threads x dtype runs, one process (page) per thread count: its cases [T, warm-up
 * rounds, timed rounds], and in the one of the most threads the smaller counts swapformer
 * runs at too (the scaling).
 */
export const matrixPlan = (opts, counts) =>
  counts.map((threads) => ({
    threads,
    Ts: Object.entries(MATRIX_RUNS).map(([T, [w, n]]) => [+T, ...(opts.quick ? [1, 3] : [w, n])]),
    scaling: threads === counts.at(-1) ? counts.filter((x) => x < threads) : [],
  }));

/**
 * The one-thread cases' MiniLM-L6 rows (f32) out of the thread-count comparison's
 * one-thread run, in the form runCase returns (the same alternating rounds: measured
 * once), failed ones included: they stand first in planner()'s order.
 */
export function oneThreadF32(matrix) {
  return (matrix ?? [])
    .filter((c) => c.threads === 1)
    .map((c) =>
      c.error
        ? c
        : {
            ...c,
            results: c.results.filter((r) => r.dtype === 'f32' && r.threads === 1),
          },
    );
}
export const graphLabel = (g) => `ORT ${g}`;

/**
 * The cases in order, as a function (done) -> next spec | null: MiniLM with
 * both ONNX graphs, then BERT-base with the graph that was faster for MiniLM at
 * the same T (BERT-base T=512 is slow in ORT: one graph is enough there), then
 * the swapformer-only variants. make(shape, T, graphs) builds the spec.
 */
export function planner(make) {
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

export const modelPath = (shape) => join(CACHE, `${H.stem(shape)}.safetensors`);
export const onnxPath = (shape, graph) => join(CACHE, `${H.stem(shape)}-${graph}.onnx`);

/**
 * Runs a bench script in a fresh Node process (NODE_FLAGS, then this process's other
 * flags), its log lines passed on; resolves to its last line's JSON.
 */
export function child(script, spec, timeoutMs = 30 * 60e3) {
  const flags = [...NODE_FLAGS, ...process.execArgv.filter((f) => !NODE_FLAGS.includes(f))];
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [...flags, join(BENCH, script), JSON.stringify(spec)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let last = '',
      err = '',
      buf = '';
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
    p.stderr.setEncoding('utf8').on('data', (d) => {
      err += d;
    });
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
export const probe = (spec, timeoutMs = 20 * 60e3) => child('probe.js', spec, timeoutMs);

/**
 * The root's onnxruntime-web (package.json devDependencies), by path: bench/node_modules
 * (bench/package.json, transformers.js) holds another onnxruntime-web, which a bare
 * import from bench/ would find first.
 */
export async function importOrtWeb() {
  const pkg = JSON.parse(readFileSync(join(ORT_DIR, 'package.json'), 'utf8'));
  return import(pathToFileURL(join(ORT_DIR, pkg.exports['.'].node.import)).href);
}
export const plural = (t) => `${t} thread${t > 1 ? 's' : ''}`;
export const fmt0 = (x) => (Number.isFinite(x) ? x.toFixed(0) : '-');
