// Group "memory" (Node, fresh processes: bench/probe.js): MiniLM-L6's load memory
// (f32 and q8, one thread and the most), and without --quick the cold start and
// the wasm memory of every case.
import * as H from '../harness.js';
import { SNAP, SNAP_DIR, MATRIX_SHAPE, GRAPHS, ORT_CASES, SWAP_CASES, modelPath, onnxPath, probe, log } from '../context.js';

/**
 * Load memory of MiniLM-L6 (issue 11): a fresh process per row: swapformer f32 and q8
 * (loadModel of the f32 file, with dtype 'q8'), onnxruntime-web's f32 and q8 graphs
 * (the faster graph at one thread), at one thread and at the most threads; each after
 * loading, after a forward of 128 tokens and after dispose + the same load + forward.
 */
async function loadMemoryRuns(counts, graph) {
  const rows = [];
  const shape = MATRIX_SHAPE,
    snap = { simd: SNAP.plain, simdThreads: SNAP.plainMt };
  for (const t of [...new Set([1, counts.at(-1)])]) {
    for (const dtype of ['f32', 'q8']) {
      const sw = await probe({
        runtime: 'swapformer',
        T: 128,
        model: modelPath(shape),
        reload: true,
        dtype,
        threads: t,
        ...(t > 1 ? { snap } : { wasm: SNAP.plain }),
      });
      const g = dtype === 'q8' ? `${graph}-q8` : graph;
      const o = await probe({ runtime: 'ort', T: 128, model: onnxPath(shape, g), reload: true, threads: t });
      rows.push({ runtime: 'swapformer', dtype, threads: t, ...sw }, { runtime: 'ort', graph: g, dtype, threads: t, ...o });
      log(
        `  load memory ${shape} ${dtype}, ${t} thread${t > 1 ? 's' : ''}: swapformer ${sw.error ?? H.fmt.mb(sw.memAfter)}, ORT ${g} ${o.error ?? H.fmt.mb(o.memAfter)}`,
      );
    }
  }
  return rows;
}

async function coldAndMemory(nodeCases, relaxedFile) {
  const chosen = (shape, T) => {
    const c = nodeCases.find((x) => x.shape === (shape === 'BERT-base' ? 'BERT-base' : 'MiniLM-L6') && x.T === T && !x.error);
    const b = c && H.ortBest(c);
    return b ? b.label.replace('ORT ', '') : GRAPHS[0];
  };
  // cold start, T=128, alternating, a fresh process each: MiniLM-L6, and a tiny
  // BERT whose loading costs ~nothing (the runtimes' own start-up)
  const coldRuns = 5,
    cold = {};
  const memory = [];
  for (const shape of ['MiniLM-L6', 'tiny']) {
    const c = (cold[shape] = { swapformer: [], ort: [], graph: shape === 'tiny' ? 'fused' : chosen(shape, 128) });
    const last = {};
    for (let i = 0; i < coldRuns; i++) {
      for (const rt of i % 2 ? ['ort', 'swapformer'] : ['swapformer', 'ort']) {
        const p = await probe({
          runtime: rt,
          T: 128,
          vocab: H.SHAPES[shape].vocabSize,
          model: rt === 'ort' ? onnxPath(shape, c.graph) : modelPath(shape),
          distDir: SNAP_DIR,
        });
        if (p.error) log(`  cold start ${shape} ${rt}: ${p.error}`);
        else c[rt].push(p);
        last[rt] = p;
      }
    }
    c.build = last.swapformer?.build;
    log(
      `  cold start ${shape}: swapformer ${c.swapformer.map((p) => p.coldMs.toFixed(0)).join(' ')} ms; ORT ${c.ort.map((p) => p.coldMs.toFixed(0)).join(' ')} ms`,
    );
  }
  // wasm memory per case: one fresh process per runtime and case (MiniLM-L6 T=128: the load memory rows)
  for (const [shape, T] of [...ORT_CASES.slice(1), ...SWAP_CASES]) {
    const m = { shape, T };
    m.swapformer = await probe({ runtime: 'swapformer', T, model: modelPath(shape), wasm: SNAP.plain });
    // the relaxed build's memory, once (same allocations, a different binary)
    if (relaxedFile && shape === 'MiniLM-L6' && T === 512) m.relaxed = await probe({ runtime: 'swapformer', T, model: modelPath(shape), wasm: relaxedFile });
    if (H.SHAPES[shape].position === 'learned') {
      m.graph = chosen(shape, T);
      m.ort = await probe({ runtime: 'ort', T, model: onnxPath(shape, m.graph) });
    }
    log(
      `  memory ${shape} T=${T}: swapformer ${m.swapformer.error ?? H.fmt.mb(m.swapformer.memAfter)}` +
        (m.ort ? `, ORT ${m.ort.error ?? H.fmt.mb(m.ort.memAfter)}` : ''),
    );
    memory.push(m);
  }
  return { cold, memory };
}
/** R.loadMemory; without --quick R.cold and R.memory. */
export async function run({ opts, R, counts, builds, section }) {
  if (!opts.nodeOn) return;
  R.loadMemory = await section('node load memory', async () => {
    log('load memory (node, fresh processes):');
    const c = (R.node ?? []).find((x) => x.shape === MATRIX_SHAPE && x.T === 128 && !x.error);
    return loadMemoryRuns(counts, c && H.ortBest(c) ? H.ortBest(c).label.replace('ORT ', '') : GRAPHS[0]);
  });
  if (!opts.quick) {
    await section('node cold start and memory', async () => {
      log('cold start and memory (node, fresh processes):');
      Object.assign(R, await coldAndMemory(R.node, builds.find((b) => b.relaxed) ? SNAP.relaxed : null));
    });
  }
}
