// Group "peak" (Node): the peak micro-benchmark (bench/peak.c) and swapformer's
// matmul_forward alone (bench/gemm.c) on MiniLM's Linear shapes, alternating.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as H from '../harness.js';
import { CACHE, log } from '../context.js';

/** GFLOP/s of the Linear layers of a forward (one layer's q,k,v,o,up,down for T rows), best of rounds. */
function runGemm(file, { T, C, F }, rounds = 40) {
  const x = new WebAssembly.Instance(new WebAssembly.Module(readFileSync(join(CACHE, file))), {}).exports;
  x._initialize?.();
  if (!x.setup(T, C, F)) throw new Error('gemm setup: out of memory');
  const flops = 2 * T * (4 * C * C + 2 * C * F);
  for (let i = 0; i < 3; i++) x.run(T, C, F, 1);
  let best = Infinity;
  for (let i = 0; i < rounds; i++) {
    const t = performance.now();
    x.run(T, C, F, 2);
    best = Math.min(best, (performance.now() - t) / 2);
  }
  return flops / best / 1e6;
}

/** R.peaks.node and R.gemm. */
export async function run({ opts, R, relaxedOn, section }) {
  if (!opts.nodeOn) return;
  await section('node peak', () => {
    log('peak (node):');
    const peak = (f) => {
      const x = new WebAssembly.Instance(new WebAssembly.Module(readFileSync(join(CACHE, f))), {}).exports;
      return H.runPeak(x);
    };
    // The peak and swapformer's matmul_forward alone (MiniLM's Linear shapes, T = 512), in three
    // alternating passes; each keeps its best. The host's speed drifts over seconds to minutes:
    // alternating puts both best figures in the same undisturbed moments.
    const mm = { T: 512, C: 384, F: 1536 };
    R.gemm = { shape: 'MiniLM-L6 Linear layers (q, k, v, o, up, down), T=512, 64-row chunks', plain: 0 };
    for (let pass = 0; pass < (opts.quick ? 1 : 3); pass++) {
      const p = { plain: peak('peak.wasm'), ...(relaxedOn ? { relaxed: peak('peak-relaxed.wasm') } : {}) };
      R.peaks.node = pass ? H.bestPeaks(R.peaks.node, p) : p;
      R.gemm.plain = Math.max(R.gemm.plain, runGemm('gemm.wasm', mm));
      if (relaxedOn) R.gemm.relaxed = Math.max(R.gemm.relaxed ?? 0, runGemm('gemm-relaxed.wasm', mm));
    }
    for (const [k, v] of Object.entries(R.peaks.node))
      log(`  ${k}: reg ${v.reg.toFixed(1)} GFLOP/s (N=${v.regN}), gemm ${v.gemm.toFixed(1)} (${v.gemmKernel})`);
    log(`  matmul_forward: SIMD ${R.gemm.plain.toFixed(1)} GFLOP/s${R.gemm.relaxed ? `, relaxed ${R.gemm.relaxed.toFixed(1)}` : ''}`);
  });
}
