// Group "long" (Node, a fresh process each): RoPE and ALiBi at T=512 and --long-T
// (8192), swapformer alone: the time of one forward and its activation memory.
import * as H from '../harness.js';
import { SNAP, modelPath, probe, log } from '../context.js';

async function longRuns(opts) {
  const out = [];
  if (opts.skipLong) return out;
  for (const T of [512, opts.longT]) {
    for (const shape of ['MiniLM-L6 modern', 'MiniLM-L6 modern ALiBi']) {
      log(`  ${shape} T=${T} (fresh process)`);
      const p = await probe({ runtime: 'swapformer', T, model: modelPath(shape), wasm: SNAP.plain, long: true }, 30 * 60e3);
      Object.assign(p, { shape, T });
      log(
        `    ${p.error ?? `${(p.ms / 1000).toFixed(1)} s, activation ${H.fmt.mb(p.memAfter - p.memBefore)} (wasm memory ${H.fmt.mb(p.memBefore)} -> ${H.fmt.mb(p.memAfter)})`}`,
      );
      out.push(p);
    }
  }
  return out;
}

/** R.long (skipped with --skip-long and --quick). */
export async function run({ opts, R, section }) {
  if (!opts.nodeOn || opts.skipLong) return;
  await section('node long sequences', async () => {
    log('long sequences (node):');
    R.long = await longRuns(opts);
  });
}
