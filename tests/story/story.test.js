// attention-wasm/story: parsing its data attributes (Node), then a story
// page in Chromium (tests/pages/story.html): el.set() makes one recompute,
// el.highlight() lights cells by token or index and clears with null, a
// click applies and a second click undoes, blocks scrolled into view apply
// their step and undo it as they leave, and a step sets only the explorer's
// own settings (never a handler or a style). Screenshots of the story page at
// 1366, 720 and 390 px, light and dark, go to tests/output/.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

import { parseHighlight, parseSet } from '../../web/story/parse.js';
import { OUTPUT, settled, start } from '../browser.js';

const parse = suite('story attributes');

parse('data-attention-set: name=value, name alone for on, =false for off, quoted values', () => {
  assert.equal([...parseSet("scale=2 causal tokens='the cat sat' positions=false")], [['scale', '2'], ['causal', ''], ['tokens', 'the cat sat'], ['positions', null]]);
  assert.throws(() => parseSet('scale=2 ='), /cannot read "="/);
});

parse('data-attention-highlight: part, row, col, * for all, head=', () => {
  assert.equal(parseHighlight('weights cat sat'), { part: 'weights', row: 'cat', col: 'sat' });
  assert.equal(parseHighlight('weights * mat head=1'), { head: 1, part: 'weights', col: 'mat' });
  assert.is(parseHighlight('  '), null);
});

parse.run();

const test = suite('a story page in Chromium');
test.before(async (ctx) => {
  ctx.env = await start();
});
test.after(async ({ env }) => env?.close());

const FIG = '#fig1';
const lit = (page) => page.$eval(FIG, (el) => [...el.shadowRoot.querySelectorAll('td.story')].map((td) => `${td.closest('table').dataset.id}:${td.dataset.i},${td.dataset.j}`));
const frames = (page) => page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(r, 50)))));

test('el.set() is one recompute; el.highlight() lights by token or index and clears with null', async ({ env }) => {
  const { page, problems, context } = await env.page({ viewport: { width: 1366, height: 900 } });
  await page.goto(`${env.base}/tests/pages/story.html`);
  await settled(page, FIG);
  const r = await page.$eval(FIG, async (el) => {
    let changes = 0;
    el.addEventListener('attention-change', () => changes++);
    await el.set({ scale: 2, causal: true, seed: 3 });
    return { changes, config: [el.config.scale, el.config.causal, el.config.seed] };
  });
  assert.equal(r, { changes: 1, config: [2, true, 3] });
  await page.$eval(FIG, (el) => el.highlight({ part: 'weights', row: 'the', col: 2 }));
  assert.equal(await lit(page), ['weights-0:0,2', 'weights-0:4,2'], 'both “the” rows, column 2');
  await page.$eval(FIG, (el) => el.highlight({ part: 'weights', row: 1 }));
  assert.equal((await lit(page)).length, 6);
  // The lines view selects the one query.
  assert.is(await page.$eval(FIG, (el) => el.shadowRoot.querySelector('figure.lines text.query.on')?.textContent), 'cat');
  // A highlight stays through a recompute.
  await page.$eval(FIG, (el) => el.set({ scale: 1 }));
  await frames(page);
  assert.is((await lit(page)).length, 6);
  await page.$eval(FIG, (el) => el.highlight(null));
  assert.equal(await lit(page), []);
  assert.is(await page.$eval(FIG, (el) => el.shadowRoot.querySelector('figure.lines text.query.on')), null);
  const errors = await page.$eval(FIG, (el) => ['nope', 'weights'].map((part) => {
    try { el.highlight({ part, row: 'dog' }); return 'no error'; } catch (e) { return `${e.name}: ${e.message}`; }
  }));
  assert.match(errors[0], /^RangeError: highlight: part must be one of/);
  assert.match(errors[1], /^RangeError: highlight: row "dog" is neither a token/);
  await page.$eval(FIG, (el) => el.set({ scale: null, causal: false, seed: null }));
  assert.equal(problems, []);
  await context.close();
});

test('a click applies its step and a second click undoes it; blocks in view apply theirs and undo them as they leave', async ({ env }) => {
  const { page, problems, context } = await env.page({ viewport: { width: 720, height: 800 }, reducedMotion: 'reduce' });
  await page.goto(`${env.base}/tests/pages/story.html`);
  await settled(page, FIG);
  const state = () => page.$eval('#fig1', (el) => ({ causal: el.config.causal, scale: Number(el.config.scale.toFixed(3)), attr: el.getAttribute('scale') }));
  const base = await state();
  assert.equal(base, { causal: false, scale: 0.577, attr: null });
  await page.click('#causal-link');
  await frames(page);
  assert.is((await state()).causal, true);
  assert.not.match(page.url(), /#$/, 'the link does not jump');
  await page.click('#causal-link');
  await frames(page);
  assert.is((await state()).causal, false);
  await page.click('#light-cat');
  await frames(page);
  assert.is((await lit(page)).length, 6);
  await page.click('#light-cat');
  await frames(page);
  assert.equal(await lit(page), []);
  // Scroll the first block into view: scale 2 and the row of “cat”.
  await page.$eval('#beat-sharp', (b) => b.scrollIntoView({ block: 'center' }));
  await page.waitForFunction(() => document.querySelector('#fig1').getAttribute('scale') === '2');
  await frames(page);
  assert.is((await state()).scale, 2);
  assert.equal((await lit(page)).filter((c) => c.startsWith('weights-0:1,')).length, 6);
  await page.screenshot({ path: `${OUTPUT}story-step-720.png` });
  // The second: scale 0.1 and the column of “mat”.
  await page.$eval('#beat-flat', (b) => b.scrollIntoView({ block: 'center' }));
  await page.waitForFunction(() => document.querySelector('#fig1').getAttribute('scale') === '0.1');
  await frames(page);
  assert.equal(await lit(page), [0, 1, 2, 3, 4, 5].map((i) => `weights-0:${i},5`));
  // Past the last: everything as the page drew it.
  await page.$eval('#beat-end', (b) => b.scrollIntoView({ block: 'end' }));
  await page.waitForFunction(() => document.querySelector('#fig1').getAttribute('scale') === null);
  await frames(page);
  assert.equal(await state(), base);
  assert.equal(await lit(page), []);
  // And back up: the first block applies again.
  await page.$eval('#beat-sharp', (b) => b.scrollIntoView({ block: 'center' }));
  await page.waitForFunction(() => document.querySelector('#fig1').getAttribute('scale') === '2');
  assert.equal(problems, []);
  await context.close();
});

test('screenshots of the story page at 1366, 720 and 390 px, light and dark', async ({ env }) => {
  for (const colorScheme of ['light', 'dark']) {
    for (const width of [1366, 720, 390]) {
      const { page, problems, context } = await env.page({ viewport: { width, height: 900 }, colorScheme, reducedMotion: 'reduce' });
      await page.goto(`${env.base}/tests/pages/story.html`);
      await settled(page, FIG);
      await page.$eval('#beat-sharp', (b) => b.scrollIntoView({ block: 'center' }));
      await page.waitForFunction(() => document.querySelector('#fig1').getAttribute('scale') === '2');
      await frames(page);
      await page.screenshot({ path: `${OUTPUT}story-${width}-${colorScheme}.png` });
      assert.equal(problems, [], `${width} ${colorScheme}`);
      await context.close();
    }
  }
});

test('a step sets only the explorer\'s own settings: onmouseover, onclick and style in data-attention-set are ignored with a warning', async ({ env }) => {
  // No CSP here (bypassCSP), as on a page without one: an inline handler that
  // reached the figure would run on hover.
  const { page, problems, context } = await env.page({ bypassCSP: true });
  const warnings = [];
  page.on('console', (msg) => msg.type() === 'warning' && warnings.push(msg.text()));
  await page.goto(`${env.base}/tests/pages/story-hostile.html`);
  await settled(page, FIG);
  await page.click('#hostile');
  await frames(page);
  await page.hover(FIG);
  await page.click(FIG);
  await frames(page);
  const figure = await page.$eval(FIG, (el) => ({ names: el.getAttributeNames(), scale: el.config.scale, ran: globalThis.hostileRan ?? false }));
  assert.is(figure.ran, false, 'no injected handler ran');
  assert.equal(figure.names.filter((n) => /^on|^style$/.test(n)), [], `attributes: ${figure.names}`);
  assert.is(figure.scale, 2, 'the setting beside them applies');
  assert.ok(warnings.some((w) => /data-attention-set: "onmouseover", "style", "ONCLICK" are not settings of <attention-explorer>, ignored/.test(w)), warnings.join('\n'));
  assert.equal(problems, []);
  await context.close();
});

test.run();
