// Step mode in Chromium (playwright-core, the strict CSP): one step's
// section at a time, Next and Previous, and the address that follows.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

import { EXPLORER as E, settled, start } from './browser.js';

const test = suite('step mode in Chromium');
test.before(async (ctx) => {
  ctx.env = await start();
});
test.after(async ({ env }) => env?.close());

test('step mode shows one section at a time; Next and Previous move, the address follows', async ({ env }) => {
  const { page, problems } = await env.page({ reducedMotion: 'reduce' });
  await page.goto(`${env.base}/?step=scores`);
  await settled(page);
  const visible = () => page.$$eval(`${E} section.step`, (s) => s.map((x) => x.dataset.step));
  assert.equal(await visible(), ['scores']);
  await page.click(`${E} .step-nav button:has-text("Next")`);
  await page.waitForFunction((sel) => document.querySelector(sel).step === 'scaled', E);
  await page.evaluate(() => new Promise((r) => setTimeout(r, 20)));
  assert.equal(await visible(), ['scaled']);
  await page.click(`${E} .step-nav button:has-text("Previous")`);
  await page.waitForFunction((sel) => document.querySelector(sel).step === 'scores', E);
  await page.evaluate(() => new Promise((r) => setTimeout(r, 20)));
  assert.equal(await visible(), ['scores']);
  assert.equal(problems, []);
  await page.context().close();
});

test('sections come in step order (1, 2, 3, 4), and the page keeps its height as off-screen sections first draw', async ({ env }) => {
  const { page, problems, context } = await env.page({ viewport: { width: 1366, height: 900 }, reducedMotion: 'reduce' });
  await page.goto(`${env.base}/`);
  await settled(page);
  const titles = await page.$$eval(`${E} section.step h2`, (hs) => hs.map((h) => h.textContent));
  const numbered = titles.map((t) => t.match(/^Step (\d)/)?.[1]).filter(Boolean);
  assert.equal(numbered, ['1', '2', '3', '4'], titles.join(' | '));
  const height = () => page.evaluate(() => document.documentElement.scrollHeight);
  const before = await height();
  // Scroll down a screen at a time, letting each frame draw, then back up.
  await page.evaluate(async () => {
    const frame = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    for (let y = 0; y < document.documentElement.scrollHeight; y += 400) {
      window.scrollTo(0, y);
      await frame();
    }
    window.scrollTo(0, 0);
    await frame();
  });
  assert.is(await height(), before);
  assert.equal(problems, []);
  await context.close();
});

test.run();
