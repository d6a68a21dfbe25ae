// The demo's model loads in Debian's Chromium, driven by playwright-core: the
// "Load a checkpoint" card (web/pretrained-load.js), section 7's Hub field
// (web/positions-real.js) and the loader under them (bindings/pretrained/files.js):
//
//  - a Hub load reads the Hub's file list (tests/hub-server.js answers it as the
//    Hub's API does) and asks for no file the repository lacks: no 404, so no
//    red line in the console;
//  - a load that fails leaves no bar looking done ("Failed" beside a full bar
//    once read as finished): one line says how far it got;
//  - section 7 loads a Hub id from the Hub URL set in section 6 (a mirror; here
//    the local stand-in), and its measured-accuracy card offers no empty "The
//    numbers" for a model that was not measured;
//  - a model folder on another origin whose 404s lack CORS headers fails with
//    NETWORK saying what to check, not a bare "Failed to fetch";
//  - at 390 px the page does not scroll sideways. Screenshots (desktop and
//    390 px) go to tests/out/.
//
// Needs /usr/bin/chromium and playwright-core (npm ci): missing either is a failure.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer } from '../web/server.js';
import { startHub } from './hub-server.js';
import { launchChromium } from './helpers.js';

const OUT_DIR = fileURLToPath(new URL('./out/', import.meta.url));
const fixture = (dir) => fileURLToPath(new URL(`./${dir}`, import.meta.url));
const PHONE = { viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true };

/** A folder server on its own origin that sends CORS headers on its 200s only, as a misconfigured host does. */
async function corsOnlyOnSuccess(folder) {
  const server = http.createServer((req, res) => {
    const name = decodeURIComponent(new URL(req.url, 'http://x').pathname).replace(/^\/model\//, '');
    let bytes = null;
    try {
      if (!name.includes('..')) bytes = readFileSync(path.join(folder, name));
    } catch {
      bytes = null;
    }
    if (bytes) {
      res.writeHead(200, { 'Access-Control-Allow-Origin': '*', 'Content-Type': 'application/octet-stream', 'Content-Length': bytes.length });
      res.end(bytes);
    } else {
      res.writeHead(404, { 'Content-Type': 'text/plain' });
      res.end('not found');
    }
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${server.address().port}/model/`, close: () => new Promise((resolve) => server.close(resolve)) };
}

test(
  "model loads in the demo: no 404 for absent files, a failed load reads as failed, section 7 follows section 6's Hub URL, CORS on 404s named",
  { timeout: 240_000 },
  async (t) => {
    mkdirSync(OUT_DIR, { recursive: true });
    // a repository without weights: the load fails after reading its configs
    const noWeights = mkdtempSync(path.join(tmpdir(), 'swapformer-no-weights-'));
    cpSync(fixture('pretrained/bert-minilm'), noWeights, { recursive: true });
    rmSync(path.join(noWeights, 'model.safetensors'));
    t.after(() => rmSync(noWeights, { recursive: true, force: true }));
    const hub = await startHub({ repos: { 'test-org/no-weights': noWeights, 'test-org/bert-seq-3': fixture('heads/bert-seq-3') } });
    t.after(() => hub.close());
    const site = await startServer({ port: 0 });
    t.after(() => site.close());
    const folder = await corsOnlyOnSuccess(fixture('pretrained/nomic-embed')); // it has no modules.json
    t.after(() => folder.close());
    const browser = await launchChromium();
    t.after(() => browser.close());

    const problems = [];
    const open = async (options, label) => {
      const page = await browser.newPage(options);
      page.setDefaultTimeout(60_000);
      page.on('console', (m) => {
        if (m.type() === 'error') problems.push({ label, text: `console error: ${m.text()}` });
      });
      page.on('pageerror', (e) => problems.push({ label, text: `page error: ${e.message}` }));
      page.on('requestfailed', (r) => problems.push({ label, text: `request failed: ${r.url()} (${r.failure()?.errorText})` }));
      page.on('response', (r) => {
        if (r.status() >= 400) problems.push({ label, text: `HTTP ${r.status()}: ${r.url()}` });
      });
      await page.goto(`http://127.0.0.1:${site.port}/`);
      await page.waitForSelector('body[data-ready="true"]');
      await page.evaluate(() => window.swapformerDemo.whenIdle());
      return page;
    };
    const sectionIdle = (page) =>
      page.evaluate(() => Promise.all([window.swapformerDemo.pretrained.whenIdle(), window.swapformerDemo.positionsReal.whenIdle()]));
    const errorsFromHub = () => hub.requests.filter((r) => r.status >= 400);

    const desktop = await open({ viewport: { width: 1280, height: 900 } }, 'desktop');
    const phone = await open(PHONE, 'phone');

    /** Section 6: the Hub URL set to the stand-in, a repository without weights loaded by id. */
    const failedLoad = async (page, shot) => {
      await page.click('#pretrained-advanced summary');
      await page.fill('#pretrained-hub', hub.url);
      await page.fill('#pretrained-id', 'test-org/no-weights');
      await page.click('#pretrained-load-button');
      await sectionIdle(page);
      assert.equal(await page.locator('#pretrained-error').getAttribute('data-code'), 'NOT_FOUND');
      assert.match(await page.locator('#pretrained-error').textContent(), /no weights in test-org\/no-weights/);
      assert.equal(await page.locator('#pretrained-progress').getAttribute('data-state'), 'stopped');
      assert.equal(await page.locator('#pretrained-file-name').textContent(), 'Failed');
      assert.match(await page.locator('#pretrained-file-bytes').textContent(), /^after 5 files, [\d.]+ kB read$/);
      assert.equal(await page.locator('#pretrained-progress progress:visible').count(), 0, 'no bar is left looking done');
      assert.equal(await page.locator('#pretrained-total-bytes').isVisible(), false, 'no "All files 100%"');
      await page.locator('#pretrained-load').screenshot({ path: `${OUT_DIR}${shot}` });
    };

    /** Section 7: a Hub id, from the Hub URL section 6 holds. */
    const sectionSevenLoad = async (page, shot) => {
      await page.fill('#pr-hub-id', 'test-org/bert-seq-3');
      await page.click('#pr-hub-load');
      await sectionIdle(page);
      const info = await page.evaluate(() => window.swapformerDemo.positionsReal.info());
      assert.equal(info.state, 'ready', `section 7: ${await page.locator('#pr-error').textContent()}`);
      assert.equal(info.model.label, 'test-org/bert-seq-3');
      assert.equal(info.model.task, 'text-classification');
      assert.equal(info.model.shipped, false);
      // not measured: the card says so, with no empty table to open
      assert.equal(await page.locator('#pr-accuracy-wait').isVisible(), true);
      assert.equal(await page.locator('#pr-accuracy-numbers').isVisible(), false, 'no empty "The numbers"');
      await page.locator('#positions-real').screenshot({ path: `${OUT_DIR}${shot}` });
    };

    await t.test('section 6: a load that fails says so on one line, no bar full; the Hub was asked for no file the repository lacks', async () => {
      await failedLoad(desktop, 'loading-failed-desktop.png');
      const asked = hub.requests.map((r) => r.path);
      assert.ok(asked.includes('/api/models/test-org/no-weights/revision/main'), 'the file list was read');
      for (const absent of ['model.safetensors', 'model.safetensors.index.json', 'pytorch_model.bin', 'pytorch_model.bin.index.json'])
        assert.ok(!asked.some((p) => p.startsWith('/test-org/no-weights/resolve/') && p.endsWith(`/${absent}`)), `${absent} (absent) is not asked for`);
      assert.deepEqual(errorsFromHub(), [], 'no 404 (a red console line in the browser)');
    });

    await t.test("section 7: a Hub id loads from section 6's Hub URL; the accuracy card has no empty table for it", async () => {
      const before = hub.requests.length;
      await sectionSevenLoad(desktop, 'loading-section7-desktop.png');
      const asked = hub.requests.slice(before);
      assert.ok(
        asked.some((r) => r.path === `/test-org/bert-seq-3/resolve/${hub.commitOf('test-org/bert-seq-3')}/config.json` && r.status === 200),
        `section 7 asked the stand-in: ${JSON.stringify(asked)}`,
      );
      assert.deepEqual(errorsFromHub(), []);
      // the shipped BERT again: its measured numbers are there to open
      await desktop.click('#pr-shipped');
      await sectionIdle(desktop);
      assert.equal(await desktop.locator('#pr-accuracy-numbers').isVisible(), true);
      assert.ok((await desktop.$$('#pr-accuracy-table tr')).length >= 4);
    });

    await t.test('a folder whose 404s lack CORS headers: NETWORK naming the file and saying to send the headers on 404s too', async () => {
      await desktop.evaluate((url) => window.swapformerDemo.pretrained.load(url), folder.url);
      await sectionIdle(desktop);
      assert.equal(await desktop.locator('#pretrained-error').getAttribute('data-code'), 'NETWORK');
      assert.match(
        await desktop.locator('#pretrained-error').textContent(),
        /modules\.json: fetching http:\/\/127\.0\.0\.1:\d+\/model\/modules\.json failed.*check that it sends CORS headers \(Access-Control-Allow-Origin\) on every answer, 404s and errors included/,
      );
      await desktop.locator('#pretrained-load').screenshot({ path: `${OUT_DIR}loading-cors-desktop.png` });
      // what Chromium itself logs for the blocked answer is expected here, and nothing else
      const origin = new URL(folder.url).origin;
      const blocked = (p) =>
        p.label === 'desktop' && (p.text.includes(`${origin}/model/modules.json`) || /console error: Failed to load resource: net::ERR_FAILED/.test(p.text));
      assert.ok(problems.some(blocked), 'Chromium reported the blocked answer');
      problems.splice(0, problems.length, ...problems.filter((p) => !blocked(p)));
    });

    await t.test('390 px: the same loads, nothing wider than the screen', async () => {
      await failedLoad(phone, 'loading-failed-phone.png');
      await sectionSevenLoad(phone, 'loading-section7-phone.png');
      const overflow = await phone.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      assert.ok(overflow <= 0, `the page is ${overflow} px wider than a 390 px phone`);
      for (const f of ['failed', 'section7', 'cors'].flatMap((n) => [`loading-${n}-desktop.png`, ...(n === 'cors' ? [] : [`loading-${n}-phone.png`])]))
        t.diagnostic(`screenshot: ${OUT_DIR}${f}`);
    });

    await t.test('no console error, page error, failed request or HTTP error', () => {
      assert.deepEqual(
        problems.map((p) => `${p.label}: ${p.text}`),
        [],
      );
    });
  },
);
