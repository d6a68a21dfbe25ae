// The runtime: the wasm instance (Runtime), encoders over its C ABI
// (core/api.c), createEncoder / loadModel / runtimeInfo / listPlugins.
//
// A thin layer: it copies inputs into wasm memory, calls the C ABI, turns every
// non-zero return code into a SwapformerError, and copies results out. It never
// keeps a typed-array view of wasm memory across a call that may grow it: views
// are made fresh from memory.buffer each time.

import { SwapformerError, fail } from '../utils/errors.js';
import { loadRuntime, wrongWasm } from './wasm.js';
import { RuntimeBase, ABI_VERSION } from './runtime.js';
import { Pool, threadSupport, defaultThreads, sharedMemory } from './threads.js';
import { isNode } from '../utils/platform.js';
import { nativeRuntime, nativeDefaultThreads } from './backend.js';
import { readOptions } from '../utils/options.js';

// User input is read once, own properties only, into plain values before any
// wasm call: a getter, a Proxy or an inherited property (Object.prototype.seed)
// can then neither change what a call does half-way nor re-enter it.
const own = (obj, key) => (obj !== null && typeof obj === 'object' && Object.hasOwn(obj, key) ? obj[key] : undefined);

/** A short, safe description of a value for messages. */
function describe(v) {
  if (typeof v === 'number') return String(v);
  if (typeof v === 'bigint') return `${v}n`;
  if (v === undefined) return 'undefined (a hole or a missing element)';
  let text;
  try {
    text = JSON.stringify(v) ?? String(v);
  } catch {
    text = Array.isArray(v) ? 'array' : '{...}';
  }
  return `${typeof v} ${text.length > 40 ? `${text.slice(0, 40)}...` : text}`;
}

/** Numbers of an array or a typed array, copied once into a Float32Array. */
function toFloat32(v, what, code) {
  if (v instanceof Float32Array) return v.slice();
  if (v instanceof BigInt64Array || v instanceof BigUint64Array) fail(code, `${what} must hold numbers, got a ${v.constructor.name}`);
  if (!Array.isArray(v) && !ArrayBuffer.isView(v)) fail(code, `${what} must be a Float32Array or an array of numbers, got ${describe(v)}`);
  if (v instanceof DataView) fail(code, `${what} must be a Float32Array or an array of numbers, got a DataView`);
  const n = v.length;
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    const x = v[i];
    if (typeof x !== 'number') fail(code, `${what}[${i}] = ${describe(x)} is not a number`);
    out[i] = x;
  }
  return out;
}

/** Deep-freezes a plain JSON value. */
function deepFreeze(v) {
  if (v !== null && typeof v === 'object') {
    for (const x of Object.values(v)) deepFreeze(x);
    Object.freeze(v);
  }
  return v;
}
const fromUtf8 = new TextDecoder();

// ------------------------------------------------------------------ loading
// (runtime/wasm.js: where the wasm is, configure(), WASM_LOAD errors)

/** The key of Encoder's exclusive-job entry point, for the layers above (not in the public API). */
export const EXCLUSIVE = Symbol('swapformer.exclusive');
/** The key of Encoder's runtime accessor (embeddings.js runs similarity and quantization on a model's runtime). */
export const RUNTIME = Symbol('swapformer.runtime');
const WEIGHTS = Symbol('swapformer.weights');

/** A wasm instance: views of its memory, its thread pool (the threaded builds). */
class WasmRuntime extends RuntimeBase {
  constructor(instance, build, where, threaded) {
    super(instance.exports, build);
    this.backend = 'wasm';
    this.maxAlloc = 2 ** 31; // wasm32 sizes are 32-bit: a larger request must not wrap into a small one
    this.memoryName = 'wasm32 memory';
    // the threaded builds import a shared memory and run a pool (runtime/threads.js)
    this.memory = threaded?.memory ?? this.x.memory;
    this.module = threaded?.module;
    this.pool = threaded ? new Pool(this) : null;
    this.canOffload = !!this.pool; // a pass in the pool's driver worker
    if (typeof this.x.sf_abi_version !== 'function' || typeof this.x._initialize !== 'function')
      throw wrongWasm(where, 'it exports no swapformer ABI (not a swapformer wasm)');
    this.x._initialize();
    const abi = this.x.sf_abi_version();
    if (abi !== ABI_VERSION) throw wrongWasm(where, `its ABI is ${abi}, these bindings need ${ABI_VERSION}`);
  }

  get u8() {
    return new Uint8Array(this.memory.buffer);
  }
  write(ptr, view) {
    this.u8.set(new Uint8Array(view.buffer, view.byteOffset, view.byteLength), ptr);
  }
  readBytes(ptr, n) {
    return new Uint8Array(this.memory.buffer, ptr, n).slice();
  }
  readF32(ptr, n) {
    return new Float32Array(this.memory.buffer, ptr, n).slice();
  }
  readI32(ptr, n) {
    return new Int32Array(this.memory.buffer, ptr, n).slice();
  }
  readSizes(ptr, n) {
    return Array.from(new Uint32Array(this.memory.buffer, ptr, n)); // wasm32: size_t is 32-bit
  }
  memoryBytes() {
    return this.memory.buffer.byteLength; // wasm memory grows and never shrinks
  }
  callOff(fn, ...args) {
    return this.pool.call(fn, ...args);
  }

  /** An encoder of this runtime was disposed or collected: the last one stops the pool
   * (a moment later, so that dispose-then-create does not restart its workers). */
  released() {
    if (--this.live > 0 || !this.pool) return;
    const timer = setTimeout(() => {
      if (this.live === 0 && !this.running && !this.queued) this.pool.stop();
    }, 500);
    timer.unref?.(); // Node: a pending stop never keeps the process alive
  }

  /** Threads the pool really has: the workers checked in, and the calling thread. */
  poolSize() {
    return this.pool ? this.x.sf_threads_arrived() + 1 : 1;
  }

  cstr(ptr) {
    if (!ptr) return '';
    const u8 = this.u8;
    let end = ptr;
    while (u8[end]) end++;
    return fromUtf8.decode(u8.slice(ptr, end)); // a copy: TextDecoder refuses views of shared memory
  }
}

const createRuntime = (instance, build, where, threaded) => new WasmRuntime(instance, build, where, threaded);
/** The Runtime factory loadRuntime takes (embeddings.js loads the default build through it). */
export const createRuntimeFor = createRuntime;

/** The Runtime for a call's `wasm` option, or the configured / default build (single-threaded). */
const runtime = (wasm) => loadRuntime(wasm, createRuntime);

/** options.threads: an integer in [1, 64], or undefined (the backend's default). */
function readThreads(options) {
  const t = own(options, 'threads');
  if (t === undefined) return undefined;
  if (!Number.isInteger(t) || t < 1 || t > 64) fail('BAD_ARGUMENT', `options.threads must be an integer in [1, 64], got ${describe(t)}`);
  return t;
}

/**
 * The runtime a call runs on, {rt, threads, fallback, backendFallback}: the
 * native addon where runtime/backend.js chooses it (threads: options.threads,
 * default the physical cores), else the wasm build for the threads asked
 * (default: the cores, capped at 8, where threads can run). backendFallback
 * says why the wasm runs (null on native); fallback why fewer threads run.
 */
async function runtimeFor(options) {
  const wasm = own(options, 'wasm'),
    t = readThreads(options);
  let backendFallback = 'options.wasm names a wasm build';
  if (wasm === undefined) {
    const native = await nativeRuntime();
    if (native.rt) {
      const rt = native.rt,
        want = t ?? (await nativeDefaultThreads());
      const threads = want > rt.poolSize() ? await rt.exclusive(() => rt.ensureThreads(want)) : want;
      return { rt, threads, fallback: threads < want ? `the pool could start only ${threads} threads` : null, backendFallback: null };
    }
    backendFallback = native.reason;
  }
  return { ...(await runtimeWithThreads(wasm, t ?? (await defaultThreads()))), backendFallback };
}

/** The runtime of calls without options (similarity, search): native or the single-threaded wasm. */
export async function defaultRuntime() {
  const native = await nativeRuntime();
  return native.rt ?? runtime(undefined);
}

/**
 * The runtime for `threads` threads: the threaded build with its pool grown to
 * that size where threads can run (shared memory, workers) and no `wasm`
 * option names another build; else the single-threaded one, silently.
 * Resolves to {rt, threads, fallback}: fallback says why it is 1.
 */
async function runtimeWithThreads(wasm, threads) {
  let fallback = null;
  if (threads > 1) {
    const support = threadSupport();
    if (wasm !== undefined) fallback = 'options.wasm names a single-threaded build';
    else if (!support.ok) fallback = support.reason;
    else {
      let rt = null;
      try {
        rt = await loadRuntime(undefined, createRuntime, { threaded: true, memory: sharedMemory });
      } catch (e) {
        if (!(e instanceof SwapformerError && e.code === 'WASM_LOAD')) throw e;
        fallback = `the threaded build could not be loaded (${e.message})`; // the single-threaded one may still be there
      }
      if (rt) {
        try {
          // the pool cannot grow under a pass, nor a pass start while it grows
          if (rt.pool.size() < threads) await rt.exclusive(() => rt.pool.ensure(threads));
          return { rt, threads: Math.min(threads, rt.poolSize()), fallback };
        } catch (e) {
          // e.g. a bundle without runtime/thread.js: the threaded build runs on this thread alone
          const n = Math.min(threads, rt.poolSize());
          return { rt, threads: n, fallback: n > 1 ? null : `the thread workers could not start (${e.message})` };
        }
      }
      fallback ??= 'configure({ wasmPaths }) names no threaded build (simdThreads, relaxedThreads)';
    }
  }
  return { rt: await runtime(wasm), threads: 1, fallback: threads > 1 ? fallback : null };
}

// ------------------------------------------------------------------ API

// Encoders garbage-collected undisposed are freed, where the runtime has a
// FinalizationRegistry (Cloudflare Workers have none: there only dispose() frees).
const handles = typeof FinalizationRegistry === 'function' ? new FinalizationRegistry(({ rt, h }) => rt.destroy(h)) : null;

/** Which build a wasm source runs and how much memory its instance holds now
 * (wasm memory grows and never shrinks). */
export async function runtimeInfo(options) {
  options = readOptions(options, 'runtimeInfo');
  const { rt, threads, fallback, backendFallback } = await runtimeFor(options);
  const poolTasks = Array.from({ length: rt.poolSize() }, (_, i) => rt.x.sf_threads_tasks(i));
  return {
    backend: rt.backend,
    backendFallback,
    isa: rt.backend === 'native' ? rt.isa : 'wasm-simd128',
    build: rt.build,
    memoryBytes: rt.memoryBytes(),
    threads,
    threadsFallback: fallback,
    threaded: rt.backend === 'native' || !!rt.pool,
    q8Kernel: rt.cstr(rt.x.sf_q8_kernel()),
    q8Amax: rt.backend === 'native' ? rt.q8Amax : /relaxed/.test(rt.cstr(rt.x.sf_q8_kernel())) ? 127 : 255,
    poolTasks,
    ...(rt.backend === 'native' ? { nativePath: rt.path } : {}),
  };
}

/** Names of the registered position and norm plugins, read from the C registry. */
export async function listPlugins(options) {
  const wasm = own(readOptions(options, 'listPlugins'), 'wasm');
  const rt = wasm === undefined ? await defaultRuntime() : await runtime(wasm);
  const names = (kind) => Array.from({ length: rt.x.sf_plugin_count(kind) }, (_, i) => rt.cstr(rt.x.sf_plugin_name(kind, i)));
  return { position: names(0), norm: names(1) };
}

/** The weights option (an object or a Map of name -> numbers) as [name, Float32Array] pairs. */
function readWeights(weights) {
  if (weights === undefined) return [];
  const entries =
    weights instanceof Map
      ? [...weights.entries()]
      : weights !== null && typeof weights === 'object' && !Array.isArray(weights) && !ArrayBuffer.isView(weights)
        ? Object.keys(weights).map((k) => [k, weights[k]])
        : fail('BAD_WEIGHTS', `options.weights must be an object or a Map of Float32Arrays, got ${describe(weights)}`);
  return entries.map(([name, value]) => {
    if (typeof name !== 'string') fail('BAD_WEIGHTS', `options.weights: a key is ${describe(name)}, not a tensor name`);
    if (name.includes('\0')) fail('BAD_WEIGHTS', `weights['${name.replace(/\0/g, '\\0')}'] has a NUL character in its name`);
    return [name, toFloat32(value, `weights['${name}']`, 'BAD_WEIGHTS')];
  });
}

/** options.dtype: how the weights are stored, 'f32' or 'q8' (int8: README "int8"); undefined -> fallback. */
function readDtype(options, fallback = 'f32') {
  const d = own(options, 'dtype');
  if (d === undefined) return fallback;
  if (d !== 'f32' && d !== 'q8') fail('BAD_ARGUMENT', `options.dtype must be 'f32' or 'q8', got ${describe(d)}`);
  return d;
}
const DTYPE_CODE = { f32: 0, q8: 1, file: -1 };

/** options.init: {outputScale: 'depth' | number} -> the factor on the seeded output projections. */
function readInit(init, layers) {
  if (init === undefined) return 1;
  if (init === null || typeof init !== 'object' || Array.isArray(init))
    fail('BAD_ARGUMENT', `options.init must be an object like {outputScale: 'depth'}, got ${describe(init)}`);
  readOptions(init, 'init', 'options.init');
  const s = own(init, 'outputScale');
  if (s === undefined) return 1;
  if (s === 'depth') return 1 / Math.sqrt(2 * Math.max(Number.isInteger(layers) ? layers : 1, 1)); // 1/sqrt(2L)
  if (typeof s !== 'number' || !(s > 0 && s <= 1e6))
    fail('BAD_ARGUMENT', `options.init.outputScale must be 'depth' or a number in (0, 1e6], got ${describe(s)}`);
  return s;
}

/** A new encoder from a config; weights not given are initialised from seed. */
export async function createEncoder(config, options) {
  options = readOptions(options, 'createEncoder');
  const seed = own(options, 'seed') ?? 0;
  if (config === null || typeof config !== 'object' || Array.isArray(config)) fail('BAD_CONFIG', 'config must be an object');
  if (typeof seed !== 'number' || !Number.isSafeInteger(seed) || seed < 0)
    fail('BAD_ARGUMENT', `options.seed must be a non-negative safe integer, got ${describe(seed)}`);
  let json;
  try {
    json = JSON.stringify(config);
  } catch (e) {
    fail('BAD_CONFIG', `config is not serialisable as JSON: ${e.message}`);
  }
  const weights = readWeights(own(options, 'weights'));
  const outputScale = readInit(own(options, 'init'), JSON.parse(json).layers);
  const dtype = readDtype(options);
  const { rt, threads } = await runtimeFor(options);
  return rt.exclusive(() => {
    const h = rt.withString(json, (p, n) => rt.x.sf_create(p, n, DTYPE_CODE[dtype]));
    if (!h) throw rt.error(rt.x.sf_error_code());
    rt.x.sf_set_threads(h, threads);
    try {
      for (const [name, data] of weights) {
        const p = rt.alloc(data.length * 4 || 4);
        try {
          rt.write(p, data);
          rt.check(rt.withString(name, (np, nn) => rt.x.sf_set_weight(h, np, nn, p, data.length)));
        } finally {
          rt.x.sf_dealloc(p);
        }
      }
      rt.check(rt.x.sf_init(h, seed, outputScale));
      return new Encoder(rt, h);
    } catch (e) {
      rt.x.sf_destroy(h);
      throw e;
    }
  });
}

/**
 * A new encoder of `config` on another encoder's weights (Pretrained.withConfig):
 * every tensor the new config has keeps its values, bit for bit; the others
 * are dropped (the tables of a position plugin swapped out). A position
 * plugin's table the new config adds, or resizes (learned positions with a
 * larger maxLen), starts as zeros past what the old one held: an untrained
 * table adds nothing, where seeded noise would swamp a trained model; any other
 * new tensor is initialised as createEncoder does. Resizing any other tensor
 * is BAD_CONFIG naming it. options: {dtype?, threads?, wasm?} (default: the source's dtype).
 */
export async function deriveEncoder(source, config, options) {
  options = readOptions(options, 'withConfig');
  if (config === null || typeof config !== 'object' || Array.isArray(config)) fail('BAD_CONFIG', 'config must be an object');
  const weights = await Encoder[WEIGHTS](source); // in its runtime's turn: another encoder's pass may be running
  const dtype = readDtype(options, source.dtype);
  let json;
  try {
    json = JSON.stringify(config);
  } catch (e) {
    fail('BAD_CONFIG', `config is not serialisable as JSON: ${e.message}`);
  }
  const { rt, threads } = await runtimeFor(options);
  return rt.exclusive(() => {
    const x = rt.x;
    const h = rt.withString(json, (p, n) => x.sf_create(p, n, DTYPE_CODE[dtype]));
    if (!h) throw rt.error(x.sf_error_code());
    x.sf_set_threads(h, threads);
    try {
      for (let i = 0; i < x.sf_param_count(h); i++) {
        const name = rt.cstr(x.sf_param_name(h, i));
        const n = x.sf_param_ndim(h, i) === 2 ? x.sf_param_dim(h, i, 0) * x.sf_param_dim(h, i, 1) : x.sf_param_dim(h, i, 0);
        let data = Object.hasOwn(weights, name) ? weights[name] : null;
        if (x.sf_param_plugin(h, i)) {
          // zeros past the old table
          const table = new Float32Array(n);
          if (data) table.set(data.subarray(0, Math.min(n, data.length)));
          data = table;
        } else if (data && data.length !== n) {
          fail(
            'BAD_CONFIG',
            `the change resizes the weight '${name}' (${data.length} values, the new config needs ${n}): a config change on the same weights keeps every tensor's shape but a position plugin's table`,
          );
        }
        if (!data) continue;
        const p = rt.alloc(data.length * 4 || 4);
        try {
          rt.write(p, data);
          rt.check(rt.withString(name, (np, nn) => x.sf_set_weight(h, np, nn, p, data.length)));
        } finally {
          x.sf_dealloc(p);
        }
      }
      rt.check(x.sf_init(h, 0, 1));
      return new Encoder(rt, h);
    } catch (e) {
      x.sf_destroy(h);
      throw e;
    }
  });
}

/**
 * A model file given as its head (the 8-byte length and the header JSON), its
 * length, and read(begin, end): the data bytes [begin, end) (offsets from the
 * data's start, within one tensor, asked in data order). loadModel streams it
 * into wasm memory (pretrained/model-file.js makes one from a checkpoint).
 */
export class ModelSource {
  constructor(head, fileLength, read) {
    this.head = head;
    this.fileLength = fileLength;
    this.read = read;
  }
}

/** An encoder from a model file (safetensors with the config in its metadata). */
export async function loadModel(bytes, options) {
  options = readOptions(options, 'loadModel');
  let file;
  if (bytes instanceof ModelSource)
    file = bytes; // loadPretrained: a checkpoint's tensors, streamed as a model file
  else if (bytes instanceof ArrayBuffer) file = fileSource(new Uint8Array(bytes));
  else if (ArrayBuffer.isView(bytes)) file = fileSource(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  else fail('BAD_FILE', 'loadModel: bytes must be a Uint8Array or an ArrayBuffer');
  const dtype = readDtype(options, 'file'); // default: as the file was saved
  const { rt, threads } = await runtimeFor(options);
  return rt.exclusive(() => {
    const h = streamModel(rt, file, DTYPE_CODE[dtype]);
    rt.x.sf_set_threads(h, threads);
    return new Encoder(rt, h);
  });
}

// A model is streamed into wasm memory, never copied whole: the header goes
// into one buffer of LOAD_CHUNK bytes, the core checks it and creates the
// encoder (sf_load_begin), then the data passes through the same buffer in
// chunks of whole rows, a multiple of 32 (whole panels of packed weights),
// each written into the encoder's arena (sf_load_chunk). Wasm memory then
// holds the weights and this buffer, not the file as well. The native addon
// reads each chunk from the JavaScript bytes themselves (rt.loadChunk).
const LOAD_CHUNK = 2 << 20;
// A chunk holds whole panels of rows: 32 is a multiple of every panel width (8 in wasm; 8, 16 or 32 natively).
const PANEL_ROWS = 32;

/** A model file in memory as a ModelSource: the header, and the data as views. */
function fileSource(bytes) {
  const n = bytes.length;
  // the header length, as far as the core needs it to report what is wrong (too short, past the end)
  const v = n < 8 ? null : new DataView(bytes.buffer, bytes.byteOffset, 8);
  const hlen = v ? v.getUint32(0, true) + v.getUint32(4, true) * 2 ** 32 : 0;
  const headLength = Math.min(n, 8 + hlen);
  return new ModelSource(bytes.subarray(0, headLength), n, (begin, end) => bytes.subarray(headLength + begin, headLength + end));
}

/** Streams a ModelSource into a new encoder of rt: its handle. */
function streamModel(rt, file, dtype) {
  const x = rt.x,
    { head, fileLength } = file;
  if (!(fileLength < rt.maxAlloc * 2)) fail('OUT_OF_MEMORY', `out of memory: a model file of ${fileLength} bytes does not fit in ${rt.memoryName}`);
  let size = Math.max(LOAD_CHUNK, head.length);
  let buf = rt.alloc(size),
    loader = 0;
  try {
    rt.write(buf, head);
    loader = x.sf_load_begin(buf, head.length, fileLength, dtype);
    if (!loader) throw rt.error(x.sf_error_code());
    const n = x.sf_load_tensors(loader);
    // per tensor, in data order: param index, data begin, data end, bytes per row
    const plan = rt.readSizes(x.sf_load_plan(loader), 4 * n);
    let widest = 0;
    for (let i = 0; i < n; i++) widest = Math.max(widest, plan[4 * i + 3]);
    if (widest * PANEL_ROWS > size) {
      // rows so wide that a panel of them does not fit the buffer (rare): one that holds a panel
      x.sf_dealloc(buf);
      buf = 0;
      buf = rt.alloc((size = widest * PANEL_ROWS));
    }
    for (let i = 0; i < n; i++) {
      const begin = plan[4 * i + 1],
        end = plan[4 * i + 2],
        row = plan[4 * i + 3];
      if (begin === end) continue;
      let rows = Math.floor(size / row);
      rows -= rows % PANEL_ROWS; // whole panels of packed weights, whatever the kernels' width
      for (let at = begin; at < end;) {
        const len = Math.min(rows * row, end - at);
        rt.loadChunk(loader, buf, file.read(at, at + len));
        at += len;
      }
    }
    const h = x.sf_load_end(loader);
    if (!h) throw rt.error(x.sf_error_code());
    return h;
  } finally {
    if (loader) x.sf_load_free(loader);
    if (buf) x.sf_dealloc(buf);
  }
}

// Accepts one sequence (number[] / typed array) or a batch (array of them),
// and copies it into Int32Arrays, every element read once, before any wasm call.
function readIds(ids, vocabSize, name = 'ids', bound = 'vocabSize') {
  const isSeq = (s) => ArrayBuffer.isView(s) || (Array.isArray(s) && (s.length === 0 || !(Array.isArray(s[0]) || ArrayBuffer.isView(s[0]))));
  let seqs;
  const single = isSeq(ids);
  if (single) seqs = [ids];
  else if (Array.isArray(ids)) seqs = Array.from({ length: ids.length }, (_, b) => ids[b]);
  else fail('BAD_ARGUMENT', `${name} must be a sequence of ${name === 'ids' ? 'token' : 'type'} ids (number[] or Int32Array) or an array of sequences`);
  if (seqs.length === 0) fail('BAD_ARGUMENT', `${name} is an empty batch`);
  const where = (b) => (single ? name : `${name}[${b}]`);
  const out = seqs.map((s, b) => {
    if (!Array.isArray(s) && !ArrayBuffer.isView(s))
      fail('BAD_ARGUMENT', `${name} must be a sequence of ids or an array of sequences: ${where(b)} = ${describe(s)} is not a sequence`);
    if (s instanceof DataView) fail('BAD_ARGUMENT', `${where(b)} is a DataView, not a sequence of ids`);
    const n = s.length;
    if (!Number.isInteger(n) || n < 0 || n > 0x7fffffff) fail('BAD_ARGUMENT', `${where(b)} has no valid length`);
    if (n === 0) fail('BAD_ARGUMENT', `${where(b)} is empty: a sequence needs at least one token`);
    const seq = new Int32Array(n);
    for (let t = 0; t < n; t++) {
      const id = s[t];
      if (typeof id !== 'number' || !Number.isInteger(id) || id < 0 || id >= vocabSize) {
        fail('BAD_TOKEN', `${where(b)}[${t}] = ${describe(id)} is not ${name === 'ids' ? 'a token id' : 'a type id'} in [0, ${vocabSize}) (${bound})`);
      }
      seq[t] = id;
    }
    return seq;
  });
  return { seqs: out, single, where };
}

/** skipLayers: distinct layer indices, run as the identity (the residual stream passes through). */
function readSkipLayers(skip, layers) {
  if (skip === undefined) return null;
  if (!Array.isArray(skip) && !ArrayBuffer.isView(skip)) fail('BAD_ARGUMENT', `options.skipLayers must be an array of layer indices, got ${describe(skip)}`);
  const out = Array.from({ length: skip.length }, (_, i) => skip[i]);
  out.forEach((l, i) => {
    if (!Number.isInteger(l) || l < 0 || l >= layers) fail('BAD_ARGUMENT', `options.skipLayers[${i}] = ${describe(l)} is not a layer index in [0, ${layers})`);
    if (out.indexOf(l) !== i) fail('BAD_ARGUMENT', `options.skipLayers names layer ${l} twice`);
  });
  return out;
}

/** Token type (segment) ids: the shape of ids, each below typeVocabSize (0 only, without token types). */
function readTypeIds(typeIds, batch, typeVocabSize) {
  if (typeIds === undefined) return null;
  const t = readIds(typeIds, Math.max(typeVocabSize, 1), 'typeIds', typeVocabSize ? 'typeVocabSize' : 'this model has no token types');
  if (t.single !== batch.single || t.seqs.length !== batch.seqs.length) fail('BAD_ARGUMENT', 'options.typeIds must have the shape of ids');
  t.seqs.forEach((s, b) => {
    if (s.length !== batch.seqs[b].length) fail('BAD_ARGUMENT', `${t.where(b)} has ${s.length} type ids for ${batch.seqs[b].length} tokens`);
  });
  return t.seqs;
}

/**
 * options.sparse of forward: true or {pooling: 'max' | 'sum', activation:
 * 'relu' | 'log1p_relu'} (sentence-transformers' SpladePooling), on an mlm
 * head: the sf_forward flags (encoder.h SF_OUT_SPARSE and its modes), or 0.
 */
function readSparse(sparse, config) {
  if (sparse === undefined || sparse === false) return 0;
  const o = sparse === true ? {} : readOptions(sparse, 'sparse', 'options.sparse');
  const pooling = own(o, 'pooling') ?? 'max',
    activation = own(o, 'activation') ?? 'relu';
  if (pooling !== 'max' && pooling !== 'sum') fail('BAD_ARGUMENT', `options.sparse.pooling must be 'max' or 'sum', got ${describe(pooling)}`);
  if (activation !== 'relu' && activation !== 'log1p_relu')
    fail('BAD_ARGUMENT', `options.sparse.activation must be 'relu' or 'log1p_relu', got ${describe(activation)}`);
  if (pooling === 'max' && activation === 'log1p_relu') fail('BAD_ARGUMENT', "options.sparse.activation 'log1p_relu' goes with pooling 'sum'");
  if (config?.task !== 'mlm')
    fail(
      'UNSUPPORTED_MODEL',
      `options.sparse: sparse vectors need a masked-LM head (…ForMaskedLM); this model has ${config ? `a ${config.task} head` : 'no head'}`,
    );
  return 8 | (pooling === 'sum' ? 16 : 0) | (activation === 'log1p_relu' ? 32 : 0);
}

/** options.attentionLengths: per sequence, how many of its first tokens the others attend to (a number for one sequence). */
function readAttentionLengths(lengths, { seqs, single, where }) {
  if (lengths === undefined) return null;
  const list = single && typeof lengths === 'number' ? [lengths] : lengths;
  if (!(Array.isArray(list) || (ArrayBuffer.isView(list) && !(list instanceof DataView))) || list.length !== seqs.length)
    fail('BAD_ARGUMENT', `options.attentionLengths must be ${single ? 'a number' : `one number per sequence (${seqs.length})`}`);
  return Int32Array.from({ length: seqs.length }, (_, b) => {
    const k = list[b];
    if (!Number.isInteger(k) || k < 1 || k > seqs[b].length)
      fail('BAD_ARGUMENT', `options.attentionLengths${single ? '' : `[${b}]`} = ${describe(k)} is not in [1, ${seqs[b].length}] (the tokens of ${where(b)})`);
    return k;
  });
}

/**
 * The head options of forward: head: true for a sequence or token head
 * (config.head), headPositions for an mlm head (the token positions it runs at:
 * a number[] for one sequence, one per sequence for a batch). Returns the
 * [b, t] rows, [] for a sequence or token head, or null for no head.
 */
function readHead(head, positions, config, { seqs, single, where }) {
  if (head !== undefined && typeof head !== 'boolean') fail('BAD_ARGUMENT', `options.head must be true or false, got ${describe(head)}`);
  if (!head && positions === undefined) return null;
  if (!config) fail('BAD_ARGUMENT', `options.${positions !== undefined ? 'headPositions' : 'head'}: this model has no head (config.head is null)`);
  if (config.task !== 'mlm') {
    if (positions !== undefined)
      fail('BAD_ARGUMENT', `options.headPositions applies to an mlm head; this model's head is a ${config.task} head (use head: true)`);
    return [];
  }
  if (positions === undefined) fail('BAD_ARGUMENT', 'options.head: an mlm head runs at chosen tokens: give options.headPositions (e.g. the [MASK] positions)');
  const isList = (v) => Array.isArray(v) || (ArrayBuffer.isView(v) && !(v instanceof DataView));
  const lists = single ? [positions] : positions;
  if (!isList(lists) || (!single && lists.length !== seqs.length))
    fail(
      'BAD_ARGUMENT',
      `options.headPositions must be ${single ? 'an array of token positions' : `one array of token positions per sequence (${seqs.length})`}`,
    );
  const rows = [];
  for (let b = 0; b < seqs.length; b++) {
    const list = lists[b],
      name = single ? 'options.headPositions' : `options.headPositions[${b}]`;
    if (!isList(list)) fail('BAD_ARGUMENT', `${name} must be an array of token positions, got ${describe(list)}`);
    for (let i = 0; i < list.length; i++) {
      const t = list[i];
      if (!Number.isInteger(t) || t < 0 || t >= seqs[b].length)
        fail('BAD_ARGUMENT', `${name}[${i}] = ${describe(t)} is not a position of ${where(b)} (0 .. ${seqs[b].length - 1})`);
      rows.push([b, t]);
    }
  }
  if (!rows.length) fail('BAD_ARGUMENT', 'options.headPositions names no position');
  return rows;
}

function checkLength(length) {
  if (!Number.isInteger(length) || length < 1 || length > 0x7fffffff) fail('BAD_ARGUMENT', `length must be a positive integer, got ${describe(length)}`);
}

export class Encoder {
  #rt;
  #h;
  #config;
  #dtype;
  #maxLen; // the plugin's limit, read once: a read while another encoder's pass runs needs no turn

  constructor(rt, h) {
    this.#rt = rt;
    this.#h = h;
    rt.check(rt.x.sf_config_json(h));
    this.#config = deepFreeze(JSON.parse(fromUtf8.decode(rt.takeResult())));
    this.#dtype = rt.x.sf_dtype(h) === 1 ? 'q8' : 'f32';
    const n = rt.x.sf_max_len(h);
    this.#maxLen = n < 0 ? Infinity : n;
    handles?.register(this, { rt, h }, this);
    rt.live++;
  }

  #handle() {
    if (!this.#h) fail('DISPOSED', 'this encoder has been disposed');
    this.#rt.assertIdle();
    return this.#h;
  }

  /** The resolved config, every default filled in. */
  get config() {
    return this.#config;
  }

  /** How the weights are stored: 'f32', or 'q8' (int8 Linear weights and token table). */
  get dtype() {
    return this.#dtype;
  }

  /** Longest sequence the position plugin can encode (Infinity when unlimited). */
  get maxSequenceLength() {
    if (!this.#h) fail('DISPOSED', 'this encoder has been disposed');
    return this.#maxLen;
  }

  forward(ids, options) {
    return this.#run(ids, options).result;
  }

  /**
   * forward without blocking the calling thread, where the runtime has threads:
   * the pass runs in a worker (the pool's driver) while this thread is free.
   * Async calls on this runtime (its encoders share one memory and one pool)
   * run one at a time in the order they were made; a sync call while a pass
   * runs throws BUSY. Without threads (no shared memory), it runs forward here
   * in its turn and resolves to its result. A dispose() meanwhile settles it
   * with DISPOSED (the memory is freed once the pass has ended).
   */
  async forwardAsync(ids, options) {
    return (await this.#rt.exclusive(() => this.#forwardQueued(ids, options))).result;
  }

  /**
   * For the layers above (pretrained/): runs job(forward) as one exclusive job
   * of the encoder's runtime, forward(ids, options) being forwardAsync without
   * queueing again (so that the passes of one embedAsync run together).
   * Resolves to {result, batch} per pass.
   */
  static [RUNTIME](encoder) {
    if (!encoder.#h) fail('DISPOSED', 'this encoder has been disposed');
    encoder.#rt.assertIdle();
    return encoder.#rt;
  }

  /** The encoder's weights (getWeights), read as an exclusive job of its runtime: after the passes queued or running. */
  static [WEIGHTS](encoder) {
    if (!encoder.#h) fail('DISPOSED', 'this encoder has been disposed');
    return encoder.#rt.exclusive(() => encoder.getWeights());
  }

  static [EXCLUSIVE](encoder, job) {
    return encoder.#rt.exclusive(() => job((ids, options) => encoder.#forwardQueued(ids, options)));
  }

  // A forward pass inside an exclusive job: in the driver where there is a pool, else here.
  async #forwardQueued(ids, options) {
    const rt = this.#rt;
    if (!rt.canOffload) return this.#run(ids, options);
    const pass = this.#prepare(ids, options);
    return rt.offload(
      pass.h,
      'sf_forward',
      [pass.B, pass.flags],
      (rc) => {
        if (!this.#h) fail('DISPOSED', 'this encoder was disposed while its forward pass ran');
        rt.check(rc);
        return this.#collect(pass);
      },
      pass.release,
    );
  }

  // The forward pass, and the batch as it was read (for predict).
  #run(ids, options) {
    const pass = this.#prepare(ids, options);
    try {
      if (this.#rt.pool) this.#rt.x.sf_threads_can_wait(isNode ? 1 : 0); // a page's main thread may only spin
      this.#rt.check(this.#rt.x.sf_forward(pass.h, pass.B, pass.flags));
    } finally {
      pass.release();
    }
    return this.#collect(pass);
  }

  // Reads and checks the inputs, reserves and fills the wasm buffers: a pass ready for sf_forward.
  #prepare(ids, options) {
    const h = this.#handle(),
      rt = this.#rt,
      x = rt.x;
    options = readOptions(options, 'forward');
    const outputAttentions = !!own(options, 'outputAttentions'),
      outputHidden = !!own(options, 'outputHiddenStates');
    const { seqs, single, where } = readIds(ids, this.#config.vocabSize);
    const types = readTypeIds(own(options, 'typeIds'), { seqs, single }, this.#config.typeVocabSize);
    const skip = readSkipLayers(own(options, 'skipLayers'), this.#config.layers);
    const sparse = readSparse(own(options, 'sparse'), this.#config.head);
    if (sparse && (own(options, 'head') || own(options, 'headPositions') !== undefined))
      fail('BAD_ARGUMENT', 'options.sparse pools the mlm head over every token: it takes no head or headPositions');
    const headRows = sparse ? [] : readHead(own(options, 'head'), own(options, 'headPositions'), this.#config.head, { seqs, single, where });
    const attentionLengths = readAttentionLengths(own(options, 'attentionLengths'), { seqs, single, where });
    const flags = (outputAttentions ? 1 : 0) | (outputHidden ? 2 : 0) | (headRows ? 4 : 0) | sparse;
    this.#handle(); // reading the ids ran no wasm, but it may have run user code (a getter) that disposed us
    const B = seqs.length;
    let T = 0,
      N = 0;
    for (const s of seqs) {
      T = Math.max(T, s.length);
      N += s.length;
    }
    if (N > 0x7fffffff) fail('OUT_OF_MEMORY', `a batch of ${N} tokens is too large`);
    const limit = this.maxSequenceLength;
    seqs.forEach((s, b) => {
      if (s.length > limit) {
        fail('SEQUENCE_TOO_LONG', `${where(b)} has ${s.length} tokens; position '${this.#config.position}' encodes at most ${limit} (maxLen)`);
      }
    });
    const rows = headRows?.map(([b, t]) => b * T + t);
    rt.check(x.sf_reserve(h, B, T, N, flags, rows?.length ?? 0));
    if (rows?.length) rt.write(x.sf_head_rows(h), Int32Array.from(rows));
    const idsBuf = new Int32Array(N),
      lens = new Int32Array(B);
    let off = 0;
    seqs.forEach((s, b) => {
      idsBuf.set(s, off);
      lens[b] = s.length;
      off += s.length;
    });
    rt.write(x.sf_ids(h), idsBuf);
    rt.write(x.sf_lens(h), lens);
    if (attentionLengths) rt.write(x.sf_attention_lens(h), attentionLengths); // sf_reserve zeroed them: all
    if (types) {
      const typeBuf = new Int32Array(N); // sf_reserve zeroed the core's
      for (let b = 0, o = 0; b < B; o += seqs[b++].length) typeBuf.set(types[b], o);
      rt.write(x.sf_type_ids(h), typeBuf);
    }
    const skipped = (on) => {
      const flags = new Uint8Array(this.#config.layers);
      if (on) for (const l of skip) flags[l] = 1;
      rt.write(x.sf_skip_layers(h), flags);
    };
    if (skip) skipped(true);
    return {
      h,
      B,
      T,
      flags,
      seqs,
      single,
      outputAttentions,
      outputHidden,
      sparse,
      headRows: rows?.length ?? (headRows ? 0 : -1),
      release: () => {
        if (skip) skipped(false);
      },
    };
  }

  // The outputs of a finished pass, copied out of wasm memory.
  #collect({ h, B, T, seqs, single, outputAttentions, outputHidden, headRows, sparse }) {
    const rt = this.#rt,
      x = rt.x;
    const C = this.#config.dModel,
      V = this.#config.vocabSize;
    const result = { data: rt.readF32(x.sf_output(h), B * T * C), shape: [B, T, C] };
    if (sparse) result.sparse = { data: rt.readF32(x.sf_head_output(h), B * V), shape: [B, V] };
    else if (headRows >= 0) {
      const { task, labels } = this.#config.head;
      const shape = task === 'sequence' ? [B, labels] : task === 'mlm' ? [headRows, labels] : [B, T, labels];
      result.head = {
        data: rt.readF32(
          x.sf_head_output(h),
          shape.reduce((a, n) => a * n, 1),
        ),
        shape,
      };
    }
    if (this.#config.outputHead) result.logits = { data: rt.readF32(x.sf_logits(h), B * T * V), shape: [B, T, V] };
    if (outputAttentions) {
      const { layers, heads } = this.#config,
        per = B * heads * T * T,
        base = x.sf_attentions(h);
      result.attentions = Array.from({ length: layers }, (_, l) => ({
        data: rt.readF32(base + l * per * 4, per),
        shape: [B, heads, T, T],
      }));
    }
    if (outputHidden) {
      const per = B * T * C,
        base = x.sf_hidden_states(h);
      result.hiddenStates = Array.from({ length: this.#config.layers + 1 }, (_, l) => ({
        data: rt.readF32(base + l * per * 4, per),
        shape: [B, T, C],
      }));
    }
    return { result, batch: { seqs, single } };
  }

  /** The argmax of the output head's logits at every position: an Int32Array
   * for one sequence, an array of them (unpadded) for a batch. Needs outputHead. */
  predict(ids) {
    this.#handle();
    if (!this.#config.outputHead) fail('BAD_ARGUMENT', 'predict needs a model with an output head (config.outputHead)');
    const {
      result: { logits },
      batch,
    } = this.#run(ids, {});
    const [B, T, V] = logits.shape;
    const out = [];
    for (let b = 0; b < B; b++) {
      const L = batch.seqs[b].length,
        pred = new Int32Array(L);
      for (let t = 0; t < L; t++) {
        const row = logits.data.subarray((b * T + t) * V, (b * T + t + 1) * V);
        let best = 0;
        for (let v = 1; v < V; v++) if (row[v] > row[best]) best = v;
        pred[t] = best;
      }
      out.push(pred);
    }
    return batch.single ? out[0] : out;
  }

  /** What the position plugin adds to the embeddings at positions 0..length-1:
   * {data, shape: [length, embedDim]} (dModel unless embedDim is set; zeros for rope, alibi, none). */
  positionVectors(length) {
    const h = this.#handle(),
      rt = this.#rt;
    checkLength(length);
    const limit = this.maxSequenceLength;
    if (length > limit) fail('SEQUENCE_TOO_LONG', `length ${length}: position '${this.#config.position}' encodes at most ${limit} (maxLen)`);
    rt.check(rt.x.sf_position_vectors(h, length));
    const E = this.#config.embedDim ?? this.#config.dModel;
    return { data: rt.readF32(rt.x.sf_output(h), length * E), shape: [length, E] };
  }

  /** Raw attention scores q.k/sqrt(headDim) + the plugin's bias when every
   * position holds the same q and k (heads x headDim each, the attention's
   * width: dModel unless headDim is set; before rotation):
   * {data, shape: [heads, length, length]}. With RoPE a function of j - i
   * alone; with q = k = 0 (the default), ALiBi's bias matrix. */
  positionScores(probe) {
    const h = this.#handle(),
      rt = this.#rt,
      H = this.#config.heads;
    const C = H * (this.#config.headDim ?? this.#config.dModel / H); // the attention's width, what the core reads
    if (probe === null || typeof probe !== 'object') fail('BAD_ARGUMENT', `positionScores takes {q?, k?, length}, got ${describe(probe)}`);
    readOptions(probe, 'positionScores', 'positionScores(probe)');
    const length = own(probe, 'length');
    checkLength(length);
    const vec = (v, name) => {
      if (v === undefined) return new Float32Array(C);
      const f = toFloat32(v, `probe.${name}`, 'BAD_ARGUMENT');
      if (f.length !== C) fail('BAD_ARGUMENT', `probe.${name} must hold heads x headDim = ${C} numbers, got ${f.length}`);
      if (!f.every(Number.isFinite)) fail('BAD_ARGUMENT', `probe.${name} must be finite`);
      return f;
    };
    const qf = vec(own(probe, 'q'), 'q'),
      kf = vec(own(probe, 'k'), 'k');
    this.#handle();
    const p = rt.alloc(8 * C);
    try {
      rt.write(p, qf);
      rt.write(p + 4 * C, kf);
      rt.check(rt.x.sf_position_scores(h, p, p + 4 * C, length));
    } finally {
      rt.x.sf_dealloc(p);
    }
    return { data: rt.readF32(rt.x.sf_attentions(h), H * length * length), shape: [H, length, length] };
  }

  /** Copies of every weight, unpacked, row-major ([out, in] for Linear weights). */
  getWeights() {
    const h = this.#handle(),
      rt = this.#rt,
      x = rt.x;
    const out = {};
    for (let i = 0; i < x.sf_param_count(h); i++) {
      const n = x.sf_param_ndim(h, i) === 2 ? x.sf_param_dim(h, i, 0) * x.sf_param_dim(h, i, 1) : x.sf_param_dim(h, i, 0);
      const name = rt.cstr(x.sf_param_name(h, i));
      const p = rt.alloc(n * 4 || 4);
      try {
        rt.check(x.sf_param_read(h, i, p));
        out[name] = rt.readF32(p, n);
      } finally {
        x.sf_dealloc(p);
      }
    }
    return out;
  }

  /** Name and shape of every weight, in file order. */
  weightShapes() {
    const h = this.#handle(),
      x = this.#rt.x;
    const out = {};
    for (let i = 0; i < x.sf_param_count(h); i++) {
      const shape = x.sf_param_ndim(h, i) === 2 ? [x.sf_param_dim(h, i, 0), x.sf_param_dim(h, i, 1)] : [x.sf_param_dim(h, i, 0)];
      out[this.#rt.cstr(x.sf_param_name(h, i))] = shape;
    }
    return out;
  }

  /**
   * The same weights under changed config fields, {...config, ...changes}: a
   * position plugin swapped, removed or rescaled ({position: 'alibi'},
   * {position: 'rope', positionOptions: {scaling: ...}}), a norm's eps, ...
   * A plugin swapped in without its options gets its defaults; the tables of a
   * plugin swapped out are dropped, a new plugin's start at zero, every other
   * tensor keeps its values bit for bit (deriveEncoder). options: {dtype?,
   * threads?, wasm?}. A new Encoder (dispose both).
   */
  async withConfig(changes, options) {
    if (!this.#h) fail('DISPOSED', 'this encoder has been disposed');
    if (changes === null || typeof changes !== 'object' || Array.isArray(changes)) fail('BAD_ARGUMENT', 'withConfig takes an object of config fields');
    const o = readOptions(options, 'encoderWithConfig', 'withConfig: options');
    const before = this.#config,
      config = { ...before, ...changes };
    for (const [slot, opts] of [
      ['position', 'positionOptions'],
      ['relativeBias', 'relativeBiasOptions'],
    ]) {
      if (Object.hasOwn(changes, slot) && changes[slot] !== before[slot] && !Object.hasOwn(changes, opts)) delete config[opts];
    }
    return deriveEncoder(this, config, o);
  }

  /** The model file: safetensors, F32, config in __metadata__.config. */
  save() {
    const h = this.#handle();
    this.#rt.check(this.#rt.x.sf_save(h));
    return this.#rt.takeResult();
  }

  /** Frees the encoder's wasm memory. Idempotent; any later call throws DISPOSED. */
  dispose() {
    if (!this.#h) return;
    handles?.unregister(this);
    const h = this.#h;
    this.#h = 0;
    this.#rt.destroy(h); // after the pass that uses it, if one runs in the driver now
  }

  get disposed() {
    return !this.#h;
  }
}

if (typeof Symbol.dispose === 'symbol') Encoder.prototype[Symbol.dispose] = Encoder.prototype.dispose;
