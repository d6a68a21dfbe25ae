// The benchmark inside a browser page (bench/browser.js drives it through
// playwright). The same harness as Node (bench/harness.js); only the loading
// differs: fetch instead of fs. Served from the repository root, so
// /bindings/index.js, /bench/.cache/* and /node_modules/... resolve. The swapformer
// binaries are the copies bench.js took of dist/ at its start (/bench/.cache/dist/).
import { runPeak, makeIds, runCase as harnessRunCase } from './harness.js';

const ORT_DIST = '/node_modules/onnxruntime-web/dist/';
const SWAP_DIST = '/bench/.cache/dist/';
const ORT_SESSION = { executionProviders: ['wasm'], graphOptimizationLevel: 'all' };
const bytesOf = async (url) => {
  const r = await fetch(url);
  if (!r.ok) throw new Error(`${url}: HTTP ${r.status}`);
  return new Uint8Array(await r.arrayBuffer());
};
const log = (s) => console.log(s);

let ortModule;
async function loadOrt() {
  if (!ortModule) {
    ortModule = await import(`${ORT_DIST}ort.wasm.min.mjs`);
    ortModule.env.wasm.numThreads = 1;
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
    openOrt: async (g, ids) => {
      const session = await ort.InferenceSession.create(await bytesOf(g.url), ORT_SESSION);
      const feeds = { input_ids: new ort.Tensor('int64', BigInt64Array.from(ids, BigInt), [1, ids.length]) };
      return { run: async () => (await session.run(feeds)).last_hidden_state.data, close: () => session.release() };
    },
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
    await session.run({ input_ids: new ort.Tensor('int64', BigInt64Array.from(ids, BigInt), [1, T]) });
  }
  const t1 = performance.now();
  return { coldMs: t1 - t0, importMs: tImport - t0, fetchMs: tFetch - tImport, loadMs: tLoad - tFetch, firstMs: t1 - tLoad };
}
