// The benchmark's set-up: the machine's description, the builds it measures
// besides dist/ (bench/peak.c, bench/gemm.c, the relaxed build with its name
// section), the model files and their ONNX exports in bench/.cache/ (written
// only when missing or outdated), and the sizes of the shipped files.
import { readFileSync, readdirSync, writeFileSync, existsSync, statSync, mkdirSync, rmSync, copyFileSync } from 'node:fs';
import { spawnSync, execFileSync } from 'node:child_process';
import { gzipSync } from 'node:zlib';
import { join } from 'node:path';
import os from 'node:os';
import * as H from './harness.js';
import {
  ROOT,
  BENCH,
  CACHE,
  PYTHON,
  ORT_DIR,
  ORT_WASM,
  DIST,
  SNAP,
  SNAP_DIR,
  DIST_NAME,
  ORT_CASES,
  GRAPHS,
  MATRIX_SHAPE,
  MATRIX_GRAPHS,
  log,
  rel,
  mtime,
  sha,
  modelPath,
  onnxPath,
} from './context.js';

export function machine() {
  const info = readFileSync('/proc/cpuinfo', 'utf8'),
    field = (k) => (info.match(new RegExp(`^${k}\\s*:\\s*(.*)$`, 'm')) ?? [])[1];
  const flags = ` ${field('flags') ?? ''} `;
  const cpu =
    `${field('model name') ?? os.cpus()[0]?.model} (family ${field('cpu family')}, model ${field('model')}` +
    `${field('cpu MHz') ? `, ${Math.round(+field('cpu MHz'))} MHz` : ''}; AVX2 ${flags.includes(' avx2 ') ? 'yes' : 'no'}, FMA ${flags.includes(' fma ') ? 'yes' : 'no'})`;
  const osName = existsSync('/etc/os-release') ? (readFileSync('/etc/os-release', 'utf8').match(/PRETTY_NAME="?([^"\n]*)/) ?? [])[1] : os.platform();
  let git = '';
  try {
    git = execFileSync('git', ['-C', ROOT, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['-C', ROOT, 'status', '--porcelain', '--', 'core', 'plugins', 'bindings'], { encoding: 'utf8' }).trim();
    if (dirty) git += ' + uncommitted changes in core/plugins/bindings';
  } catch {
    /* not a checkout */
  }
  const version = (p) => {
    try {
      return JSON.parse(readFileSync(join(ROOT, 'node_modules', p, 'package.json'), 'utf8')).version;
    } catch {
      return 'not installed';
    }
  };
  return {
    date: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    cpu,
    cores: os.cpus().length,
    memory: `${Math.round(os.totalmem() / 2 ** 30)} GB`,
    os: `${osName} (${os.release()})`,
    node: process.version,
    v8: process.versions.v8,
    nodeFlags: process.execArgv.join(' ') || '(none)',
    ort: version('onnxruntime-web'),
    playwright: version('playwright-core'),
    git,
    torch: (spawnSync(PYTHON, ['-c', 'import torch; print(torch.__version__)'], { encoding: 'utf8' }).stdout || 'not found').trim(),
  };
}

export function buildPeak() {
  const src = join(BENCH, 'peak.c');
  for (const [name, flags] of [
    ['peak', []],
    ['peak-relaxed', ['-mrelaxed-simd', '-DRELAXED']],
  ]) {
    const out = join(CACHE, `${name}.wasm`),
      obj = join(CACHE, `${name}.o`);
    if (mtime(out) > mtime(src)) continue;
    log(`build: ${rel(out)} (clang-16 + wasm-ld-16)`);
    execFileSync('clang-16', ['--target=wasm32', '-O3', '-msimd128', ...flags, '-c', src, '-o', obj], { stdio: 'inherit' });
    execFileSync('wasm-ld-16', ['--no-entry', '--export-dynamic', obj, '-o', out], { stdio: 'inherit' });
  }
}

// The clang-16 + wasm-ld-16 builds link against emscripten's sysroot, as build.sh's clang16_build does.
const SYSROOT = '/usr/share/emscripten/cache/sysroot';
const EMSCRIPTEN_LINK = [
  `${SYSROOT}/lib/wasm32-emscripten/crt1_reactor.o`,
  `-L${SYSROOT}/lib/wasm32-emscripten`,
  '-lstandalonewasm-memgrow',
  '-lstubs',
  '-lnoexit',
  '-lc',
  '-lemmalloc',
  '-lcompiler_rt',
];

// bench/gemm.c with core/kernels.c, built as the shipped wasm files are.
export function buildGemm() {
  const srcs = [join(BENCH, 'gemm.c'), join(ROOT, 'core', 'kernels.c'), join(ROOT, 'core', 'error.c')];
  const newest = Math.max(...srcs.map(mtime), mtime(join(ROOT, 'core', 'kernels.h')), mtime(join(ROOT, 'core', 'simd.h')));
  const simd = join(CACHE, 'gemm.wasm'),
    relaxed = join(CACHE, 'gemm-relaxed.wasm');
  if (mtime(simd) < newest) {
    log(`build: ${rel(simd)} (emcc, as dist/swapformer.wasm)`);
    execFileSync(
      'emcc',
      ['-O3', '-msimd128', '-std=c11', '-sSTANDALONE_WASM', '--no-entry', '-sALLOW_MEMORY_GROWTH', '-sMALLOC=emmalloc', ...srcs, '-o', simd],
      { stdio: 'inherit', env: { ...process.env, NODE_PATH: `${process.env.NODE_PATH ?? ''}:/usr/share/nodejs` } },
    );
  }
  if (mtime(relaxed) < newest) {
    log(`build: ${rel(relaxed)} (clang-16 + wasm-ld-16, as dist/swapformer-relaxed.wasm)`);
    const objs = srcs.map((f, i) => {
      const o = join(CACHE, `gemm-${i}.o`);
      execFileSync(
        'clang-16',
        ['--target=wasm32-unknown-emscripten', `--sysroot=${SYSROOT}`, '-O3', '-std=c11', '-msimd128', '-mrelaxed-simd', '-c', f, '-o', o],
        { stdio: 'inherit' },
      );
      return o;
    });
    execFileSync('wasm-ld-16', ['-o', relaxed, ...objs, ...EMSCRIPTEN_LINK, '--gc-sections', '--entry=_initialize', '--max-memory=2147483648'], {
      stdio: 'inherit',
    });
  }
}

/**
 * dist/swapformer-relaxed.wasm as build.sh builds it (clang16_build: the same sources,
 * flags and link) but with its name section kept (no --strip-all), for the CPU profile:
 * V8 names wasm functions from it. Resolves to {file, sameCode}: sameCode, whether its
 * code section is byte for byte the shipped build's (the copy this run measures).
 */
export function buildNamed() {
  const out = join(CACHE, 'swapformer-relaxed-named.wasm'),
    dirs = ['core', 'plugins/position', 'plugins/norm'];
  const files = dirs.flatMap((d) => readdirSync(join(ROOT, d)).map((f) => `${d}/${f}`));
  const srcs = files.filter((f) => f.endsWith('.c')).sort();
  if (mtime(out) < Math.max(...[...files, 'build.sh', 'bench/setup.js'].map((f) => mtime(join(ROOT, f))))) {
    log(`build: ${rel(out)} (build.sh's relaxed build, name section kept)`);
    const obj = join(CACHE, 'named');
    rmSync(obj, { recursive: true, force: true });
    mkdirSync(obj, { recursive: true });
    const buildSh = readFileSync(join(ROOT, 'build.sh'), 'utf8');
    const HOT = new RegExp(buildSh.match(/^HOT='([^']*)'/m)[1]),
      HOT_OPT = buildSh.match(/^HOT_OPT=(\S+)/m)[1]; // build.sh's LTO files and their -O
    const objs = srcs.map((f) => {
      const o = join(obj, `${f.replace(/\//g, '_')}.o`);
      execFileSync(
        'clang-16',
        [
          '--target=wasm32-unknown-emscripten',
          `--sysroot=${SYSROOT}`,
          ...(HOT.test(f) ? [HOT_OPT, '-flto'] : ['-Os']),
          '-std=c11',
          '-msimd128',
          '-mbulk-memory',
          '-mrelaxed-simd',
          '-c',
          join(ROOT, f),
          '-o',
          o,
        ],
        { stdio: 'inherit' },
      );
      return o;
    });
    execFileSync(
      'wasm-ld-16',
      [
        '-o',
        out,
        ...objs,
        ...EMSCRIPTEN_LINK,
        '--lto-O3',
        '--gc-sections',
        '--entry=_initialize',
        '-z',
        'stack-size=262144',
        '--initial-memory=2097152',
        '--max-memory=2147483648',
        '--global-base=1024',
      ],
      { stdio: 'inherit' },
    );
  }
  const code = (f) => wasmSection(readFileSync(f), 10);
  const a = code(out),
    b = existsSync(SNAP.relaxed) ? code(SNAP.relaxed) : null;
  return { file: out, sameCode: !!b && a.equals(b) };
}

/** The bytes of a wasm module's section `id` (10: code). */
function wasmSection(bytes, id) {
  let i = 8;
  const leb = () => {
    let r = 0,
      sh = 0,
      x;
    do {
      x = bytes[i++];
      r += (x & 127) * 2 ** sh;
      sh += 7;
    } while (x & 128);
    return r;
  };
  while (i < bytes.length) {
    const sid = bytes[i++],
      n = leb();
    if (sid === id) return bytes.subarray(i, i + n);
    i += n;
  }
  return Buffer.alloc(0);
}

export async function relaxedAvailable() {
  try {
    await WebAssembly.compile(readFileSync(join(CACHE, 'peak-relaxed.wasm')));
    return true;
  } catch {
    return false;
  }
}

/** The model file of a shape, written when missing or made with another config/seed. */
export async function ensureModel(shape, sf, wasm) {
  const path = modelPath(shape),
    keyPath = `${path}.key`;
  const source = shape === 'MiniLM-L6 modern ALiBi' ? 'MiniLM-L6 modern' : shape;
  const key = JSON.stringify({ cfg: H.SHAPES[shape], seed: H.SEEDS[source], perturb: 1 });
  if (existsSync(path) && existsSync(keyPath) && readFileSync(keyPath, 'utf8') === key) return path;
  log(`model: ${rel(path)}`);
  let weights;
  if (source !== shape) {
    // the same weights as the RoPE variant: only the position plugin differs
    const src = await sf.loadModel(readFileSync(await ensureModel(source, sf, wasm)), { wasm });
    weights = src.getWeights();
    src.dispose();
  } else {
    const init = await sf.createEncoder(H.SHAPES[shape], { seed: H.SEEDS[shape], wasm });
    weights = H.perturb(init.getWeights(), H.SEEDS[shape]);
    init.dispose();
  }
  const enc = await sf.createEncoder(H.SHAPES[shape], { weights, wasm });
  writeFileSync(path, enc.save());
  enc.dispose();
  writeFileSync(keyPath, key);
  return path;
}

/** The ONNX export of a model file, redone when the model or the exporter changed. */
export function ensureOnnx(shape, graph) {
  const model = modelPath(shape),
    out = onnxPath(shape, graph),
    keyPath = `${out}.key`;
  const script = join(BENCH, 'export_onnx.py');
  const key = `${statSync(model).size}:${mtime(model)}:${sha(readFileSync(script))}:${graph}`;
  if (existsSync(out) && existsSync(keyPath) && readFileSync(keyPath, 'utf8') === key) return out;
  log(`onnx: ${rel(out)} (${rel(script)} with ${PYTHON})`);
  const r = spawnSync(PYTHON, [script, model, out, '--graph', graph], { stdio: ['ignore', 'inherit', 'pipe'], encoding: 'utf8' });
  if (r.status !== 0) {
    throw new Error(
      `export_onnx.py failed (${PYTHON} needs PyTorch and, for the q8 graphs, onnx: apt-get install python3-torch python3-onnx):\n${(r.stderr || '')
        .split('\n')
        .filter((l) => !/warn/i.test(l))
        .slice(-8)
        .join('\n')}`,
    );
  }
  writeFileSync(keyPath, key);
  return out;
}

export function sizes(relaxedBuilt) {
  const row = (what, file) => {
    if (!existsSync(file)) return { what, file: rel(file), missing: true };
    const b = readFileSync(file);
    return { what, file: rel(file).replace('bench/.cache/dist/', 'dist/'), raw: b.length, gzip: gzipSync(b, { level: 9 }).length };
  };
  const rows = [row('swapformer wasm (SIMD)', SNAP.plain)];
  rows.push(
    relaxedBuilt
      ? row('swapformer wasm (relaxed SIMD)', SNAP.relaxed)
      : { what: 'swapformer wasm (relaxed SIMD)', file: 'dist/swapformer-relaxed.wasm', missing: true },
  );
  for (const [k, what] of [
    ['plainMt', 'swapformer wasm (SIMD, threads)'],
    ['relaxedMt', 'swapformer wasm (relaxed SIMD, threads)'],
  ]) {
    rows.push(existsSync(SNAP[k]) ? row(what, SNAP[k]) : { what, file: DIST_NAME[k], missing: true });
  }
  rows.push(row('onnxruntime-web wasm', ORT_WASM));
  rows.push(row('swapformer JS (bindings/index.js)', join(ROOT, 'bindings', 'index.js')));
  const ortJs = [join(ORT_DIR, 'dist', 'ort.wasm.min.mjs'), join(ORT_DIR, 'dist', 'ort-wasm-simd-threaded.mjs')];
  const js = ortJs.map((f) => readFileSync(f));
  rows.push({
    what: 'onnxruntime-web JS (ort.wasm.min.mjs + ort-wasm-simd-threaded.mjs)',
    file: ortJs.map(rel).join(' + '),
    raw: js.reduce((s, b) => s + b.length, 0),
    gzip: js.reduce((s, b) => s + gzipSync(b, { level: 9 }).length, 0),
  });
  return rows;
}

/**
 * The copies of dist/ this run measures, the peak and gemm builds, the swapformer
 * builds compiled ({plainModule, builds, relaxedOn, relaxedBuilt, named}) and every
 * model file and ONNX export the groups read.
 */
export async function prepare(opts, sf) {
  mkdirSync(SNAP_DIR, { recursive: true });
  for (const [k, f] of Object.entries(DIST)) {
    if (existsSync(f)) copyFileSync(f, SNAP[k]);
    else rmSync(SNAP[k], { force: true });
  }
  buildPeak();
  buildGemm();
  const relaxedOn = await relaxedAvailable();
  const relaxedBuilt = existsSync(DIST.relaxed);
  if (!relaxedOn) log('note: this Node has no relaxed SIMD (on Node 20: node tools/node.mjs bench/bench.js, or npm run bench, adds its flag)');
  log(`swapformer relaxed build: ${relaxedBuilt ? rel(DIST.relaxed) : 'not built'}`);
  let named = null;
  if (relaxedBuilt && opts.browserOn) {
    try {
      named = buildNamed();
      log(`profile build: ${rel(named.file)}, code section ${named.sameCode ? 'identical to' : 'DIFFERENT from'} dist/swapformer-relaxed.wasm's`);
    } catch (e) {
      log(`profile build failed: ${e.message.split('\n')[0]}`);
    }
  }
  const plainModule = await WebAssembly.compile(readFileSync(SNAP.plain));
  const builds = [{ label: 'swapformer', module: plainModule, file: 'swapformer.wasm' }];
  if (relaxedBuilt && relaxedOn) {
    try {
      builds.push({
        label: 'swapformer relaxed',
        module: await WebAssembly.compile(readFileSync(SNAP.relaxed)),
        file: 'swapformer-relaxed.wasm',
        relaxed: true,
      });
    } catch (e) {
      log(`note: ${rel(DIST.relaxed)} does not compile here: ${e.message}`);
    }
  }
  for (const shape of Object.keys(H.SHAPES)) await ensureModel(shape, sf, plainModule);
  for (const [shape] of ORT_CASES.filter(([, T]) => T === 128)) for (const g of GRAPHS) ensureOnnx(shape, g);
  for (const g of MATRIX_GRAPHS) ensureOnnx(MATRIX_SHAPE, g);
  ensureOnnx('tiny', 'fused');
  return { plainModule, builds, relaxedOn, relaxedBuilt, named };
}
