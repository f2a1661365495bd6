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

test.run();
