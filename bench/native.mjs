// The native backend measured side by side in one run: kernels against the native peak at each
// width and against onnxruntime-node on the same Linear shapes; end to end against
// transformers.js on onnxruntime-node (f32 and q8, one thread and all cores, short sentences and
// mixed documentation texts, transformers.js in input order and length-sorted); `swapformer
// serve` under 64 connections, native against wasm; cold start and memory. A benchmark, not a test.
//
//   node tools/node.mjs bench/native.mjs [--runs 5] [--short 1000] [--mixed 256]
//        [--only kernels,e2e,serve,cold] [--write]
//
// Needs ./build.sh native (prebuilds/ and build/addon-x64/, whose objects bench/native.c links),
// bench/node_modules (sh bench/deps.sh: transformers.js and the onnxruntime-node it pulls) and
// Debian's python3-torch and python3-onnx (the ONNX exports). --write puts the tables into
// bench/RESULTS.md between <!-- native:begin --> and <!-- native:end --> (appended when missing);
// the raw figures go to bench/.cache/native.json. Each measurement runs in a fresh process; the
// machine's load during the run is recorded (bench/quiet.js) beside the figures.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import os from 'node:os';
import { ROOT, BENCH, CACHE, PYTHON, child, log, rel } from './context.js';
import { ensureFolder, ensureCorpus, E2E_NAME } from './groups/end-to-end.js';
import { cpuMeter } from './quiet.js';
import * as H from './harness.js';
import { random } from '../models/tasks.js';

const arg = (name, def) => {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? def : process.argv[i + 1];
};
const RUNS = Number(arg('runs', 5)),
  SHORT = Number(arg('short', 1000)),
  MIXED = Number(arg('mixed', 256));
const ONLY = arg('only', 'kernels,e2e,serve,cold').split(',');
const WRITE = process.argv.includes('--write');
const CORES = os.availableParallelism();
const FOLDER = join(CACHE, 'e2e', E2E_NAME);
const TJS = join(BENCH, 'node_modules', '@huggingface', 'transformers', 'package.json');
const R = { date: new Date().toISOString(), node: process.version, cpu: os.cpus()[0].model, cores: CORES };

const sf = await import('../bindings/index.js');
const info = await sf.runtimeInfo();
if (info.backend !== 'native') throw new Error(`the native backend does not run here (${info.backendFallback}): ./build.sh native`);
R.native = { isa: info.isa, q8Kernel: info.q8Kernel };
const meter = cpuMeter();

// ------------------------------------------------------------------ kernels

const WIDTHS = [
  [4, []],
  [8, ['-mavx2', '-mfma']],
  [16, ['-mavx2', '-mfma', '-mavx512f']],
];
if (ONLY.includes('kernels')) {
  log('kernels (one core, T = 512 in 64-row chunks; GFLOP/s = 2 T K N / thread CPU time, best of the rounds):');
  const objs = join(ROOT, 'build', 'addon-x64');
  const objects = readdirSync(objs)
    .filter((f) => f.endsWith('.o') && !f.includes('addon.c'))
    .map((f) => join(objs, f));
  const variants = JSON.parse(
    execFileSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `const m = await import(${JSON.stringify(new URL('../bindings/runtime/native.js', import.meta.url).href)}); const { rt } = await m.loadNative(null); console.log(JSON.stringify(rt.variants));`,
      ],
      { encoding: 'utf8' },
    ),
  ).filter((v) => v.supported);
  const supportedLanes = new Set([
    4,
    ...(variants.some((v) => v.name.startsWith('avx2')) ? [8] : []),
    ...(variants.some((v) => v.name.startsWith('avx512')) ? [16] : []),
  ]);
  R.peaks = [];
  let exe = null;
  for (const [lanes, flags] of WIDTHS) {
    if (!supportedLanes.has(lanes)) continue;
    const out = join(CACHE, `native-${lanes}`);
    mkdirSync(CACHE, { recursive: true });
    execFileSync('clang-16', [
      '-O2',
      '-std=c11',
      '-DSF_MULTI_ISA',
      `-DVW=${lanes}`,
      ...flags,
      join(BENCH, 'native.c'),
      ...objects,
      '-pthread',
      '-lm',
      '-o',
      out,
    ]);
    exe = out;
    const p = JSON.parse(execFileSync(out, ['peak'], { encoding: 'utf8' }));
    R.peaks.push(p);
    log(`  peak at ${lanes} lanes: ${p.peakGflops.toFixed(1)} GFLOP/s (${p.chains} FMA chains)`);
  }
  R.kernels = [];
  for (const v of variants) {
    const k = JSON.parse(execFileSync(exe, ['kernels', v.name, '512'], { encoding: 'utf8' }));
    R.kernels.push(k);
    log(`  ${v.name.padEnd(12)} ${k.shapes.map((s) => `${s.model} ${s.shape} f32 ${s.f32.toFixed(0)} q8 ${s.q8.toFixed(0)}`).join('; ')}`);
  }
  // onnxruntime-node on the same shapes (whole T at once: its best case)
  const shapes = [
    [384, 384],
    [384, 1536],
    [1536, 384],
    [768, 768],
    [768, 3072],
    [3072, 768],
  ];
  const dir = join(CACHE, 'linear');
  if (!shapes.every(([K, N]) => existsSync(join(dir, `linear-${K}-${N}-q8.onnx`))))
    execFileSync(PYTHON, [join(BENCH, 'export_linear.py'), dir, ...shapes.flat().map(String)], { stdio: 'ignore' });
  if (existsSync(TJS)) {
    const r = spawnSync(process.execPath, [join(BENCH, 'native-ort.mjs'), JSON.stringify({ dir, T: 512, shapes, runs: 30 })], { encoding: 'utf8' });
    if (r.status === 0) {
      R.ort = JSON.parse(r.stdout.trim().split('\n').pop());
      log(`  onnxruntime-node ${R.ort.version}: ${R.ort.shapes.map((s) => `${s.K}->${s.N} f32 ${s.f32.toFixed(0)} q8 ${s.q8.toFixed(0)}`).join('; ')}`);
    } else log(`  onnxruntime-node failed: ${r.stderr.slice(-500)}`);
  } else log('  onnxruntime-node: not installed (sh bench/deps.sh)');
}

// ------------------------------------------------------------------ end to end

/** Sections of Node's API documentation as texts of 3 to 1,800 words: the mixed corpus. */
function ensureMixed(n) {
  const file = join(CACHE, 'e2e', 'mixed.json');
  if (existsSync(file)) {
    const c = JSON.parse(readFileSync(file, 'utf8'));
    if (c.n === n && c.version === 1) return c;
  }
  const DOCS = '/usr/share/doc/nodejs/api';
  const pool = [],
    seen = new Set();
  for (const f of readdirSync(DOCS)
    .filter((x) => x.endsWith('.md'))
    .sort()) {
    const md = readFileSync(join(DOCS, f), 'utf8').replace(/```[\s\S]*?```/g, ' ');
    for (const section of md.split(/^#{1,6} .*$/m)) {
      const text = section
        .replace(/<!--[\s\S]*?-->/g, ' ')
        .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
        .replace(/\[[^\]]*\]:\s*\S+/g, ' ')
        .replace(/[`*_>|#]/g, ' ')
        .replace(/\s+/g, ' ')
        .trim();
      const words = text ? text.split(' ').length : 0;
      if (words >= 3 && words <= 1800 && !seen.has(text)) (seen.add(text), pool.push(text));
    }
  }
  const r = random(7);
  for (let i = pool.length - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1));
    [pool[i], pool[j]] = [pool[j], pool[i]];
  }
  const texts = pool.slice(0, n);
  const c = { version: 1, n, source: `sections of Node's API documentation (${DOCS}), 3 to 1,800 words`, candidates: pool.length, texts };
  writeFileSync(file, JSON.stringify(c));
  return c;
}

if (ONLY.includes('e2e')) {
  await ensureFolder(sf, await WebAssembly.compile(readFileSync(join(ROOT, 'dist', 'swapformer.wasm'))));
  const p = await sf.loadPretrained(FOLDER, { threads: 1 });
  const short = ensureCorpus(p.tokenizer, 2000);
  const mixed = ensureMixed(MIXED);
  const tokens = (texts) => texts.map((t) => Math.min(p.tokenizer.encode(t).ids.length, 512));
  const shortFile = join(CACHE, 'e2e', `short-${SHORT}.json`);
  writeFileSync(shortFile, JSON.stringify({ texts: short.texts.slice(0, SHORT) }));
  const corpora = [
    ['short sentences', shortFile, short.texts.slice(0, SHORT)],
    ['mixed documentation texts', join(CACHE, 'e2e', 'mixed.json'), mixed.texts],
  ];
  R.e2e = { model: 'all-MiniLM-L6-v2 shape (BERT, 6 x 384, 12 heads, FFN 1536, vocab 30522), random weights', runs: RUNS, corpora: [], runsBy: [] };
  for (const [name, , texts] of corpora) {
    const t = tokens(texts);
    R.e2e.corpora.push({ name, texts: texts.length, tokens: t.reduce((a, b) => a + b, 0), median: H.median(t), min: Math.min(...t), max: Math.max(...t) });
    log(`end to end, ${name}: ${texts.length} texts, ${t.reduce((a, b) => a + b, 0)} tokens (median ${H.median(t)}, ${Math.min(...t)}-${Math.max(...t)})`);
  }
  p.dispose();
  const wasmFile = join(ROOT, 'dist', 'swapformer-relaxed.wasm');
  for (const [name, file] of corpora)
    for (const threads of [...new Set([1, CORES])]) {
      log(`  ${name}, ${threads} thread${threads > 1 ? 's' : ''}:`);
      const r = await child(
        'native-e2e.js',
        { folder: FOLDER, corpus: file, runs: RUNS, threads, tjs: existsSync(TJS), ...(threads === 1 ? { wasm: wasmFile } : {}) },
        120 * 60e3,
      );
      R.e2e.runsBy.push({ corpus: name, threads, ...r });
    }
}

// ------------------------------------------------------------------ serve

if (ONLY.includes('serve')) {
  log('swapformer serve under 64 connections, native against wasm:');
  const r = spawnSync(process.execPath, [join(BENCH, 'serve.js'), '--backends', 'native,wasm', '--json', '--requests', '2000'], {
    encoding: 'utf8',
    maxBuffer: 1 << 26,
  });
  if (r.status !== 0) log(`  failed: ${r.stderr.slice(-800)}`);
  else {
    const lines = r.stdout.trim().split('\n');
    R.serve = JSON.parse(lines.pop());
    for (const l of lines) log(`  ${l}`);
  }
}

// ------------------------------------------------------------------ cold start and memory

if (ONLY.includes('cold')) {
  log('cold start and memory (a fresh process each; one thread):');
  R.cold = [];
  const text = 'The quick brown fox jumps over the lazy dog while the server answers.';
  const who = [
    ...['native', 'wasm'].flatMap((backend) => ['f32', 'q8'].map((dtype) => ({ runtime: 'swapformer', backend, dtype }))),
    ...(existsSync(TJS) ? ['f32', 'q8'].map((dtype) => ({ runtime: 'transformers.js', dtype })) : []),
  ];
  for (const w of who) {
    const times = [];
    let last;
    for (let i = 0; i < 3; i++) {
      const r = spawnSync(process.execPath, [join(BENCH, 'native-cold.mjs'), JSON.stringify({ ...w, folder: FOLDER, text })], { encoding: 'utf8' });
      if (r.status !== 0) {
        log(`  ${JSON.stringify(w)} failed: ${r.stderr.slice(-400)}`);
        break;
      }
      last = JSON.parse(r.stdout.trim().split('\n').pop());
      times.push(last.coldMs);
    }
    if (!last) continue;
    const row = {
      ...w,
      coldMs: H.median(times),
      weights: last.weights,
      loadedMb: (last.rss.loaded - last.rss.base) / 2 ** 20,
      afterMb: (last.rss.afterEmbed - last.rss.base) / 2 ** 20,
    };
    R.cold.push(row);
    log(
      `  ${`${w.runtime} ${w.backend ?? ''} ${w.dtype}`.padEnd(28)} cold ${row.coldMs.toFixed(0)} ms; weights ${(row.weights / 2 ** 20).toFixed(1)} MB; RSS +${row.loadedMb.toFixed(1)} MB loaded, +${row.afterMb.toFixed(1)} MB after one text`,
    );
  }
}

R.machine = meter.stop();
mkdirSync(CACHE, { recursive: true });
writeFileSync(join(CACHE, 'native.json'), JSON.stringify(R, null, 2));
const md = report(R);
console.log(`\n${md}`);
if (WRITE) {
  const file = join(BENCH, 'RESULTS.md');
  let text = readFileSync(file, 'utf8');
  const block = `<!-- native:begin -->\n${md}\n<!-- native:end -->`;
  text = /<!-- native:begin -->[\s\S]*<!-- native:end -->/.test(text)
    ? text.replace(/<!-- native:begin -->[\s\S]*<!-- native:end -->/, block)
    : `${text.trimEnd()}\n\n${block}\n`;
  writeFileSync(file, text);
  log(`wrote ${rel(file)}`);
}

/** The Markdown of a run: figures and what limits them, no verdicts. */
function report(R) {
  const L = [];
  const f0 = (x) => (x === undefined || x === null ? '-' : x.toFixed(0));
  const f1 = (x) => (x === undefined || x === null ? '-' : x.toFixed(1));
  const ratio = (a, b) => (a && b ? `${(a / b).toFixed(2)}x` : '-');
  L.push(`## The native backend (Node ${R.node}, ${R.cpu}, ${R.cores} cores; ${R.date.slice(0, 10)})`, '');
  L.push(
    `Measured by \`node tools/node.mjs bench/native.mjs --write\` in one run, each figure in a fresh process. Other processes used ${R.machine?.foreign !== undefined ? `${(100 * R.machine.foreign).toFixed(0)}%` : 'an unknown share'} of the CPUs during the run. The native backend picked \`${R.native.isa}\` (q8: ${R.native.q8Kernel}).`,
    '',
  );
  if (R.kernels) {
    L.push('### Kernels, one core', '');
    L.push(
      `GFLOP/s (2 T K N per product over the thread's CPU time, T = 512 rows in the encoder's 64-row chunks, best of the rounds); q8 includes quantizing the rows. The peak: independent FMA chains at each width (bench/native.c). onnxruntime-node ${R.ort?.version ?? '-'}: one Linear graph per shape (bench/export_linear.py; q8: its dynamic quantization, fused into DynamicQuantizeMatMul), intraOpNumThreads 1, the whole T at once.`,
      '',
    );
    L.push(`Peak: ${R.peaks.map((p) => `${f1(p.peakGflops)} GFLOP/s at ${p.lanes} lanes`).join(', ')}.`, '');
    const shapes = R.kernels[0].shapes;
    L.push(`| kernels | ${shapes.map((s) => `${s.model} ${s.K}->${s.N}`).join(' | ')} |`);
    L.push(`|:--|${shapes.map(() => '--:').join('|')}|`);
    for (const k of R.kernels) {
      L.push(`| swapformer ${k.isa} f32 | ${k.shapes.map((s) => f0(s.f32)).join(' | ')} |`);
      L.push(`| swapformer ${k.isa} q8 (${k.q8}) | ${k.shapes.map((s) => f0(s.q8)).join(' | ')} |`);
    }
    if (R.ort) {
      const at = (s) => R.ort.shapes.find((o) => o.K === s.K && o.N === s.N);
      L.push(`| onnxruntime-node f32 | ${shapes.map((s) => f0(at(s)?.f32)).join(' | ')} |`);
      L.push(`| onnxruntime-node q8 | ${shapes.map((s) => f0(at(s)?.q8)).join(' | ')} |`);
    }
    L.push('');
  }
  if (R.e2e) {
    L.push('### End to end against transformers.js on onnxruntime-node', '');
    L.push(
      `${R.e2e.model}; texts/s, median of ${R.e2e.runs} runs over the whole corpus, contenders alternating. swapformer: \`loadPretrained\` + \`embed(texts, { batchSize: 32 })\` (it packs sequences without padding); transformers.js: \`pipeline('feature-extraction')\`, calls of 32 texts (each padded to its longest), in input order and length-sorted, \`session_options: { intraOpNumThreads }\` = the threads. The wasm runs one thread (a call's wasm option).`,
      '',
    );
    for (const c of R.e2e.corpora)
      L.push(`- ${c.name}: ${c.texts} texts, ${c.tokens} tokens (median ${c.median}, ${c.min}-${c.max}, at most 512 after truncation)`);
    L.push('');
    L.push(
      '| corpus | threads | dtype | swapformer native | swapformer wasm | transformers.js input order | length-sorted | native / input order | native / length-sorted |',
    );
    L.push('|:--|--:|:--|--:|--:|--:|--:|--:|--:|');
    for (const run of R.e2e.runsBy) {
      if (!run.results) continue;
      for (const dtype of ['f32', 'q8']) {
        const get = (rt, sorted) =>
          run.results.find((x) => x.runtime === rt && x.dtype === dtype && (sorted === undefined || x.sorted === sorted))?.textsPerSec;
        const n = get('swapformer native'),
          w = get('swapformer wasm'),
          io = get('transformers.js', false),
          ls = get('transformers.js', true);
        L.push(`| ${run.corpus} | ${run.threads} | ${dtype} | ${f1(n)} | ${f1(w)} | ${f1(io)} | ${f1(ls)} | ${ratio(n, io)} | ${ratio(n, ls)} |`);
      }
    }
    L.push('');
  }
  if (R.serve) {
    L.push('### swapformer serve under 64 connections', '');
    L.push('| model | backend | batching | texts/s | p50 ms | p99 ms | errors | inputs per batch |');
    L.push('|:--|:--|:--|--:|--:|--:|--:|--:|');
    for (const r of R.serve) L.push(`| ${r.model} | ${r.backend} | ${r.name} | ${f0(r.rps)} | ${r.p50} | ${r.p99} | ${r.errors} | ${f1(r.mean)} |`);
    L.push('');
  }
  if (R.cold) {
    L.push('### Cold start and memory', '');
    L.push(
      'From importing the library to the first embedding, median of 3 fresh processes; resident memory added by loading the model and by one embedding, against the weights as stored.',
      '',
    );
    L.push('| runtime | dtype | cold start ms | weights MB | RSS after load MB | RSS after one text MB | RSS after load / weights |');
    L.push('|:--|:--|--:|--:|--:|--:|--:|');
    for (const c of R.cold)
      L.push(
        `| ${c.runtime}${c.backend ? ` ${c.backend}` : ''} | ${c.dtype} | ${f0(c.coldMs)} | ${f1(c.weights / 2 ** 20)} | ${f1(c.loadedMb)} | ${f1(c.afterMb)} | ${(c.loadedMb / (c.weights / 2 ** 20)).toFixed(2)} |`,
      );
    L.push('');
  }
  return L.join('\n');
}
