// Group "matrix" (Node): MiniLM-L6 by thread count and dtype (f32, q8), swapformer
// against onnxruntime-web alternately, one fresh process (bench/matrix.js) per thread count.
import { existsSync } from 'node:fs';
import { SNAP_PATHS, MATRIX_SHAPE, MATRIX_GRAPHS, matrixPlan, modelPath, onnxPath, child, log } from '../context.js';

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
/** R.matrix.node. */
export async function run({ opts, R, counts, relaxedOn, builds, section }) {
  if (!opts.nodeOn) return;
  R.matrix = {
    node: await section('node threads x dtypes', async () => {
      log(`threads x dtypes (node, ${MATRIX_SHAPE}, ${counts.join(' and ')} thread(s), a fresh process each):`);
      return nodeMatrix(opts, counts, relaxedOn && builds.some((b) => b.relaxed));
    }),
  };
}
