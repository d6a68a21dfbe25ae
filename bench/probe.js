// One fresh Node process per measurement of cold start and wasm memory
// (bench.js runs it as a child). Prints one JSON line.
//
//   node bench/probe.js '{"runtime":"swapformer"|"ort","model":PATH,"T":128,
//                        "wasm":PATH?, "long":false, "reload":false,
//                        "dtype":"f32"|"q8", "threads":1, "snap":{simd, simdThreads, ...}}'
//
// dtype 'q8' (swapformer): loadModel(bytes, {dtype: 'q8'}) of the f32 file. threads > 1:
// swapformer through configure({wasmPaths: snap}) and loadModel's threads (the threaded
// build: its shared memory, the workers' stacks); onnxruntime-web with env.wasm.numThreads.
//
// Cold start: from just before `import` of the runtime to the first output in
// hand (reading the model file, compiling and instantiating the wasm, loading
// the model, the first forward in V8's baseline tier). Memory: the byte length
// of the runtime's wasm memory (wasm memory never shrinks, so this is its peak)
// after the model is loaded and after one forward of T tokens; with reload,
// also after the encoder is disposed (ORT: the session released) and the same
// file loaded again with one forward (memory a runtime does not reuse shows
// up as growth).
//
// long: swapformer only; a few warm-up forwards of 16 tokens, then the free
// space of the wasm heap is filled with held allocations (sf_alloc, in 1 MB,
// 64 KB, 4 KB and 256 B blocks, each size until the memory grows), so that
// whatever the next forward allocates has to grow the memory; then one forward
// of T tokens, timed, and the wasm memory before and after it: the growth is
// that forward's activation memory (to within the last growth's slack, well
// under 1 MB).
import { readFileSync, existsSync } from 'node:fs';
import { makeIds, ORT_SESSION, ortFeeds } from './harness.js';
import { importOrtWeb } from './context.js';

const t0 = performance.now();
const spec = JSON.parse(process.argv[2]);

// Every wasm memory a runtime creates or imports, caught at instantiation (the
// runtimes keep theirs private; this does not change what they do).
const memories = [];
const instances = [];
const catchMemories = (imports, result) => {
  const inst = result.instance ?? result;
  instances.push(inst);
  for (const v of Object.values(inst.exports)) if (v instanceof WebAssembly.Memory) memories.push(v);
  for (const mod of Object.values(imports ?? {})) {
    for (const v of Object.values(mod ?? {})) if (v instanceof WebAssembly.Memory) memories.push(v);
  }
  return result;
};
const instantiate = WebAssembly.instantiate;
WebAssembly.instantiate = async function (source, imports) {
  return catchMemories(imports, await instantiate.call(this, source, imports));
};
if (WebAssembly.instantiateStreaming) {
  const streaming = WebAssembly.instantiateStreaming;
  WebAssembly.instantiateStreaming = async function (source, imports) {
    return catchMemories(imports, await streaming.call(this, source, imports));
  };
}
const wasmBytes = () => memories.reduce((s, m) => s + m.buffer.byteLength, 0);

const out = { runtime: spec.runtime, T: spec.T };
const ids = makeIds(spec.T, spec.vocab ?? 30522);

if (spec.runtime === 'swapformer') {
  const sf = await import('../bindings/index.js');
  const tImport = performance.now();
  // spec.wasm: a binary to use; spec.distDir: where the feature-detected default is taken from
  const relaxed = sf.features?.relaxedSimd && spec.distDir && existsSync(`${spec.distDir}/swapformer-relaxed.wasm`);
  const file = spec.wasm ?? (spec.distDir && `${spec.distDir}/${relaxed ? 'swapformer-relaxed.wasm' : 'swapformer.wasm'}`);
  const threads = spec.threads ?? 1,
    dtype = spec.dtype ?? 'f32';
  let opts = file ? { wasm: readFileSync(file) } : {};
  if (threads > 1) {
    // the threaded build, as a user gets it: no wasm option (it would mean one thread)
    sf.configure({ wasmPaths: Object.fromEntries(Object.entries(spec.snap).map(([k, f]) => [k, readFileSync(f)])), build: 'simd128' });
    opts = { threads };
  }
  const bytes = readFileSync(spec.model);
  const tFetch = performance.now();
  const enc = await sf.loadModel(bytes, { ...opts, dtype });
  out.dtype = enc.dtype;
  out.threads = threads;
  out.build = spec.wasm ? spec.wasm.split('/').pop() : relaxed ? 'default (relaxed)' : 'default';
  out.file = file;
  const tLoad = performance.now();
  out.memLoaded = wasmBytes();
  if (spec.long) {
    const short = makeIds(16, enc.config.vocabSize);
    for (let i = 0; i < 5; i++) enc.forward(short);
    const x = instances.find((i) => i.exports.sf_alloc).exports,
      mem = x.memory;
    out.heapFill = 0;
    for (const size of [1 << 20, 1 << 16, 1 << 12, 1 << 8]) {
      const s0 = mem.buffer.byteLength;
      for (;;) {
        const p = x.sf_alloc(size);
        if (!p) break;
        out.heapFill += size;
        if (mem.buffer.byteLength !== s0) break;
      }
    }
    const before = wasmBytes();
    const t1 = performance.now();
    try {
      enc.forward(ids);
      out.ms = performance.now() - t1;
    } catch (e) {
      out.error = `${e.code ?? e.name}: ${e.message}`;
    }
    out.memBefore = before;
    out.memAfter = wasmBytes();
  } else {
    const y = enc.forward(ids);
    const t1 = performance.now();
    if (!(y.data.length > 0)) throw new Error('no output');
    Object.assign(out, { coldMs: t1 - t0, importMs: tImport - t0, fetchMs: tFetch - tImport, loadMs: tLoad - tFetch, firstMs: t1 - tLoad });
    out.memAfter = wasmBytes();
    // the weights' bytes as float32 (what the memory is compared with)
    out.weightBytes = Object.values(enc.weightShapes()).reduce((s, sh) => s + 4 * sh.reduce((a, b) => a * b, 1), 0);
    if (spec.reload) {
      // dispose, load the same file again, one forward: does the memory grow?
      enc.dispose();
      const again = await sf.loadModel(bytes, { ...opts, dtype });
      again.forward(ids);
      out.memReload = wasmBytes();
      again.dispose();
    }
  }
} else if (spec.runtime === 'ort') {
  const ort = await importOrtWeb();
  ort.env.wasm.numThreads = spec.threads ?? 1;
  out.threads = ort.env.wasm.numThreads;
  const tImport = performance.now();
  const bytes = readFileSync(spec.model);
  const tFetch = performance.now();
  const session = await ort.InferenceSession.create(bytes, ORT_SESSION);
  const tLoad = performance.now();
  out.memLoaded = wasmBytes();
  const y = await session.run(ortFeeds(ort, ids));
  const t1 = performance.now();
  if (!(y.last_hidden_state.data.length > 0)) throw new Error('no output');
  Object.assign(out, { coldMs: t1 - t0, importMs: tImport - t0, fetchMs: tFetch - tImport, loadMs: tLoad - tFetch, firstMs: t1 - tLoad });
  out.memAfter = wasmBytes();
  if (spec.reload) {
    // release the session, create it again, one run
    await session.release();
    const again = await ort.InferenceSession.create(bytes, ORT_SESSION);
    await again.run(ortFeeds(ort, ids));
    out.memReload = wasmBytes();
    await again.release();
  }
} else {
  throw new Error(`unknown runtime ${spec.runtime}`);
}
out.maxRssBytes = process.resourceUsage().maxRSS * 1024;
out.memories = memories.length;
console.log(JSON.stringify(out));
