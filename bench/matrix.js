// One thread count of the threads x dtype comparison, in a fresh Node process
// (bench.js runs it as a child: onnxruntime-web reads env.wasm.numThreads once,
// when its wasm starts, so every thread count needs its own process). Prints
// log lines, then one JSON line: {cases: [...], ort: {...}}.
//
//   node tools/node.mjs bench/matrix.js '{"threads": 2, "shape": "MiniLM-L6",
//        "model": PATH, "onnx": {graph: PATH}, "Ts": [[128, warmup, runs], ...],
//        "snap": {simd, relaxed, simdThreads, relaxedThreads}, "relaxed": true, "scaling": [1]}'
//
// Runners (bench/harness.js matrixRunners): onnxruntime-web's f32 and q8 graphs at
// `threads` (ort.env.wasm.numThreads), swapformer's SIMD and relaxed builds in f32
// and q8 at `threads` (loadModel's threads option: the threaded build and its
// pool), and with `scaling` the same swapformer runners at fewer threads; all
// alternating run by run (harness.timeAlternating).
import { readFileSync } from 'node:fs';
import * as H from './harness.js';
import { cpuMeter } from './quiet.js';
import { importOrtWeb } from './context.js';

const spec = JSON.parse(process.argv[2]);
const ort = await importOrtWeb();
ort.env.wasm.numThreads = spec.threads;
const sf = await import('../bindings/index.js');

const compile = async (f) => (f ? WebAssembly.compile(readFileSync(f)) : undefined);
const wasmPaths = Object.fromEntries(await Promise.all(Object.entries(spec.snap).map(async ([k, f]) => [k, await compile(f)])));
const cfg = H.SHAPES[spec.shape];
const bytes = readFileSync(spec.model);
const { onnx, swap } = H.matrixRunners({
  threads: spec.threads,
  graphs: Object.keys(spec.onnx).filter((g) => !g.endsWith('-q8')),
  relaxed: spec.relaxed,
  scaling: spec.scaling,
});

const cases = [];
for (const [T, warmup, runs] of spec.Ts) {
  console.log(`  ${spec.shape} T=${T}, ${spec.threads} thread${spec.threads > 1 ? 's' : ''} (node)`);
  const meter = cpuMeter();
  try {
    const c = await H.runCase(
      { shape: spec.shape, cfg, T, warmup, runs, threads: spec.threads, onnx, swap },
      {
        log: (s) => console.log(s),
        openOrt: (g, ids) => H.openOrtRunner(ort, readFileSync(spec.onnx[g.graph]), ids),
        openSwap: (s, ids) => H.openSwapformer(sf, s, ids, { bytes, wasmPaths }),
      },
    );
    c.machine = meter.stop();
    cases.push(c);
  } catch (e) {
    console.log(`  T=${T}: ${e.code ?? e.name}: ${e.message}`);
    cases.push({ shape: spec.shape, T, threads: spec.threads, error: `${e.code ?? e.name}: ${e.message}`.slice(0, 300) });
  }
}
console.log(JSON.stringify({ cases, ort: { numThreads: ort.env.wasm.numThreads, version: ort.env.versions?.web } }));
process.exit(0);
