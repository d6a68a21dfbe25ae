// The end-to-end comparison inside a browser page (bench/browser.js runs it in a
// fresh page for bench/groups/end-to-end.js): the same contenders and timing as in
// Node (bench/e2e-harness.js). swapformer: loadPretrained(the folder's URL, {dtype,
// threads: 1, wasm, cache: false}); transformers.js: its browser bundle
// (dist/transformers.min.js, as a CDN serves it), env.allowRemoteModels = false,
// env.localModelPath = the folder's parent URL, the wasm device with
// env.backends.onnx.wasm.numThreads = 1 and the onnxruntime-web files it would fetch
// from the CDN (ort-wasm-simd-threaded.asyncify.*) served from bench/node_modules.
import { openContenders, timeCorpus } from './e2e-harness.js';

const TJS = '/bench/node_modules/@huggingface/transformers/dist/transformers.min.js';
const ORT = '/bench/node_modules/onnxruntime-web/dist/';
const log = (s) => console.log(s);

/** spec = {folder, modelRoot, name: URL paths, texts, runs, tjs, wasm: URL of the swapformer build}. */
export async function run(spec) {
  const sf = await import('/bindings/index.js');
  let tjs = null;
  if (spec.tjs) {
    tjs = await import(TJS);
    Object.assign(tjs.env, { allowRemoteModels: false, allowLocalModels: true, localModelPath: spec.modelRoot, useBrowserCache: false });
    tjs.env.backends.onnx.wasm.numThreads = 1;
    tjs.env.backends.onnx.wasm.wasmPaths = { mjs: `${ORT}ort-wasm-simd-threaded.asyncify.mjs`, wasm: `${ORT}ort-wasm-simd-threaded.asyncify.wasm` };
  }
  const wasm = await WebAssembly.compile(await (await fetch(spec.wasm)).arrayBuffer());
  const contenders = await openContenders({ sf, tjs, swapSource: `${location.origin}${spec.folder}`, swapWasm: wasm, tjsId: spec.name, device: 'wasm' });
  const out = await timeCorpus(contenders, spec.texts, { runs: spec.runs, log });
  for (const c of contenders) await c.close();
  out.versions = tjs
    ? {
        transformers: tjs.env.version,
        onnxruntimeWeb: tjs.env.backends.onnx.versions?.web ?? null,
        wasmPaths: tjs.env.backends.onnx.wasm.wasmPaths,
        numThreads: tjs.env.backends.onnx.wasm.numThreads,
      }
    : null;
  out.page = { crossOriginIsolated: self.crossOriginIsolated, hardwareConcurrency: navigator.hardwareConcurrency, relaxedSimd: sf.features?.relaxedSimd };
  return out;
}
