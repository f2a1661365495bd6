// The lines view: its layout and line styles (pure), then in Chromium
// (playwright-core, the strict CSP) a line per drawn pair and head, head
// toggles, a focused query with only its lines and what it announces, its
// size at 1366 and 390 px, and its one tab stop.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

import { lineStyle, linesLayout } from '../../web/explorer/lines.js';
import { EXPLORER as E, settled, start } from '../browser.js';

// Lines of a four-token sentence need rows taller than the 22 px of a long one
// to tell their widths apart.
const LINES_MIN_HEIGHT = 140;

// The deepest focused element, through shadow roots.
const focused = (page) => page.evaluate(() => {
  let a = document.activeElement;
  while (a?.shadowRoot?.activeElement) a = a.shadowRoot.activeElement;
  return { tag: a?.tagName, q: a?.dataset?.q ?? null };
});

const layout = suite('lines layout');

layout('lines: heavier weights draw wider and more opaque; layout has both token columns', () => {
  let last = { width: 0, opacity: -1 };
  for (const w of [0, 0.01, 0.2, 0.5, 1]) {
    const s = lineStyle(w);
    assert.ok(s.width > last.width && s.opacity > last.opacity, `w=${w}`);
    last = s;
  }
  assert.is(lineStyle(0.001).opacity, 0, 'a negligible weight draws nothing');
  const L = linesLayout(['a', 'a-very-long-token-indeed']);
  assert.is(L.left.length, 2);
  assert.is(L.right[1].text.length, 12, 'long tokens are shortened');
  assert.ok(L.line(0, 1).x2 > L.line(0, 1).x1);
});

layout.run();

const test = suite('lines view in Chromium');
test.before(async (ctx) => {
  ctx.env = await start();
});
test.after(async ({ env }) => env?.close());

test('the lines view: a line per drawn pair and head, head toggles, a focused query shows only its lines, announced', async ({ env }) => {
  const { page, problems } = await env.page({ viewport: { width: 1366, height: 900 } });
  await page.goto(`${env.base}/?heads=2`);
  await settled(page);
  // The lines of one head: "M x1 y1L x2 y2" segments in the paths of its levels.
  const segments = (h) => page.$eval(E, (el, head) => [...el.shadowRoot.querySelectorAll(`figure.lines g.head-${head} path`)]
    .flatMap((p) => (p.getAttribute('d').match(/M[^M]+/g) ?? []).map((seg) => ({ level: Number(p.dataset.level), seg }))), h);
  const weights = await page.evaluate((sel) => document.querySelector(sel).state.weights.map((m) => m.toArray()), E);
  for (const h of [0, 1]) {
    assert.is((await segments(h)).length, weights[h].flat().filter((w) => w >= 0.005).length, `head ${h + 1}: one line per visible weight`);
  }
  const info = await page.$eval(E, (el) => ({ toggles: el.shadowRoot.querySelectorAll('.head-toggle').length, summary: [...el.shadowRoot.querySelectorAll('figure.lines li')].map((li) => li.textContent) }));
  assert.is(info.toggles, 2);
  assert.match(info.summary[1], /^head 1: cat attends most to \w+, 0\.\d{4}; head 2: cat attends most to \w+, 0\.\d{4}$/);
  // Keyboard: focus the first query, arrow down to "cat": only its lines stay.
  await page.focus(`${E} figure.lines text.query[data-q="0"]`);
  await page.keyboard.press('ArrowDown');
  const shown = await page.$eval(E, (el) => ({ focused: el.shadowRoot.activeElement?.getAttribute('data-q'), live: el.shadowRoot.querySelector('figure.lines [aria-live]').textContent }));
  assert.equal(shown.focused, '1');
  assert.match(shown.live, /cat attends most to/);
  const row = await segments(0);
  assert.is(row.length, weights[0][1].filter((w) => w >= 0.005).length, 'only the lines of "cat"');
  const y1 = new Set(row.map(({ seg }) => seg.split(/[ L]/)[1]));
  assert.is(y1.size, 1, 'all from one query');
  // The heaviest weight of the row is drawn at the highest level.
  const top = row.reduce((a, b) => (b.level > a.level ? b : a));
  const keyY = await page.$eval(E, (el, j) => el.shadowRoot.querySelector(`figure.lines text.key[data-k="${j}"]`).getAttribute('y'), weights[0][1].indexOf(Math.max(...weights[0][1])));
  assert.ok(top.seg.endsWith(` ${keyY}`), `${top.seg} ends at the key's y ${keyY}`);
  await page.click(`${E} .head-toggle.head-1`);
  assert.is(await page.$eval(E, (el) => el.shadowRoot.querySelector('figure.lines g.head-1').getAttribute('display')), 'none');
  assert.equal(problems, []);
  await page.context().close();
});

test('the lines view of a short sentence is large at 1366 px and fits a 390 px phone unscaled', async ({ env }) => {
  for (const [viewport, mobile] of [[{ width: 1366, height: 900 }, false], [{ width: 390, height: 844 }, true]]) {
    const { page, context } = await env.page({ viewport, ...(mobile ? { isMobile: true, hasTouch: true } : {}) });
    await page.goto(`${env.base}/`);
    await settled(page);
    const svg = await page.$eval(E, (el) => {
      const s = el.shadowRoot.querySelector('figure.lines svg');
      const r = s.getBoundingClientRect();
      return { width: r.width, height: r.height, natural: Number(s.getAttribute('width')) };
    });
    assert.ok(svg.height >= LINES_MIN_HEIGHT, `${viewport.width} px: lines view ${svg.height} px tall`);
    assert.ok(Math.abs(svg.width - svg.natural) < 1, `${viewport.width} px: drawn ${svg.width} px wide of ${svg.natural} (text shrinks when scaled down)`);
    await context.close();
  }
});

test('the lines view is one tab stop: Tab from the table before it (step 2) lands on a query token', async ({ env }) => {
  const { page, context } = await env.page({ viewport: { width: 1366, height: 900 } });
  await page.goto(`${env.base}/`);
  await settled(page);
  await page.$eval(E, (el) => el.shadowRoot.querySelector('table[data-id="scaled-0"] td[tabindex="0"]').focus());
  await page.keyboard.press('Tab');
  assert.equal(await focused(page), { tag: 'text', q: '0' });
  await page.keyboard.press('ArrowDown');
  assert.equal(await focused(page), { tag: 'text', q: '1' });
  await page.keyboard.press('Shift+Tab');
  assert.equal((await focused(page)).tag, 'TD', 'Shift+Tab goes straight back: no stop on the svg');
  await context.close();
});

test.run();
