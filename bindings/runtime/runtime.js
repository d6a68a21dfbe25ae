// What every runtime is, whichever backend runs the C core: the lifecycle of
// its encoders (one job at a time, BUSY, dispose during a pass), its errors,
// and the copies in and out of the core's memory. Two implementations extend
// it: WasmRuntime (runtime/encoder.js: a wasm instance, views of its memory)
// and NativeRuntime (runtime/native.js: the Node-API addon, copies through it).
// Nothing above runtime/ knows which one runs.
//
// The memory interface, all the layers above the C ABI use:
//   alloc(bytes) -> ptr, x.sf_dealloc(ptr)      the core's allocator
//   write(ptr, view)                             copies a typed array in
//   readBytes / readF32 / readI32 (ptr, n)       copies n elements out
//   readSizes(ptr, n)                            n size_t values, as numbers
//   cstr(ptr)                                    a NUL-terminated string
//   memoryBytes()                                what the instance holds
//   offload(h, fn, args, collect, release)       fn(h, ...args) off this thread

import { SwapformerError, fail, CODES } from '../utils/errors.js';

/** The C ABI these bindings speak (core/api.c's SF_ABI_VERSION): the wasm's and the addon's must match. */
export const ABI_VERSION = 4;

const noop = () => {};
const utf8 = new TextEncoder();

export class RuntimeBase {
  constructor(x, build) {
    this.x = x;
    this.build = build;
    this.live = 0; // encoders not disposed (nor finalised)
    // The runtime's encoders share one memory, one pool and the core's last
    // error: the calls that wait (forwardAsync, embedAsync, creating an
    // encoder, growing the pool) run one at a time, in the order they were
    // made (exclusive); a sync call while a pass runs off this thread throws BUSY.
    this.queue = Promise.resolve();
    this.queued = 0; // exclusive jobs waiting or running
    this.running = 0; // the handle whose pass runs off this thread now, 0 for none
    this.afterPass = []; // what waits for that pass to end (an encoder disposed under it)
  }

  /** A pass runs off this thread: sync calls throw BUSY (async ones queue: exclusive). */
  assertIdle() {
    if (this.running)
      fail(
        'BUSY',
        'a forwardAsync or embedAsync pass is running on this runtime (its encoders share one memory and one thread pool): await it, or use the async methods, which wait their turn',
      );
  }

  /** Runs job() after every job queued before it on this runtime; resolves or rejects as job does. */
  exclusive(job) {
    this.queued++;
    const run = this.queue.then(job);
    this.queue = run.then(noop, noop).then(() => {
      this.queued--;
    });
    return run;
  }

  /**
   * Runs the export fn(h, ...args) for encoder handle h off this thread (this
   * thread stays free), inside an exclusive job; then, still before anything
   * else may touch the instance, collect() reads the results. Resolves to
   * collect's value.
   */
  async offload(h, fn, args, collect, release = noop) {
    this.running = h;
    try {
      const rc = await this.callOff(fn, h, ...args);
      return collect(rc);
    } finally {
      release();
      this.running = 0;
      for (const f of this.afterPass.splice(0)) f();
    }
  }

  /** Frees an encoder's handle now, or after the pass that uses it (a dispose() during forwardAsync). */
  destroy(h) {
    const free = () => {
      this.x.sf_destroy(h);
      this.released();
    };
    if (this.running === h) this.afterPass.push(free);
    else free();
  }

  /** An encoder of this runtime was disposed or collected. */
  released() {
    this.live--;
  }

  error(rc) {
    const code = CODES[rc] ?? 'INTERNAL';
    let message = this.cstr(this.x.sf_error_message());
    // A FinalizationRegistry cannot run while a loop never yields: say what holds the memory.
    if (code === 'OUT_OF_MEMORY' && this.live > 1) {
      message += ` (${this.live} encoders of this runtime are alive and hold ${Math.round(this.memoryBytes() / 2 ** 20)} MB: call dispose() on those you no longer need, or declare them with 'using')`;
    }
    return new SwapformerError(code, message);
  }
  check(rc) {
    if (rc !== 0) throw this.error(rc);
  }

  alloc(bytes) {
    if (!(bytes >= 0 && bytes < this.maxAlloc)) fail('OUT_OF_MEMORY', `out of memory: ${bytes} bytes do not fit in ${this.memoryName}`);
    const p = this.x.sf_alloc(bytes);
    if (!p) throw this.error(6);
    return p;
  }

  /** One chunk of a model file (bytes, a Uint8Array) to the loader; buf: a buffer of the core's memory that holds it. */
  loadChunk(loader, buf, bytes) {
    this.write(buf, bytes);
    this.check(this.x.sf_load_chunk(loader, buf, bytes.length));
  }

  // Runs fn(ptr, length) with bytes copied into the core's memory (NUL-terminated).
  withBytes(bytes, fn) {
    const p = this.alloc(bytes.length + 1);
    try {
      this.write(p, bytes);
      this.write(p + bytes.length, new Uint8Array(1));
      return fn(p, bytes.length);
    } finally {
      this.x.sf_dealloc(p);
    }
  }

  withString(s, fn) {
    return this.withBytes(utf8.encode(s), fn);
  }

  // Takes the result buffer (config JSON, saved file) out of the core's memory.
  takeResult() {
    const p = this.x.sf_result_ptr(),
      n = this.x.sf_result_len();
    const out = this.readBytes(p, n);
    this.x.sf_result_free();
    return out;
  }
}
