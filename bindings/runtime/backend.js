// Which backend runs the core: the native addon (runtime/native.js) or the wasm
// (runtime/wasm.js). configure({ backend }) wins, then SWAPFORMER_BACKEND (Node),
// then 'auto': native in Node where the prebuild loads and the CPU passes, else
// the wasm, with the reason kept for runtimeInfo(). 'native' never falls back:
// BACKEND_UNAVAILABLE lists each attempt. Deno, Bun and workerd present
// themselves as Node but run the wasm under 'auto' (their Node-API is partial).
// SWAPFORMER_ISA (tests) forces a lower variant of the native kernels;
// SWAPFORMER_NATIVE_PATH loads the addon from another path (a build of one's own).

import { fail } from '../utils/errors.js';
import { isNode } from '../utils/platform.js';
import { backendSetting } from './wasm.js';

const BACKENDS = ['auto', 'native', 'wasm'];

/** The backend asked for and who asked: {value, from}. */
function chosen() {
  const set = backendSetting();
  if (set !== undefined) return { value: set, from: `configure({ backend: '${set}' })` };
  const env = isNode ? process.env.SWAPFORMER_BACKEND : undefined;
  if (env !== undefined && env !== '') {
    if (!BACKENDS.includes(env)) fail('BAD_ARGUMENT', `SWAPFORMER_BACKEND=${JSON.stringify(env)}: must be one of ${BACKENDS.join(', ')}`);
    return { value: env, from: `SWAPFORMER_BACKEND=${env}` };
  }
  return { value: 'auto', from: 'auto' };
}

/** Why this runtime is not Node proper, or null. */
function notNode() {
  if (!isNode) return 'not Node (browsers, Workers and Deno run the wasm)';
  if (typeof globalThis.Deno === 'object') return 'Deno runs the wasm (its Node-API support is partial)';
  if (typeof process.versions.bun === 'string') return 'Bun runs the wasm (its Node-API support is partial)';
  return null;
}

let loading = null; // Promise of loadNative's answer, once per process (or Worker)

/** runtime/native.js, by a computed specifier: bundlers neither follow it nor copy it as an asset. */
async function importNative() {
  const file = './native.js';
  return import(/* webpackIgnore: true */ /* @vite-ignore */ new URL(file, import.meta.url).href);
}

/**
 * The native runtime, or why not: {rt} or {rt: null, reason}. Throws
 * BACKEND_UNAVAILABLE when 'native' was asked for and cannot run, or when
 * SWAPFORMER_ISA names a variant this CPU lacks.
 */
export async function nativeRuntime() {
  const why = notNode(); // first: Deno asks for a permission to read the environment
  if (why) {
    if (backendSetting() === 'native') fail('BACKEND_UNAVAILABLE', `configure({ backend: 'native' }): the native backend needs Node: ${why}`);
    return { rt: null, reason: why };
  }
  const { value, from } = chosen();
  if (value === 'wasm') return { rt: null, reason: `${from} chose the wasm` };
  loading ??= importNative().then(
    (m) => m.loadNative(process.env.SWAPFORMER_ISA || null, process.env.SWAPFORMER_NATIVE_PATH || null),
    (e) => ({ attempts: [{ path: 'bindings/runtime/native.js', error: `the loader is not there (${e.message}): a bundle of the bindings?` }] }),
  );
  const r = await loading;
  if (r.rt) return r;
  const list = r.attempts.map((a) => (a.path ? `${a.path}: ${a.error}` : a.error)).join('; ');
  if (value === 'native') fail('BACKEND_UNAVAILABLE', `${from}, but the native addon does not load here: ${list}`);
  return { rt: null, reason: `the native addon does not load here: ${list}` };
}

/** Physical cores (native's default thread count). */
export async function nativeDefaultThreads() {
  return (await importNative()).physicalCores();
}
