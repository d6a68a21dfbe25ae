// The bundler matrix: the packed tarball installed into a fresh folder as a
// user would, a small app bundled by esbuild (esm and iife), Vite (build and
// dev server), webpack 5 and Rollup, each bundle loaded in Debian's Chromium
// (playwright-core) and its forward pass checked against Node's; plus a plain
// page with an import map, a module worker, an import from another origin (a
// CDN), and pages with a Content-Security-Policy with and without
// 'wasm-unsafe-eval'. Every bundle also pulls in the tokenizer and the
// pretrained-model loader modules (whatever of them exists), so that a module
// a bundler cannot take fails here.
//
// Needs /usr/bin/chromium (./build.sh test installs it) and the bundlers
// (devDependencies). Missing either is a failure, not a skip.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, createReadStream, existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { installPacked, writeFiles, checkModule, assertMatchesNode } from './packaging.js';

const CHROMIUM = process.env.SWAPFORMER_CHROMIUM || '/usr/bin/chromium';
const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update'];

const MIME = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.wasm': 'application/wasm',
  '.json': 'application/json',
  '.css': 'text/css',
};

/** A static server for dir; headers(urlPath) adds headers (CSP, CORS). */
async function serve(dir, headers = () => ({})) {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://x');
    let file = path.join(dir, decodeURIComponent(url.pathname));
    if (!file.startsWith(dir)) {
      res.writeHead(403);
      res.end();
      return;
    }
    if (existsSync(file) && statSync(file).isDirectory()) file = path.join(file, 'index.html');
    if (!existsSync(file)) {
      res.writeHead(404, { 'Content-Type': 'text/plain', ...headers(url.pathname) });
      res.end('not found');
      return;
    }
    res.writeHead(200, { 'Content-Type': MIME[path.extname(file)] ?? 'application/octet-stream', 'Cache-Control': 'no-store', ...headers(url.pathname) });
    createReadStream(file).pipe(res);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    base: `http://127.0.0.1:${server.address().port}`,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(r);
      }),
  };
}

const PAGE = (script, head = '') =>
  `<!doctype html><meta charset="utf-8"><link rel="icon" href="data:,"><title>swapformer</title>${head}<script ${script}></script>\n`;

// The app: check() (the forward pass), extras() (the tokenizer and pretrained modules, kept by the namespace objects).
function appFiles(dir, srcDir, main) {
  const bindings = path.join(dir, 'node_modules', 'swapformer', 'bindings');
  const extra = [
    'tokenizers/tokenizer.js',
    ...(existsSync(path.join(bindings, 'pretrained'))
      ? readdirSync(path.join(bindings, 'pretrained'))
          .filter((f) => f.endsWith('.js'))
          .map((f) => `pretrained/${f}`)
      : []),
  ];
  const rel = path.relative(path.join(dir, srcDir), bindings);
  return {
    [`${srcDir}/check.js`]: checkModule('swapformer'),
    [`${srcDir}/extras.js`]: `${extra.map((f, i) => `import * as m${i} from '${rel}/${f}';`).join('\n')}
export const extras = () => ({ ${extra.map((f, i) => `${JSON.stringify(f)}: Object.keys(m${i}).length`).join(', ')} });\n`,
    [`${srcDir}/main.js`]: main,
  };
}

const MAIN = {
  // Vite, webpack: nothing to configure
  plain: `import { check } from './check.js';
import { extras } from './extras.js';
window.__result = check().then((r) => ({ ...r, extras: extras() }));
`,
  // esbuild (esm): the wasm files through the file loader, handed to configure
  esbuildFiles: `import simd from 'swapformer/swapformer.wasm';
import relaxed from 'swapformer/swapformer-relaxed.wasm';
import { check, configure } from './check.js';
import { extras } from './extras.js';
configure({ wasmPaths: { simd, relaxed } });
window.__result = check().then((r) => ({ ...r, extras: extras() }));
`,
  // esbuild (iife), Rollup: the wasm files copied beside the bundle; before configure, WASM_LOAD
  copied: `import { check, configure } from './check.js';
import { extras } from './extras.js';
window.__result = (async () => {
  const before = await check();
  configure({ wasmPaths: './' });
  return { ...(await check()), before, extras: extras() };
})();
`,
};

function copyWasm(dir, to) {
  for (const f of ['swapformer.wasm', 'swapformer-relaxed.wasm']) copyFileSync(path.join(dir, 'node_modules', 'swapformer', 'dist', f), path.join(to, f));
}

test(
  'bundlers and pages: esbuild (esm, iife), Vite (build, dev), webpack 5, Rollup, an import map, a module worker, a CDN, CSP',
  { timeout: 240_000 },
  async (t) => {
    assert.ok(existsSync(CHROMIUM), `Chromium is missing at ${CHROMIUM}: install it with 'apt-get install chromium' (./build.sh test does)`);
    const { chromium } = await import('playwright-core');
    const app = installPacked({ prefix: 'swapformer-bundlers-' });
    t.after(app.cleanup);
    const { dir } = app;
    const out = (name) => path.join(dir, name);
    const times = {};
    const timed = async (name, fn) => {
      const t0 = performance.now();
      const r = await fn();
      times[name] = Math.round(performance.now() - t0);
      return r;
    };
    const warnings = {};

    // ---------------------------------------------------------------- bundles
    const esbuild = await import('esbuild');
    writeFiles(dir, appFiles(dir, 'src-esbuild-esm', MAIN.esbuildFiles));
    await timed('esbuild esm', () =>
      esbuild
        .build({
          absWorkingDir: dir,
          entryPoints: ['src-esbuild-esm/main.js'],
          outdir: out('esbuild-esm'),
          bundle: true,
          format: 'esm',
          platform: 'browser',
          loader: { '.wasm': 'file' },
          minify: true,
          logLevel: 'silent',
        })
        .then((r) => {
          warnings['esbuild esm'] = r.warnings.map((w) => w.text);
        }),
    );
    writeFiles(dir, { 'esbuild-esm/index.html': PAGE('type="module" src="./main.js"') });

    writeFiles(dir, appFiles(dir, 'src-esbuild-iife', MAIN.copied));
    await timed('esbuild iife', () =>
      esbuild
        .build({
          absWorkingDir: dir,
          entryPoints: ['src-esbuild-iife/main.js'],
          outdir: out('esbuild-iife'),
          bundle: true,
          format: 'iife',
          platform: 'browser',
          minify: true,
          logLevel: 'silent',
        })
        .then((r) => {
          warnings['esbuild iife'] = r.warnings.map((w) => w.text);
        }),
    );
    copyWasm(dir, out('esbuild-iife'));
    writeFiles(dir, { 'esbuild-iife/index.html': PAGE('src="./main.js"') });

    const vite = await import('vite');
    writeFiles(dir, { ...appFiles(dir, 'src-vite', MAIN.plain), 'src-vite/index.html': PAGE('type="module" src="./main.js"') });
    const viteLog = [];
    const customLogger = {
      info() {},
      warn: (m) => viteLog.push(m),
      warnOnce: (m) => viteLog.push(m),
      error: (m) => viteLog.push(m),
      clearScreen() {},
      hasErrorLogged: () => false,
      hasWarned: false,
    };
    await timed('Vite build', () =>
      vite.build({
        root: out('src-vite'),
        base: './',
        configFile: false,
        customLogger,
        logLevel: 'warn',
        build: { outDir: out('vite'), emptyOutDir: true },
      }),
    );
    warnings['Vite build'] = viteLog.splice(0);
    const viteDev = await timed('Vite dev start', () =>
      vite
        .createServer({
          root: out('src-vite'),
          configFile: false,
          customLogger,
          logLevel: 'warn',
          server: { port: 0, host: '127.0.0.1', strictPort: false, hmr: false },
        })
        .then((s) => s.listen()),
    );
    t.after(() => viteDev.close());
    const viteDevBase = viteDev.resolvedUrls.local[0];

    const webpack = (await import('webpack')).default;
    writeFiles(dir, { ...appFiles(dir, 'src-webpack', MAIN.plain), 'webpack/index.html': PAGE('src="./main.js"') });
    await timed(
      'webpack',
      () =>
        new Promise((resolve, reject) =>
          webpack(
            {
              mode: 'production',
              context: dir,
              entry: './src-webpack/main.js',
              target: 'web',
              devtool: false,
              output: { path: out('webpack'), filename: 'main.js', publicPath: 'auto' },
              performance: { hints: false },
            },
            (err, stats) => {
              if (err) return reject(err);
              const info = stats.toJson({ all: false, errors: true, warnings: true });
              if (stats.hasErrors()) return reject(new Error(`webpack: ${info.errors.map((e) => e.message).join('\n')}`));
              warnings.webpack = info.warnings.map((w) => w.message);
              resolve();
            },
          ),
        ),
    );

    const { rollup } = await import('rollup');
    const { nodeResolve } = await import('@rollup/plugin-node-resolve');
    writeFiles(dir, { ...appFiles(dir, 'src-rollup', MAIN.copied), 'rollup/index.html': PAGE('type="module" src="./main.js"') });
    warnings.Rollup = [];
    await timed('Rollup', async () => {
      const bundle = await rollup({
        input: out('src-rollup/main.js'),
        plugins: [nodeResolve({ browser: true })],
        onwarn: (w) => warnings.Rollup.push(w.message),
      });
      await bundle.write({ dir: out('rollup'), format: 'es', entryFileNames: 'main.js' });
      await bundle.close();
    });
    copyWasm(dir, out('rollup'));

    // ---------------------------------------------------------------- pages without a bundler
    // the bundles hold nothing of the native backend: no .node file, not its loader (reached by a
    // computed import in Node only), which the bundlers neither follow nor copy as an asset
    const files = (d) => readdirSync(d, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(path.join(d, e.name)) : [path.join(d, e.name)]));
    for (const name of ['esbuild-esm', 'esbuild-iife', 'vite', 'webpack', 'rollup'])
      for (const f of files(out(name))) {
        assert.ok(!f.endsWith('.node'), `${name}: ${f}`);
        if (/\.m?js$/.test(f)) assert.doesNotMatch(readFileSync(f, 'utf8'), /process\.dlopen|prebuilds\//, `${name}: ${f} holds the native loader`);
      }
    const importMap = (url) => `<script type="importmap">${JSON.stringify({ imports: { swapformer: url } })}</script>`;
    writeFiles(dir, {
      'plain/check.js': checkModule('swapformer'),
      'plain/main.js': `import { check } from './check.js';\nwindow.__result = check();\n`,
      'plain/index.html': PAGE('type="module" src="./main.js"', importMap('/node_modules/swapformer/bindings/index.js')),
      'worker/check.js': checkModule('/node_modules/swapformer/bindings/index.js'),
      'worker/worker.js': `import { check } from './check.js';\ncheck().then((r) => postMessage(r));\n`,
      'worker/main.js': `const w = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
window.__result = new Promise((resolve, reject) => { w.onmessage = (e) => resolve(e.data); w.onerror = (e) => reject(new Error(e.message)); });\n`,
      'worker/index.html': PAGE('type="module" src="./main.js"'),
      'csp-strict/check.js': checkModule('/node_modules/swapformer/bindings/index.js'),
      'csp-strict/main.js': `import { check } from './check.js';\nwindow.__result = check();\n`,
      'csp-strict/index.html': PAGE('type="module" src="./main.js"'),
      'csp-ok/check.js': checkModule('/node_modules/swapformer/bindings/index.js'),
      'csp-ok/main.js': `import { check } from './check.js';\nwindow.__result = check();\n`,
      'csp-ok/index.html': PAGE('type="module" src="./main.js"'),
    });
    const CSP = {
      '/csp-strict/': "default-src 'self'; img-src data:; script-src 'self'",
      '/csp-ok/': "default-src 'self'; img-src data:; script-src 'self' 'wasm-unsafe-eval'",
    };
    const site = await serve(dir, (p) => {
      const prefix = Object.keys(CSP).find((k) => p.startsWith(k));
      return prefix ? { 'Content-Security-Policy': CSP[prefix] } : {};
    });
    t.after(() => site.close());
    // another origin, as a CDN: the package's files with CORS headers
    const cdn = await serve(dir, () => ({ 'Access-Control-Allow-Origin': '*' }));
    t.after(() => cdn.close());
    writeFiles(dir, {
      'cdn/check.js': checkModule('swapformer'),
      'cdn/main.js': `import { check } from './check.js';\nwindow.__result = check();\n`,
      'cdn/index.html': PAGE('type="module" src="./main.js"', importMap(`${cdn.base}/node_modules/swapformer/bindings/index.js`)),
    });

    // ---------------------------------------------------------------- Chromium
    const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
    t.after(() => browser.close());
    const load = async (url, { expectConsoleErrors = false } = {}) => {
      const page = await browser.newPage();
      const problems = [];
      page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
      if (!expectConsoleErrors) {
        page.on('console', (m) => {
          if (m.type() === 'error') problems.push(`console error: ${m.text()}`);
        });
        page.on('response', (r) => {
          if (r.status() >= 400) problems.push(`HTTP ${r.status()}: ${r.url()}`);
        });
      }
      try {
        await page.goto(url);
        await page.waitForFunction(() => window.__result !== undefined, null, { timeout: 30_000 });
        const result = await page.evaluate(() => window.__result);
        return { result, problems };
      } finally {
        await page.close();
      }
    };

    const summary = [];
    const cases = [
      ['esbuild esm (file loader + configure)', `${site.base}/esbuild-esm/`],
      ['esbuild iife (copied wasm + configure)', `${site.base}/esbuild-iife/`, { before: /no usable import\.meta\.url.*Fix:.*configure/ }],
      ['Vite build', `${site.base}/vite/`],
      ['Vite dev server', viteDevBase],
      ['webpack 5', `${site.base}/webpack/`],
      ['Rollup (copied wasm + configure)', `${site.base}/rollup/`, { before: /HTTP 404.*Fix:.*configure/, expectConsoleErrors: true }],
      ['plain page, import map', `${site.base}/plain/`],
      ['module worker', `${site.base}/worker/`],
      ['CDN (another origin, import map)', `${site.base}/cdn/`],
      ["CSP with 'wasm-unsafe-eval'", `${site.base}/csp-ok/`],
    ];
    for (const [name, url, opts = {}] of cases) {
      await t.test(name, async (t) => {
        const { result, problems } = await load(url, opts);
        assert.deepEqual(problems, [], `${name}: page problems`);
        const how = await assertMatchesNode(assert, result, name);
        assert.ok(result.exports.includes('configure') && result.exports.includes('createEncoder'), `${name}: exports ${result.exports}`);
        if (opts.before) {
          assert.equal(result.before?.error?.code, 'WASM_LOAD', `${name}: before configure`);
          assert.match(result.before.error.message, opts.before);
        }
        if (result.extras)
          assert.ok(
            Object.values(result.extras).every((n) => n > 0),
            `${name}: extras ${JSON.stringify(result.extras)}`,
          );
        const time = Object.entries(times).filter(([k]) => name.startsWith(k.split(' (')[0]) && name.includes(k.split(' ')[1] ?? ''));
        summary.push(`${name}: ${how}`);
        t.diagnostic(
          `${how}${result.extras ? `; bundled also ${Object.keys(result.extras).join(', ')}` : ''}${time.length ? `; built in ${time.map(([, ms]) => `${ms} ms`).join(', ')}` : ''}`,
        );
      });
    }
    await t.test("CSP without 'wasm-unsafe-eval': WASM_LOAD naming the fix", async (t) => {
      const { result, problems } = await load(`${site.base}/csp-strict/`, { expectConsoleErrors: true });
      assert.deepEqual(problems, []);
      assert.equal(result.error?.code, 'WASM_LOAD', JSON.stringify(result));
      assert.match(
        result.error.message,
        /\/node_modules\/swapformer\/dist\/swapformer(-relaxed)?\.wasm.*Content-Security-Policy.*Fix: add 'wasm-unsafe-eval' to the policy's script-src/,
      );
      t.diagnostic(result.error.message);
    });
    t.diagnostic(`build times (ms): ${JSON.stringify(times)}`);
    for (const [k, v] of Object.entries(warnings)) if (v.length) t.diagnostic(`${k} warnings: ${v.join(' | ').slice(0, 400)}`);
  },
);
