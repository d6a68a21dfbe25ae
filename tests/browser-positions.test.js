// The demo's "Positions on a real model" panel (web/positions-real.js) in
// Debian's Chromium, driven by playwright-core, against this Node process:
//
//  - offline it loads the shipped masked-LM BERT (models/wordnet-bert) and shows
//    its three variants (its learned positions, none, a swapped plugin);
//  - "dog bites man" / "man bites dog": with positions removed the panel
//    reports an exact permutation, and Node finds the same (the two sets of
//    last hidden states equal bit for bit); with positions they differ, by the
//    per-token |Δ| Node computes for the same ids;
//  - the fill-mask predictions shown (tokens and scores) are Node's
//    Pretrained.fillMask for the same texts and variants, and without positions
//    the two texts' predictions are identical;
//  - another swapped plugin, edited sentences, a classifier folder (class
//    scores) and a cross-encoder folder (the ranking, with the exact tie that
//    removing positions makes) give Node's numbers too;
//  - canvases have text alternatives, the page does not overflow at 390 px,
//    no console error, page error or failed request; screenshots (desktop and
//    390 px) go to tests/out/.
//
// Needs /usr/bin/chromium and playwright-core (npm ci): missing either is a failure.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { loadPretrained } from '../bindings/index.js';
import { startServer } from '../web/server.js';
import { assertClose, launchChromium } from './helpers.js';
import { WORD_ORDER_EXAMPLES } from '../tools/evaluate-mlm.mjs';
const OUT_DIR = fileURLToPath(new URL('./out/', import.meta.url));
const SHIPPED = fileURLToPath(new URL('../models/wordnet-bert/', import.meta.url));
const heads = (name) => fileURLToPath(new URL(`./heads/${name}`, import.meta.url));
const TOLERANCE = 1e-5; // the page against Node, per element (helpers.js elementError)

/** Node's side, written apart from the panel: the variants of a checkpoint on the same weights. */
async function nodeVariants(dir, swap) {
  const p = await loadPretrained(dir);
  return { checkpoint: p, none: await p.withConfig({ position: 'none' }), swapped: await p.withConfig({ position: swap }) };
}
const disposeAll = (v) => { for (const k of ['swapped', 'none', 'checkpoint']) v[k].dispose(); };

/** A's and B's last hidden states: B's rows matched to A's by token (the first unused equal id), per-token max |Δ|, sets equal bit for bit. */
function nodeCompare(p, a, b) {
  const ea = p.tokenizer.encode(a), eb = p.tokenizer.encode(b);
  const oa = p.encoder.forward([ea.ids], { typeIds: [ea.typeIds] }), ob = p.encoder.forward([eb.ids], { typeIds: [eb.typeIds] });
  const C = oa.shape[2], T = oa.shape[1];
  const used = new Set(), perm = [], perToken = [];
  for (let t = 0; t < eb.ids.length; t++) {
    const s = [...ea.ids].findIndex((id, i) => !used.has(i) && id === eb.ids[t]);
    used.add(s);
    perm.push(s);
    let m = 0;
    for (let c = 0; c < C; c++) m = Math.max(m, Math.abs(oa.data[s * C + c] - ob.data[t * C + c]));
    perToken.push(m);
  }
  const bits = (o) => Array.from({ length: T }, (_, t) => Buffer.from(o.data.buffer, o.data.byteOffset + t * C * 4, C * 4).toString('hex')).sort();
  return { perm, perToken, setsEqual: JSON.stringify(bits(oa)) === JSON.stringify(bits(ob)), tokensA: ea.tokens, tokensB: eb.tokens };
}

/** The panel's order card against Node for every variant. */
function checkOrder(view, nodes, a, b, what) {
  assert.equal(view.order.a, a);
  assert.equal(view.order.b, b);
  for (const row of view.order.rows) {
    assert.equal(row.error ?? null, null, `${what} ${row.key}: ${JSON.stringify(row.error)}`);
    const ref = nodeCompare(nodes[row.key], a, b);
    assert.deepEqual(view.order.tokensB, ref.tokensB);
    assert.deepEqual(row.value.perm, ref.perm, `${what} ${row.key}: the matching of B's tokens to A's`);
    assert.equal(row.value.setsEqual, ref.setsEqual, `${what} ${row.key}: sets of rows equal`);
    assertClose(Float64Array.from(row.value.perToken), Float64Array.from(ref.perToken), TOLERANCE, `${what} ${row.key}: per-token |Δ|`);
  }
  const none = view.order.rows.find((r) => r.key === 'none').value;
  assert.equal(none.setsEqual, true, `${what}: without positions B's rows are A's, bit for bit`);
  assert.equal(none.maxDelta, 0);
  for (const key of ['checkpoint', 'swapped']) {
    const v = view.order.rows.find((r) => r.key === key).value;
    assert.equal(v.setsEqual, false, `${what}: ${key} tells the orders apart`);
    assert.ok(v.maxDelta > 1e-3, `${what}: ${key} |Δ| = ${v.maxDelta}`);
  }
}

/** Scores shown against Node's list: the same ids in the same order, the scores within TOLERANCE. */
function checkScores(shown, ref, key, what) {
  assert.deepEqual(shown.map((x) => x[key]), ref.map((x) => x[key]), `${what}: ${key}s`);
  assertClose(Float64Array.from(shown, (x) => x.score), Float64Array.from(ref, (x) => x.score), TOLERANCE, `${what}: scores`);
}

test('"Positions on a real model" in Chromium', { timeout: 240_000 }, async (t) => {
  mkdirSync(OUT_DIR, { recursive: true });
  const server = await startServer({ port: 0 });
  const problems = [];
  let browser;
  try {
    browser = await launchChromium();
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.setDefaultTimeout(60_000);
    page.on('console', (m) => { if (m.type() === 'error') problems.push(`console error: ${m.text()}`); });
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()} (${r.failure()?.errorText})`));
    page.on('response', (r) => { if (r.status() >= 400) problems.push(`HTTP ${r.status()}: ${r.url()}`); });
    const panelIdle = () => page.evaluate(() => window.swapformerDemo.positionsReal.whenIdle());
    const view = async () => (await page.evaluate(() => window.swapformerDemo.positionsReal.info())).view;
    const variantText = (key) => page.locator(`#pr-verdict-${key}`).textContent();

    await page.goto(`http://127.0.0.1:${server.port}/web/`);
    await page.waitForSelector('body[data-ready="true"]');
    await panelIdle();

    const nodes = await nodeVariants(SHIPPED, 'alibi');
    try {
      await t.test('offline, the shipped BERT loads with its three variants', async () => {
        const info = await page.evaluate(() => window.swapformerDemo.positionsReal.info());
        assert.equal(info.state, 'ready', `state: ${await page.locator('#pr-error').textContent()}`);
        assert.equal(info.model.task, 'fill-mask');
        assert.equal(info.model.shipped, true);
        assert.equal(info.model.config.position, 'learned');
        assert.match(await page.locator('#pr-source').textContent(), /models\/wordnet-bert/);
        assert.deepEqual(info.view.variants.map((v) => [v.key, v.label]),
          [['checkpoint', 'its own: learned'], ['none', 'positions removed'], ['swapped', 'alibi swapped in']]);
        assert.equal(await page.locator('#pr-swap').inputValue(), 'alibi');
        const choices = await page.$$eval('#pr-swap option', (os) => os.map((o) => o.value));
        assert.ok(!choices.includes('learned') && !choices.includes('none') && choices.includes('sinusoidal'), `swap choices ${choices}`);
        for (const key of ['checkpoint', 'none', 'swapped']) assert.ok(await page.locator(`#pr-verdict-${key}`).isVisible(), key);
      });

      await t.test('"dog bites man" / "man bites dog": an exact permutation without positions, Node\'s numbers with them', async () => {
        const v = await view();
        checkOrder(v, nodes, 'dog bites man', 'man bites dog', 'default sentences');
        assert.match(await variantText('none'), /same rows.*Exact permutation: B's 6 rows are A's rows, bit for bit/);
        assert.equal(await page.locator('#pr-verdict-none .badge').getAttribute('class'), 'badge pass');
        const ref = nodeCompare(nodes.checkpoint, 'dog bites man', 'man bites dog');
        const shown = (x) => (x === 0 ? '0' : x < 1e-3 ? x.toExponential(1) : x.toPrecision(3));
        assert.match(await variantText('checkpoint'), new RegExp(`the largest \\|Δ\\| is ${shown(Math.max(...ref.perToken)).replace('.', '\\.')}`));
        // the table under the chart: one cell per token and variant
        const cells = await page.$$eval('#pr-delta-table td[data-variant="checkpoint"]', (tds) => tds.map((td) => td.textContent));
        assert.deepEqual(cells, ref.perToken.map(shown));
        assert.equal(await page.locator('#pr-delta-chart').getAttribute('data-drawn'), 'true');
      });

      await t.test('fill-mask: Node\'s predictions for each variant; identical for both texts without positions', async () => {
        const v = await view();
        assert.deepEqual(v.fill.texts, WORD_ORDER_EXAMPLES[0]);
        for (const row of v.fill.rows) {
          for (const i of [0, 1]) checkScores(row.value[i], nodes[row.key].fillMask(v.fill.texts[i]), 'token', `fill-mask ${row.key} text ${i + 1}`);
        }
        const none = v.fill.rows.find((r) => r.key === 'none').value;
        assert.deepEqual(none[0], none[1].map((x, i) => ({ ...x, sequence: none[0][i].sequence })), 'without positions both texts get the same tokens and scores');
        assert.equal(await page.locator('#pr-fill [data-variant="none"]').getAttribute('data-same'), 'true');
        assert.equal(await page.locator('#pr-fill [data-variant="checkpoint"]').getAttribute('data-same'), 'false');
        // what the page prints: the first row's token and score
        const first = await page.locator('#pr-fill [data-variant="checkpoint"] ol').first().locator('li').first().textContent();
        const ref = nodes.checkpoint.fillMask(v.fill.texts[0])[0];
        assert.equal(first, `${ref.tokenStr}${ref.score.toFixed(4)}`);
      });

      await t.test('text alternatives: every canvas of the panel is a labelled image with its numbers in a table', async () => {
        const canvases = await page.$$eval('#positions-real canvas', (cs) => cs.map((c) => ({ role: c.getAttribute('role'), label: c.getAttribute('aria-label'), hidden: c.closest('[hidden]') !== null })));
        for (const c of canvases.filter((x) => !x.hidden)) {
          assert.equal(c.role, 'img');
          assert.ok(c.label && c.label.length > 40, `canvas label: ${c.label}`);
        }
        assert.match(canvases[0].label ?? '', /accuracy|Accuracy/);
        assert.ok((await page.$$('#pr-accuracy-table tr')).length >= 4, 'the accuracy table');
        assert.ok((await page.$$('#pr-delta-table tr')).length >= 4, 'the |Δ| table');
      });
    } finally {
      disposeAll(nodes);
    }

    await t.test('another swap and other sentences: Node\'s numbers again', async () => {
      await page.selectOption('#pr-swap', 'sinusoidal');
      await panelIdle();
      await page.fill('#pr-text-a', 'the cat chased the dog across the garden');
      await page.fill('#pr-text-b', 'the dog chased the cat across the garden');
      await panelIdle();
      const v = await view();
      assert.equal(v.variants[2].label, 'sinusoidal swapped in');
      const n = await nodeVariants(SHIPPED, 'sinusoidal');
      try {
        checkOrder(v, n, 'the cat chased the dog across the garden', 'the dog chased the cat across the garden', 'edited sentences');
      } finally {
        disposeAll(n);
      }
      await page.fill('#pr-text-b', 'a cat sat on a mat');
      await panelIdle();
      assert.match(await page.locator('#pr-order-msg').textContent(), /not a rearrangement/);
      assert.equal(await page.locator('#pr-order-msg').isVisible(), true);
      await page.fill('#pr-text-b', 'the dog chased the cat across the garden');
      await panelIdle();
    });

    await t.test('a classifier folder: class scores of A and B per variant, Node\'s', async () => {
      await page.setInputFiles('#pr-folder', heads('bert-seq-3'));
      await panelIdle();
      const info = await page.evaluate(() => window.swapformerDemo.positionsReal.info());
      assert.equal(info.state, 'ready');
      assert.equal(info.model.task, 'text-classification');
      assert.equal(await page.locator('#pr-classes').isVisible(), true, 'the class scores are shown');
      assert.equal(await page.locator('#pr-fill-wait').isVisible(), true, 'fill-mask says what it needs');
      const n = await nodeVariants(heads('bert-seq-3'), info.view.variants[2].changes.position);
      try {
        for (const row of info.view.classes) {
          for (const [i, text] of [[0, info.view.order.a], [1, info.view.order.b]]) checkScores(row.value[i], n[row.key].classify(text, { topK: null }), 'label', `classify ${row.key} ${text}`);
        }
        const none = info.view.classes.find((r) => r.key === 'none').value;
        assert.deepEqual(none[0], none[1], 'without positions the classifier gives A and B the same scores');
      } finally {
        disposeAll(n);
      }
    });

    await t.test('a cross-encoder folder: the ranking with and without positions, Node\'s; the exact tie without them', async () => {
      await page.setInputFiles('#pr-folder', heads('cross-encoder-msmarco'));
      await panelIdle();
      const info = await page.evaluate(() => window.swapformerDemo.positionsReal.info());
      assert.equal(info.state, 'ready');
      assert.equal(await page.locator('#pr-rank-wait').isVisible(), false);
      const r = info.view.rank;
      assert.equal(r.query, 'who bit the man?');
      const n = await nodeVariants(heads('cross-encoder-msmarco'), info.view.variants[2].changes.position);
      try {
        for (const row of r.rows) checkScores(row.value, n[row.key].rank(r.query, r.passages), 'corpusId', `rank ${row.key}`);
      } finally {
        disposeAll(n);
      }
      const none = r.rows.find((x) => x.key === 'none').value;
      const score = (id) => none.find((x) => x.corpusId === id).score;
      assert.equal(score(0), score(1), '"the dog bit the man." and "the man bit the dog." tie exactly without positions');
      assert.equal(await page.locator('#pr-rank [data-variant="none"]').getAttribute('data-ties'), '1');
      await page.locator('#positions-real').screenshot({ path: `${OUT_DIR}positions-real-cross-encoder.png` });
    });

    await t.test('the shipped BERT again; screenshots at desktop and 390 px, no horizontal overflow', async () => {
      await page.click('#pr-shipped');
      await panelIdle();
      assert.equal((await page.evaluate(() => window.swapformerDemo.positionsReal.info())).model.shipped, true);
      await page.locator('#positions-real').screenshot({ path: `${OUT_DIR}positions-real-desktop.png` });
      await page.setViewportSize({ width: 390, height: 844 });
      await panelIdle();
      await page.waitForTimeout(300); // the charts redraw at the new width
      const widths = await page.evaluate(() => ({ doc: document.documentElement.scrollWidth, panel: document.getElementById('positions-real').scrollWidth }));
      assert.ok(widths.doc <= 390, `the page is ${widths.doc} px wide at 390 px`);
      assert.ok(widths.panel <= 390, `the panel is ${widths.panel} px wide at 390 px`);
      await page.locator('#positions-real').screenshot({ path: `${OUT_DIR}positions-real-phone.png` });
      t.diagnostic(`screenshots: ${OUT_DIR}positions-real-{desktop,phone,cross-encoder}.png`);
    });

    assert.deepEqual(problems, [], 'no console error, page error or failed request');
  } finally {
    await browser?.close();
    await server.close();
  }
});
