// onnxruntime-node on one Linear layer (bench/export_linear.py's graphs), one thread, in a fresh
// process (bench/native.mjs runs it as a child): the same shapes bench/native.c times swapformer's
// native kernels on. Prints one JSON line: [{K, N, f32, q8}] in GFLOP/s (2 T K N per run).
//
//   node bench/native-ort.mjs '{"dir": PATH, "T": 512, "shapes": [[384, 384], ...], "runs": 20}'
//
// Session options: intraOpNumThreads 1, interOpNumThreads 1, graphOptimizationLevel 'all' (which
// fuses the q8 graph into DynamicQuantizeMatMul, MLAS's int8 GEMM). Each run is timed by the
// process's CPU time (user + system: the machine may be shared), the best of the runs kept, after
// warm-up runs; x is [T, K] at once (onnxruntime's own batching of the rows, its best case).
import { createRequire } from 'node:module';

const spec = JSON.parse(process.argv[2]);
const require = createRequire(new URL('./package.json', import.meta.url));
const ort = require('onnxruntime-node');
const cpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};
const opts = { intraOpNumThreads: 1, interOpNumThreads: 1, graphOptimizationLevel: 'all', executionProviders: ['cpu'] };
const out = [];
for (const [K, N] of spec.shapes) {
  const row = { K, N };
  const x = new Float32Array(spec.T * K);
  for (let i = 0; i < x.length; i++) x[i] = (((i * 2654435761) >>> 0) % 1000) * 1e-3 - 0.5;
  for (const [key, file] of [
    ['f32', `${spec.dir}/linear-${K}-${N}.onnx`],
    ['q8', `${spec.dir}/linear-${K}-${N}-q8.onnx`],
  ]) {
    const session = await ort.InferenceSession.create(file, opts);
    const feeds = { x: new ort.Tensor('float32', x, [spec.T, K]) };
    for (let w = 0; w < 3; w++) await session.run(feeds);
    let best = Infinity;
    for (let r = 0; r < spec.runs; r++) {
      const c0 = cpu();
      await session.run(feeds);
      best = Math.min(best, cpu() - c0);
    }
    row[key] = (2 * spec.T * K * N) / best / 1e9;
    await session.release();
  }
  out.push(row);
}
console.log(JSON.stringify({ version: require('onnxruntime-node/package.json').version, shapes: out }));
