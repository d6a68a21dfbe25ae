// The int8 matrix product (core/qgemm.c) against the f32 matmul_forward, alone, in
// both wasm builds:
//
//   node tools/node.mjs bench/qgemm.mjs [--chromium] [options]
//   (tools/node.mjs adds --experimental-wasm-relaxed-simd on Node 20 only)
//
// Builds bench/qgemm.c with core/qgemm.c, core/kernels.c and core/error.c as the
// shipped wasm files are built (emcc 3.1.6 -msimd128; clang-16 -msimd128
// -mrelaxed-simd + wasm-ld-16 against emscripten's libc) into bench/.cache/,
// checks that the wasm kernels' int32 results are exact (bench/qgemm.c check()),
// then times, per Linear shape (K -> N, T rows in 64-row chunks as encoder.c runs
// them): f32 matmul_forward; q8 = quantize the rows + q8_matmul_forward; and
// q8_matmul_forward alone; warm, in rounds alternating every build and every
// variant, best of each. GFLOP/s-equivalent = 2 T K N / time. "layer": one
// encoder layer's Linear products (q, k, v, o: C -> C; up: C -> F; down: F -> C)
// from the per-shape times, q8 quantizing each distinct input once (q, k, v share theirs).
//
// Node times by the process's CPU time (user + system: this machine is shared, and
// the wall clock counts the time spent waiting for a core); Chromium (--chromium:
// headless, Debian's, through playwright-core) by performance.now(), so its
// figures are noisier. The kernel line says which relaxed dot the engine got
// (core/qgemm.c: V8 11.3, Node 20, takes the i16 form; newer V8 the fused one).
//
// Options: --rounds N (default 40)  --T N (default 512)  --models minilm,bert
//          --builds plain,relaxed   --chromium (in headless Chromium instead of Node)
//          --variants "A;B" (extra cflags per variant, e.g. ";-DQ8_MR=5;-DQ8_FORCE_I16":
//            every build x every variant, timed in the same rounds; experiments)
//          --opt -O3|-Os (core/qgemm.c and core/kernels.c; default -O3. build.sh
//            builds core files outside its HOT list with -Os)
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
const ROUNDS = +arg('rounds', 40),
  T = +arg('T', 512),
  OPT = arg('opt', '-O3');
const MODELS = { minilm: { name: 'MiniLM-L6', C: 384, F: 1536 }, bert: { name: 'BERT-base', C: 768, F: 3072 } };
const models = arg('models', 'minilm,bert')
  .split(',')
  .map((m) => MODELS[m]);
const builds = arg('builds', 'plain,relaxed').split(',');
const variants = (arg('variants', null) ?? '').split(';').map((v) => v.split(' ').filter(Boolean));
const CHROME = process.argv.includes('--chromium');

const SRCS = ['bench/qgemm.c', 'core/qgemm.c', 'core/kernels.c', 'core/error.c'].map((f) => join(ROOT, f));
const mtime = (p) => (existsSync(p) ? statSync(p).mtimeMs : -1);
const EMCC_ENV = { ...process.env, NODE_PATH: `${process.env.NODE_PATH ?? ''}:/usr/share/nodejs` };

function build(kind, cflags) {
  mkdirSync(CACHE, { recursive: true });
  const tag = `${kind}${OPT}${cflags.join('')}`.replace(/[^A-Za-z0-9_=-]/g, '_');
  const out = join(CACHE, `qgemm-${tag}.wasm`);
  const deps = [...SRCS, ...['qgemm.h', 'kernels.h', 'simd.h', 'error.h'].map((h) => join(ROOT, 'core', h))];
  if (mtime(out) > Math.max(...deps.map(mtime))) return out;
  const c = ['-std=c11', '-Wall', '-Wextra', '-Werror', '-msimd128', ...cflags];
  const opt = (f) => (/core\/(qgemm|kernels)\.c$/.test(f) ? OPT : '-Os'); // the bench driver and error.c: as build.sh's cold files
  const obj = (i) => join(CACHE, `qgemm-${tag}-${i}.o`);
  if (kind === 'plain') {
    SRCS.forEach((f, i) => execFileSync('emcc', [opt(f), ...c, '-c', f, '-o', obj(i)], { stdio: 'inherit', env: EMCC_ENV }));
    execFileSync(
      'emcc',
      ['-O3', '-msimd128', '-sSTANDALONE_WASM', '--no-entry', '-sALLOW_MEMORY_GROWTH', '-sMALLOC=emmalloc', ...SRCS.map((f, i) => obj(i)), '-o', out],
      { stdio: 'inherit', env: EMCC_ENV },
    );
  } else {
    const sys = '/usr/share/emscripten/cache/sysroot',
      lib = `${sys}/lib/wasm32-emscripten`;
    SRCS.forEach((f, i) =>
      execFileSync(
        'clang-16',
        ['--target=wasm32-unknown-emscripten', `--sysroot=${sys}`, opt(f), ...c, '-mrelaxed-simd', '-mbulk-memory', '-c', f, '-o', obj(i)],
        { stdio: 'inherit' },
      ),
    );
    execFileSync(
      'wasm-ld-16',
      [
        '-o',
        out,
        ...SRCS.map((f, i) => obj(i)),
        `${lib}/crt1_reactor.o`,
        `-L${lib}`,
        '-lstandalonewasm-memgrow',
        '-lstubs',
        '-lnoexit',
        '-lc',
        '-lemmalloc',
        '-lcompiler_rt',
        '--gc-sections',
        '--entry=_initialize',
        '--max-memory=2147483648',
      ],
      { stdio: 'inherit' },
    );
  }
  return out;
}

/** Everything measured, self-contained: it runs in Node and, serialized, in the page.
 * bins: wasm bytes per configuration; shapes: [[K, N], ...]. */
async function measure({ bins, shapes, T, rounds }) {
  const cpu = typeof process !== 'undefined' && process.cpuUsage;
  const now = cpu
    ? () => {
        const u = process.cpuUsage();
        return (u.user + u.system) / 1e3;
      }
    : () => performance.now();
  const stub = new Proxy({}, { get: () => () => 0 });
  const xs = [];
  for (const b of bins) {
    const { instance } = await WebAssembly.instantiate(new Uint8Array(b), { wasi_snapshot_preview1: stub, env: stub });
    const x = instance.exports;
    x._initialize?.();
    const fails = x.check(),
      p = x.kernel(),
      mem = new Uint8Array(x.memory.buffer);
    xs.push({ x, fails, kernel: new TextDecoder().decode(mem.slice(p, mem.indexOf(0, p))) });
  }
  // best ms per call of fn(reps), reps such that one timing takes >= 4 ms (the faster of two
  // tries: a single slow one, a disturbance, would leave samples under the browser's clock resolution)
  const timer = (fn) => {
    let reps = 1,
      best = Infinity;
    const time = () => {
      const t = now();
      fn(reps);
      return now() - t;
    };
    while (Math.min(time(), time()) < 4) reps *= 2;
    return {
      once() {
        const t = now();
        fn(reps);
        best = Math.min(best, (now() - t) / reps);
      },
      get best() {
        return best;
      },
    };
  };
  const res = [];
  for (const [K, N] of shapes) {
    const runs = xs.map(({ x }) => {
      if (!x.setup(T, K, N)) throw new Error('setup: out of memory');
      return {
        err: x.maxerr(T, K, N),
        t: {
          f32: timer((r) => x.f32(T, K, N, r)),
          q8: timer((r) => x.q8(T, K, N, r)),
          q8gemm: timer((r) => x.q8gemm(T, K, N, r)),
          quant: timer((r) => x.quant(T, K, r)),
        },
      };
    });
    for (let i = 0; i < rounds; i++)
      for (const r of i % 2 ? [...runs].reverse() : runs)
        for (const k of i % 2 ? ['q8', 'f32', 'quant', 'q8gemm'] : ['f32', 'q8', 'q8gemm', 'quant']) r.t[k].once();
    res.push(runs.map((r) => ({ K, N, f32: r.t.f32.best, q8: r.t.q8.best, q8gemm: r.t.q8gemm.best, quant: r.t.quant.best, err: r.err })));
  }
  return { checks: xs.map(({ fails, kernel }) => ({ fails, kernel })), res, env: cpu ? `Node ${process.version}` : navigator.userAgent };
}

const configs = [];
for (const kind of builds) for (const v of variants) configs.push({ kind, label: `${kind}${v.length ? ` ${v.join(' ')}` : ''}`, file: build(kind, v) });
const bins = configs.map((c) => [...readFileSync(c.file)]);

async function run(shapes) {
  if (!CHROME) return measure({ bins, shapes, T, rounds: ROUNDS });
  const { chromium } = await import('playwright-core');
  const { CHROMIUM, CHROMIUM_ARGS } = await import('./browser.js');
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
  try {
    const page = await browser.newPage();
    await page.goto('about:blank');
    return await page.evaluate(measure, { bins, shapes, T, rounds: ROUNDS });
  } finally {
    await browser.close();
  }
}

const fmt = (v, d = 1) => v.toFixed(d);
const results = [];
let printed = false;
for (const m of models) {
  const out = await run([
    [m.C, m.C],
    [m.C, m.F],
    [m.F, m.C],
  ]);
  if (!printed) {
    console.log(out.env);
    configs.forEach((c, i) => {
      const { fails, kernel } = out.checks[i];
      console.log(
        `${c.label} (${c.file.replace(ROOT, '')}, ${readFileSync(c.file).length} bytes): kernel ${kernel}; int32 check ${fails ? `FAILED in ${fails} cases` : 'exact'}`,
      );
      if (fails) process.exitCode = 1;
    });
    printed = true;
  }
  configs.forEach((c, ci) => {
    const [cc, cf, fc] = out.res.map((s) => s[ci]);
    const gf = (s, ms) => (2 * T * s.K * s.N) / ms / 1e6;
    console.log(`${c.label}: ${m.name}, T=${T} in 64-row chunks`);
    console.log('    K -> N       f32 GFLOP/s   q8 GFLOP/s-eq (gemm alone)   speed-up (gemm alone)   quantize ms   max |q8-f32|/max|f32|');
    for (const s of [cc, cf, fc]) {
      console.log(
        `    ${`${s.K} -> ${s.N}`.padEnd(12)} ${fmt(gf(s, s.f32)).padStart(8)}      ${fmt(gf(s, s.q8)).padStart(8)} (${fmt(gf(s, s.q8gemm))})` +
          `          ${fmt(s.f32 / s.q8, 2)}x (${fmt(s.f32 / s.q8gemm, 2)}x)          ${fmt(s.quant, 3)}        ${s.err.toExponential(2)}`,
      );
    }
    const f32 = 4 * cc.f32 + cf.f32 + fc.f32;
    const q8 = 4 * cc.q8gemm + cf.q8gemm + fc.q8gemm + 3 * cc.quant + fc.quant; // inputs: x (q, k, v), attention (o), LN (up), GELU (down)
    const flops = 2 * T * (4 * m.C * m.C + 2 * m.C * m.F);
    console.log(
      `    layer        ${fmt(flops / f32 / 1e6).padStart(8)}      ${fmt(flops / q8 / 1e6).padStart(8)}                      ${fmt(f32 / q8, 2)}x   (${fmt(f32, 2)} ms -> ${fmt(q8, 2)} ms)`,
    );
    results.push({ config: c.label, kernel: out.checks[ci].kernel, model: m.name, T, shapes: [cc, cf, fc], layer: { f32, q8, speedup: f32 / q8 } });
  });
}
if (process.argv.includes('--json')) console.log(JSON.stringify({ env: CHROME ? 'chromium' : 'node', opt: OPT, results }));
