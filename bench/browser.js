// The benchmark in headless Chromium: a tiny static server over the repository
// (application/wasm MIME, COOP/COEP headers) and playwright-core driving
// Debian's /usr/bin/chromium (never a downloaded browser). The page runs
// bench/page.js, which uses the same harness as Node (bench/harness.js).
//
// bench.js calls runBrowser(); alone:  node bench/browser.js  (needs bench.js to
// have filled bench/.cache/ once).
import { createServer } from 'node:http';
import { createReadStream, existsSync, statSync } from 'node:fs';
import { extname, join, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update'];

const MIME = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.mjs': 'text/javascript; charset=utf-8',
  '.json': 'application/json', '.wasm': 'application/wasm', '.onnx': 'application/octet-stream',
  '.safetensors': 'application/octet-stream', '.map': 'application/json',
};

/** Serves ROOT on 127.0.0.1 (a free port); resolves to {url, close}. */
export function serve(root = ROOT) {
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    const file = normalize(join(root, path));
    const headers = {
      'Cross-Origin-Opener-Policy': 'same-origin',
      'Cross-Origin-Embedder-Policy': 'require-corp',
      'Cross-Origin-Resource-Policy': 'same-origin',
      'Cache-Control': 'no-store',
    };
    if (!(file + sep).startsWith(root) || !existsSync(file) || !statSync(file).isFile()) {
      res.writeHead(404, headers).end('not found');
      return;
    }
    res.writeHead(200, { ...headers, 'Content-Type': MIME[extname(file)] ?? 'application/octet-stream', 'Content-Length': statSync(file).size });
    createReadStream(file).pipe(res);
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => resolve({
      url: `http://127.0.0.1:${server.address().port}`,
      close: () => new Promise((r) => { server.closeAllConnections?.(); server.close(r); }),
    }));
  });
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
