// The end-to-end comparison's part that runs the same in Node (bench/e2e.js) and in
// the page (bench/e2e-page.js): the contenders, the batches, the alternating timed
// runs over the whole corpus and the cross-check of the embeddings. No I/O: the
// callers pass in swapformer's bindings, transformers.js and where the model is.
import { median } from './harness.js';

/** transformers.js from bench/node_modules, reading the model folder's siblings only (no Hub). */
export async function importTransformers(folder) {
  const tjs = await import('@huggingface/transformers');
  tjs.env.allowRemoteModels = false;
  tjs.env.allowLocalModels = true;
  tjs.env.localModelPath = `${folder.replace(/\/[^/]*\/?$/, '')}/`;
  return tjs;
}

/** Texts per call, for both: swapformer's embed batchSize, transformers.js's extractor calls. */
export const BATCH = 32;

/**
 * The corpus in transformers.js calls of BATCH texts: in input order, or sorted by
 * length first (longest first, by characters, as sentence-transformers' encode
 * sorts), as a careful user does, since each call pads to its longest text.
 * Returns [indices] per call.
 */
export function batches(texts, sorted) {
  const order = texts.map((_, i) => i);
  if (sorted) order.sort((a, b) => texts[b].length - texts[a].length || a - b);
  const out = [];
  for (let i = 0; i < order.length; i += BATCH) out.push(order.slice(i, i + BATCH));
  return out;
}

/**
 * The contenders: swapformer (loadPretrained(source, {dtype, threads: 1, wasm}),
 * embed(texts, {batchSize: 32})) and transformers.js (pipeline('feature-extraction',
 * id, {dtype, device, session_options}), extractor(batch, {pooling: 'mean',
 * normalize: true}) per call of 32, in input order and length-sorted). Each is
 * {label, runtime, dtype, sorted?, embed(texts) -> Promise<Float32Array [N * D]>, close}.
 */
export async function openContenders({
  sf,
  tjs,
  swapSource,
  swapWasm,
  tjsId,
  device,
  sessionOptions,
  dtypes = ['f32', 'q8'],
  threads = 1,
  swapBackends = [{ name: '', wasm: swapWasm }],
}) {
  // swapBackends: [{name, wasm}]: each a swapformer contender per dtype; wasm undefined = the default
  // backend (native in Node where the addon loads), name '' keeps the labels of the wasm-only runs
  const out = [];
  for (const b of swapBackends)
    for (const dtype of dtypes) {
      const p = await sf.loadPretrained(swapSource, {
        dtype,
        threads,
        ...(b.wasm !== undefined ? { wasm: b.wasm } : {}),
        ...(typeof swapSource === 'string' && /^https?:/.test(swapSource) ? { cache: false } : {}),
      });
      out.push({
        label: `swapformer${b.name ? ` ${b.name}` : ''} ${dtype}`,
        runtime: b.name ? `swapformer ${b.name}` : 'swapformer',
        dtype,
        embed: async (texts) => p.embed(texts, { batchSize: BATCH }).data,
        embedAsync: async (texts) => (await p.embedAsync(texts, { batchSize: BATCH })).data,
        close: () => p.dispose(),
      });
    }
  if (tjs) {
    for (const dtype of dtypes) {
      const extractor = await tjs.pipeline('feature-extraction', tjsId, {
        dtype: dtype === 'f32' ? 'fp32' : 'q8',
        device,
        ...(sessionOptions ? { session_options: sessionOptions } : {}),
      });
      for (const sorted of [false, true]) {
        out.push({
          label: `transformers.js ${dtype}${sorted ? ', length-sorted' : ', input order'}`,
          runtime: 'transformers.js',
          dtype,
          sorted,
          embed: async (texts) => {
            let res = null;
            for (const idx of batches(texts, sorted)) {
              const t = await extractor(
                idx.map((i) => texts[i]),
                { pooling: 'mean', normalize: true },
              );
              const D = t.dims.at(-1);
              res ??= new Float32Array(texts.length * D);
              idx.forEach((i, r) => res.set(t.data.subarray(r * D, (r + 1) * D), i * D));
              t.dispose?.();
            }
            return res;
          },
          close: sorted ? () => extractor.dispose?.() : () => {},
        });
      }
    }
  }
  return out;
}

/** Per-text cosine of two [N * D] embedding sets: {min, mean}. */
export function cosines(a, b, N) {
  const D = a.length / N;
  let min = 1,
    sum = 0;
  for (let i = 0; i < N; i++) {
    let ab = 0,
      aa = 0,
      bb = 0;
    for (let j = i * D; j < (i + 1) * D; j++) {
      ab += a[j] * b[j];
      aa += a[j] * a[j];
      bb += b[j] * b[j];
    }
    const c = ab / Math.sqrt(aa * bb);
    if (!(c >= min)) min = c; // NaN propagates
    sum += c;
  }
  return { min, mean: sum / N };
}

/**
 * Warm-up (each contender embeds the first `warmTexts` texts twice), then `runs`
 * rounds in which every contender embeds the whole corpus once, the order reversed
 * every other round (ABBA). Returns {results: [{label, runtime, dtype, sorted,
 * times (ms), median, textsPerSec, cpuPerWall (Node: the process's CPU time / wall
 * time, median)}], checks}: checks, the per-text cosines of the
 * last round's embeddings (transformers.js f32 and every q8 against swapformer f32;
 * transformers.js q8 against its f32; swapformer q8 against transformers.js q8).
 */
export async function timeCorpus(contenders, texts, { runs = 5, warmTexts = 64, log = () => {}, onRound } = {}) {
  const warm = texts.slice(0, warmTexts);
  for (let w = 0; w < 2; w++) for (const c of contenders) await c.embed(warm);
  // in Node, the process's CPU time per wall time of each run: 1 for one busy thread
  const cpu =
    typeof process !== 'undefined' && process.cpuUsage
      ? () => {
          const u = process.cpuUsage();
          return (u.user + u.system) / 1e3;
        }
      : null;
  const times = contenders.map(() => []),
    shares = contenders.map(() => []),
    last = [];
  for (let r = 0; r < runs; r++) {
    const order = contenders.map((_, k) => k);
    if (r % 2) order.reverse();
    for (const k of order) {
      const t0 = performance.now(),
        c0 = cpu?.();
      last[k] = await contenders[k].embed(texts);
      times[k].push(performance.now() - t0);
      if (cpu) shares[k].push((cpu() - c0) / times[k].at(-1));
    }
    onRound?.(r);
  }
  const results = contenders.map((c, k) => {
    const m = median(times[k]),
      share = cpu ? median(shares[k]) : undefined;
    log(
      `    ${c.label.padEnd(38)} median ${(m / 1000).toFixed(2)} s = ${((texts.length / m) * 1000).toFixed(1)} texts/s (runs ${times[k].map((t) => (t / 1000).toFixed(2)).join(' ')} s)` +
        (cpu ? `; CPU time / wall time ${share.toFixed(2)}` : ''),
    );
    return {
      label: c.label,
      runtime: c.runtime,
      dtype: c.dtype,
      sorted: c.sorted,
      times: times[k],
      median: m,
      textsPerSec: (texts.length / m) * 1000,
      cpuPerWall: share,
    };
  });
  const find = (rt, dtype, sorted) =>
    contenders.findIndex((c) => c.runtime.startsWith(rt) && c.dtype === dtype && (sorted === undefined || c.sorted === sorted));
  const ref = find('swapformer', 'f32');
  const checks = [];
  const check = (k, j, what) => {
    if (k < 0 || j < 0) return;
    const c = cosines(last[k], last[j], texts.length);
    checks.push({ test: contenders[k].label, ref: contenders[j].label, what, ...c });
    log(`    cosine ${contenders[k].label} vs ${contenders[j].label}: min ${c.min.toFixed(6)}, mean ${c.mean.toFixed(6)}`);
  };
  contenders.forEach((c, k) => {
    if (k !== ref) check(k, ref, c.dtype === 'f32' ? 'f32 agreement' : 'q8 against f32');
  });
  check(find('transformers.js', 'q8', false), find('transformers.js', 'f32', false), 'q8 against f32');
  check(find('swapformer', 'q8'), find('transformers.js', 'q8', false), 'q8 against q8');
  return { results, checks };
}
