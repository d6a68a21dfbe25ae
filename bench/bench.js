// swapformer vs onnxruntime-web: `npm run bench -- [flags]` (node tools/node.mjs
// bench/bench.js, which adds --experimental-wasm-relaxed-simd on Node 20 only;
// Node 22+ refuses that flag). A benchmark, not a test.
//
//   --no-browser        Node only (skip headless Chromium)
//   --only=browser      Chromium only (still sets up the cache)
//   --only=end-to-end   the end-to-end group alone (bench/groups/end-to-end.js); its
//                       figures replace those of bench/.cache/results.json's run
//                       (the others kept) when RESULTS.md is written; without that
//                       file, its section of the RESULTS.md on disk is replaced
//                       (raw figures: bench/.cache/results-e2e.json; with
//                       --from-json, rewritten from it)
//   --no-end-to-end     skip the end-to-end group
//   --e2e-runs=N        its timed runs per contender (default 5; --quick 1)
//   --e2e-texts=N       its corpus size in sentences (default 2000; --quick 128)
//   --skip-long         skip the long-sequence runs (RoPE / ALiBi at T=512 and T=8192)
//   --long-T=N          their length (default 8192)
//   --quick             few runs, and only the threads x dtypes comparison, int8
//                       accuracy, load memory and a short end-to-end run (trying
//                       the script out: the figures are not for reporting)
//   --threads=1,2       the thread counts compared (default 1, 2 and 4, those the
//                       machine has cores for)
//   --wait-quiet[=L]    wait (up to an hour) for the 1-minute load average to fall
//                       below L (0.5) before measuring
//   --no-write          do not write bench/RESULTS.md
//   --update-readme     also replace the README's end-to-end headline (between
//                       <!-- bench:headline:begin --> and end, in "Why it is fast
//                       and small") and its block of tables between
//                       <!-- bench:begin --> and <!-- bench:end --> if it has one
//                       (never added: the tables live in docs/performance.md)
//   --from-json         measure nothing: rewrite RESULTS.md (and with
//                       --update-readme the README block) from the last run's
//                       raw figures, bench/.cache/results.json
//
// The groups, in the order they run (bench/groups/, each a run(ctx) over the shared
// harness bench/harness.js, the paths and plan of bench/context.js and the set-up of
// bench/setup.js): peak (bench/peak.c, bench/gemm.c); matrix: MiniLM-L6 by thread
// count and dtype (f32, q8), swapformer against onnxruntime-web alternately on the
// same weights and ids after cross-checking their outputs, a fresh Node process
// per thread count (bench/matrix.js); chromium.matrix: the same in a fresh
// Chromium page per thread count (bench/browser.js), with CPU profiles of the
// relaxed build; accuracy: int8 against f32; one-thread: the one-thread f32
// cases of the other shapes; memory: load memory, cold start and memory in fresh
// child processes (bench/probe.js); long: long sequences; chromium.oneThread:
// the one-thread cases and cold start in Chromium; end-to-end: texts/s of
// embedding a corpus of real sentences, swapformer's loadPretrained + embed
// against transformers.js's feature-extraction pipeline, in Node and Chromium.
// Before them the set-up builds the peak micro-benchmark and the matrix products
// alone and writes the model files and their ONNX exports (bench/export_onnx.py,
// Debian's PyTorch and python3-onnx) into bench/.cache/, only when missing or
// outdated. After them bench/report.js makes the tables and bench/write.js
// writes RESULTS.md and the README block (bench/.cache/README-performance.md).
// How busy the rest of the machine was is measured alongside (bench/quiet.js).
import { readFileSync, writeFileSync, existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import os from 'node:os';
import * as H from './harness.js';
import { cpuMeter, waitQuiet } from './quiet.js';
import { BENCH, CACHE, DIST, ORT_WASM, distIds, threadCounts, log } from './context.js';
import { machine, prepare, sizes } from './setup.js';
import { report, failures } from './report.js';
import { resultsMd, readmeBlock, updateReadme, updateReadmeHeadline, patchResultsMd } from './write.js';
import * as peak from './groups/peak.js';
import * as matrix from './groups/matrix.js';
import * as chromium from './groups/chromium.js';
import * as accuracy from './groups/accuracy.js';
import * as oneThread from './groups/one-thread.js';
import * as memory from './groups/memory.js';
import * as long from './groups/long.js';
import * as endToEnd from './groups/end-to-end.js';

export { updateReadme };

/**
 * The groups in order. The comparison of thread counts and dtypes first, Node then
 * Chromium, while the machine is as quiet as it will be; then the rest.
 */
const GROUPS = [peak.run, matrix.run, chromium.matrix, accuracy.run, oneThread.run, memory.run, long.run, chromium.oneThread, endToEnd.run];

export function parseFlags(argv) {
  const flag = (n) => argv.includes(`--${n}`);
  const val = (n, d) => (argv.find((a) => a.startsWith(`--${n}=`)) ?? `=${d}`).split('=')[1];
  const opts = {
    quick: flag('quick'),
    skipLong: flag('skip-long') || flag('quick'),
    longT: +val('long-T', 8192),
    only: val('only', 'all'),
    browser: !flag('no-browser'),
    write: !flag('no-write'),
    readme: flag('update-readme'),
    fromJson: flag('from-json'),
    threads: argv.some((a) => a.startsWith('--threads=')) ? val('threads', '1').split(',').map(Number) : undefined,
    waitQuiet: argv.some((a) => a === '--wait-quiet' || a.startsWith('--wait-quiet=')) ? +(val('wait-quiet', '0.5') || 0.5) : 0,
    endToEnd: !flag('no-end-to-end'),
    e2eRuns: +val('e2e-runs', flag('quick') ? 1 : 5),
    e2eTexts: +val('e2e-texts', flag('quick') ? 128 : 2000),
  };
  // the groups' switches: --only=end-to-end runs that group alone (in Node and Chromium)
  opts.e2eOnly = opts.only === 'end-to-end';
  opts.nodeOn = opts.only !== 'browser' && !opts.e2eOnly;
  opts.browserOn = opts.browser && opts.only !== 'node' && !opts.e2eOnly;
  return opts;
}

/** Writes RESULTS.md and results.json, and the README block (into the README with --update-readme). */
function write(R, table, opts) {
  if (opts.write) {
    writeFileSync(join(BENCH, 'RESULTS.md'), resultsMd(R, table));
    writeFileSync(join(CACHE, 'results.json'), JSON.stringify(R, null, 1));
    log(`\nwrote bench/RESULTS.md (raw figures: bench/.cache/results.json)`);
  }
  if (opts.readme) {
    if (updateReadmeHeadline(R)) log("updated the README's end-to-end headline");
    if (updateReadme(readmeBlock(R))) log('updated the README "Performance" block');
    else log('the README has no <!-- bench:begin --> block: not added (bench/.cache/README-performance.md has it)');
  }
  if (opts.write) {
    writeFileSync(join(CACHE, 'README-performance.md'), `${readmeBlock(R)}\n`);
    log("README block: bench/.cache/README-performance.md (--update-readme puts it between a README's <!-- bench:begin --> and end)");
  }
}

export async function main(argv = process.argv.slice(2)) {
  const opts = parseFlags(argv);
  if (opts.fromJson && opts.e2eOnly && existsSync(join(CACHE, 'results-e2e.json'))) {
    // the last --only=end-to-end run's, patched in
    const R = JSON.parse(readFileSync(join(CACHE, 'results-e2e.json'), 'utf8'));
    patchResultsMd(R);
    if (opts.readme) updateReadmeHeadline(R);
    log(
      `rewrote the end-to-end section of bench/RESULTS.md${opts.readme ? ' and the README headline' : ''} from bench/.cache/results-e2e.json (${R.machine.date})`,
    );
    return;
  }
  if (opts.fromJson) {
    // no measuring: rewrite the reports from the last run's raw figures
    const R = JSON.parse(readFileSync(join(CACHE, 'results.json'), 'utf8'));
    writeFileSync(join(BENCH, 'RESULTS.md'), resultsMd(R, report(R)));
    if (opts.readme) updateReadme(readmeBlock(R));
    log(`rewrote bench/RESULTS.md${opts.readme ? ' and the README block' : ''} from bench/.cache/results.json (${R.machine.date})`);
    return;
  }
  process.env.BENCH_PID = String(process.pid); // bench/quiet.js: this process's tree is the benchmark
  mkdirSync(CACHE, { recursive: true });
  if (!existsSync(DIST.plain)) throw new Error('dist/swapformer.wasm is missing: run ./build.sh first');
  if (!existsSync(ORT_WASM)) throw new Error('onnxruntime-web is not installed: npm ci');

  const R = { machine: machine(), quick: opts.quick, peaks: {} };
  R.machine.dist = distIds();
  const counts = threadCounts(R.machine.cores, opts.threads);
  R.threadCounts = counts;
  log(`bench: ${R.machine.cpu}, ${R.machine.cores} cores (thread counts ${counts.join(', ')}); Node ${R.machine.node}; onnxruntime-web ${R.machine.ort}`);

  const sf = await import('../bindings/index.js');
  R.features = sf.features;
  const built = await prepare(opts, sf);

  if (opts.waitQuiet) R.machine.waited = { below: opts.waitQuiet, load: await waitQuiet({ below: opts.waitQuiet, log }) };
  const t0 = performance.now();
  R.machine.load = os.loadavg()[0];
  const whole = cpuMeter();
  const section = async (name, fn) => {
    const m = cpuMeter(),
      t = performance.now();
    try {
      return await fn();
    } finally {
      (R.sections ??= {})[name] = { ...m.stop(), minutes: (performance.now() - t) / 60e3 };
      const x = R.sections[name];
      log(
        `  [${name}: ${x.minutes.toFixed(1)} min; other processes ${x.foreign === undefined ? '?' : H.fmt.pct(x.foreign)} of the CPUs; load ${x.load.map((l) => l.toFixed(2)).join(' -> ')}]`,
      );
    }
  };
  const ctx = { opts, R, sf, counts, section, ...built };
  for (const group of opts.e2eOnly ? [endToEnd.run] : GROUPS) await group(ctx);

  R.sizes = sizes(built.relaxedBuilt);
  R.machine.loadEnd = os.loadavg()[0];
  R.machine.whole = whole.stop();
  R.machine.minutes = (performance.now() - t0) / 60e3;
  if (JSON.stringify(distIds()) !== JSON.stringify(R.machine.dist)) {
    log('note: dist/*.wasm was rebuilt during the run; every figure here is of the copies taken at the start (bench/.cache/dist/)');
  }
  if (!R.peaks.node) R.peaks.node = { plain: { reg: NaN, gemm: NaN } };

  const full = opts.e2eOnly ? endToEnd.mergeInto(R) : R;
  const table = report(full);
  log('');
  log(table);
  if (full === R && opts.e2eOnly) {
    // no full run's results.json to merge into: patch the reports on disk
    if (opts.write && patchResultsMd(R)) log('\nreplaced the end-to-end section of bench/RESULTS.md (the rest kept)');
    if (opts.write) writeFileSync(join(CACHE, 'results-e2e.json'), JSON.stringify(R, null, 1));
    if (opts.readme && updateReadmeHeadline(R)) log("updated the README's end-to-end headline");
  } else write(full, table, opts);
  log(`bench: ${R.machine.minutes.toFixed(1)} min of measuring`);
  const failed = Object.values(failures(full)).flat();
  if (failed.length) {
    log(`CROSS-CHECK FAILED: ${failed.join('; ')}`);
    process.exitCode = 1;
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await main();
