// Step mode in Chromium (playwright-core, the strict CSP): one step's
// section at a time, Next and Previous, and the address that follows.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

import { EXPLORER as E, settled, start } from '../browser.js';

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

test('"Play softmax" shows each row’s exps, then their division, row by row; under reduced motion each press is one phase', async ({ env }) => {
  const row0 = (page) => page.$eval(E, (el) => {
    const root = el.shadowRoot;
    return {
      cells: [...root.querySelectorAll('table[data-id="weights-0"] tbody tr:first-child td[data-i]')].map((td) => td.textContent),
      sum: root.querySelector('table[data-id="weights-0"] tbody tr:first-child td.sum').textContent,
      status: root.querySelector('.softmax-status').textContent,
      playing: root.querySelector('table[data-id="weights-0"] tbody tr:first-child').classList.contains('playing'),
    };
  });
  const { page, problems, context } = await env.page({ reducedMotion: 'reduce' });
  await page.goto(`${env.base}/`);
  await settled(page);
  const weights = (await row0(page)).cells;
  await page.click(`${E} button:has-text("Play softmax")`);
  const exp = await row0(page);
  // The row's largest logit gives exp(0) = 1; the Σ cell shows the sum of the exps.
  assert.ok(exp.cells.includes('1.0000'), exp.cells.join(' '));
  assert.match(exp.sum, /^Σ\d\.\d{3}$/);
  // As wide as the 1.0000 it replaces, so the column does not grow (a phone cut it by 2 px).
  assert.is(exp.sum.length, '1.0000'.length);
  assert.match(exp.status, /^the: exp\(z − max\)/);
  assert.ok(exp.playing);
  // Nothing moves on its own.
  await page.waitForTimeout(1500);
  assert.equal(await row0(page), exp);
  await page.click(`${E} button:has-text("Play softmax")`);
  const divided = await row0(page);
  assert.equal(divided.cells, weights);
  assert.match(divided.status, /each exp ÷/);
  await context.close();
  // With motion allowed it plays on its own through every row and ends on the weights.
  const moving = await env.page({ reducedMotion: 'no-preference' });
  await moving.page.goto(`${env.base}/`);
  await settled(moving.page);
  await moving.page.click(`${E} button:has-text("Play softmax")`);
  await moving.page.waitForFunction((sel) => /^sat: exp/.test(document.querySelector(sel).shadowRoot.querySelector('.softmax-status').textContent), E, { timeout: 20000 });
  await moving.page.waitForFunction((sel) => document.querySelector(sel).shadowRoot.querySelector('.softmax-play-button').textContent === 'Play softmax', E, { timeout: 20000 });
  assert.equal((await row0(moving.page)).cells, weights);
  assert.equal([...problems, ...moving.problems], []);
  await moving.context.close();
});

test.run();
