// The browser demo (web/) in Debian's Chromium, driven by playwright-core.
//
// Serves the demo with web/server.js on a free port, loads it headless and
// checks, in this order: numerical correctness against PyTorch (every golden
// fixture of tests/fixtures/, model bytes and ids handed to the page, run by the
// page's own bindings with the build the page picks, relaxed SIMD, and with the
// simd128 build through the wasm option; every element within the golden
// tolerance of make_fixtures.py's float64 reference); then that the page runs
// what its controls say (every position plugin through the controls, runConfig,
// the swap panel: the page's hidden states equal this Node process's for the
// same config, seed and ids), every experiment card, the error messages, the
// "Trained models" panel (its predictions equal Node's predict() on the same
// model file and ids; the learned table's refusal, the ablation, RoPE scaling,
// the charts) and the no-SIMD message, and fails on any console error, page
// error, failed request or HTTP error. Screenshots (desktop and phone width) go
// to tests/out/, printed below: look at them.
//
// Needs /usr/bin/chromium (apt-get install chromium; ./build.sh test installs
// it) and playwright-core (npm ci). Missing either is a failure, not a skip.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import { createEncoder, listPlugins, loadModel } from '../bindings/index.js';
import { startServer } from '../web/server.js';
import { assertClose, golden, goldenTolerance, launchChromium, readFixture } from './helpers.js';
import { encode, score } from '../models/tasks.js';

const OUT_DIR = fileURLToPath(new URL('./out/', import.meta.url));
const TOLERANCE = 1e-5; // the page against Node, per element (helpers.js elementError)

/** A raw GET (no URL normalisation, unlike fetch). */
function rawGet(port, path) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path, method: 'GET' }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Collects everything that counts as a page problem. */
function watch(page, problems, label) {
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`${label} console error: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`${label} page error: ${e.message}`));
  page.on('requestfailed', (r) => problems.push(`${label} request failed: ${r.url()} (${r.failure()?.errorText})`));
  page.on('response', (r) => {
    if (r.status() >= 400) problems.push(`${label} HTTP ${r.status()}: ${r.url()}`);
  });
}

const idle = (page) => page.evaluate(() => window.swapformerDemo.whenIdle());

const PHONE = { viewport: { width: 390, height: 844 }, deviceScaleFactor: 3, isMobile: true, hasTouch: true }; // an iPhone 12

/** What a person would see wrong at the page's width, every <details> as it is: a list of lines (empty: nothing).
 * A box that scrolls sideways is one of them; one that says so under it ends in 'hinted'. */
const layoutProblems = (page) =>
  page.evaluate(() => {
    const out = [];
    const where = (el) =>
      `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''}${typeof el.className === 'string' && el.className.trim() ? `.${el.className.trim().split(/\s+/).join('.')}` : ''}` +
      (el.id ? '' : ` in #${el.parentElement.closest('[id]')?.id}`);
    const page = document.scrollingElement.scrollWidth;
    if (page > innerWidth) out.push(`the page is ${page} px wide on a ${innerWidth} px screen`);
    for (const el of document.querySelectorAll('body *')) {
      if (!el.getClientRects().length || !/auto|scroll/.test(getComputedStyle(el).overflowX) || el.scrollWidth <= el.clientWidth) continue;
      // a wide table may scroll when it says so, in words on the screen (and then says 'hinted')
      const hint = el.closest('.table-scroll')?.querySelector(':scope > .scroll-hint');
      out.push(
        `${where(el)} scrolls sideways (${el.scrollWidth} px in ${el.clientWidth}) ${hint?.getClientRects().length ? 'hinted' : 'with nothing to show it'}`,
      );
    }
    for (const c of document.querySelectorAll('canvas')) {
      if (!c.getClientRects().length) continue;
      const r = c.getBoundingClientRect(),
        box = c.parentElement.getBoundingClientRect();
      if (r.right > box.right + 0.5) out.push(`${where(c)} is cut at its right by ${Math.ceil(r.right - box.right)} px`);
      if (c.getAttribute('role') !== 'img' || (c.getAttribute('aria-label') ?? '').length < 20)
        out.push(`${where(c)} has no text alternative (role ${c.getAttribute('role')}, aria-label '${c.getAttribute('aria-label')}')`);
      if (!c.plotTexts) {
        out.push(`${where(c)}: plots.js recorded none of its texts (?debug=1)`);
        continue;
      }
      const w = parseFloat(c.style.width),
        h = parseFloat(c.style.height);
      for (const t of c.plotTexts) {
        if (t.x0 < -0.5 || t.y0 < -0.5 || t.x1 > w + 0.5 || t.y1 > h + 0.5)
          out.push(
            `${where(c)}: '${t.text}' (${t.kind}) is drawn at x ${t.x0.toFixed(1)}..${t.x1.toFixed(1)}, y ${t.y0.toFixed(1)}..${t.y1.toFixed(1)}, outside its ${w} x ${h}`,
          );
        if (t.kind === 'axis' && t.text.endsWith('…')) out.push(`${where(c)}: the axis label '${t.text}' is cut short`);
      }
      // no two texts drawn over each other (more than a pixel each way)
      const ts = c.plotTexts;
      for (let i = 0; i < ts.length; i++) {
        for (let j = i + 1; j < ts.length; j++) {
          const a = ts[i],
            b = ts[j];
          if (Math.min(a.x1, b.x1) - Math.max(a.x0, b.x0) > 1 && Math.min(a.y1, b.y1) - Math.max(a.y0, b.y0) > 1)
            out.push(`${where(c)}: '${a.text}' and '${b.text}' are drawn over each other`);
        }
      }
    }
    // an empty field's placeholder (the example it shows) is not cut
    const ctx = document.createElement('canvas').getContext('2d');
    const fontOf = (cs) => `${cs.fontStyle} ${cs.fontWeight} ${cs.fontSize} ${cs.fontFamily}`;
    for (const input of document.querySelectorAll('input[placeholder]')) {
      if (!input.getClientRects().length || input.value) continue;
      const cs = getComputedStyle(input);
      ctx.font = fontOf(getComputedStyle(input, '::placeholder'));
      const w = ctx.measureText(input.placeholder).width,
        room = input.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
      if (w > room) out.push(`${where(input)}: the placeholder '${input.placeholder}' is cut (${Math.ceil(w)} px in ${Math.floor(room)})`);
    }
    // a select whose longest option does not fit shows it cut when chosen
    for (const s of document.querySelectorAll('select')) {
      if (!s.getClientRects().length) continue;
      const cs = getComputedStyle(s);
      ctx.font = fontOf(cs);
      const room = s.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight) - 20; // the arrow
      for (const o of s.options) {
        const w = ctx.measureText(o.text).width;
        if (w > room) out.push(`${where(s)}: '${o.text}' is cut (${Math.ceil(w)} px in ${Math.floor(room)})`);
      }
    }
    return out;
  });
const MODELS = new URL('../models/', import.meta.url);

/** The number of canvas pixels that are not white (a drawn plot has thousands). */
const inkedPixels = (page, selector) =>
  page.$eval(selector, (c) => {
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let n = 0;
    for (let i = 0; i < d.length; i += 4) if (d[i] < 235 || d[i + 1] < 235 || d[i + 2] < 235) n++;
    return n;
  });
const current = (page) => page.evaluate(() => window.swapformerDemo.current());
const visible = (page, selector) => page.locator(selector).isVisible();

/** Node's forward for the page's config, seed and ids; compares every tensor. */
async function assertMatchesNode(snap, what, weights) {
  assert.equal(snap.error, null, `${what}: the page shows an error: ${snap.error?.code} ${snap.error?.message}`);
  assert.ok(snap.output, `${what}: no output in the page`);
  const enc = await createEncoder(snap.config, { seed: snap.seed, ...(weights ? { weights } : {}) });
  try {
    const ref = enc.forward(snap.ids, { outputHiddenStates: true });
    assert.deepEqual(snap.output.shape, ref.shape, `${what}: shape`);
    const err = assertClose(Float32Array.from(snap.output.data), ref.data, TOLERANCE, `${what}: output`);
    assert.equal(snap.hiddenStates.length, ref.hiddenStates.length, `${what}: number of hidden states`);
    ref.hiddenStates.forEach((h, l) => {
      assertClose(Float32Array.from(snap.hiddenStates[l].data), h.data, TOLERANCE, `${what}: hidden state ${l}`);
    });
    return err;
  } finally {
    enc.dispose();
  }
}

/** Runs golden fixture c in the page through the page's own bindings (wasm: a
 * URL path for the wasm option, or undefined for the page's default build);
 * returns the build that ran and the outputs as Float32Arrays. */
async function forwardInPage(page, c, wasm) {
  const r = await page.evaluate(
    async ({ model, ids, typeIds, skipLayers, wasm, attentions }) => {
      const api = await import('/bindings/index.js');
      const bytes = Uint8Array.from(atob(model), (ch) => ch.charCodeAt(0));
      const options = wasm ? { wasm: new URL(wasm, location.href) } : {};
      const b64 = (f) => {
        const u = new Uint8Array(f.buffer, f.byteOffset, f.byteLength);
        let s = '';
        for (let i = 0; i < u.length; i += 0x8000) s += String.fromCharCode.apply(null, u.subarray(i, i + 0x8000));
        return btoa(s);
      };
      const enc = await api.loadModel(bytes, options);
      try {
        const out = enc.forward(ids, { outputAttentions: attentions, ...(typeIds ? { typeIds } : {}), ...(skipLayers ? { skipLayers } : {}) });
        const att = attentions ? out.attentions.flatMap((a) => Array.from(a.data)) : null;
        return {
          build: (await api.runtimeInfo(options)).build,
          shape: out.shape,
          data: b64(out.data),
          logits: out.logits ? { shape: out.logits.shape, data: b64(out.logits.data) } : null,
          attentions: att ? { shape: [out.attentions.length, ...out.attentions[0].shape], data: b64(new Float32Array(att)) } : null,
        };
      } finally {
        enc.dispose();
      }
    },
    {
      model: Buffer.from(readFixture(c.file)).toString('base64'),
      ids: c.ids,
      typeIds: c.typeIds ?? null,
      skipLayers: c.skipLayers ?? null,
      wasm,
      attentions: !!c.attentions,
    },
  );
  const f32 = (b64) => {
    const b = Buffer.from(b64, 'base64');
    return new Float32Array(b.buffer, b.byteOffset, b.length / 4);
  };
  return {
    build: r.build,
    shape: r.shape,
    data: f32(r.data),
    logits: r.logits && { shape: r.logits.shape, data: f32(r.logits.data) },
    attentions: r.attentions && { shape: r.attentions.shape, data: f32(r.attentions.data) },
  };
}

test('browser demo in Chromium', { timeout: 240_000 }, async (t) => {
  mkdirSync(OUT_DIR, { recursive: true });
  const server = await startServer({ port: 0 });
  const base = `http://127.0.0.1:${server.port}`;
  let browser;
  const problems = [];
  try {
    browser = await launchChromium();
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    page.setDefaultTimeout(60_000);
    watch(page, problems, 'desktop');
    const plugins = await listPlugins();

    await t.test('the server: redirect, MIME types, isolation headers, nothing outside web/, bindings/, dist/, models/', async () => {
      const root = await rawGet(server.port, '/');
      assert.equal(root.status, 302);
      assert.equal(root.headers.location, '/web/');
      const html = await rawGet(server.port, '/web/');
      assert.equal(html.status, 200);
      assert.match(html.headers['content-type'], /^text\/html/);
      assert.equal(html.headers['cross-origin-opener-policy'], 'same-origin');
      assert.equal(html.headers['cross-origin-embedder-policy'], 'require-corp');
      const wasm = await rawGet(server.port, '/dist/swapformer.wasm');
      assert.equal(wasm.status, 200);
      assert.equal(wasm.headers['content-type'], 'application/wasm');
      assert.match((await rawGet(server.port, '/bindings/index.js')).headers['content-type'], /^text\/javascript/);
      // the trained models (read-only)
      const model = await rawGet(server.port, '/models/reverse-rope.safetensors');
      assert.equal(model.status, 200);
      assert.equal(model.headers['content-type'], 'application/octet-stream');
      assert.equal(Number(model.headers['content-length']), readFileSync(new URL('reverse-rope.safetensors', MODELS)).length);
      for (const name of ['index.json', 'results.json']) {
        const r = await rawGet(server.port, `/models/${name}`);
        assert.equal(r.status, 200, name);
        assert.match(r.headers['content-type'], /^application\/json/, name);
      }
      assert.match((await rawGet(server.port, '/models/tasks.js')).headers['content-type'], /^text\/javascript/);
      // escaping a served folder: refused (the URL parser folds plain and %2e dot segments first: 404)
      for (const path of [
        '/web/../package.json',
        '/web/%2e%2e/package.json',
        '/dist/..%2fpackage.json',
        '/bindings/..%2f..%2fetc%2fpasswd',
        '/web/..%5cpackage.json',
        '/models/../package.json',
        '/models/%2e%2e/tools/train.py',
        '/models/..%5cpackage.json',
      ]) {
        const { status } = await rawGet(server.port, path);
        assert.ok([400, 403, 404].includes(status), `${path}: HTTP ${status}`);
      }
      assert.equal((await rawGet(server.port, '/dist/..%2fpackage.json')).status, 403);
      assert.equal((await rawGet(server.port, '/models/..%2ftools%2fevaluate.mjs')).status, 403);
      for (const path of [
        '/package.json',
        '/tests/browser.test.js',
        '/node_modules/',
        '/core/api.c',
        '/web/missing.js',
        '/tools/evaluate.mjs',
        '/models/missing.safetensors',
      ]) {
        assert.equal((await rawGet(server.port, path)).status, 404, path);
      }
    });

    await t.test('loads, checks SIMD, finishes its first run and sets data-ready', async () => {
      const t0 = performance.now();
      await page.goto(`${base}/`);
      await page.waitForSelector('body[data-ready="true"]');
      await idle(page);
      t.diagnostic(`first full run (page load, wasm, every picture and experiment) in ${Math.round(performance.now() - t0)} ms`);
      assert.equal(await visible(page, '#unsupported'), false, 'the no-SIMD message is shown');
      assert.equal(await visible(page, '#error'), false, `an error is shown: ${await page.locator('#error').textContent()}`);
      assert.equal(await page.evaluate(() => window.crossOriginIsolated), true, 'the page is cross-origin isolated (COOP + COEP)');
      const status = await page.locator('#status').textContent();
      assert.match(status, /Forward [\d.]+ ms · [\d,]+ tokens\/s/);
      assert.match(await page.locator('#tokens').textContent(), /dog/);
      const positions = await page.$$eval('#position option', (os) => os.map((o) => o.value));
      assert.deepEqual(positions, plugins.position, 'the position select lists the C registry');
      for (const id of ['fig-positions', 'fig-attention', 'fig-output', 'fig-norms']) {
        assert.equal(await page.locator(`#${id} canvas`).getAttribute('data-drawn'), 'true', `${id} drew its canvas`);
      }
    });

    await t.test("the page's bindings reproduce the PyTorch fixtures: every golden case, relaxed (the page's build) and simd128", async () => {
      // the long ones (T 65 to 300, every position plugin), biases everywhere, attentions, logits, F16/BF16
      for (const name of [
        'long_straddle__alibi__layernorm__pre__gelu',
        'long__learned_L300__rmsnorm__post__gelu_tanh',
        'long__rope_half_yarn4_L64__layernorm__post__gelu',
        'long_overflow__rope_interleaved__layernorm__post__relu',
        'alibi__layernorm__pre__gelu',
        'head__rope_half__rmsnorm__pre__swiglu',
        'bf16__rope_interleaved__rmsnorm__pre__swiglu',
      ]) {
        assert.ok(
          golden.cases.some((c) => c.name === name),
          `fixture ${name}`,
        );
      }
      assert.equal(
        await page.evaluate(async () => (await (await import('/bindings/index.js')).runtimeInfo()).build),
        'relaxed-simd',
        'the page picks the relaxed-SIMD build',
      );
      const fetched = [],
        onResponse = (r) => fetched.push(new URL(r.url()).pathname);
      page.on('response', onResponse);
      const worst = {};
      for (const [label, wasm, build] of [
        ['relaxed', undefined, 'relaxed-simd'],
        ['simd128', '/dist/swapformer.wasm', 'custom'],
      ]) {
        let w = { error: 0, name: '' };
        for (const c of golden.cases) {
          const out = await forwardInPage(page, c, wasm);
          const what = `${label}: ${c.name}`;
          assert.equal(out.build, build, `${what}: build`);
          assert.deepEqual(out.shape, c.shape, `${what}: shape`);
          const tol = goldenTolerance(c);
          const errs = [assertClose(out.data, c.expected, tol, `${what}: output`)];
          const [B, T, C] = out.shape;
          for (let b = 0; b < B; b++)
            // padded rows exactly zero
            for (let i = c.ids[b].length * C; i < T * C; i++) assert.equal(out.data[b * T * C + i], 0, `${what}: padded row`);
          if (c.logits) errs.push(assertClose(out.logits.data, c.logits.data, tol, `${what}: logits`));
          else assert.equal(out.logits, null, `${what}: logits`);
          if (c.attentions) {
            assert.deepEqual(out.attentions.shape, c.attentions.shape, `${what}: attentions shape`);
            errs.push(assertClose(out.attentions.data, c.attentions.data, tol, `${what}: attentions`));
          }
          const e = Math.max(...errs) / tol;
          if (e >= w.error) w = { error: e, name: c.name, abs: Math.max(...errs) };
        }
        worst[label] = w;
      }
      page.off('response', onResponse);
      assert.ok(fetched.includes('/dist/swapformer.wasm'), `the simd128 run fetched /dist/swapformer.wasm (fetched: ${fetched.join(', ')})`);
      t.diagnostic(
        `worst per-element error (fraction of tolerance): ${Object.entries(worst)
          .map(([k, w]) => `${k} ${w.abs.toExponential(2)} (${w.name}, ${(100 * w.error).toFixed(0)}%)`)
          .join(', ')}`,
      );
    });

    await t.test("every position plugin through the controls: the page's hidden states equal Node's (per-element error <= 1e-5)", async () => {
      const errors = [];
      for (const position of plugins.position) {
        await page.selectOption('#position', position);
        await idle(page);
        const snap = await current(page);
        assert.equal(snap.config.position, position);
        const err = await assertMatchesNode(snap, position);
        errors.push(`${position} ${err.toExponential(1)}`);
        // the plugin's own picture is drawn
        const fig = { sinusoidal: '#fig-positions', learned: '#fig-positions', rope: '#fig-rope', alibi: '#fig-alibi' }[position];
        if (fig) assert.equal(await visible(page, `${fig} canvas`), true, `${position}: ${fig} shows its plot`);
      }
      t.diagnostic(`per-element errors vs Node: ${errors.join(', ')}`);
      // a different config, set through runConfig: characters, RMSNorm, post-norm, SwiGLU, 8 heads
      const snap = await page.evaluate(() =>
        window.swapformerDemo.runConfig(
          {
            position: 'rope',
            positionOptions: { base: 500, style: 'half' },
            norm: 'rmsnorm',
            normPlacement: 'post',
            finalNorm: true,
            layers: 3,
            dModel: 32,
            heads: 8,
            ffDim: 48,
            activation: 'swiglu',
            maxLen: 64,
          },
          'Dog bites man!',
          { seed: 7, tokenizer: 'characters' },
        ),
      );
      assert.equal(snap.tokenizer, 'characters');
      assert.equal(snap.ids.length, 14);
      assert.equal(snap.config.positionOptions.style, 'half');
      await assertMatchesNode(snap, 'rope/rmsnorm/post/swiglu via runConfig');
      await page.evaluate(() =>
        window.swapformerDemo.runConfig(
          {
            position: 'sinusoidal',
            positionOptions: { base: 10000 },
            norm: 'layernorm',
            normPlacement: 'pre',
            layers: 2,
            dModel: 64,
            heads: 4,
            ffDim: 256,
            activation: 'gelu',
            maxLen: 64,
          },
          'the dog bites the man',
          { seed: 1, tokenizer: 'words' },
        ),
      );
    });

    await t.test('every experiment card passes and shows its live numbers', async () => {
      const results = await page.evaluate(() => JSON.parse(JSON.stringify(window.swapformerDemo.experiments)));
      const ids = ['permutation', 'sinusoidal', 'learned', 'rope', 'alibi', 'depth', 'stream', 'qknorm', 'layers'];
      assert.deepEqual(Object.keys(results).sort(), [...ids].sort());
      for (const id of ids) {
        assert.equal(results[id].pass, true, `${id}: ${results[id].summary}`);
        assert.equal(await page.locator(`#exp-${id} .badge`).textContent(), 'PASS', `${id}: badge`);
        assert.equal(await page.locator(`#exp-${id}`).getAttribute('data-pass'), 'true');
      }
      // 1: 'none' is bit for bit; every other plugin differs (ALiBi: for the rotation)
      const rows = Object.fromEntries(results.permutation.rows.map((r) => [r.position, r]));
      assert.equal(rows.none.swap, 0);
      assert.equal(rows.none.swapBitIdentical, true);
      for (const p of ['sinusoidal', 'learned', 'rope']) assert.ok(rows[p].swap > 1e-3, `${p} differs`);
      assert.ok(rows.alibi.rotation > 1e-3);
      assert.match(await page.locator('#exp-permutation tr[data-position="none"]').textContent(), /0 \(bit for bit\)/);
      // 2: the d = 4 worked example and flat curves
      assert.equal(results.sinusoidal.worked.pe12.toFixed(5), '1.54025');
      assert.equal(results.sinusoidal.worked.pe23.toFixed(5), '1.54025');
      // 3: the error, as text in the page
      assert.equal(results.learned.learned.error.code, 'SEQUENCE_TOO_LONG');
      assert.match(await page.locator('#learned-error').textContent(), /SEQUENCE_TOO_LONG.*17 tokens.*at most 16/);
      // 4: score(3, 7) = score(10, 14)
      for (const s of results.rope.styles) assert.ok(Math.abs(s.pairs.s37 - s.pairs.s1014) < 1e-5, s.style);
      // 5: 8 and 12 heads
      const slopes = Object.fromEntries(results.alibi.models.map((m) => [m.heads, m.slopes]));
      const want12 = [...Array.from({ length: 8 }, (_, k) => 2 ** -(k + 1)), 2 ** -0.5, 2 ** -1.5, 2 ** -2.5, 2 ** -3.5];
      want12.forEach((w, h) => assert.ok(Math.abs(slopes[12][h] - w) < 1e-6, `12 heads, head ${h}`));
      slopes[8].forEach((s, h) => assert.ok(Math.abs(s - 2 ** -(h + 1)) < 1e-6, `8 heads, head ${h}`));
      // 6: depth
      assert.deepEqual(results.depth.checks, { preGrows: true, finalNormRestores: true, noFinalKeepsGrowth: true, postNormalisedEveryLayer: true });
      assert.match(await page.locator('#experiments-total').textContent(), /9 of 9 pass/);
    });

    await t.test('errors are readable messages with their code, not console errors', async () => {
      await page.fill('#heads', '5');
      await idle(page);
      assert.equal(await visible(page, '#error'), true);
      assert.match(await page.locator('#error').textContent(), /BAD_CONFIG.*dModel \(64\).*heads \(5\)/);
      const bad = await current(page);
      assert.equal(bad.error.code, 'BAD_CONFIG');
      assert.equal(bad.stale, true, "the results shown are the last good model's");
      await page.fill('#layers', '100');
      await idle(page);
      assert.match(await page.locator('#error').textContent(), /DEMO_LIMIT.*layers = 100/);
      await page.fill('#layers', '2');
      await page.fill('#heads', '4');
      await idle(page);
      assert.equal(await visible(page, '#error'), false);

      await page.selectOption('#position', 'learned');
      await page.fill('#max-len', '8');
      await page.fill('#text', 'one two three four five six seven eight nine ten');
      await idle(page);
      assert.match(await page.locator('#error').textContent(), /SEQUENCE_TOO_LONG.*10 tokens.*at most 8/);
      await page.selectOption('#position', 'alibi'); // carries on
      await idle(page);
      assert.equal(await visible(page, '#error'), false);
      assert.equal((await current(page)).output.shape[1], 10);

      await page.fill('#text', '');
      await idle(page);
      assert.match(await page.locator('#error').textContent(), /NO_TOKENS/);
      await page.fill('#text', 'the dog bites the man');
      await page.selectOption('#position', 'learned');
      await page.fill('#max-len', '64');
      await page.selectOption('#position', 'sinusoidal');
      await idle(page);
      assert.equal(await visible(page, '#error'), false);
    });

    await t.test("swap a plugin on the same weights: kept / dropped / added, and the result equals Node's", async () => {
      await page.selectOption('#position', 'learned');
      await idle(page);
      const before = await current(page);
      await page.selectOption('#swap-position', 'rope');
      await page.selectOption('#swap-norm', 'rmsnorm');
      await idle(page);
      const report = await page.evaluate(() => JSON.parse(JSON.stringify(window.swapformerDemo.app.swapReport)));
      assert.ok(report.dropped.includes('embed.positions'), 'leaving learned drops the table');
      assert.ok(report.dropped.includes('layers.0.norm1.bias'), 'RMSNorm has no bias');
      assert.ok(report.kept.includes('embed.tokens') && report.kept.includes('layers.1.ffn.down.weight'));
      assert.deepEqual(report.added, []);
      assert.ok(report.maxDiff > 0);
      assert.match(await page.locator('#swap-dropped').textContent(), /embed\.positions/);
      await page.click('#swap-button');
      await idle(page);
      const after = await current(page);
      assert.equal(after.config.position, 'rope');
      assert.equal(after.config.norm, 'rmsnorm');
      assert.equal(after.provenance.kind, 'swap');
      assert.equal(await page.locator('#position').inputValue(), 'rope', 'the model panel follows the swap');
      // Node: A's weights (same seed), minus what B does not have
      const a = await createEncoder(before.config, { seed: before.seed });
      const probe = await createEncoder(after.config, { seed: after.seed });
      const shapes = probe.weightShapes();
      const weights = Object.fromEntries(Object.entries(a.getWeights()).filter(([name]) => name in shapes));
      a.dispose();
      probe.dispose();
      await assertMatchesNode(after, 'after the swap', weights);
      // back to the default model
      await page.selectOption('#position', 'sinusoidal');
      await page.selectOption('#norm', 'layernorm');
      await idle(page);
      assert.equal((await current(page)).provenance.kind, 'seed');
    });

    await t.test("trained models: the page's predictions equal Node's, learned refuses past maxLen, the ablation collapses, the charts are drawn", async () => {
      const t0 = performance.now();
      const index = JSON.parse(readFileSync(new URL('index.json', MODELS), 'utf8'));
      const symbols = index.symbols.tokens;
      const nodeModels = new Map();
      const nodeModel = async (name) => {
        if (!nodeModels.has(name)) nodeModels.set(name, await loadModel(readFileSync(new URL(`${name}.safetensors`, MODELS))));
        return nodeModels.get(name);
      };
      const last = () => page.evaluate(() => JSON.parse(JSON.stringify(window.swapformerDemo.trained.lastPrediction)));
      /** Chooses a model and types an input through the panel's controls. */
      const choose = async (task, position, text) => {
        await page.selectOption('#trained-task', task);
        await page.selectOption('#trained-position', position);
        await page.fill('#trained-text', text);
        await idle(page);
        return last();
      };
      /** The page's prediction equals Node's predict() on the same model file and ids (or a variant built here). */
      const assertSameAsNode = async (p, name, text, enc) => {
        const ids = encode(text, symbols);
        assert.equal(p.model, name);
        assert.equal(p.error, null, `${name}: ${p.error?.code} ${p.error?.message}`);
        assert.deepEqual(p.ids, ids, `${name}: ids`);
        const want = Array.from((enc ?? (await nodeModel(name))).predict(ids));
        assert.deepEqual(p.predicted, want, `${name} '${text}': the page's predictions differ from Node's`);
        const sc = score(p.task, ids, want);
        assert.equal(p.right, sc.right, `${name}: right`);
        // what the page shows: one cell per token, the wrong ones marked, the accuracy
        assert.equal(await page.locator('#trained-tokens .tcell:not(.key)').count(), ids.length, `${name}: cells`);
        assert.equal(await page.locator('#trained-tokens .tcell.wrong:not(.marker)').count(), sc.total - sc.right, `${name}: wrong cells`);
        const shown = await page.locator('#trained-accuracy').textContent();
        assert.match(shown, new RegExp(`${sc.right} of ${sc.total} positions right`), `${name}: accuracy line '${shown}'`);
        return sc;
      };

      assert.equal((await page.evaluate(() => window.swapformerDemo.trained.info())).loaded, true, 'the panel loaded models/index.json and results.json');
      // reverse-rope at the training length (T = 32): right everywhere, as the table says
      const simple = 'abcdefghijklmnopabcdefghijklmn';
      let p = await choose('reverse', 'rope', simple);
      assert.equal(p.T, 32);
      let sc = await assertSameAsNode(p, 'reverse-rope', simple);
      assert.ok(sc.right / sc.total >= 0.95, `reverse-rope at T = 32: ${sc.right}/${sc.total}`);
      assert.match(await page.locator('#trained-accuracy-value').textContent(), /^(100|9[5-9](\.\d)?)%$/);
      assert.equal(await page.locator('#trained-length').inputValue(), '32', 'the slider follows the typed length');
      assert.equal(await page.locator('#trained-attention canvas').getAttribute('data-drawn'), 'true');
      // shift-rope at 2x the training length: RoPE carries the relative rule on
      const long = symbols.repeat(4).slice(0, 62);
      p = await choose('shift', 'rope', long);
      sc = await assertSameAsNode(p, 'shift-rope', long);
      assert.equal(sc.right, sc.total, 'shift-rope at T = 64');
      // sort-learned inside the table, shift-none (order-blind)
      p = await choose('sort', 'learned', 'hello');
      await assertSameAsNode(p, 'sort-learned', 'hello');
      p = await choose('shift', 'none', 'helloabba');
      sc = await assertSameAsNode(p, 'shift-none', 'helloabba');
      assert.ok(sc.right / sc.total < 0.5, `shift-none cannot shift: ${sc.right}/${sc.total}`);

      // learned at T = 64, through the slider: SEQUENCE_TOO_LONG in the panel, with its code
      await page.selectOption('#trained-task', 'sort');
      await page.selectOption('#trained-position', 'learned');
      await page.$eval('#trained-length', (el) => {
        el.value = '64';
        el.dispatchEvent(new Event('input', { bubbles: true }));
      });
      await idle(page);
      p = await last();
      assert.equal(p.T, 64);
      assert.equal(p.error?.code, 'SEQUENCE_TOO_LONG');
      assert.equal(p.predicted, null);
      assert.equal(await visible(page, '#trained-error'), true);
      assert.equal(await page.locator('#trained-error').getAttribute('data-code'), 'SEQUENCE_TOO_LONG');
      assert.match(await page.locator('#trained-error').textContent(), /SEQUENCE_TOO_LONG.*64 tokens.*at most 32/);
      assert.match(await page.locator('#trained-attention').textContent(), /refused/);
      assert.equal(await visible(page, '#error'), false, 'the refusal stays in the panel');

      // the ablation: the same weights with position 'none' (Node builds the same encoder)
      const twenty = 'fedcbaponmlkjihgfedc';
      p = await choose('reverse', 'rope', twenty);
      const before = await assertSameAsNode(p, 'reverse-rope', twenty);
      await page.check('#trained-ablate');
      await idle(page);
      p = await last();
      assert.equal(p.ablated, true);
      assert.equal(p.config.position, 'none');
      const rope = await nodeModel('reverse-rope');
      const weights = rope.getWeights();
      delete weights['embed.positions'];
      const ablated = await createEncoder({ ...rope.config, position: 'none', positionOptions: {} }, { weights });
      const after = await assertSameAsNode(p, 'reverse-rope', twenty, ablated);
      ablated.dispose();
      assert.ok(
        before.right / before.total >= 0.95 && after.right / after.total < 0.5,
        `ablating reverse-rope: ${before.right}/${before.total} -> ${after.right}/${after.total}`,
      );
      await page.uncheck('#trained-ablate');
      await idle(page);

      // RoPE scaling on the same weights (select() sets the controls): NTK at 4x
      p = await page.evaluate((text) => window.swapformerDemo.trained.select('shift', 'rope', { text, scaling: 'ntk' }), symbols.repeat(8).slice(0, 126));
      assert.deepEqual(p.scaling, { type: 'ntk', factor: 4 });
      const shift = await nodeModel('shift-rope');
      const ntk = await createEncoder(
        { ...shift.config, positionOptions: { ...shift.config.positionOptions, scaling: p.scaling } },
        { weights: shift.getWeights() },
      );
      await assertSameAsNode(p, 'shift-rope', p.text, ntk);
      ntk.dispose();

      // an invalid character: an inline message, never an exception
      await page.fill('#trained-text', 'abcz!');
      await idle(page);
      assert.equal(await visible(page, '#trained-input-msg'), true);
      assert.match(await page.locator('#trained-input-msg').textContent(), /'z', '!' are not symbols/);
      assert.match((await last()).inputError, /'z'/);

      // the charts: drawn, not empty, the table's title follows the task
      for (const id of ['trained-chart', 'trained-rope-chart']) {
        assert.equal(await page.locator(`#${id}`).getAttribute('data-drawn'), 'true', id);
        assert.ok((await inkedPixels(page, `#${id}`)) > 2000, `${id} is empty`);
      }
      assert.match(await page.locator('#trained-chart-title').textContent(), /shift/);
      assert.match(await page.locator('#trained-chart-line').textContent(), /RoPE extrapolates/);

      // leave the panel on a known state for the screenshot
      p = await page.evaluate((text) => window.swapformerDemo.trained.select('reverse', 'rope', { text }), twenty);
      assert.equal(p.right, before.right);
      for (const enc of nodeModels.values()) enc.dispose();
      t.diagnostic(`trained models panel checks in ${Math.round(performance.now() - t0)} ms`);
    });

    await t.test('screenshots: desktop and phone width (390 px)', async () => {
      const desktop = `${OUT_DIR}demo-desktop.png`;
      await page.screenshot({ path: desktop, fullPage: true });
      const phone = await browser.newPage({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true });
      watch(phone, problems, 'phone');
      await phone.goto(`${base}/`);
      await phone.waitForSelector('body[data-ready="true"]');
      await idle(phone);
      const overflow = await phone.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      assert.ok(overflow <= 0, `the page is ${overflow} px wider than a 390 px phone`);
      const phoneShot = `${OUT_DIR}demo-phone.png`;
      await phone.screenshot({ path: phoneShot, fullPage: true });
      await phone.close();
      for (const p of [desktop, phoneShot]) {
        t.diagnostic(`screenshot: ${p}`);
        console.log(`browser.test.js: screenshot ${p}`);
      }
    });

    await t.test('a browser without wasm SIMD gets a clear message', async () => {
      const p = await browser.newPage();
      watch(p, problems, 'no-simd');
      await p.goto(`${base}/web/?nosimd`);
      await p.waitForSelector('body[data-ready="true"]');
      assert.equal(await visible(p, '#unsupported'), true);
      assert.match(await p.locator('#unsupported').textContent(), /SIMD/);
      assert.equal(await visible(p, '#app'), false);
      await p.close();
    });

    await t.test(
      '"Your model": a checkpoint from the Hub stand-in (progress) and from dropped files; config mapped; similarities, nearest sentences and swapped positions equal Node\'s; errors in the panel',
      async () => {
        const t0 = performance.now();
        const { loadPretrained } = await import('../bindings/index.js');
        const { startHub } = await import('./hub-server.js');
        const fixture = (name) => fileURLToPath(new URL(`./pretrained/${name}`, import.meta.url));
        const hub = await startHub({
          repos: { 'test-org/nomic-embed': fixture('nomic-embed'), 'test-org/bert-minilm': fixture('bert-minilm') },
          slow: true,
          cache: false,
        });
        const pg = await context.newPage();
        pg.setDefaultTimeout(60_000);
        // this page's problems: the downloads Chromium reports as aborted are checked apart (below)
        const seen = [],
          requested = [];
        pg.on('request', (r) => requested.push(r.url()));
        pg.on('console', (m) => {
          if (m.type() === 'error') seen.push({ what: `console error: ${m.text()}`, url: m.location()?.url ?? '' });
        });
        pg.on('pageerror', (e) => seen.push({ what: `page error: ${e.message}`, url: '' }));
        pg.on('requestfailed', (r) =>
          seen.push({ what: `request failed: ${r.url()} (${r.failure()?.errorText})`, url: r.url(), aborted: r.failure()?.errorText === 'net::ERR_ABORTED' }),
        );
        pg.on('response', (r) => {
          if (r.status() >= 400) seen.push({ what: `HTTP ${r.status()}: ${r.url()}`, url: r.url(), status: r.status() });
        });
        const nodeModels = [];
        try {
          const panel = (fn, arg) => pg.evaluate(fn, arg);
          const pIdle = () => panel(() => window.swapformerDemo.pretrained.whenIdle());
          const info = () => panel(() => window.swapformerDemo.pretrained.info());
          const cos = (a, i, b, j) => {
            // as the page: float64 sums of the float32 embeddings
            const [, D] = a.shape;
            let s = 0,
              na = 0,
              nb = 0;
            for (let k = 0; k < D; k++) {
              const x = a.data[i * D + k],
                y = b.data[j * D + k];
              s += x * y;
              na += x * x;
              nb += y * y;
            }
            return s / (Math.sqrt(na) * Math.sqrt(nb));
          };
          const simsOf = (e) => {
            const n = e.shape[0];
            return Array.from({ length: n * n }, (_, k) => cos(e, Math.floor(k / n), e, k % n));
          };
          const meanAbsChange = (a, b, n) => {
            let s = 0,
              m = 0;
            for (let i = 0; i < n; i++)
              for (let j = i + 1; j < n; j++) {
                s += Math.abs(b[i * n + j] - a[i * n + j]);
                m++;
              }
            return s / m;
          };
          const node = async (name) => {
            const p = await loadPretrained(fixture(name));
            nodeModels.push(p);
            return p;
          };
          /** The panel's matrix (every cell) and ranking equal Node's embed() on the same checkpoint. */
          const assertSameAsNode = async (p, what) => {
            const shown = await info();
            const sentences = shown.sentences;
            const e = p.embed(sentences);
            const want = simsOf(e);
            assert.equal(shown.sims.length, want.length, `${what}: matrix size`);
            shown.sims.forEach((v, k) => assert.ok(Math.abs(v - want[k]) <= 1e-5, `${what}: cos[${k}] page ${v} Node ${want[k]}`));
            const cells = await pg.$$eval('#pretrained-sim-table td', (tds) =>
              tds.map((td) => ({ r: +td.dataset.row, c: +td.dataset.col, text: td.firstChild.textContent, value: +td.dataset.value })),
            );
            assert.equal(cells.length, want.length, `${what}: table cells`);
            for (const cell of cells) {
              assert.ok(Math.abs(cell.value - want[cell.r * sentences.length + cell.c]) <= 1e-5, `${what}: cell ${cell.r},${cell.c}`);
              if (cell.r === cell.c) assert.equal(cell.text, '1.00', `${what}: the diagonal`);
            }
            // the ranking as shown: order and scores
            const query = await pg.locator('#pretrained-query').inputValue();
            const q = p.embed(query);
            const scores = sentences.map((_, i) => cos(q, 0, e, i));
            const order = scores.map((s, i) => ({ s, i })).sort((a, b) => b.s - a.s || a.i - b.i);
            const rows = await pg.$$eval('#pretrained-ranking li', (lis) =>
              lis.map((li) => ({ index: +li.dataset.index, score: +li.dataset.score, text: li.querySelector('.rtext').textContent })),
            );
            assert.deepEqual(
              rows.map((r) => r.index),
              order.map((o) => o.i),
              `${what}: the nearest-sentence order`,
            );
            rows.forEach((r, k) => {
              assert.ok(Math.abs(r.score - order[k].s) <= 1e-5, `${what}: score of '${r.text}' page ${r.score} Node ${order[k].s}`);
              assert.equal(r.text, sentences[r.index]);
            });
            return { sentences, sims: want, query, e };
          };
          /** The swapped matrix equals Node's withConfig (same weights) and the change shown is its mean |Δ cos|. */
          const assertSwapSameAsNode = async (p, changes, weightsOption, what) => {
            const shown = await info();
            const n = shown.sentences.length;
            const q = await p.withConfig(changes, weightsOption);
            nodeModels.push(q);
            const want = simsOf(q.embed(shown.sentences));
            shown.swappedSims.forEach((v, k) => assert.ok(Math.abs(v - want[k]) <= 1e-5, `${what}: swapped cos[${k}] page ${v} Node ${want[k]}`));
            const base = simsOf(p.embed(shown.sentences));
            const change = meanAbsChange(base, want, n);
            const shownChange = Number(await pg.locator('#pretrained-change').getAttribute('data-mean-abs'));
            assert.ok(Math.abs(shownChange - change) <= 1e-5, `${what}: mean |Δ cos| page ${shownChange} Node ${change}`);
            assert.ok(change > 1e-3, `${what}: the swap changes the similarities (mean |Δ cos| ${change})`);
            assert.equal(await visible(pg, '#pretrained-change'), true);
            assert.match(await pg.locator('#pretrained-change').textContent(), new RegExp(`\\|Δ cos\\| = ${change.toFixed(4)}`));
            assert.equal(await pg.locator('#pretrained-swapped-matrix').getAttribute('data-drawn'), 'true');
            assert.ok((await inkedPixels(pg, '#pretrained-swapped-matrix')) > 2000, `${what}: the swapped matrix is empty`);
            // the ranking's second column: the swapped model's scores
            const qe = q.embed(await pg.locator('#pretrained-query').inputValue()),
              e2 = q.embed(shown.sentences);
            for (const r of await pg.$$eval('#pretrained-ranking li', (lis) =>
              lis.map((li) => ({ index: +li.dataset.index, swapped: +li.dataset.swappedScore })),
            )) {
              assert.ok(Math.abs(r.swapped - cos(qe, 0, e2, r.index)) <= 1e-5, `${what}: swapped score of sentence ${r.index}`);
            }
            return change;
          };

          await pg.goto(`${base}/`);
          await pg.waitForSelector('body[data-ready="true"]');
          await idle(pg);
          assert.equal(await pg.locator('#pretrained').getAttribute('data-state'), 'empty');
          assert.equal(await visible(pg, '#pretrained-sim-wait'), true, 'before a load the panel says what to do');

          // 1. by Hub id, from the stand-in (slow, uncached: the bytes arrive in pieces)
          await pg.click('#pretrained-advanced summary');
          assert.equal(await pg.locator('#pretrained-hub').inputValue(), 'https://huggingface.co', 'the default Hub URL');
          await pg.fill('#pretrained-hub', hub.url);
          await pg.fill('#pretrained-id', 'test-org/nomic-embed');
          await pg.click('#pretrained-load-button');
          await pIdle();
          assert.equal(
            await pg.locator('#pretrained').getAttribute('data-state'),
            'ready',
            `state after the load: ${await pg.locator('#pretrained-error').textContent()}`,
          );
          const log = await panel(() => window.swapformerDemo.pretrained.progressLog);
          const nomicLog = log;
          const weights = log.filter((ev) => ev.file === 'model.safetensors');
          const size = readFileSync(`${fixture('nomic-embed')}/model.safetensors`).length;
          assert.ok(
            weights.some((ev) => ev.loaded > 0 && ev.loaded < ev.total),
            `the weights' progress moved: ${JSON.stringify(weights)}`,
          );
          assert.deepEqual(weights.at(-1), { file: 'model.safetensors', loaded: size, total: size });
          const served = hub.requests.filter((r) => r.status === 200 && r.path.includes('/resolve/')).map((r) => r.path.replace(/^.*?\/resolve\/[^/]+\//, '')); // at main, then at the commit it named
          assert.deepEqual([...new Set(log.map((ev) => ev.file))].sort(), served.concat('model.safetensors').sort(), 'one progress line per downloaded file');
          const bar = await pg.$eval('#pretrained-total-progress', (el) => ({ value: el.value, max: el.max }));
          assert.equal(bar.value, bar.max, 'the overall bar reached its end');
          assert.match(await pg.locator('#pretrained-total-bytes').textContent(), /^100% · 5 files · /);
          assert.match(await pg.locator('#pretrained-status').textContent(), /Loaded test-org\/nomic-embed in [\d.]+ s \(5 files/);
          // the config, mapped
          assert.equal(await pg.locator('#pretrained-family').getAttribute('data-family'), 'nomic-bert');
          const row = (hf) => pg.locator(`#pretrained-config tr[data-hf="${hf}"]`).first().textContent();
          assert.match(await row('rotary_emb_base'), /rotary_emb_base: 1000\s*→\s*positionOptions\.base: 1000/);
          assert.match(await row('rotary_emb_interleaved'), /rotary_emb_interleaved: false\s*→\s*positionOptions\.style: 'half'/);
          assert.match(await row('n_head'), /n_head: 4\s*→\s*heads: 4/);
          assert.match(await pg.locator('#pretrained-config tr[data-field="position"]').textContent(), /position: 'rope'/);
          assert.equal(await pg.locator('#pretrained-config tr[data-field="position"]').getAttribute('class'), 'pos', 'the position rows stand out');
          assert.match(await pg.locator('#pretrained-recipe').textContent(), /no modules\.json: mean pooling \+ normalize/);
          // tokens of the first sentence, from the checkpoint's tokenizer
          const nomic = await node('nomic-embed');
          const first = (await info()).sentences[0];
          const enc = nomic.tokenizer.encode(first);
          assert.deepEqual(await pg.$$eval('#pretrained-tokens .tok', (ts) => ts.map((t) => t.firstChild.textContent)), enc.tokens);
          // the matrix: drawn, its numbers and the nearest sentences equal Node's
          assert.equal(await pg.locator('#pretrained-matrix').getAttribute('data-drawn'), 'true');
          assert.ok((await inkedPixels(pg, '#pretrained-matrix')) > 2000, 'the similarity matrix is empty');
          assert.match(await pg.locator('#pretrained-timing').textContent(), /Forward [\d.]+ ms · [\d,]+ tokens\/s \(6 sentences, \d+ tokens/);
          await pg.fill('#pretrained-query', 'a guitar player on a stage');
          await pIdle();
          await assertSameAsNode(nomic, 'nomic-embed');
          // typing new sentences re-embeds them
          await pg.fill(
            '#pretrained-sentences',
            'The sun is shining.\nIt rains all day.\nA bright and sunny afternoon.\nThe weather is awful.\nI like green tea.',
          );
          await pIdle();
          assert.equal((await info()).sentences.length, 5);
          const base5 = await assertSameAsNode(nomic, 'nomic-embed, typed sentences');
          // 2. swapped on the same weights: ALiBi, then RoPE with YaRN
          const positions = await pg.$$eval('#pretrained-position option', (os) => os.map((o) => o.value));
          assert.deepEqual(positions, ['rope', 'alibi', 'none'], 'rope, alibi, none (no learned table here)');
          await pg.selectOption('#pretrained-position', 'alibi');
          await pIdle();
          assert.equal((await info()).swapped.config.position, 'alibi');
          assert.match(await pg.locator('#pretrained-swapped-title').textContent(), /alibi \(was rope\)/);
          await assertSwapSameAsNode(nomic, { position: 'alibi', positionOptions: {} }, undefined, 'nomic-embed -> alibi');
          await pg.selectOption('#pretrained-position', 'rope');
          await pg.selectOption('#pretrained-scaling', 'yarn');
          await pg.fill('#pretrained-factor', '4');
          assert.equal(await pg.locator('#pretrained-original-len').inputValue(), '2048', 'originalMaxLen from max_trained_positions');
          await pg.fill('#pretrained-original-len', '16');
          await pIdle();
          const yarn = { type: 'yarn', factor: 4, originalMaxLen: 16 };
          const swappedOptions = (await info()).swapped.config.positionOptions;
          assert.deepEqual(
            { ...swappedOptions, scaling: { ...swappedOptions.scaling, betaFast: undefined, betaSlow: undefined } },
            { base: 1000, style: 'half', scaling: { ...yarn, betaFast: undefined, betaSlow: undefined } },
            "the swapped config (YaRN's betas at their defaults)",
          );
          const yarnChange = await assertSwapSameAsNode(
            nomic,
            { positionOptions: { base: 1000, style: 'half', scaling: yarn } },
            undefined,
            'nomic-embed + YaRN',
          );
          t.diagnostic(`nomic-embed: mean |Δ cos| with YaRN x4 ${yarnChange.toFixed(4)} on ${base5.sentences.length} sentences`);
          // back to the checkpoint's own positions: one matrix again
          await pg.selectOption('#pretrained-scaling', 'none');
          await pIdle();
          assert.equal((await info()).swapped, null);
          assert.equal(await visible(pg, '#pretrained-swapped-matrix'), false);

          // 3. a second model by dropping its folder (the folder picker, as a drop gives it)
          await pg.setInputFiles('#pretrained-folder', fixture('bert-minilm'));
          await pIdle();
          assert.equal(await pg.locator('#pretrained').getAttribute('data-state'), 'ready');
          assert.equal(await pg.locator('#pretrained-family').getAttribute('data-family'), 'bert');
          assert.match(await pg.locator('#pretrained-source').textContent(), /folder bert-minilm \(9 files\)/);
          assert.match(await pg.locator('#pretrained-total-bytes').textContent(), /^100% · 9 files/);
          assert.match(await row('position_embedding_type'), /position_embedding_type: "absolute"\s*→\s*position: 'learned'/);
          assert.match(await row('max_position_embeddings'), /max_position_embeddings: 128\s*→\s*maxLen: 128/);
          assert.match(await pg.locator('#pretrained-max-length').textContent(), /^96 tokens.*max_seq_length 96/);
          assert.deepEqual(await pg.$$eval('#pretrained-position option', (os) => os.map((o) => o.value)), ['learned', 'rope', 'alibi', 'none']);
          const minilm = await node('bert-minilm');
          await assertSameAsNode(minilm, 'bert-minilm (dropped)');
          // learned -> alibi: the same weights without the position table
          await pg.selectOption('#pretrained-position', 'alibi');
          await pIdle();
          assert.match(await pg.locator('#pretrained-swap-note').textContent(), /embed\.positions/);
          await assertSwapSameAsNode(minilm, { position: 'alibi', positionOptions: {} }, undefined, 'bert-minilm -> alibi');
          await pg.locator('#pretrained').screenshot({ path: `${OUT_DIR}pretrained-desktop.png` });

          // 4. a folder with only pytorch_model.bin, dropped (a synthetic drop): refused in the panel, the model kept
          const bin = ['config.json', 'pytorch_model.bin'].map((name) => ({
            name,
            b64: readFileSync(`${fixture('bert-pytorch-bin')}/${name}`).toString('base64'),
          }));
          await pg.evaluate((files) => {
            const dt = new DataTransfer();
            for (const f of files) dt.items.add(new File([Uint8Array.from(atob(f.b64), (c) => c.charCodeAt(0))], f.name));
            const zone = document.getElementById('pretrained-drop');
            for (const type of ['dragenter', 'dragover', 'drop'])
              zone.dispatchEvent(new DragEvent(type, { dataTransfer: dt, bubbles: true, cancelable: true }));
          }, bin);
          await pIdle();
          assert.equal(await visible(pg, '#pretrained-error'), true);
          assert.equal(await pg.locator('#pretrained-error').getAttribute('data-code'), 'UNSUPPORTED_MODEL');
          assert.match(await pg.locator('#pretrained-error').textContent(), /^UNSUPPORTED_MODEL.*pytorch_model\.bin.*never unpickles.*model\.safetensors/);
          assert.equal((await info()).error.code, 'UNSUPPORTED_MODEL');
          assert.equal((await info()).model.family, 'bert', 'the loaded model stays');
          assert.match(await pg.locator('#pretrained-status').textContent(), /could not be loaded: still showing folder bert-minilm/);
          assert.equal(await visible(pg, '#error'), false, 'the refusal stays in the panel');

          // 5. Cancel: a download stopped halfway leaves the loaded model as it was; Clear empties the panel
          await pg.uncheck('#pretrained-cache');
          await pg.fill('#pretrained-id', 'test-org/bert-minilm');
          await pg.click('#pretrained-load-button');
          await pg.waitForFunction(() => window.swapformerDemo.pretrained.progressLog.length > 0);
          assert.equal(await pg.locator('#pretrained').getAttribute('data-state'), 'loading');
          await pg.click('#pretrained-cancel');
          await pIdle();
          assert.match(await pg.locator('#pretrained-status').textContent(), /^Cancelled: still showing folder bert-minilm/);
          assert.equal(await pg.locator('#pretrained').getAttribute('data-state'), 'ready');
          assert.equal((await info()).model.family, 'bert');
          assert.equal(await visible(pg, '#pretrained-cancel'), false);
          await pg.click('#pretrained-clear');
          await pIdle();
          assert.equal(await pg.locator('#pretrained').getAttribute('data-state'), 'empty');
          assert.equal((await info()).model, null);
          assert.equal(await visible(pg, '#pretrained-sim-wait'), true);

          // 6. phone width: a third family (ModernBERT, local layers) with YaRN, nothing wider than the screen
          const phone = await browser.newPage({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true });
          watch(phone, problems, 'phone (your model)');
          await phone.goto(`${base}/`);
          await phone.waitForSelector('body[data-ready="true"]');
          await phone.setInputFiles('#pretrained-folder', fixture('modernbert-embed'));
          await phone.evaluate(() => window.swapformerDemo.pretrained.whenIdle());
          assert.match(
            await phone.locator('#pretrained-config tr[data-field="localLayers"]').textContent(),
            /global_attn_every_n_layers: 3\s*→\s*localLayers: \[1, 2\]/,
          );
          assert.match(await phone.locator('#pretrained-config tr[data-field="localWindow"]').textContent(), /local_attention: 16\s*→\s*localWindow: 8/);
          await phone.selectOption('#pretrained-scaling', 'yarn');
          await phone.evaluate(() => window.swapformerDemo.pretrained.whenIdle());
          assert.ok(Number(await phone.locator('#pretrained-change').getAttribute('data-mean-abs')) > 1e-3, 'YaRN on ModernBERT changes the matrix');
          const overflow = await phone.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
          assert.ok(overflow <= 0, `with a model loaded the page is ${overflow} px wider than a 390 px phone`);
          await phone.locator('#pretrained').screenshot({ path: `${OUT_DIR}pretrained-phone.png` });
          await phone.close();
          for (const p of [`${OUT_DIR}pretrained-desktop.png`, `${OUT_DIR}pretrained-phone.png`]) {
            t.diagnostic(`screenshot: ${p}`);
            console.log(`browser.test.js: screenshot ${p}`);
          }

          // nothing left the page but the demo's own files and the Hub downloads asked for
          const origins = new Set(requested.filter((u) => /^https?:/.test(u)).map((u) => new URL(u).origin));
          assert.deepEqual([...origins].sort(), [new URL(base).origin, new URL(hub.url).origin].sort());
          // no 404, so no red console line: the Hub's file list says which optional files the
          // checkpoint lacks (nomic-embed has no modules.json), and they are not asked for
          assert.deepEqual(
            hub.requests.filter((r) => r.status >= 400),
            [],
            'no error from the stand-in',
          );
          // read once: at main when the load's first read is optional (then the list names the commit), else at
          // the commit the first file named; every other file at that commit
          const at = hub.commitOf('test-org/nomic-embed');
          const lists = hub.requests.filter((r) => r.path.startsWith('/api/models/test-org/nomic-embed/'));
          assert.deepEqual(
            lists.map((r) => r.status),
            [200],
            'the file list was read once',
          );
          assert.ok(['main', at].includes(lists[0].path.split('/').at(-1)), lists[0].path);
          const revisions = hub.requests.filter((r) => r.path.startsWith('/test-org/nomic-embed/resolve/')).map((r) => r.path.split('/')[4]);
          assert.ok(
            revisions.length > 0 && revisions.every((r, i) => r === at || (i === 0 && r === 'main' && lists[0].path.endsWith(`/${at}`))),
            `one load reads one commit (${at}): ${revisions}`,
          );
          assert.equal(existsSync(`${fixture('nomic-embed')}/modules.json`), false);
          assert.ok(!hub.requests.some((r) => r.path.endsWith('/modules.json')), 'modules.json, which nomic-embed lacks, is not asked for');
          const hubOrigin = new URL(hub.url).origin;
          // Chromium reports a fetch read to its end through body.getReader() from a no-store answer
          // sent in pieces as ERR_ABORTED (microsoft/playwright#42742): those count when the page
          // got the whole file (its last progress event has the size on disk)
          const fileOf = (url) => decodeURIComponent(new URL(url).pathname.replace(/^\/(test-org\/[^/]+\/resolve\/[^/]+|cdn-lfs\/test-org\/[^/]+)\//, ''));
          const complete = (url) => {
            const f = fileOf(url),
              last = nomicLog.filter((ev) => ev.file === f).at(-1);
            return (
              !!last &&
              last.loaded === last.total &&
              existsSync(`${fixture('nomic-embed')}/${f}`) &&
              last.total === readFileSync(`${fixture('nomic-embed')}/${f}`).length
            );
          };
          const cancelled = (s) => s.aborted && /\/test-org\/bert-minilm\//.test(s.url); // the Cancel above: bert-minilm comes from the Hub only there
          // the same for the file list: read to its end when the stand-in answered it whole (200)
          const listRead = (s) =>
            s.aborted &&
            new URL(s.url).pathname.startsWith('/api/models/test-org/nomic-embed/revision/') &&
            hub.requests.some((r) => r.path === new URL(s.url).pathname && r.status === 200);
          const expected = (s) =>
            s.url.startsWith(`${hubOrigin}/`) && (cancelled(s) || listRead(s) || (s.url.includes('/nomic-embed/') && s.aborted && complete(s.url)));
          const unexpected = seen.filter((s) => !expected(s));
          problems.push(...unexpected.map((s) => `your model: ${s.what}`));
          assert.deepEqual(unexpected, []);
          t.diagnostic(`"Your model" checks in ${Math.round(performance.now() - t0)} ms (no 404 from the Hub: its file list spared them)`);
        } finally {
          for (const p of nodeModels) p.dispose();
          await pg.close();
          await hub.close();
        }
      },
    );

    await t.test(
      'the normalisation levers: the stream, QK-norm and layer-removal cards state their numbers, the claims hold, Node agrees; the builder counts SwiGLU against GELU',
      async () => {
        const t0 = performance.now();
        await page.evaluate(() =>
          window.swapformerDemo.runConfig(
            {
              position: 'sinusoidal',
              positionOptions: { base: 10000 },
              norm: 'layernorm',
              normPlacement: 'pre',
              layers: 2,
              dModel: 64,
              heads: 4,
              ffDim: 256,
              activation: 'gelu',
              maxLen: 64,
            },
            'the dog bites the man',
            { seed: 1, tokenizer: 'words' },
          ),
        );
        const snap = await current(page);
        const results = () => page.evaluate(() => JSON.parse(JSON.stringify(window.swapformerDemo.experiments)));
        let r = await results();
        const cardText = (id) => page.locator(`#exp-${id}`).textContent();
        for (const id of ['stream', 'qknorm', 'layers']) {
          assert.equal(r[id].pass, true, `${id}: ${r[id].summary}`);
          assert.equal(await page.locator(`#exp-${id} .badge`).textContent(), 'PASS', `${id}: badge`);
        }
        const meanNorm = (h) => {
          // mean over the tokens of |x_t| (one sequence)
          const [, T, C] = h.shape;
          let sum = 0;
          for (let i = 0; i < T; i++) {
            let q = 0;
            for (let c = 0; c < C; c++) q += h.data[i * C + c] ** 2;
            sum += Math.sqrt(q);
          }
          return sum / T;
        };

        // 7. the stream: pre-norm grows, 1/sqrt(2L) and DeepNorm bound it; the card's numbers are Node's
        const st = r.stream,
          L = st.layers,
          text7 = await cardText('stream');
        assert.equal(L, 24);
        const [plain, depth, deep] = st.variants;
        for (const v of st.variants) {
          const enc = await createEncoder(v.config, { seed: snap.seed, ...(v.init ? { init: v.init } : {}) });
          const norms = enc.forward(snap.ids.slice(0, 32), { outputHiddenStates: true }).hiddenStates.map(meanNorm);
          enc.dispose();
          norms.forEach((x, l) => assert.ok(Math.abs(x - v.stream[l]) <= 1e-4 * x, `stream ${v.id}, layer ${l}: page ${v.stream[l]}, Node ${x}`));
          assert.ok(text7.includes(`×${v.growth.toFixed(2)}`), `the card states ${v.id}'s growth ×${v.growth.toFixed(2)}`);
          assert.ok(text7.includes(v.stream[L].toFixed(2)), `the card states ${v.id}'s stream after layer ${L}`);
        }
        assert.deepEqual(depth.init, { outputScale: 'depth' });
        assert.equal(deep.config.residualScale, 'deepnorm');
        assert.equal(deep.config.normPlacement, 'post');
        assert.ok(
          plain.growth > 1.2 && [0, 6, 12, 18].every((l) => plain.stream[l + 6] > plain.stream[l]),
          `pre-norm grows with depth: ${plain.stream.map((x) => x.toFixed(2))}`,
        );
        assert.ok(depth.growth ** 2 - 1 < (plain.growth ** 2 - 1) / 10, `1/sqrt(2L): ×${depth.growth} against ×${plain.growth}`);
        assert.ok(
          deep.stream.slice(1).every((x) => Math.abs(x - 8) < 0.01),
          'DeepNorm: sqrt(dModel) = 8 after every layer',
        );
        assert.match(text7, /α = \(2L\)\^¼ = 2\.632, β = \(8L\)\^−¼ = 0\.269/);
        assert.match(text7, /1\/√48 = 0\.144/);
        t.diagnostic(`stream over 24 layers: ${st.summary}`);

        // 8. QK-norm: q, k x s scale the logits by s^2 exactly (powers of two, seed biases 0); with the norm
        // they stay <= sqrt(headDim) = 4 (seed gains 1); the entropies are Node's
        const qk = r.qknorm,
          [none, normed] = qk.runs,
          text8 = await cardText('qknorm');
        assert.deepEqual(qk.scales, [1, 4, 16, 64]);
        assert.equal(qk.headDim, 16);
        qk.scales.forEach((sc, k) => {
          const ratio = none.maxLogit[k] / none.maxLogit[0];
          assert.ok(Math.abs(ratio / sc ** 2 - 1) < 1e-5, `no QK-norm, x${sc}: the largest logit x${ratio}, want x${sc ** 2}`);
          assert.ok(normed.maxLogit[k] <= 4 && Math.abs(normed.maxLogit[k] - normed.maxLogit[0]) < 1e-3, `QK-norm, x${sc}: ${normed.maxLogit[k]}`);
        });
        assert.equal(normed.bound, 4);
        const entropyOf = (out) => {
          let sum = 0,
            n = 0;
          for (const a of out.attentions) {
            const T = a.shape[3];
            for (let i = 0; i < a.data.length; i += T) {
              let e = 0;
              for (let j = 0; j < T; j++) {
                const p = a.data[i + j];
                if (p > 0) e -= p * Math.log(p);
              }
              sum += e;
              n++;
            }
          }
          return sum / n;
        };
        for (const run of qk.runs) {
          const seeded = await createEncoder(run.config, { seed: snap.seed });
          const w0 = seeded.getWeights();
          seeded.dispose();
          for (const [k, sc] of qk.scales.entries()) {
            const w = Object.fromEntries(Object.entries(w0).map(([n, a]) => [n, /\.attn\.[qk]\.(weight|bias)$/.test(n) ? a.map((x) => x * sc) : a]));
            const enc = await createEncoder(run.config, { weights: w });
            const e = entropyOf(enc.forward(snap.ids.slice(0, 32), { outputAttentions: true }));
            enc.dispose();
            assert.ok(Math.abs(e - run.entropy[k]) < 1e-4, `${run.qkNorm}, x${sc}: entropy page ${run.entropy[k]}, Node ${e}`);
          }
          for (const x of run.entropy) assert.ok(text8.includes(x.toFixed(3)), `the card states the entropy ${x.toFixed(3)}`);
        }
        assert.ok(none.entropy[3] < 0.1 * none.entropy[0], `without QK-norm the entropy collapses: ${none.entropy}`);
        assert.ok(
          normed.entropy.every((x) => Math.abs(x - normed.entropy[0]) < 1e-3),
          `with QK-norm it stays: ${normed.entropy}`,
        );
        for (const x of normed.maxLogit) assert.ok(text8.includes(x.toFixed(3)), `the card states the logit ${x.toFixed(3)}`);
        assert.match(text8, /gains × √16 = 4\.000/);
        for (const id of ['qknorm', 'stream']) assert.ok((await inkedPixels(page, `#exp-${id} canvas`)) > 2000, `${id}: the plot is empty`);
        t.diagnostic(`QK-norm: ${qk.summary}`);

        // 9. remove one layer: every trained model's accuracy with each layer skipped is Node's
        const { sampleInputs } = await import('../models/tasks.js');
        const index = JSON.parse(readFileSync(new URL('index.json', MODELS), 'utf8'));
        const lr = r.layers,
          inputs = sampleInputs(lr.inputs, lr.length, index.symbols.tokens.length, 14);
        assert.equal(lr.rows.length, 12, 'every task with each position plugin');
        const accuracy = (task, out) => {
          const [, T, V] = out.logits.shape;
          let right = 0,
            total = 0;
          inputs.forEach((ids, b) => {
            const pred = ids.map((_, t) => {
              let best = 0;
              for (let v = 1; v < V; v++) if (out.logits.data[(b * T + t) * V + v] > out.logits.data[(b * T + t) * V + best]) best = v;
              return best;
            });
            const sc = score(task, ids, pred);
            right += sc.right;
            total += sc.total;
          });
          return right / total;
        };
        for (const row of lr.rows) {
          const enc = await loadModel(readFileSync(new URL(`${row.name}.safetensors`, MODELS)));
          assert.ok(Math.abs(accuracy(row.task, enc.forward(inputs)) - row.full) <= 2e-3, `${row.name}: full`);
          for (let l = 0; l < enc.config.layers; l++) {
            const a = accuracy(row.task, enc.forward(inputs, { skipLayers: [l] }));
            assert.ok(Math.abs(a - row.without[l]) <= 2e-3, `${row.name} without layer ${l}: page ${row.without[l]}, Node ${a}`);
            assert.ok(a < row.full, `${row.name}: removing layer ${l} costs accuracy`);
          }
          enc.dispose();
        }
        const text9 = await cardText('layers');
        assert.match(text9, new RegExp(`${lr.graceful} of ${lr.removals.length} removals keep ≥ 75%`));
        assert.ok(lr.graceful > 0 && lr.collapsed > 0, 'graceful somewhere, not everywhere');
        assert.equal(await page.locator('#layers-chart').getAttribute('data-drawn'), 'true');
        assert.ok((await inkedPixels(page, '#layers-chart')) > 2000, 'the bar chart is empty');
        assert.equal(await visible(page, '#layers-pretrained-wait'), true, 'before a checkpoint the card says how to add one');
        t.diagnostic(`remove one layer: ${lr.summary}`);

        // ... and on a checkpoint loaded in "Your model" (ModernBERT-like, 4 layers): 1 - cos per removed layer, as Node
        const folder = fileURLToPath(new URL('./pretrained/modernbert-embed', import.meta.url));
        await page.setInputFiles('#pretrained-folder', folder);
        await page.evaluate(() => window.swapformerDemo.pretrained.whenIdle());
        await idle(page);
        r = await results();
        const deepR = r.layers.deep;
        assert.ok(deepR, 'the card measured the loaded checkpoint');
        assert.equal(deepR.layers, 4);
        assert.equal(r.layers.pass, true, r.layers.summary);
        const { loadPretrained } = await import('../bindings/index.js');
        const pn = await loadPretrained(folder);
        const encoded = deepR.sentences.map((s) => pn.tokenizer.encode(pn.recipe.doLowerCase ? s.toLowerCase() : s, { maxLength: pn.maxLength }));
        const run = (skip) =>
          pn.encoder.forward(
            encoded.map((e) => e.ids),
            { typeIds: encoded.map((e) => e.typeIds), ...(skip ? { skipLayers: skip } : {}) },
          );
        const full = run(null),
          [, T, C] = full.shape;
        for (let l = 0; l < 4; l++) {
          const o = run([l]);
          let sum = 0,
            n = 0;
          encoded.forEach((e, b) => {
            for (let i = 0; i < e.ids.length; i++) {
              let ab = 0,
                aa = 0,
                bb = 0;
              for (let c = 0; c < C; c++) {
                const x = full.data[(b * T + i) * C + c],
                  y = o.data[(b * T + i) * C + c];
                ab += x * y;
                aa += x * x;
                bb += y * y;
              }
              sum += ab / Math.sqrt(aa * bb);
              n++;
            }
          });
          assert.ok(Math.abs(1 - sum / n - deepR.change[l]) < 1e-4, `modernbert-embed without layer ${l}: page ${deepR.change[l]}, Node ${1 - sum / n}`);
        }
        pn.dispose();
        const shown = await page.locator('#layers-pretrained').textContent();
        deepR.change.forEach((c, l) => assert.ok(shown.includes(`layer ${l} ${c.toFixed(3)}`), `the card states layer ${l}'s change`));
        assert.equal(await page.locator('#layers-pretrained-chart').getAttribute('data-drawn'), 'true');
        t.diagnostic(`remove one layer of ${deepR.label}: ${deepR.change.map((c) => c.toFixed(3)).join(', ')}`);

        // the builder: SwiGLU at ffDim ~ 8d/3 against GELU at 4d, counted from the weights (d = 64)
        const ffn = await page.locator('#ffn-params').evaluate((el) => ({ ...el.dataset, text: el.textContent }));
        const d = 64,
          f3 = Math.round((8 * d) / 3);
        assert.equal(Number(ffn.gelu), 2 * d * 4 * d + 4 * d + d, 'GELU at 4d: up and down with biases');
        assert.equal(Number(ffn.swiglu), 3 * d * f3 + 2 * f3 + d, 'SwiGLU at 8d/3: up, gate and down with biases');
        assert.ok(Math.abs(Number(ffn.swiglu) / (8 * d * d) - 1) < 0.02 && Math.abs(Number(ffn.gelu) / (8 * d * d) - 1) < 0.02, 'both near 8d²');
        assert.match(ffn.text, /GELU at ffDim 4d = 256: 33,088; SwiGLU at ffDim ≈ 8d\/3 = 171: 33,238; 8d² = 32,768/);

        // pictures of the three cards (tests/out/)
        for (const id of ['stream', 'qknorm', 'layers']) {
          const path = `${OUT_DIR}exp-${id}.png`;
          await page.locator(`#exp-${id}`).screenshot({ path });
          t.diagnostic(`screenshot: ${path}`);
          console.log(`browser.test.js: screenshot ${path}`);
        }
        // Clear: the card goes back to the trained models alone
        await page.click('#pretrained-clear');
        await page.evaluate(() => window.swapformerDemo.pretrained.whenIdle());
        await idle(page);
        assert.equal((await results()).layers.deep, null);
        assert.equal(await visible(page, '#layers-pretrained-wait'), true);
        t.diagnostic(`lever cards checked in ${Math.round(performance.now() - t0)} ms`);
      },
    );

    await t.test(
      'a phone (390 and 360 px) and the desktop: every card fits, every chart has a text alternative and draws its texts inside, taps show the readouts, the Hub examples load',
      async () => {
        const t0 = performance.now();
        const { startHub } = await import('./hub-server.js');
        const bert = fileURLToPath(new URL('./pretrained/bert-minilm', import.meta.url));
        const EXAMPLE = 'sentence-transformers/all-MiniLM-L6-v2';
        const hub = await startHub({ repos: { [EXAMPLE]: bert } });
        const phone = await browser.newPage(PHONE);
        phone.setDefaultTimeout(60_000);
        // the stand-in's 404s for the optional files the loader probes are checked apart (they must be absent from the folder)
        const hubOrigin = new URL(hub.url).origin,
          probed = [];
        const fromHub = (url) => url.startsWith(`${hubOrigin}/`);
        phone.on('console', (m) => {
          if (m.type() === 'error' && !(fromHub(m.location()?.url ?? '') && /status of 404/.test(m.text()))) problems.push(`phone console error: ${m.text()}`);
        });
        phone.on('pageerror', (e) => problems.push(`phone page error: ${e.message}`));
        phone.on('requestfailed', (r) => problems.push(`phone request failed: ${r.url()} (${r.failure()?.errorText})`));
        phone.on('response', (r) => {
          if (r.status() === 404 && fromHub(r.url()))
            probed.push(decodeURIComponent(/\/resolve\/[^/]+\/(.*)$/.exec(new URL(r.url()).pathname)?.[1] ?? r.url()));
          else if (r.status() >= 400) problems.push(`phone HTTP ${r.status()}: ${r.url()}`);
        });
        const failures = []; // every check runs; the failures are listed together at the end
        const check = (ok, what) => {
          if (!ok) failures.push(what);
        };
        const pIdle = () => phone.evaluate(() => window.swapformerDemo.pretrained.whenIdle());
        const allIdle = () =>
          phone.evaluate(async () => {
            const d = window.swapformerDemo;
            await Promise.all([d.whenIdle(), d.pretrained.whenIdle(), d.positionsReal.whenIdle()]);
            await d.whenIdle();
          });
        try {
          await phone.goto(`${base}/web/?debug=1`);
          await phone.waitForSelector('body[data-ready="true"]');
          await allIdle();
          // every card's default experiment ran (section 7 loads its shipped BERT by itself)
          const results = await phone.evaluate(() => JSON.parse(JSON.stringify(window.swapformerDemo.experiments)));
          assert.equal(Object.values(results).filter((r) => r.pass).length, 9, 'the nine experiment cards pass at phone width');
          assert.equal(await phone.locator('#positions-real').getAttribute('data-state'), 'ready');

          // "Your model": Load with nothing typed is a hint, not an error code
          const status = () => phone.locator('#pretrained-status').textContent();
          check((await phone.getAttribute('#pretrained-id', 'placeholder')).startsWith('e.g. '), "the id field's placeholder reads as an example (e.g. …)");
          await phone.click('#pretrained-load-button');
          check(
            !(await visible(phone, '#pretrained-error')),
            `Load with an empty field shows an error: ${await phone.locator('#pretrained-error').textContent()}`,
          );
          const hint = async (id) =>
            (await phone.locator(id).count()) && (await phone.locator(id).isVisible()) ? phone.locator(id).textContent() : '(no hint shown)';
          check(/type a model id/i.test(await hint('#pretrained-id-hint')), `Load with an empty field says what to do: '${await hint('#pretrained-id-hint')}'`);
          await phone.click('#pr-hub-load');
          check(!(await visible(phone, '#pr-error')), `section 7's Load with an empty field shows an error: ${await phone.locator('#pr-error').textContent()}`);
          check(/type a model id/i.test(await hint('#pr-hub-hint')), `section 7's Load with an empty field says what to do: '${await hint('#pr-hub-hint')}'`);
          // one dropped file that is no model: "1 dropped file" (and a folder of one file)
          await phone.evaluate(() => {
            const dt = new DataTransfer();
            dt.items.add(new File(['{}'], 'config.json'));
            for (const type of ['dragenter', 'dragover', 'drop'])
              document.getElementById('pretrained-drop').dispatchEvent(new DragEvent(type, { dataTransfer: dt, bubbles: true, cancelable: true }));
          });
          await pIdle();
          check(/^1 dropped file could not be loaded\./.test(await status()), `one dropped file: '${await status()}'`);
          check(await visible(phone, '#pretrained-error'), 'the refused drop shows its error');
          const folderOfOne = await phone.evaluate(async () =>
            (await import('/web/pretrained-shared.js')).sourceFromFiles(new Map([['minilm/config.json', new File(['{}'], 'config.json')]])).then(
              (s) => s.label,
              (e) => e.message,
            ),
          );
          check(folderOfOne === 'folder minilm (1 file)', `a folder of one file: '${folderOfOne}'`);
          // an example id: fills the field, loads it (from the stand-in), the stale error goes
          await phone.click('#pretrained-advanced summary');
          await phone.fill('#pretrained-hub', hub.url);
          await phone.locator('#pretrained-examples button.chip').first().tap();
          await pIdle();
          check((await phone.inputValue('#pretrained-id')) === EXAMPLE, 'the example fills the field');
          const loaded = (await phone.locator('#pretrained').getAttribute('data-state')) === 'ready';
          check(loaded, `the example loads: state ${await phone.locator('#pretrained').getAttribute('data-state')}, '${await status()}'`);
          check(!(await visible(phone, '#pretrained-error')), 'the example clears the stale error');
          if (!loaded) {
            // go on with the same checkpoint, loaded by id
            await phone.fill('#pretrained-id', EXAMPLE);
            await phone.click('#pretrained-load-button');
            await pIdle();
          }
          assert.equal(await phone.locator('#pretrained').getAttribute('data-state'), 'ready');
          assert.match(await phone.locator('#pretrained-source').textContent(), new RegExp(EXAMPLE));
          await allIdle(); // the layer-removal card measures the checkpoint

          // a tap on a heat-map cell shows the readout a hover shows
          check(
            /tap a cell/.test(await phone.locator('#pretrained-matrix-caption').textContent()),
            `the caption says tap on a touch screen: '${await phone.locator('#pretrained-matrix-caption').textContent()}'`,
          );
          await phone.locator('#pretrained-matrix').scrollIntoViewIfNeeded();
          const cell = await phone.$eval('#pretrained-matrix', (c) => {
            const r = c.getBoundingClientRect(),
              hit = c._hit;
            return { x: r.left + hit.left + 1.5 * hit.cellW, y: r.top + hit.top + 0.5 * hit.cellH };
          });
          await phone.touchscreen.tap(cell.x, cell.y);
          const tip = phone.locator('.plot-tooltip');
          const tipShown = (await tip.count()) === 1 && (await tip.isVisible());
          check(
            tipShown && /^the checkpoint: 1 · 2: cos -?\d\.\d{4}$/.test(await tip.textContent()),
            `a tap on cell (1, 2) shows its value: ${tipShown ? `'${await tip.textContent()}'` : 'nothing shown'}`,
          );
          // a tap on a bar of card 9 shows its value
          await phone.locator('#layers-chart').scrollIntoViewIfNeeded();
          const bar = await phone.$eval('#layers-chart', (c) => {
            const r = c.getBoundingClientRect(),
              b = c._bars;
            return { x: r.left + b.slot(0, 0) + b.bw / 2, y: r.top + b.top + b.plotH - 4 };
          });
          await phone.touchscreen.tap(bar.x, bar.y);
          const barTip = (await tip.isVisible()) ? await tip.textContent() : 'nothing shown';
          check(/^reverse-sinusoidal: full \d+%$/.test(barTip), `a tap on card 9's first bar shows its value: '${barTip}'`);

          // card 9 names its blocks and its bars
          const texts9 = (await phone.$eval('#layers-chart', (c) => (c.plotTexts ?? []).map((x) => x.text))).join(' ');
          for (const w of ['reverse', 'sort', 'shift', 'sinusoidal', 'learned', 'rope', 'alibi'])
            check(texts9.includes(w), `card 9's chart names '${w}': it draws '${texts9}'`);
          // a chart's text alternative states its values and follows a redraw
          const qk = await phone.evaluate(() => window.swapformerDemo.experiments.qknorm.runs.map((r) => r.entropy));
          const entropyLabel = await phone.locator('#exp-qknorm canvas').nth(1).getAttribute('aria-label');
          for (const x of qk.flat())
            check(entropyLabel.includes(x.toFixed(3)), `the entropy chart's text alternative states ${x.toFixed(3)}: '${entropyLabel}'`);
          const matrixLabel = () => phone.locator('#pretrained-matrix').getAttribute('aria-label');
          const before = await matrixLabel();
          await phone.fill('#pretrained-sentences', 'The sun is shining.\nIt rains all day.\nA bright and sunny afternoon.');
          await pIdle();
          const after = await matrixLabel();
          check(after !== before && /3 (sentences|rows)/.test(after), `the matrix's text alternative follows the new sentences: '${before}' then '${after}'`);
          await phone.fill(
            '#pretrained-sentences',
            (await phone.evaluate(() => window.swapformerDemo.pretrained.info().sentences)).join('\n') +
              '\nA chef is cooking pasta in the kitchen.\nThe stock market fell sharply today.\nShares dropped as investors sold off.',
          );
          await pIdle();

          // the layout, every <details> open: nothing wider than the screen, nothing cut
          const layout = async (label) => {
            await phone.evaluate(() => {
              for (const d of document.querySelectorAll('details')) d.open = true;
            });
            await allIdle();
            await phone.waitForTimeout(200); // the plots redraw for their new widths in the next frame
            for (const p of await layoutProblems(phone)) failures.push(`${label}: ${p}`);
          };
          await layout('390 px');
          // a finger finds every control: 40 px high at least (a checkbox or radio by its label)
          const small = await phone.evaluate(() =>
            [...document.querySelectorAll('button, select, summary, input, .top nav a')]
              .filter((el) => el.getClientRects().length && !/^(checkbox|radio|hidden|file)$/.test(el.type) && el.getBoundingClientRect().height < 39.5)
              .map(
                (el) =>
                  `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''} '${(el.textContent || el.value || '').trim().slice(0, 30)}' ${Math.round(el.getBoundingClientRect().height)} px high`,
              ),
          );
          check(small.length === 0, `controls too small for a finger at 390 px: ${small.join('; ')}`);
          const tinyLabels = await phone.evaluate(() =>
            [...document.querySelectorAll('input[type=checkbox], input[type=radio]')]
              .filter((el) => el.getClientRects().length && (el.closest('label')?.getBoundingClientRect().height ?? 0) < 39.5)
              .map((el) => el.id || el.value),
          );
          check(tinyLabels.length === 0, `checkboxes and radios whose label is under 40 px high: ${tinyLabels.join(', ')}`);
          // the widest table (both models' numbers), the longest options: RoPE (+ linear scaling) swapped in, the builder's RoPE pairs
          await phone.selectOption('#pretrained-position', 'rope');
          await phone.selectOption('#pretrained-scaling', 'linear');
          await phone.selectOption('#position', 'rope');
          await layout('390 px, RoPE swapped in and built');
          // pictures of every section at phone width, to look at (tests/out/phone-*.png)
          const shots = [];
          for (const id of ['model', 'pictures', 'swap', 'experiments', 'trained', 'pretrained', 'positions-real']) {
            const path = `${OUT_DIR}phone-${id}.png`;
            await phone.locator(`#${id}`).screenshot({ path });
            shots.push(path);
          }
          for (const p of shots) t.diagnostic(`screenshot: ${p}`);
          console.log(
            `browser.test.js: screenshots ${OUT_DIR}phone-{${['model', 'pictures', 'swap', 'experiments', 'trained', 'pretrained', 'positions-real'].join(',')}}.png`,
          );
          // a smaller phone (360 px): the plots redraw for it
          await phone.setViewportSize({ width: 360, height: 780 });
          await layout('360 px');
          // twelve sentences: a table too wide for any phone scrolls, and says so
          await phone.fill('#pretrained-sentences', Array.from({ length: 12 }, (_, i) => `Sentence number ${i + 1}.`).join('\n'));
          await pIdle();
          const wide = (await layoutProblems(phone)).filter((p) => /in #pretrained-numbers scrolls/.test(p));
          check(wide.length === 1 && wide[0].endsWith('hinted'), `twelve sentences: the numbers scroll sideways and say so: ${JSON.stringify(wide)}`);
          t.diagnostic(`phone checks: ${failures.length} failures`);

          // the desktop keeps its layout: the same checks at 1280 px (a checkpoint dropped, RoPE + linear swapped in)
          const desk = await browser.newPage({ viewport: { width: 1280, height: 900 } });
          watch(desk, problems, 'desktop (debug)');
          try {
            await desk.goto(`${base}/web/?debug=1`);
            await desk.waitForSelector('body[data-ready="true"]');
            await desk.setInputFiles('#pretrained-folder', bert);
            await desk.evaluate(() => window.swapformerDemo.pretrained.whenIdle());
            await desk.selectOption('#pretrained-position', 'rope');
            await desk.selectOption('#pretrained-scaling', 'linear');
            await desk.selectOption('#position', 'rope');
            await desk.evaluate(async () => {
              for (const d of document.querySelectorAll('details')) d.open = true;
              const demo = window.swapformerDemo;
              await Promise.all([demo.whenIdle(), demo.pretrained.whenIdle(), demo.positionsReal.whenIdle()]);
              await demo.whenIdle();
            });
            await desk.waitForTimeout(200);
            for (const p of await layoutProblems(desk)) failures.push(`1280 px: ${p}`);
            for (const id of ['experiments', 'pretrained']) await desk.locator(`#${id}`).screenshot({ path: `${OUT_DIR}desktop-${id}.png` });
          } finally {
            await desk.close();
          }
          for (const f of probed) assert.equal(existsSync(`${bert}/${f}`), false, `the stand-in answered 404 for ${f}, which exists`);
          assert.deepEqual(failures, []);
          t.diagnostic(`phone checks in ${Math.round(performance.now() - t0)} ms`);
        } finally {
          await phone.close();
          await hub.close();
        }
      },
    );

    await t.test('no console error, page error, failed request or HTTP error', () => {
      assert.deepEqual(problems, []);
    });
  } finally {
    await browser?.close();
    await server.close();
  }
});
