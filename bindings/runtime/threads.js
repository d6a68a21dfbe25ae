// Wasm threads without Emscripten's glue: the threaded builds
// (dist/swapformer-mt.wasm, dist/swapformer-relaxed-mt.wasm) import a shared
// WebAssembly.Memory; this module decides whether threads can run here,
// creates that memory, and keeps a pool of workers (Web Workers in browsers,
// worker_threads in Node) that instantiate the same module on the same memory
// and sleep in core/pool.c's sf_thread_run between parallel regions.
//
// A pool belongs to one wasm instance. It starts with the instance's first
// encoder that asks for threads, grows when an encoder asks for more, and
// stops when the instance's last encoder is disposed (or collected). Node's
// workers are unref'd: a process with an undisposed encoder can still exit.

import { isNode, nodeBuiltin } from '../utils/platform.js';

/** Most threads an encoder gets: more rarely helps an encoder's matrix sizes. */
export const MAX_THREADS = 8;

// The threaded builds' memory, as build.sh links it (--initial-memory, --max-memory).
const INITIAL_PAGES = 32, MAXIMUM_PAGES = 32768;
const STACK_BYTES = 256 * 1024;

// A module with a shared memory and an atomic instruction: what an engine
// with wasm threads validates (memory.atomic.notify on a shared memory).
const THREADS_PROBE = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // header
  0x01, 0x04, 0x01, 0x60, 0x00, 0x00, // type: () -> ()
  0x03, 0x02, 0x01, 0x00, // one function
  0x05, 0x04, 0x01, 0x03, 0x01, 0x01, // memory: shared, min 1, max 1
  0x0a, 0x0d, 0x01, 0x0b, 0x00, 0x41, 0x00, 0x41, 0x00, 0xfe, 0x00, 0x02, 0x00, 0x1a, 0x0b, // (drop (memory.atomic.notify 0 0))
]);

let support;

/** Whether this runtime can run the threaded builds: {ok, reason}; reason says why not. */
export function threadSupport() {
  if (support) return support;
  const no = (reason) => (support = { ok: false, reason });
  if (typeof SharedArrayBuffer !== 'function') {
    return no(isNode ? 'this runtime has no SharedArrayBuffer'
      : 'SharedArrayBuffer is unavailable: the page is not cross-origin isolated (serve it with Cross-Origin-Opener-Policy: same-origin and Cross-Origin-Embedder-Policy: require-corp)');
  }
  if (!isNode && globalThis.crossOriginIsolated === false) {
    return no('the page is not cross-origin isolated (serve it with Cross-Origin-Opener-Policy: same-origin and Cross-Origin-Embedder-Policy: require-corp)');
  }
  if (!isNode && typeof Worker !== 'function') return no('this runtime has no Worker');
  try {
    if (!WebAssembly.validate(THREADS_PROBE)) return no('this WebAssembly engine has no threads (shared memory and atomics)');
    new WebAssembly.Memory({ initial: 1, maximum: 1, shared: true });
  } catch (e) {
    return no(`this WebAssembly engine cannot make a shared memory (${e.message})`);
  }
  return (support = { ok: true, reason: null });
}

/** The default thread count: the machine's cores (capped at MAX_THREADS) where threads can run, else 1. */
export async function defaultThreads() {
  if (!threadSupport().ok) return 1;
  let cores;
  if (isNode) {
    const os = await nodeBuiltin('node:os');
    cores = typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length;
  } else {
    cores = globalThis.navigator?.hardwareConcurrency ?? 1;
  }
  return Math.max(1, Math.min(MAX_THREADS, cores | 0));
}

/** The shared memory a threaded build imports. */
export const sharedMemory = () => new WebAssembly.Memory({ initial: INITIAL_PAGES, maximum: MAXIMUM_PAGES, shared: true });

/** Starts a worker running thread.js; resolves to {post(message), onMessage(fn), terminate()}. */
async function spawn() {
  if (isNode) {
    const { Worker } = await nodeBuiltin('node:worker_threads');
    // started from a string that imports thread.js: a worker inherits the process's
    // flags, and --input-type (node -e) would refuse a file as its entry point
    const w = new Worker(`import(${JSON.stringify(new URL('./thread.js', import.meta.url).href)})`, { eval: true });
    w.unref();
    return {
      ref: () => w.ref(),
      unref: () => w.unref(),
      post: (m) => w.postMessage(m),
      onMessage: (fn) => w.on('message', fn),
      onError: (fn) => w.on('error', fn),
      quiet: () => { w.removeAllListeners('message'); w.removeAllListeners('error'); }, // a listened port would keep Node alive
      terminate: () => w.terminate(),
    };
  }
  const w = new Worker(new URL('./thread.js', import.meta.url), { type: 'module' });
  const listeners = [];
  return {
    ref: () => {},
    unref: () => {},
    quiet: () => { for (const [type, fn] of listeners.splice(0)) w.removeEventListener(type, fn); },
    post: (m) => w.postMessage(m),
    onMessage: (fn) => { const l = (e) => fn(e.data); listeners.push(['message', l]); w.addEventListener('message', l); },
    onError: (fn) => { const l = (e) => fn(e.error ?? new Error(e.message)); listeners.push(['error', l]); w.addEventListener('error', l); },
    terminate: () => w.terminate(),
  };
}

/**
 * The pool of one wasm instance (rt: its Runtime, with rt.module, rt.memory,
 * rt.x). size() counts the calling thread: a pool of size n has n - 1 workers.
 */
// Node tears down unref'd workers at exit, which is slow while they sleep in a
// wasm wait: wake them first (an 'exit' listener runs synchronously).
const livePools = new Set();
let exitHook = false;
function hookExit() {
  if (exitHook || !isNode) return;
  exitHook = true;
  process.once('exit', () => { for (const pool of livePools) pool.stop(); });
}

export class Pool {
  #rt;
  #workers = [];
  #growing = null;

  constructor(rt) { this.#rt = rt; }

  size() { return this.#workers.length + 1; }

  /** At least n threads (n - 1 workers, checked in). */
  async ensure(n) {
    while (this.#growing) await this.#growing;
    if (n <= this.size()) return;
    this.#growing = this.#grow(n).finally(() => { this.#growing = null; });
    await this.#growing;
  }

  async #grow(n) {
    const x = this.#rt.x;
    x.sf_threads_stop(); // regions stop using the old workers while new ones start; all are restarted below
    await this.#drain();
    const want = n - 1, started = [];
    try {
      for (let id = 1; id <= want; id++) started.push(await this.#start(id));
    } catch (e) {
      for (const w of started) w.terminate();
      throw e;
    }
    this.#workers = started;
    livePools.add(this);
    hookExit();
    // every worker checked in (inside sf_thread_run) before regions may count on it
    for (let i = 0; x.sf_threads_arrived() < want; i++) {
      if (i > 20000) throw new Error('swapformer: the thread pool did not start');
      await new Promise((r) => setTimeout(r, 1));
    }
    x.sf_threads_start(want);
  }

  async #start(id, role = 'worker') {
    const rt = this.#rt, x = rt.x;
    const stack = rt.alloc(STACK_BYTES);
    const tlsSize = x.__tls_size?.value ?? 0, tlsAlign = x.__tls_align?.value ?? 1;
    const tls = tlsSize ? rt.alloc(tlsSize + tlsAlign) : 0;
    const w = await spawn();
    w.memory = [stack, tls];
    await new Promise((resolve, reject) => {
      w.onError(reject);
      w.onMessage((m) => {
        if (m === 'ready') resolve();
        else if (m?.error) reject(new Error(`swapformer thread ${id}: ${m.error}`));
      });
      w.post({ role, module: rt.module, memory: rt.memory, stack: (stack + STACK_BYTES) & ~15, tls: tls ? (tls + tlsAlign - 1) & -tlsAlign : 0, id });
    });
    w.quiet();
    return w;
  }

  /** Waits until every old worker has left sf_thread_run. */
  async #drain() {
    const x = this.#rt.x;
    for (let i = 0; x.sf_threads_arrived() > 0; i++) {
      if (i > 20000) break;
      await new Promise((r) => setTimeout(r, 1));
    }
    for (const w of this.#workers) {
      w.terminate();
      for (const p of w.memory) if (p) this.#rt.x.sf_dealloc(p);
    }
    this.#workers = [];
  }

  /**
   * Runs the wasm export fn(...args) in the driver, a worker that is not one
   * of the pool's: the calling thread stays free while the pool computes.
   * Resolves to its return value.
   */
  async call(fn, ...args) {
    if (!this.#driver) this.#driver = this.#start(0, 'driver');
    const d = await this.#driver;
    d.ref(); // Node: an awaited call must keep the process alive
    try {
      return await new Promise((resolve, reject) => {
        d.onMessage((m) => { d.quiet(); if (m?.error) reject(new Error(m.error)); else resolve(m.rc); });
        d.onError((e) => { d.quiet(); reject(e); });
        d.post({ fn, args });
      });
    } finally {
      d.unref();
    }
  }

  #driver = null;

  /** Stops every worker (the instance's last encoder is gone). */
  stop() {
    livePools.delete(this);
    if (this.#driver) {
      const rt = this.#rt;
      this.#driver.then((d) => { d.terminate(); for (const p of d.memory) if (p) rt.x.sf_dealloc(p); }, () => {});
      this.#driver = null;
    }
    if (!this.#workers.length) return;
    this.#rt.x.sf_threads_stop();
    const workers = this.#workers;
    this.#workers = [];
    // they leave sf_thread_run at once; terminate them once they have, and free their stacks
    const rt = this.#rt;
    setTimeout(() => {
      for (const w of workers) {
        w.terminate();
        for (const p of w.memory) if (p) rt.x.sf_dealloc(p);
      }
    }, 50);
  }
}
