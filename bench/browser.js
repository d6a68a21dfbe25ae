// The benchmark in headless Chromium: the demo's static server (web/server.js,
// with bench/ and onnxruntime-web's dist/ served too: application/wasm MIME,
// COOP/COEP headers) and playwright-core driving Debian's /usr/bin/chromium
// (never a downloaded browser). The page runs bench/page.js, which uses the same
// harness as Node (bench/harness.js).
//
// bench.js calls runBrowser(); alone:  node bench/browser.js  (needs bench.js to
// have filled bench/.cache/ once).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { startServer } from '../web/server.js';

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
 * Runs the page benchmark. plan = {cases: [spec for page.runCase, ...] or a
 * function (results so far) -> next spec | null, cold: [{name, model, onnx,
 * T, vocab, runs}]}. Returns {version, relaxed, peaks, cases, cold, wasmFiles}.
 */
export async function runBrowser(plan, { log = console.log } = {}) {
  const srv = await serve();
  const browser = await launch();
  const out = { version: browser.version(), cases: [], cold: null, wasmFiles: new Set() };
  const newPage = async (ctx) => {
    const page = await ctx.newPage();
    page.on('console', (m) => { if (m.type() === 'log') log(`  [chromium] ${m.text()}`); else if (m.type() === 'error') log(`  [chromium error] ${m.text()}`); });
    page.on('pageerror', (e) => log(`  [chromium page error] ${e.message}`));
    page.on('request', (r) => { if (r.url().endsWith('.wasm')) out.wasmFiles.add(new URL(r.url()).pathname); });
    await page.goto(`${srv.url}/bench/page.html`);
    if (!(await page.evaluate(() => self.crossOriginIsolated))) log('  [chromium] warning: page is not cross-origin isolated');
    return page;
  };
  try {
    const ctx = await browser.newContext();
    const page = await newPage(ctx);
    const call = (fn, arg) => page.evaluate(async ([fn, arg]) => (await import('/bench/page.js'))[fn](arg), [fn, arg]);
    out.relaxed = await call('relaxedSupported');
    log(`Chromium ${out.version}: relaxed SIMD ${out.relaxed ? 'on' : 'off'}`);
    out.peaks = { plain: await call('peak', 'peak') };
    if (out.relaxed) out.peaks.relaxed = await call('peak', 'peak-relaxed');
    for (const [k, p] of Object.entries(out.peaks)) log(`  peak ${k}: reg ${p.reg.toFixed(1)} GFLOP/s (N=${p.regN}), gemm ${p.gemm.toFixed(1)} (${p.gemmKernel})`);
    const next = typeof plan.cases === 'function' ? plan.cases : ((list) => (done) => list[done.length] ?? null)(plan.cases);
    for (let spec = next(out.cases); spec; spec = next(out.cases)) {
      log(`  ${spec.shape} T=${spec.T} (chromium)`);
      try {
        out.cases.push(await call('runCase', spec));
      } catch (e) {
        log(`  ${spec.shape} T=${spec.T}: ${e.message.split('\n')[0]}`);
        out.cases.push({ shape: spec.shape, T: spec.T, error: e.message.split('\n')[0] });
      }
    }
    await ctx.close();
    if (plan.cold) {
      // every cold start in a new browser context: no HTTP cache, no wasm code cache
      out.cold = {};
      for (const c of plan.cold) {
        const times = out.cold[c.name] = { swapformer: [], ort: [] };
        for (let i = 0; i < c.runs; i++) {
          for (const rt of i % 2 ? ['ort', 'swapformer'] : ['swapformer', 'ort']) {
            const cctx = await browser.newContext();
            const p = await newPage(cctx);
            times[rt].push(await p.evaluate(async (a) => (await import('/bench/page.js')).coldStart(a),
              { runtime: rt, model: rt === 'ort' ? c.onnx : c.model, T: c.T, vocab: c.vocab, relaxedBuilt: c.relaxedBuilt }));
            await cctx.close();
          }
        }
        log(`  cold start ${c.name}: swapformer ${times.swapformer.map((t) => t.coldMs.toFixed(0)).join(' ')} ms; ORT ${times.ort.map((t) => t.coldMs.toFixed(0)).join(' ')} ms`);
      }
    }
  } finally {
    await browser.close();
    await srv.close();
  }
  out.wasmFiles = [...out.wasmFiles];
  return out;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { main } = await import('./bench.js');
  await main(['--only=browser', ...process.argv.slice(2)]);
}
