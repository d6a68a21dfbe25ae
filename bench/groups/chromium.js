// Group "chromium" (headless, bench/browser.js): two parts. matrix: MiniLM-L6 by
// thread count and dtype, a fresh page per thread count, and CPU profiles of the
// relaxed build (run early, next to Node's comparison); oneThread: the one-thread
// f32 cases and the cold start (run after the Node groups; --quick: the
// comparison's one-thread rows alone).
import * as H from '../harness.js';
import { RUNS, MATRIX_SHAPE, MATRIX_GRAPHS, matrixPlan, planner, graphLabel, oneThreadF32, modelPath, onnxPath, rel, log } from '../context.js';

/** A file of the repository as the page's server serves it. */
const url = (p) => `/${rel(p)}`;

/** R.browser (version, relaxed, peaks, matrix, profiles, wasmFiles). */
export async function matrix({ opts, R, counts, relaxedBuilt, named, section }) {
  if (!opts.browserOn) return;
  const { runBrowser } = await import('../browser.js');
  await section('chromium threads x dtypes', async () => {
    log('chromium: threads x dtypes, CPU profiles:');
    const onnx = Object.fromEntries(MATRIX_GRAPHS.map((g) => [g, url(onnxPath(MATRIX_SHAPE, g))]));
    const plan = matrixPlan(opts, counts).map(({ threads, Ts, scaling }) => ({
      threads,
      cases: Ts.map(([T, warmup, runs]) => ({
        threads,
        shape: MATRIX_SHAPE,
        T,
        warmup,
        runs,
        model: url(modelPath(MATRIX_SHAPE)),
        onnx,
        relaxed: relaxedBuilt,
        scaling,
      })),
    }));
    // where the relaxed build's time goes at T=512, one thread, f32 and q8 (the build with its name section)
    const profiles = named
      ? ['f32', 'q8'].map((dtype) => ({
          label: `swapformer relaxed ${dtype}`,
          dtype,
          T: 512,
          vocab: H.SHAPES[MATRIX_SHAPE].vocabSize,
          model: url(modelPath(MATRIX_SHAPE)),
          wasm: url(named.file),
          sameCode: named.sameCode,
          runs: opts.quick ? 2 : 5,
          warmup: 2,
        }))
      : [];
    try {
      R.browser = await runBrowser({ matrix: plan, profiles }, { log });
      R.machine.chromium = R.browser.version;
    } catch (e) {
      log(`chromium: ${e.message.split('\n')[0]}`);
    }
  });
}

/** R.browser.cases and R.browser.cold. */
export async function oneThread({ opts, R, relaxedBuilt, section }) {
  if (!(opts.browserOn && !opts.quick && R.browser)) {
    if (R.browser) R.browser.cases = oneThreadF32(R.browser.matrix);
    return;
  }
  const { runBrowser } = await import('../browser.js');
  await section('chromium one thread', async () => {
    log('chromium: one thread, cold start:');
    const make = (shape, T, graphs) => {
      const [warmup, runs] = RUNS[shape][T];
      return {
        shape,
        T,
        cfg: H.SHAPES[shape],
        model: url(modelPath(shape)),
        warmup,
        runs,
        onnx: graphs.map((g) => ({ label: graphLabel(g), url: url(onnxPath(shape, g)) })),
        swap: [],
      };
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
        name,
        model: url(modelPath(name)),
        onnx: url(onnxPath(name, name === 'tiny' ? 'fused' : (R.cold?.[name]?.graph ?? 'fused'))),
        T: 128,
        vocab: H.SHAPES[name].vocabSize,
        runs: 5,
        relaxedBuilt,
      })),
    };
    try {
      const b = await runBrowser(plan, { log });
      Object.assign(R.browser, { cases: b.cases, cold: b.cold, wasmFiles: [...new Set([...(R.browser.wasmFiles ?? []), ...b.wasmFiles])] });
    } catch (e) {
      log(`chromium: ${e.message.split('\n')[0]}`);
    }
  });
}
