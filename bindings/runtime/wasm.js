// Finding, fetching and compiling swapformer's WebAssembly, and configure().
//
// Two builds ship in dist/: swapformer-relaxed.wasm (relaxed-SIMD fused
// multiply-add) where the engine validates a relaxed-SIMD instruction, else
// swapformer.wasm (SIMD128). They are found next to the bindings with
// new URL('../../dist/….wasm', import.meta.url), the pattern Vite, webpack and
// Parcel recognise (they copy the file and rewrite the URL); configure({wasmPaths})
// points elsewhere once (a CDN folder, the bundle's asset folder, or compiled
// modules in a Worker), and a call's own `wasm` option overrides both.
//
// Nothing here runs at import time that can throw: an IIFE bundle has no
// import.meta.url and a Worker has no file to fetch, and both only learn it
// (as a WASM_LOAD error naming the fix) when they first need the wasm.

import { SwapformerError, fail } from '../utils/errors.js';
import { isNode, nodeBuiltin } from '../utils/platform.js';

// ------------------------------------------------------------------ features

// Feature detection with two tiny modules: v128.const (SIMD128), and
// f32x4.relaxed_madd (relaxed SIMD; Chromium has it, Node 20 behind
// --experimental-wasm-relaxed-simd).
const probe = (body) =>
  new Uint8Array([
    0x00,
    0x61,
    0x73,
    0x6d,
    0x01,
    0x00,
    0x00,
    0x00,
    0x01,
    0x05,
    0x01,
    0x60,
    0x00,
    0x01,
    0x7b,
    0x03,
    0x02,
    0x01,
    0x00,
    0x0a,
    body.length + 2,
    0x01,
    body.length,
    ...body,
  ]);
const v128 = [0xfd, 0x0c, ...new Array(16).fill(0)];
const validates = (bytes) => {
  try {
    return typeof WebAssembly === 'object' && WebAssembly !== null && WebAssembly.validate(bytes) === true;
  } catch {
    return false;
  }
};

/** What this engine supports: SIMD128 is required; relaxed SIMD picks the faster build. */
export const features = Object.freeze({
  simd: validates(probe([0x00, ...v128, 0x0b])),
  relaxedSimd: validates(probe([0x00, ...v128, ...v128, ...v128, 0xfd, 0x85, 0x02, 0x0b])),
});

// ------------------------------------------------------------------ configure

const FILES = Object.freeze({ simd128: 'swapformer.wasm', 'relaxed-simd': 'swapformer-relaxed.wasm' });
// The threaded builds (shared memory, atomics: runtime/threads.js), beside them.
const FILES_MT = Object.freeze({ simd128: 'swapformer-mt.wasm', 'relaxed-simd': 'swapformer-relaxed-mt.wasm' });
const MT_KEYS = Object.freeze({ simd: 'simdThreads', relaxed: 'relaxedThreads' });
const BUILDS = ['auto', 'simd128', 'relaxed-simd'];
const BACKENDS = ['auto', 'native', 'wasm'];
const settings = { wasmPaths: undefined, build: 'auto', backend: undefined };

/** configure({ backend }) as set ('auto', 'native', 'wasm'), or undefined (then SWAPFORMER_BACKEND, else 'auto'). */
export const backendSetting = () => settings.backend;

const isBytes = (v) => v instanceof ArrayBuffer || ArrayBuffer.isView(v);
const isModule = (v) => typeof WebAssembly === 'object' && typeof WebAssembly.Module === 'function' && v instanceof WebAssembly.Module;
const isSource = (v) => typeof v === 'string' || v instanceof URL || isBytes(v) || isModule(v);
const own = (obj, key) => (Object.hasOwn(obj, key) ? obj[key] : undefined);
const shown = (v) =>
  typeof v === 'string' ? JSON.stringify(v.length > 60 ? `${v.slice(0, 60)}...` : v) : v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v;

/**
 * Which backend runs the core and where swapformer finds its wasm, set once for
 * the whole page or process:
 *   backend:   'auto' (default: in Node the native addon where it loads on this
 *              platform and CPU, else the wasm), 'native' (BACKEND_UNAVAILABLE
 *              where it cannot load, listing why) or 'wasm'; undefined restores the
 *              default, which the SWAPFORMER_BACKEND environment variable sets in Node.
 *   wasmPaths: a folder (string or URL) holding swapformer.wasm and
 *              swapformer-relaxed.wasm, or {simd, relaxed}: each a URL, the
 *              bytes or a compiled WebAssembly.Module (in a Worker: the
 *              imported .wasm modules); undefined restores the default (the
 *              files next to the bindings).
 *   build:     'auto' (default: relaxed SIMD where the engine has it and the
 *              build is available), 'simd128' or 'relaxed-simd'.
 * Only the options given change. Encoders made before keep their runtime; calls
 * after use the new setting. A call's `wasm` option still overrides it.
 */
export function configure(options) {
  if (options === null || typeof options !== 'object' || Array.isArray(options))
    fail('BAD_ARGUMENT', `configure takes an object, e.g. configure({ wasmPaths: '/assets/' }), got ${shown(options)}`);
  for (const key of Object.keys(options)) {
    if (key !== 'wasmPaths' && key !== 'build' && key !== 'backend')
      fail('BAD_ARGUMENT', `configure: unknown option '${key}' (known: backend, wasmPaths, build)`);
  }
  const next = { ...settings };
  if (Object.hasOwn(options, 'wasmPaths')) {
    const paths = options.wasmPaths;
    if (paths === undefined || paths === null) next.wasmPaths = undefined;
    else if (typeof paths === 'string' || paths instanceof URL) {
      if (String(paths) === '')
        fail('BAD_ARGUMENT', "configure: wasmPaths is an empty string (use a folder URL such as '/assets/', or undefined for the default)");
      next.wasmPaths = paths instanceof URL ? new URL(paths.href) : paths;
    } else if (typeof paths === 'object' && !Array.isArray(paths) && !isSource(paths)) {
      for (const key of Object.keys(paths)) {
        if (!['simd', 'relaxed', 'simdThreads', 'relaxedThreads'].includes(key)) {
          fail('BAD_ARGUMENT', `configure: wasmPaths.${key} is not a build (known: simd, relaxed, simdThreads, relaxedThreads)`);
        }
      }
      const simd = own(paths, 'simd'),
        relaxed = own(paths, 'relaxed');
      const simdThreads = own(paths, 'simdThreads'),
        relaxedThreads = own(paths, 'relaxedThreads');
      if (simd === undefined && relaxed === undefined)
        fail('BAD_ARGUMENT', 'configure: wasmPaths names no build: give { simd } and, for the faster build, { relaxed }');
      for (const [key, v] of [
        ['simd', simd],
        ['relaxed', relaxed],
        ['simdThreads', simdThreads],
        ['relaxedThreads', relaxedThreads],
      ]) {
        if (v !== undefined && !isSource(v))
          fail('BAD_ARGUMENT', `configure: wasmPaths.${key} must be a URL, a string, bytes or a WebAssembly.Module, got ${shown(v)}`);
      }
      next.wasmPaths = Object.freeze({ simd, relaxed, simdThreads, relaxedThreads });
    } else {
      fail('BAD_ARGUMENT', `configure: wasmPaths must be a folder URL (string or URL) or { simd, relaxed }, got ${shown(paths)}`);
    }
  }
  if (Object.hasOwn(options, 'backend')) {
    const backend = options.backend;
    if (backend !== undefined && !BACKENDS.includes(backend))
      fail('BAD_ARGUMENT', `configure: backend must be one of ${BACKENDS.map((b) => `'${b}'`).join(', ')}, got ${shown(backend)}`);
    next.backend = backend;
  }
  if (Object.hasOwn(options, 'build')) {
    const build = options.build ?? 'auto';
    if (!BUILDS.includes(build)) fail('BAD_ARGUMENT', `configure: build must be one of ${BUILDS.map((b) => `'${b}'`).join(', ')}, got ${shown(build)}`);
    next.build = build;
  }
  const p = next.wasmPaths;
  if (p && typeof p === 'object' && !(p instanceof URL)) {
    if (next.build === 'simd128' && p.simd === undefined) fail('BAD_ARGUMENT', "configure: build 'simd128' needs wasmPaths.simd");
    if (next.build === 'relaxed-simd' && p.relaxed === undefined) fail('BAD_ARGUMENT', "configure: build 'relaxed-simd' needs wasmPaths.relaxed");
  }
  Object.assign(settings, next);
}

// ------------------------------------------------------------------ errors

const SERVE_FIX =
  "serve swapformer's dist/swapformer.wasm and dist/swapformer-relaxed.wasm (and, for threads, dist/swapformer-mt.wasm and dist/swapformer-relaxed-mt.wasm) (as application/wasm) and point to their folder once with configure({ wasmPaths: 'https://.../folder/' }), or pass them as configure({ wasmPaths: { simd, relaxed } }) (URLs, bytes or compiled WebAssembly.Modules: in a Cloudflare Worker, the imported .wasm modules); see docs/deployment.md";

/** A WASM_LOAD error: what was loaded from where, why it failed, and the fix. */
function wasmLoad(where, reason, fix, cause) {
  const e = new SwapformerError('WASM_LOAD', `cannot load swapformer's WebAssembly ${where}: ${reason}. Fix: ${fix}`);
  if (cause !== undefined) Object.defineProperty(e, 'cause', { value: cause, writable: true, configurable: true });
  return e;
}

/** Why an engine refused to compile or instantiate, and what to do about it. */
function explain(e, contentType) {
  const reason = String(e?.message ?? e);
  if (/content.security.policy|unsafe-eval|wasm-eval/i.test(reason)) {
    return [
      `the page's Content-Security-Policy does not allow WebAssembly (${reason})`,
      "add 'wasm-unsafe-eval' to the policy's script-src (Content-Security-Policy: script-src 'self' 'wasm-unsafe-eval')",
    ];
  }
  if (/code generation|disallowed by embedder/i.test(reason)) {
    return [
      `this runtime compiles no WebAssembly from bytes (${reason})`,
      "import the .wasm files as modules (Cloudflare Workers: import simd from 'swapformer/swapformer.wasm') and pass them once with configure({ wasmPaths: { simd, relaxed } })",
    ];
  }
  if (/^text\/html/i.test(contentType ?? '')) {
    return [
      `the server answered with an HTML page (Content-Type ${contentType}), not the wasm: a missing file answered by an index.html fallback? (${reason})`,
      SERVE_FIX,
    ];
  }
  return [`${reason}${contentType && !/^application\/wasm/i.test(contentType) ? ` (served as ${contentType}; expected application/wasm)` : ''}`, SERVE_FIX];
}

// ------------------------------------------------------------------ loading

/**
 * What a call without a `wasm` option runs: {build, source, where}. Throws
 * WASM_LOAD / UNSUPPORTED. threaded: the threaded build's source, or null
 * when configure({wasmPaths: {...}}) names none.
 */
function configuredSource(threaded = false) {
  const paths = settings.wasmPaths;
  const listed = paths && typeof paths === 'object' && !(paths instanceof URL) ? paths : null;
  let build = settings.build;
  if (build === 'auto') build = features.relaxedSimd && (!listed || listed.relaxed !== undefined) ? 'relaxed-simd' : 'simd128';
  if (build === 'relaxed-simd' && !features.relaxedSimd) {
    fail(
      'UNSUPPORTED',
      listed && listed.simd === undefined
        ? 'configure({ wasmPaths }) gives only the relaxed build, and this engine has no relaxed SIMD: add wasmPaths.simd'
        : "configure({ build: 'relaxed-simd' }), but this engine has no relaxed SIMD: use build 'auto' or 'simd128'",
    );
  }
  if (listed) {
    const key = build === 'relaxed-simd' ? 'relaxed' : 'simd';
    const source = threaded ? listed[MT_KEYS[key]] : listed[key];
    if (source === undefined) return null; // threaded only: no such build configured
    return { build, source, where: `(${build}${threaded ? ', threads' : ''}, from configure({ wasmPaths }))` };
  }
  if (paths !== undefined) {
    let url;
    try {
      const folder = String(paths).endsWith('/') ? String(paths) : `${paths}/`;
      url = new URL((threaded ? FILES_MT : FILES)[build], new URL(folder, baseUrl()));
    } catch (e) {
      throw wasmLoad(`(${build})`, `configure({ wasmPaths: ${shown(String(paths))} }) is not a folder URL (${e.message})`, SERVE_FIX, e);
    }
    return { build, source: url, where: `${url.href} (${build}${threaded ? ', threads' : ''}, from configure({ wasmPaths }))` };
  }
  let url;
  try {
    // each URL written out whole, as bundlers recognise the pattern
    if (threaded) {
      url =
        build === 'relaxed-simd'
          ? new URL('../../dist/swapformer-relaxed-mt.wasm', import.meta.url)
          : new URL('../../dist/swapformer-mt.wasm', import.meta.url);
    } else {
      url = build === 'relaxed-simd' ? new URL('../../dist/swapformer-relaxed.wasm', import.meta.url) : new URL('../../dist/swapformer.wasm', import.meta.url);
    }
  } catch (e) {
    throw wasmLoad(
      `(${build})`,
      `the bindings cannot tell where they are: this code has no usable import.meta.url (an IIFE or CommonJS bundle, or a Worker's) (${e.message})`,
      SERVE_FIX,
      e,
    );
  }
  return { build, source: url, where: `${url.href} (${build}${threaded ? ', threads' : ''}, the file next to the bindings)` };
}

/** The base a relative string is resolved against: the page (or worker), else the working directory. */
function baseUrl() {
  const href = globalThis.location?.href;
  if (typeof href === 'string' && href) return href;
  if (isNode && typeof process.cwd === 'function') return `file://${process.cwd().replace(/\/?$/, '/')}`;
  return undefined;
}

async function compileBytes(bytes, where, contentType) {
  try {
    return await WebAssembly.compile(bytes);
  } catch (e) {
    const [reason, fix] = explain(e, contentType);
    throw wasmLoad(where, reason, fix, e);
  }
}

/** A compiled module from a source: a Module as is, bytes compiled, a URL read or fetched. */
async function compileSource(source, where) {
  if (isModule(source)) return source;
  if (isBytes(source)) return compileBytes(source, where);
  let url;
  try {
    url = source instanceof URL ? source : new URL(source, baseUrl());
  } catch (e) {
    throw wasmLoad(where, `${shown(source)} is not a URL`, SERVE_FIX, e);
  }
  if (url.protocol === 'file:') {
    if (!isNode) {
      throw wasmLoad(
        where,
        `${url.href} is a file: URL, which only Node can read (no import.meta.url of a web page or a Worker's bundle?)`,
        `${SERVE_FIX}; in a Worker, import the .wasm files as modules and pass them as { simd, relaxed }`,
      );
    }
    let bytes;
    try {
      bytes = await (await nodeBuiltin('node:fs/promises')).readFile(url);
    } catch (e) {
      throw wasmLoad(
        where,
        `reading ${decodeURIComponent(url.pathname)} failed: ${e.code ?? e.message}`,
        "build the wasm (./build.sh) or reinstall the package, or point to the files with configure({ wasmPaths: '/path/to/folder/' })",
        e,
      );
    }
    return compileBytes(bytes, where);
  }
  let response;
  try {
    response = await fetch(url);
  } catch (e) {
    throw wasmLoad(
      where,
      `the request failed (${e.message}): offline, a CORS refusal, or a Content-Security-Policy connect-src that does not allow ${url.origin}`,
      SERVE_FIX,
      e,
    );
  }
  if (!response.ok) throw wasmLoad(where, `HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''}`, SERVE_FIX);
  const type = response.headers.get('content-type') || '';
  if (typeof WebAssembly.compileStreaming === 'function' && /^application\/wasm/i.test(type)) {
    try {
      return await WebAssembly.compileStreaming(response);
    } catch (e) {
      const [reason, fix] = explain(e, type);
      throw wasmLoad(where, reason, fix, e);
    }
  }
  let bytes;
  try {
    bytes = await response.arrayBuffer();
  } catch (e) {
    throw wasmLoad(where, `reading the response failed (${e.message})`, SERVE_FIX, e);
  }
  return compileBytes(bytes, where, type);
}

// wasm source -> Promise of what create(instance, build) returns: URLs by
// their text, bytes and Modules by identity (weakly, so an instance lives only
// as long as its source does), separately per build label.
const caches = new Map();
function cacheFor(build) {
  let c = caches.get(build);
  if (!c) caches.set(build, (c = { byUrl: new Map(), byObject: new WeakMap() }));
  return c;
}

/**
 * The runtime for a call: its `wasm` option if given (build 'custom'), else
 * the configured or default build. create(instance, build, where) runs once
 * per instance (and may throw a SwapformerError, e.g. for a wrong ABI).
 */
export function loadRuntime(wasmOption, create, { threaded = false, memory } = {}) {
  if (!features.simd) {
    return Promise.reject(
      new SwapformerError(
        'UNSUPPORTED',
        'this WebAssembly engine has no SIMD (wasm simd128): swapformer needs Chrome 91+, Firefox 89+, Safari 16.4+ or Node 16.4+',
      ),
    );
  }
  let build, source, where;
  try {
    if (wasmOption !== undefined) {
      if (!isSource(wasmOption)) fail('BAD_ARGUMENT', `options.wasm must be a URL, a string, bytes or a WebAssembly.Module, got ${shown(wasmOption)}`);
      build = 'custom';
      source = wasmOption;
      where = `from options.wasm (${wasmOption instanceof URL ? wasmOption.href : typeof wasmOption === 'string' ? wasmOption : isModule(wasmOption) ? 'a WebAssembly.Module' : 'bytes'})`;
    } else {
      const found = configuredSource(threaded);
      if (!found) return Promise.resolve(null); // no threaded build configured: the caller uses the other
      ({ build, source, where } = found);
    }
  } catch (e) {
    return Promise.reject(e);
  }
  const key = source instanceof URL ? source.href : source;
  const cache = cacheFor(threaded ? `${build}+threads` : build);
  const map = typeof key === 'object' ? cache.byObject : cache.byUrl;
  let rt = map.get(key);
  if (!rt) {
    rt = compileSource(source, where).then(async (module) => {
      let instance, shared;
      try {
        shared = threaded ? memory() : undefined; // the threaded builds import their (shared) memory
        instance = await WebAssembly.instantiate(module, threaded ? { env: { memory: shared } } : {});
      } catch (e) {
        const [reason, fix] = explain(e);
        throw wasmLoad(where, `instantiating failed: ${reason}`, fix, e);
      }
      return create(instance, build, where, threaded ? { module, memory: shared } : undefined);
    });
    rt.catch(() => map.delete(key));
    map.set(key, rt);
  }
  return rt;
}

/** A WASM_LOAD error for a runtime whose exports are not what the bindings need. */
export const wrongWasm = (where, reason) =>
  wasmLoad(where, reason, 'use the dist/*.wasm of the same swapformer version as the bindings (an old copy in a CDN or asset folder?)');
