// Group "one-thread" (Node): the one-thread f32 cases (MiniLM-L6 and BERT-base
// against onnxruntime-web's graphs, the swapformer-only variants), after the
// MiniLM-L6 rows the threads x dtypes comparison measured already.
import { readFileSync } from 'node:fs';
import * as H from '../harness.js';
import { cpuMeter } from '../quiet.js';
import { RUNS, planner, graphLabel, oneThreadF32, modelPath, onnxPath, importOrtWeb, log } from '../context.js';

/** The one-thread f32 cases (ORT_CASES, SWAP_CASES) in Node, after those measured already (pre). */
async function nodeRuns(builds, sf, pre = []) {
  const ort = await importOrtWeb();
  ort.env.wasm.numThreads = 1;
  const make = (shape, T, graphs) => {
    const [warmup, runs] = RUNS[shape][T];
    // BERT-base (slow) with the build Node 20 uses by default only, the SIMD one (relaxed SIMD
    // needs a flag there); Chromium times BERT-base with its default, the relaxed build
    const swap = shape === 'BERT-base' ? builds.filter((b) => !b.relaxed) : builds;
    return {
      shape,
      T,
      cfg: H.SHAPES[shape],
      model: modelPath(shape),
      warmup,
      runs,
      onnx: graphs.map((g) => ({ label: graphLabel(g), path: onnxPath(shape, g) })),
      swap,
    };
  };
  const next = planner(make),
    cases = [...pre];
  for (let spec = next(cases); spec; spec = next(cases)) {
    log(`  ${spec.shape} T=${spec.T} (node)`);
    const meter = cpuMeter();
    const modelBytes = readFileSync(spec.model);
    try {
      cases.push(
        await H.runCase(spec, {
          log,
          openOrt: (g, ids) => H.openOrtRunner(ort, readFileSync(g.path), ids),
          openSwap: async (s, ids) => {
            const enc = await sf.loadModel(modelBytes, { wasm: s.module });
            return { run: () => enc.forward(ids).data, close: () => enc.dispose() };
          },
        }),
      );
      cases.at(-1).machine = meter.stop();
    } catch (e) {
      log(`  ${spec.shape} T=${spec.T}: ${e.code ?? e.name}: ${e.message}`);
      cases.push({ shape: spec.shape, T: spec.T, error: `${e.code ?? e.name}: ${e.message}`.slice(0, 200) });
    }
  }
  return cases;
}

/** R.node (--quick: the threads x dtypes comparison's one-thread rows alone). */
export async function run({ opts, R, sf, builds, section }) {
  if (!opts.nodeOn) return;
  R.node = opts.quick
    ? oneThreadF32(R.matrix?.node)
    : await section('node one thread', async () => {
        log('timing (node, one thread):');
        return nodeRuns(builds, sf, oneThreadF32(R.matrix?.node));
      });
}
