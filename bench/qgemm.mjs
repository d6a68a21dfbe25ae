// The int8 matrix product (core/qgemm.c) against the f32 matmul_forward, alone, in
// both wasm builds: `node --experimental-wasm-relaxed-simd bench/qgemm.mjs`.
//
// Builds bench/qgemm.c with core/qgemm.c, core/kernels.c and core/error.c as the
// shipped wasm files are built (emcc 3.1.6 -O3 -msimd128; clang-16 -O3 -msimd128
// -mrelaxed-simd + wasm-ld-16 against emscripten's libc) into bench/.cache/,
// checks that the wasm kernels' int32 results are exact (bench/qgemm.c check()),
// then times, per Linear shape (K -> N, T rows in 64-row chunks as encoder.c
// runs them), f32 matmul_forward, q8 = quantize the rows + q8_matmul_forward,
// and q8_matmul_forward alone, warm, in alternating rounds, best of each.
// GFLOP/s-equivalent = 2 T K N / time. "layer": one encoder layer's Linear
// products (q, k, v, o: C -> C; up: C -> F; down: F -> C) from the per-shape
// times, q8 quantizing each distinct input once (q, k, v share theirs).
//
// Options: --rounds N (default 15)  --T N (default 512)  --models minilm,bert
//          --builds plain,relaxed   --cflags "-DQ8_MR=5" (extra flags, both builds; experiments)
//          --opt -O3|-Os (default -O3; build.sh builds core files outside its HOT list with -Os)
//          --json (one JSON line at the end)
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CACHE = join(ROOT, 'bench', '.cache');
const arg = (name, def) => {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? def : process.argv[i + 1];
};
const ROUNDS = +arg('rounds', 40), T = +arg('T', 512), OPT = arg('opt', '-O3');
const CFLAGS = (arg('cflags', '') || '').split(' ').filter(Boolean);
const MODELS = { minilm: { name: 'MiniLM-L6', C: 384, F: 1536 }, bert: { name: 'BERT-base', C: 768, F: 3072 } };
const models = arg('models', 'minilm,bert').split(',').map((m) => MODELS[m]);
const builds = arg('builds', 'plain,relaxed').split(',');

const SRCS = ['bench/qgemm.c', 'core/qgemm.c', 'core/kernels.c', 'core/error.c'].map((f) => join(ROOT, f));
const mtime = (p) => (existsSync(p) ? statSync(p).mtimeMs : -1);

function build(kind, cflags = CFLAGS) {
  mkdirSync(CACHE, { recursive: true });
  const tag = `${kind}${OPT}${cflags.join('')}`.replace(/[^A-Za-z0-9_=-]/g, '_');
  const out = join(CACHE, `qgemm-${tag}.wasm`);
  const deps = [...SRCS, ...['qgemm.h', 'kernels.h', 'simd.h', 'error.h'].map((h) => join(ROOT, 'core', h))];
  if (mtime(out) > Math.max(...deps.map(mtime))) return out;
  const c = ['-std=c11', '-Wall', '-Wextra', '-Werror', '-msimd128', ...cflags];
  // qgemm.c (and kernels.c) with OPT, the bench driver and error.c as build.sh's cold files
  const opt = (f) => (/core\/(qgemm|kernels)\.c$/.test(f) ? OPT : '-Os');
  if (kind === 'plain') {
    const objs = SRCS.map((f, i) => {
      const o = join(CACHE, `qgemm-${tag}-${i}.o`);
      execFileSync('emcc', [opt(f), ...c, '-c', f, '-o', o], { stdio: 'inherit', env: { ...process.env, NODE_PATH: `${process.env.NODE_PATH ?? ''}:/usr/share/nodejs` } });
      return o;
    });
    execFileSync('emcc', ['-O3', '-msimd128', '-sSTANDALONE_WASM', '--no-entry', '-sALLOW_MEMORY_GROWTH', '-sMALLOC=emmalloc', ...objs, '-o', out],
      { stdio: 'inherit', env: { ...process.env, NODE_PATH: `${process.env.NODE_PATH ?? ''}:/usr/share/nodejs` } });
  } else {
    const sys = '/usr/share/emscripten/cache/sysroot', lib = `${sys}/lib/wasm32-emscripten`;
    const objs = SRCS.map((f, i) => {
      const o = join(CACHE, `qgemm-${tag}-${i}.o`);
      execFileSync('clang-16', ['--target=wasm32-unknown-emscripten', `--sysroot=${sys}`, opt(f), ...c, '-mrelaxed-simd', '-mbulk-memory', '-c', f, '-o', o], { stdio: 'inherit' });
      return o;
    });
    execFileSync('wasm-ld-16', ['-o', out, ...objs, `${lib}/crt1_reactor.o`, `-L${lib}`, '-lstandalonewasm-memgrow', '-lstubs', '-lnoexit', '-lc',
      '-lemmalloc', '-lcompiler_rt', '--gc-sections', '--entry=_initialize', '--max-memory=2147483648'], { stdio: 'inherit' });
  }
  return out;
}

function instantiate(file) {
  const x = new WebAssembly.Instance(new WebAssembly.Module(readFileSync(file)), {
    wasi_snapshot_preview1: new Proxy({}, { get: () => () => 0 }),
    env: new Proxy({}, { get: () => () => 0 }),
  }).exports;
  x._initialize?.();
  return x;
}

/** CPU ms of this process (user + system): unlike the wall clock, it does not count
 * the time the process waits for a core (this machine is shared: other jobs run). */
const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e3;
};

/** Best ms per call of fn(reps), reps chosen so that one timing takes >= 4 ms. */
function timer(fn) {
  let reps = 1;
  for (;;) {
    const t = cpuMs();
    fn(reps);
    if (cpuMs() - t >= 4) break;
    reps *= 2;
  }
  let best = Infinity;
  return {
    once() {
      const t = cpuMs();
      fn(reps);
      best = Math.min(best, (cpuMs() - t) / reps);
    },
    get best() { return best; },
  };
}

const fmt = (v, d = 1) => v.toFixed(d);
// Configurations: each build, or with --variants "A;B" each build x each set of extra cflags
// (experiments: every configuration is timed in the same rounds, alternating).
const variants = arg('variants', null)?.split(';').map((v) => v.split(' ').filter(Boolean)) ?? [CFLAGS];
const configs = [];
for (const kind of builds)
  for (const v of variants) {
    const file = build(kind, v);
    const x = instantiate(file);
    const fails = x.check();
    const label = `${kind}${v.length ? ` ${v.join(' ')}` : ''}`;
    const p = x.kernel(), name = new TextDecoder().decode(new Uint8Array(x.memory.buffer, p, new Uint8Array(x.memory.buffer, p).indexOf(0)));
    console.log(`${label} (${file.replace(ROOT, '')}, ${readFileSync(file).length} bytes): kernel ${name}; int32 check ${fails ? `FAILED in ${fails} cases` : 'exact'}`);
    if (fails) process.exitCode = 1;
    configs.push({ label, kind, x });
  }

/** Every configuration on one shape, alternating within each round. */
function benchShape(K, N) {
  const runs = configs.map((c) => {
    if (!c.x.setup(T, K, N)) throw new Error('setup: out of memory');
    const x = c.x;
    return { c, err: x.maxerr(T, K, N), t: { f32: timer((r) => x.f32(T, K, N, r)), q8: timer((r) => x.q8(T, K, N, r)),
      q8gemm: timer((r) => x.q8gemm(T, K, N, r)), quant: timer((r) => x.quant(T, K, r)) } };
  });
  for (let i = 0; i < ROUNDS; i++)
    for (const r of i % 2 ? [...runs].reverse() : runs)
      for (const k of i % 2 ? ['q8', 'f32', 'quant', 'q8gemm'] : ['f32', 'q8', 'q8gemm', 'quant']) r.t[k].once();
  return runs.map((r) => ({ K, N, f32: r.t.f32.best, q8: r.t.q8.best, q8gemm: r.t.q8gemm.best, quant: r.t.quant.best, err: r.err }));
}

const results = [];
for (const m of models) {
  const shapes = [[m.C, m.C], [m.C, m.F], [m.F, m.C]].map(([K, N]) => benchShape(K, N));
  configs.forEach((c, ci) => {
    const [cc, cf, fc] = shapes.map((s) => s[ci]);
    const gf = (s, ms) => (2 * T * s.K * s.N) / ms / 1e6;
    console.log(`${c.label}: ${m.name}, T=${T} in 64-row chunks`);
    console.log('    K -> N       f32 GFLOP/s   q8 GFLOP/s-eq (gemm alone)   speed-up (gemm alone)   quantize ms   max |q8-f32|/max|f32|');
    for (const s of [cc, cf, fc]) {
      console.log(`    ${`${s.K} -> ${s.N}`.padEnd(12)} ${fmt(gf(s, s.f32)).padStart(8)}      ${fmt(gf(s, s.q8)).padStart(8)} (${fmt(gf(s, s.q8gemm))})` +
        `          ${fmt(s.f32 / s.q8, 2)}x (${fmt(s.f32 / s.q8gemm, 2)}x)          ${fmt(s.quant, 3)}        ${s.err.toExponential(2)}`);
    }
    const f32 = 4 * cc.f32 + cf.f32 + fc.f32;
    const q8 = 4 * cc.q8gemm + cf.q8gemm + fc.q8gemm + 3 * cc.quant + fc.quant; // inputs: x (q, k, v), attention (o), LN (up), GELU (down)
    const flops = 2 * T * (4 * m.C * m.C + 2 * m.C * m.F);
    console.log(`    layer        ${fmt(flops / f32 / 1e6).padStart(8)}      ${fmt(flops / q8 / 1e6).padStart(8)}                      ${fmt(f32 / q8, 2)}x   (${fmt(f32, 2)} ms -> ${fmt(q8, 2)} ms)`);
    results.push({ config: c.label, model: m.name, T, shapes: [cc, cf, fc], layer: { f32, q8, speedup: f32 / q8 } });
  });
}
if (process.argv.includes('--json')) console.log(JSON.stringify({ opt: OPT, results }));
