// Group "accuracy" (Node): the cost of int8, q8 against f32 of the same runtime
// and build, on more inputs than the timed ones.
import { readFileSync } from 'node:fs';
import * as H from '../harness.js';
import { modelPath, onnxPath, importOrtWeb, log } from '../context.js';

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
    const cfg = H.SHAPES[shape],
      bytes = readFileSync(modelPath(shape));
    const pairs = [];
    for (const b of builds) {
      const f32 = await sf.loadModel(bytes, { wasm: b.module }),
        q8 = await sf.loadModel(bytes, { wasm: b.module, dtype: 'q8' });
      pairs.push({
        label: `${b.label} q8 vs f32`,
        ref: (ids) => f32.forward(ids).data,
        test: (ids) => q8.forward(ids).data,
        close: () => {
          f32.dispose();
          q8.dispose();
        },
      });
    }
    if (shape === 'MiniLM-L6') {
      const session = async (g) => ort.InferenceSession.create(readFileSync(onnxPath(shape, g)), H.ORT_SESSION);
      const [f, q] = [await session('fused'), await session('fused-q8')];
      const run = (s) => async (ids) => (await s.run(H.ortFeeds(ort, ids))).last_hidden_state.data;
      pairs.push({
        label: 'ORT fused q8 vs fused',
        ref: run(f),
        test: run(q),
        close: async () => {
          await f.release();
          await q.release();
        },
      });
    }
    for (const p of pairs) {
      const rows = { minCos: 1, sumCos: 0, tokens: 0, pooled: [], rel: 0 };
      for (const [i, T] of lengths.entries()) {
        const ids = H.makeIds(T, cfg.vocabSize, 100 + i);
        const a = H.agreement(await p.test(ids), await p.ref(ids), cfg.dModel);
        ((rows.minCos = Math.min(rows.minCos, a.minCos)), (rows.sumCos += a.meanCos * T), (rows.tokens += T));
        (rows.pooled.push(a.pooledCos), (rows.rel = Math.max(rows.rel, a.rel)));
      }
      await p.close();
      const r = {
        shape,
        label: p.label,
        sequences: lengths.length,
        tokens: rows.tokens,
        lengths,
        minCos: rows.minCos,
        meanCos: rows.sumCos / rows.tokens,
        minPooled: Math.min(...rows.pooled),
        meanPooled: rows.pooled.reduce((x, y) => x + y) / rows.pooled.length,
        rel: rows.rel,
      };
      log(
        `  ${shape}, ${p.label}: row cosine min ${r.minCos.toFixed(5)} mean ${r.meanCos.toFixed(5)}; pooled min ${r.minPooled.toFixed(6)}; rel ${r.rel.toExponential(2)}`,
      );
      out.push(r);
    }
  }
  return out;
}

/** R.accuracy. */
export async function run({ opts, R, sf, builds, section }) {
  if (!opts.nodeOn) return;
  const ort = await importOrtWeb();
  ort.env.wasm.numThreads = 1;
  R.accuracy = await section('node int8 accuracy', async () => {
    log('int8 accuracy (node):');
    return accuracyRuns(opts, sf, builds, ort);
  });
}
