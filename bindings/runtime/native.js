// The native backend: the same C core built for this machine as a Node-API
// addon (core/native/addon.c), with kernels at the CPU's own width (core/isa.c)
// and native threads. Reached only in Node, through a dynamic import of this
// file by runtime/encoder.js (backend.js decides): browser bundlers, browsers,
// Deno, Bun and Workers never load it, nor any .node file.
//
// The addon ships in the package as prebuilds/<platform>-<arch>/swapformer.node
// (glibc; linux-x64 and linux-arm64). It exports the core's C ABI under the
// wasm module's names; NativeRuntime gives it RuntimeBase's memory interface
// (copies in and out through the addon: JavaScript holds no view of native
// memory) and runs forwardAsync's passes on a libuv thread.

import { fail } from '../utils/errors.js';
import { nodeBuiltin } from '../utils/platform.js';
import { RuntimeBase, ABI_VERSION } from './runtime.js';

const POINTER_BYTES = 8; // the prebuilds are 64-bit: size_t is 8 bytes

class NativeRuntime extends RuntimeBase {
  constructor(addon, info, path) {
    super(addon, 'native');
    this.backend = 'native';
    this.isa = info.isa;
    this.lanes = info.lanes;
    this.q8Amax = info.q8Amax;
    this.variants = info.variants;
    this.path = path;
    this.maxAlloc = 2 ** 31; // until loadNative sets 3/4 of the machine's memory
    this.memoryName = "3/4 of this machine's memory (the native backend's limit on one allocation)";
    this.canOffload = true; // a pass on a libuv thread (napi_async_work)
    this.pool = null;
    this.threads = 1; // the pool's threads with the caller (it only grows)
  }

  write(ptr, view) {
    this.x.write(ptr, view);
  }
  loadChunk(loader, _buf, bytes) {
    this.check(this.x.load_chunk(loader, bytes)); // from the bytes themselves: no copy into the core's memory first
  }
  readBytes(ptr, n) {
    return new Uint8Array(this.x.read(ptr, n));
  }
  readF32(ptr, n) {
    return new Float32Array(this.x.read(ptr, n * 4));
  }
  readI32(ptr, n) {
    return new Int32Array(this.x.read(ptr, n * 4));
  }
  readSizes(ptr, n) {
    return Array.from(new BigUint64Array(this.x.read(ptr, n * POINTER_BYTES)), Number);
  }
  cstr(ptr) {
    return this.x.cstr(ptr);
  }
  memoryBytes() {
    return process.memoryUsage().rss; // the whole process: the core allocates from its heap
  }
  callOff(fn, h, ...args) {
    if (fn !== 'sf_forward') throw new Error(`native: no off-thread call ${fn}`);
    return this.x.sf_forward_async(h, ...args);
  }
  poolSize() {
    return this.threads;
  }
  /** The pool grown to n threads with the caller (native threads start in a millisecond). */
  ensureThreads(n) {
    if (n <= this.threads) return n;
    if (this.x.sf_threads_grow(n) !== 0) {
      this.threads = this.x.sf_threads_arrived() + 1;
      return Math.min(n, this.threads);
    }
    this.threads = n;
    return n;
  }
}

/** Which prebuild this process would load: the folder name, or why none. */
async function prebuildFolder() {
  const { platform, arch } = process;
  if (platform !== 'linux') return { reason: `no native build for ${platform}-${arch} in this package (linux-x64 and linux-arm64 only)` };
  if (arch !== 'x64' && arch !== 'arm64') return { reason: `no native build for linux-${arch} in this package (linux-x64 and linux-arm64 only)` };
  const report = typeof process.report?.getReport === 'function' ? process.report.getReport() : null;
  if (report && !report.header?.glibcVersionRuntime) return { reason: 'this Linux has no glibc (musl?): the native builds need glibc 2.17 or later' };
  return { folder: `${platform}-${arch}` };
}

/**
 * Loads the addon: {rt} on success, {attempts: [{path, error}]} when none loads.
 * isa: the kernels' variant to force (SWAPFORMER_ISA), or null for the best.
 */
export async function loadNative(isa, override) {
  const { fileURLToPath } = await nodeBuiltin('node:url');
  let paths;
  if (override)
    paths = [override]; // SWAPFORMER_NATIVE_PATH: a build of one's own (or, in tests, none)
  else {
    const { folder, reason } = await prebuildFolder();
    if (!folder) return { attempts: [{ path: null, error: reason }] };
    paths = [fileURLToPath(new URL(`../../prebuilds/${folder}/swapformer.node`, import.meta.url))];
  }
  const attempts = [];
  for (const path of paths) {
    let addon;
    try {
      const module = { exports: {} };
      process.dlopen(module, path); // what require does for a .node file, without a require here
      addon = module.exports;
    } catch (e) {
      attempts.push({
        path,
        error: /cannot open shared object file: No such file/.test(e.message) ? 'not found (a clone builds it with ./build.sh native)' : e.message,
      });
      continue;
    }
    if (typeof addon?.sf_abi_version !== 'function' || addon.sf_abi_version() !== ABI_VERSION) {
      attempts.push({ path, error: `its ABI is ${addon?.sf_abi_version?.()}, these bindings need ${ABI_VERSION}: a stale build` });
      continue;
    }
    let info;
    try {
      info = addon.init(isa ?? null);
    } catch {
      const list = addon.variants().map((v) => `${v.name}${v.supported ? '' : ' (not on this CPU)'}`);
      fail('BACKEND_UNAVAILABLE', `SWAPFORMER_ISA=${isa} is not a variant this CPU runs; this build has ${list.join(', ')}`);
    }
    // one allocation of the core at most 3/4 of the machine's memory: a hostile config or
    // file is OUT_OF_MEMORY, as in wasm, before the kernel's OOM killer would take the process
    const os = await nodeBuiltin('node:os');
    const limit = Math.floor((os.totalmem() * 3) / 4);
    addon.sf_set_alloc_limit(limit);
    const rt = new NativeRuntime(addon, info, path);
    rt.maxAlloc = limit; // the buffers the bindings allocate too
    return { rt };
  }
  return { attempts };
}

/** Physical cores where Linux says (core ids per package, within this process's CPUs), else the CPUs. */
export async function physicalCores() {
  const os = await nodeBuiltin('node:os');
  const cpus = typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length;
  try {
    const fs = await nodeBuiltin('node:fs');
    const cores = new Set();
    const online = fs.readdirSync('/sys/devices/system/cpu').filter((n) => /^cpu\d+$/.test(n));
    for (const n of online) {
      const base = `/sys/devices/system/cpu/${n}/topology`;
      const core = fs.readFileSync(`${base}/core_id`, 'utf8').trim(),
        pkg = fs.readFileSync(`${base}/physical_package_id`, 'utf8').trim();
      cores.add(`${pkg}:${core}`);
    }
    // hyperthreads share a core: one thread each; never more than the CPUs this process may use
    return Math.max(1, Math.min(cpus, cores.size || cpus, 64));
  } catch {
    return Math.max(1, Math.min(cpus, 64));
  }
}
