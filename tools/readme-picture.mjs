// The README's picture: the demo's "Positions on a real model" panel (the shipped WordNet
// BERT with its own positions, without them, and with sinusoidal ones swapped in), taken in
// Debian's Chromium at 1200 px and written to docs/images/positions-real.png.
//   node tools/readme-picture.mjs
import { startServer } from '../web/server.js';
import { launchChromium } from '../tests/helpers.js';

const OUT = new URL('../docs/images/positions-real.png', import.meta.url);
const server = await startServer({ port: 0 });
const browser = await launchChromium();
try {
  const page = await browser.newPage({ viewport: { width: 1200, height: 900 }, deviceScaleFactor: 1 });
  await page.goto(`http://127.0.0.1:${server.port}/web/`);
  await page.waitForSelector('body[data-ready="true"]');
  await page.evaluate(() => window.swapformerDemo.positionsReal.whenIdle());
  await page.waitForTimeout(300); // the charts' last redraw
  const panel = page.locator('#positions-real');
  const scroll = await page.evaluate(() => ({ x: window.scrollX, y: window.scrollY }));
  const box = await panel.boundingBox(); // viewport coordinates: to the page's with the scroll
  // from the heading to the end of "Fill the mask" (the reranker below needs a cross-encoder)
  const fill = await page.locator('#pr-fill-card').boundingBox();
  const height = Math.round(fill.y + fill.height + 12 - box.y);
  await page.screenshot({ path: OUT.pathname, fullPage: true, clip: { x: box.x + scroll.x, y: box.y + scroll.y, width: box.width, height } });
  console.log(`wrote ${OUT.pathname} (${Math.round(box.width)} x ${Math.round(height)})`);
} finally {
  await browser.close();
  await server.close();
}
