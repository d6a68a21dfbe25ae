// The benchmark in headless Chromium: the demo's static server (web/server.js,
// with bench/ and onnxruntime-web's dist/ served too: application/wasm MIME,
// COOP/COEP headers) and playwright-core driving Debian's /usr/bin/chromium
// (never a downloaded browser). The page runs bench/page.js, which uses the same
// harness as Node (bench/harness.js).
//
// bench.js calls runBrowser(); the Chromium part alone:  npm run bench -- --only=browser
import { existsSync } from 'node:fs';
import { startServer } from '../web/server.js';
import { cpuMeter } from './quiet.js';
import { selfTimes } from './harness.js';

export const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update'];

/** The folders the page needs besides web/, bindings/, dist/ and models/ (URL prefix: repository folder). */
const BENCH_ROOTS = { bench: 'bench', 'node_modules/onnxruntime-web/dist': 'node_modules/onnxruntime-web/dist' };

/** Serves the page with web/server.js on 127.0.0.1 (a free port); resolves to {url, close}. */
export async function serve() {
  const srv = await startServer({ port: 0, roots: BENCH_ROOTS });
  return { url: `http://127.0.0.1:${srv.port}`, close: srv.close };
}

async function launch() {
  if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM} (apt-get install chromium)`);
  const { chromium } = await import('playwright-core');
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
}

/**
 * Chromium's CPU profile (CDP Profiler, through playwright's CDP session) of
 * `runs` forwards of one encoder in the page (page.js profileSetup / profileRun),
 * sampled every `interval` us. Resolves to harness.selfTimes's {samples, ms, functions}.
 */
async function cpuProfile(page, call, setup, { runs = 5, interval = 100 } = {}) {
  const info = await call('profileSetup', setup);
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Profiler.enable');
  await cdp.send('Profiler.setSamplingInterval', { interval });
  await cdp.send('Profiler.start');
  const wall = await call('profileRun', runs);
  const { profile } = await cdp.send('Profiler.stop');
  await cdp.send('Profiler.disable');
  await cdp.detach();
  await call('profileClose');
  return { ...info, runs, wallMs: wall, interval, ...selfTimes(profile) };
}

/**
 * Runs the page benchmark. plan = {matrix: [{threads, cases: [spec for
 * page.runMatrix, ...]}] (one page each: onnxruntime-web reads its thread count
 * once), peaks: false to skip the peak, seed: cases measured already (the
 * start of `cases`), cases: [spec for page.runCase, ...] or a function (results so
 * far) -> next spec | null, profiles: [spec for page.profileSetup, ...], cold:
 * [{name, model, onnx, T, vocab, runs}], endToEnd: spec for e2e-page.run}. Returns {version,
 * relaxed, peaks, matrix, cases, profiles, cold, endToEnd, wasmFiles}.
 */
export async function runBrowser(plan, { log = console.log } = {}) {
  const srv = await serve();
  const browser = await launch();
  const out = { version: browser.version(), cases: [], cold: null, wasmFiles: new Set() };
  const newPage = async (ctx) => {
    const page = await ctx.newPage();
    page.on('console', (m) => {
      if (m.type() === 'log') log(`  [chromium] ${m.text()}`);
      else if (m.type() === 'error') log(`  [chromium error] ${m.text()}`);
    });
    page.on('pageerror', (e) => log(`  [chromium page error] ${e.message}`));
    page.on('request', (r) => {
      if (r.url().endsWith('.wasm')) out.wasmFiles.add(new URL(r.url()).pathname);
    });
    await page.goto(`${srv.url}/bench/page.html`);
    if (!(await page.evaluate(() => self.crossOriginIsolated))) log('  [chromium] warning: page is not cross-origin isolated');
    return page;
  };
  // a fresh context (no HTTP or code cache) and page; call(fn, arg) runs page.js's fn there
  const openPage = async () => {
    const ctx = await browser.newContext();
    const page = await newPage(ctx);
    return { page, call: (fn, arg) => page.evaluate(async ([fn, arg]) => (await import('/bench/page.js'))[fn](arg), [fn, arg]), close: () => ctx.close() };
  };
  // one case, the machine's load alongside; a failure becomes a row with its error
  const runOne = async (list, spec, fn) => {
    const meter = cpuMeter();
    try {
      const c = await fn();
      c.machine = meter.stop();
      list.push(c);
    } catch (e) {
      log(`  ${spec.shape} T=${spec.T}: ${e.message.split('\n')[0]}`);
      list.push({ shape: spec.shape, T: spec.T, threads: spec.threads ?? 1, error: e.message.split('\n')[0] });
    }
  };
  try {
    const { call, close } = await openPage();
    out.relaxed = await call('relaxedSupported');
    log(`Chromium ${out.version}: relaxed SIMD ${out.relaxed ? 'on' : 'off'}`);
    if (plan.peaks !== false) {
      out.peaks = { plain: await call('peak', 'peak') };
      if (out.relaxed) out.peaks.relaxed = await call('peak', 'peak-relaxed');
      for (const [k, p] of Object.entries(out.peaks))
        log(`  peak ${k}: reg ${p.reg.toFixed(1)} GFLOP/s (N=${p.regN}), gemm ${p.gemm.toFixed(1)} (${p.gemmKernel})`);
    }
    out.matrix = [];
    for (const m of plan.matrix ?? []) {
      // a fresh page (and context) per thread count: onnxruntime-web's threads are fixed when its wasm starts
      const mp = await openPage();
      for (const spec of m.cases) {
        log(`  ${spec.shape} T=${spec.T}, ${spec.threads} thread${spec.threads > 1 ? 's' : ''} (chromium)`);
        await runOne(out.matrix, spec, () => mp.call('runMatrix', spec));
      }
      await mp.close();
    }
    out.profiles = [];
    for (const spec of plan.profiles ?? []) {
      // each in a fresh page
      const pp = await openPage();
      log(`  profile: ${spec.label} T=${spec.T}, ${spec.runs} forwards (chromium, CDP Profiler)`);
      try {
        const p = await cpuProfile(pp.page, pp.call, spec, { runs: spec.runs });
        log(
          `    ${p.ms.toFixed(0)} ms sampled in ${p.samples} samples; heaviest: ${p.functions
            .slice(0, 6)
            .map((f) => `${f.name} ${((100 * f.selfMs) / p.ms).toFixed(0)}%`)
            .join(', ')}`,
        );
        out.profiles.push({ ...spec, ...p });
      } catch (e) {
        log(`    profile failed: ${e.message.split('\n')[0]}`);
        out.profiles.push({ ...spec, error: e.message.split('\n')[0] });
      }
      await pp.close();
    }
    out.cases = [...(plan.seed ?? [])];
    const queue = typeof plan.cases === 'function' ? null : [...(plan.cases ?? [])];
    const next = queue ? () => queue.shift() ?? null : plan.cases;
    for (let spec = next(out.cases); spec; spec = next(out.cases)) {
      log(`  ${spec.shape} T=${spec.T} (chromium)`);
      await runOne(out.cases, spec, () => call('runCase', spec));
    }
    await close();
    if (plan.cold) {
      // every cold start in a new browser context: no HTTP cache, no wasm code cache
      out.cold = {};
      for (const c of plan.cold) {
        const times = (out.cold[c.name] = { swapformer: [], ort: [] });
        for (let i = 0; i < c.runs; i++) {
          for (const rt of i % 2 ? ['ort', 'swapformer'] : ['swapformer', 'ort']) {
            const cp = await openPage();
            times[rt].push(
              await cp.call('coldStart', { runtime: rt, model: rt === 'ort' ? c.onnx : c.model, T: c.T, vocab: c.vocab, relaxedBuilt: c.relaxedBuilt }),
            );
            await cp.close();
          }
        }
        log(
          `  cold start ${c.name}: swapformer ${times.swapformer.map((t) => t.coldMs.toFixed(0)).join(' ')} ms; ORT ${times.ort.map((t) => t.coldMs.toFixed(0)).join(' ')} ms`,
        );
      }
    }
    if (plan.endToEnd) {
      // bench/e2e-page.js in a fresh page: the end-to-end group
      const ep = await openPage(),
        meter = cpuMeter();
      out.endToEnd = await ep.page.evaluate(async (spec) => (await import('/bench/e2e-page.js')).run(spec), plan.endToEnd);
      out.endToEnd.machine = meter.stop();
      await ep.close();
    }
  } finally {
    await browser.close();
    await srv.close();
  }
  out.wasmFiles = [...out.wasmFiles];
  return out;
}
