// The benchmark inside a browser page (bench/browser.js drives it through
// playwright). The same harness as Node (bench/harness.js); only the loading
// differs: fetch instead of fs. Served from the repository root, so
// /bindings/index.js, /bench/.cache/* and /node_modules/... resolve. The swapformer
// binaries are the copies bench.js took of dist/ at its start (/bench/.cache/dist/).
import { runPeak, makeIds, runCase as harnessRunCase, openSwapformer, openOrtRunner, matrixRunners, SHAPES, ORT_SESSION, ortFeeds } from './harness.js';

const ORT_DIST = '/node_modules/onnxruntime-web/dist/';
const SWAP_DIST = '/bench/.cache/dist/';
const bytesOf = async (url) => {
  const r = await fetch(url);
  if (!r.ok) throw new Error(`${url}: HTTP ${r.status}`);
  return new Uint8Array(await r.arrayBuffer());
};
const log = (s) => console.log(s);

let ortModule;
// onnxruntime-web reads numThreads once, when its wasm starts: one page per thread count
let ortThreads = 1;
async function loadOrt() {
  if (!ortModule) {
    ortModule = await import(`${ORT_DIST}ort.wasm.min.mjs`);
    ortModule.env.wasm.numThreads = ortThreads;
    ortModule.env.wasm.wasmPaths = ORT_DIST;
  }
  return ortModule;
}

/** Is relaxed SIMD on (compiles the relaxed peak module)? */
export async function relaxedSupported() {
  try {
    await WebAssembly.compile(await bytesOf('/bench/.cache/peak-relaxed.wasm'));
    return true;
  } catch {
    return false;
  }
}

export async function peak(which) {
  const { instance } = await WebAssembly.instantiate(await bytesOf(`/bench/.cache/${which}.wasm`), {});
  return runPeak(instance.exports);
}

const swapWasm = {};
async function swapformerWasm(file) {
  // one module per build, so one instance each (the bindings key instances by source)
  swapWasm[file] ??= await WebAssembly.compile(await bytesOf(`${SWAP_DIST}${file}`));
  return swapWasm[file];
}

/** One comparison case (see harness.runCase); spec.model and spec.onnx[].url are URLs. */
export async function runCase(spec) {
  const sf = await import('/bindings/index.js');
  const ort = spec.onnx.length ? await loadOrt() : null;
  const modelBytes = spec.swap.length ? await bytesOf(spec.model) : null;
  return harnessRunCase(spec, {
    log,
    openOrt: async (g, ids) => openOrtRunner(ort, await bytesOf(g.url), ids),
    openSwap: async (s, ids) => {
      const enc = await sf.loadModel(modelBytes, { wasm: await swapformerWasm(s.file) });
      return { run: () => enc.forward(ids).data, close: () => enc.dispose() };
    },
  });
}

/** Cold start in this (fresh) page: from import to the first output, in ms (and its parts). */
export async function coldStart({ runtime, model, T, vocab, relaxedBuilt }) {
  const ids = makeIds(T, vocab);
  const t0 = performance.now();
  let tImport, tFetch, tLoad;
  if (runtime === 'swapformer') {
    const sf = await import('/bindings/index.js');
    tImport = performance.now();
    const bytes = await bytesOf(model);
    tFetch = performance.now();
    // the build the bindings would pick by feature detection, as a URL (fetched with compileStreaming)
    const file = sf.features?.relaxedSimd && relaxedBuilt ? 'swapformer-relaxed.wasm' : 'swapformer.wasm';
    const enc = await sf.loadModel(bytes, { wasm: `${SWAP_DIST}${file}` });
    tLoad = performance.now();
    enc.forward(ids);
  } else {
    const ort = await import(`${ORT_DIST}ort.wasm.min.mjs`);
    ort.env.wasm.numThreads = 1;
    ort.env.wasm.wasmPaths = ORT_DIST;
    tImport = performance.now();
    const bytes = await bytesOf(model);
    tFetch = performance.now();
    const session = await ort.InferenceSession.create(bytes, ORT_SESSION);
    tLoad = performance.now();
    await session.run(ortFeeds(ort, ids));
  }
  const t1 = performance.now();
  return { coldMs: t1 - t0, importMs: tImport - t0, fetchMs: tFetch - tImport, loadMs: tLoad - tFetch, firstMs: t1 - tLoad };
}

// The swapformer builds the comparison of thread counts and dtypes uses (URLs of the copies).
const WASM_PATHS = {
  simd: `${SWAP_DIST}swapformer.wasm`,
  relaxed: `${SWAP_DIST}swapformer-relaxed.wasm`,
  simdThreads: `${SWAP_DIST}swapformer-mt.wasm`,
  relaxedThreads: `${SWAP_DIST}swapformer-relaxed-mt.wasm`,
};

/**
 * One case of the threads x dtype comparison in this (fresh) page: spec = {threads,
 * shape, T, warmup, runs, model: URL, onnx: {graph: URL}, relaxed, scaling}
 * (see bench/matrix.js, its Node twin).
 */
export async function runMatrix(spec) {
  if (ortModule && ortThreads !== spec.threads) throw new Error(`this page's onnxruntime-web runs ${ortThreads} threads, not ${spec.threads}: use a new page`);
  ortThreads = spec.threads;
  const sf = await import('/bindings/index.js');
  const ort = await loadOrt();
  const bytes = await bytesOf(spec.model);
  const { onnx, swap } = matrixRunners({
    threads: spec.threads,
    graphs: Object.keys(spec.onnx).filter((g) => !g.endsWith('-q8')),
    relaxed: spec.relaxed,
    scaling: spec.scaling,
  });
  const c = await harnessRunCase(
    { shape: spec.shape, cfg: SHAPES[spec.shape], T: spec.T, warmup: spec.warmup, runs: spec.runs, threads: spec.threads, onnx, swap },
    {
      log,
      openOrt: async (g, ids) => openOrtRunner(ort, await bytesOf(spec.onnx[g.graph]), ids),
      openSwap: (s, ids) => openSwapformer(sf, s, ids, { bytes, wasmPaths: WASM_PATHS }),
    },
  );
  c.page = { crossOriginIsolated: self.crossOriginIsolated, hardwareConcurrency: navigator.hardwareConcurrency, ortThreads: ort.env.wasm.numThreads };
  return c;
}

// ------------------------------------------------------------------ profile (bench/browser.js cpuProfile)

let profiled = null;

/** One encoder for the CPU profile: spec = {model: URL, wasm: URL (a build with its name section), dtype, T, vocab}; a few warm-up forwards. */
export async function profileSetup(spec) {
  const sf = await import('/bindings/index.js');
  const bytes = await bytesOf(spec.model);
  const wasm = await WebAssembly.compile(await bytesOf(spec.wasm));
  const enc = await sf.loadModel(bytes, { wasm, dtype: spec.dtype });
  const ids = makeIds(spec.T, spec.vocab);
  for (let i = 0; i < (spec.warmup ?? 2); i++) enc.forward(ids);
  profiled = { enc, ids };
  return { dtype: enc.dtype };
}

/** n forwards of the profiled encoder; resolves to their wall times, ms. */
export async function profileRun(n) {
  const times = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    profiled.enc.forward(profiled.ids);
    times.push(performance.now() - t0);
  }
  return times;
}

export async function profileClose() {
  profiled?.enc.dispose();
  profiled = null;
}
