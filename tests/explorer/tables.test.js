// The explorer's tables: heatmap colours (a pure check of the palettes),
// then in Chromium (playwright-core, the strict CSP) the keyboard grid (one
// tab stop, arrows, editing, Space masks), numbers that fit their cells,
// tables that fit or scroll at 390, 720 and 1366 px, the Copy button by its
// table, blocked pairs, and a slider drag that leaves off-screen tables for later.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

import { loadAttention } from '../../web/attention.js';
import { diverging, luminance, sequential } from '../../web/explorer/colors.js';
import { computeExample, normalizeConfig } from '../../web/worked/computation.js';
import { DIGITS, fixed } from '../../web/worked/format.js';
import { Matrix } from '../../web/core/matrix.js';
import { EXPLORER as E, cellTexts, settled, start, svgTitle } from '../browser.js';

const textsOf = (m, digits) => m.toArray().map((row) => row.map((x) => fixed(x, digits)));

const palette = suite('heatmap palettes');

palette('dark palette: large magnitudes stand out (brighter), as they do (darker) in light', () => {
  const stepsUp = (f) => [0, 0.25, 0.5, 0.75, 1].map((t) => luminance(f(t)));
  const darkSeq = stepsUp((t) => sequential(t, 'dark'));
  const lightSeq = stepsUp((t) => sequential(t));
  for (let k = 1; k < 5; k++) {
    assert.ok(darkSeq[k] > darkSeq[k - 1], `dark sequential rises at ${k}`);
    assert.ok(lightSeq[k] < lightSeq[k - 1], `light sequential falls at ${k}`);
  }
  assert.ok(luminance(diverging(0, 'dark')) < luminance(diverging(1, 'dark')));
  assert.ok(luminance(diverging(0, 'dark')) < luminance(diverging(-1, 'dark')));
  assert.ok(luminance(sequential(0, 'dark')) < 0.02, 'zero sinks into the dark background');
});


palette.run();

const test = suite('tables in Chromium');
test.before(async (ctx) => {
  ctx.env = await start();
  ctx.attn = await loadAttention();
});
test.after(async ({ env }) => env?.close());

test('typing into a cell of X recomputes everything downstream; keyboard moves and masks', async ({ env, attn }) => {
  const { page, problems } = await env.page();
  await page.goto(`${env.base}/`);
  await settled(page);
  const events = await page.evaluateHandle((sel) => {
    const list = [];
    document.querySelector(sel).addEventListener('attention-change', (e) => list.push(e.detail));
    return list;
  }, E);
  await page.focus(`${E} table[data-id="X"] td[data-i="0"][data-j="0"]`);
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowDown');
  const focused = await page.evaluate((sel) => document.querySelector(sel).shadowRoot.activeElement.getAttribute('aria-label'), E);
  assert.match(focused, /^row cat, column x1: -1\.7547$/);
  await page.keyboard.type('2.5');
  await page.keyboard.press('Enter');
  await settled(page);
  const config = normalizeConfig();
  const ex0 = computeExample(attn, config);
  const X = new Matrix(4, 6, ex0.X.data.slice());
  X.data[1 * 6 + 1] = 2.5;
  const ex = computeExample(attn, config, { X });
  for (const step of ['scores', 'scaled', 'weights', 'output']) {
    assert.equal(await cellTexts(page, `${step}-0`), textsOf(ex.heads[0][step], DIGITS[step]), step);
  }
  assert.ok((await events.jsonValue()).at(-1).edited);
  const stillFocused = await page.evaluate((sel) => document.querySelector(sel).shadowRoot.activeElement.getAttribute('aria-label'), E);
  assert.match(stillFocused, /^row cat, column x1: 2\.5000 \(edited\)$/);
  // Space on a weight cell masks that pair: the row renormalises without it.
  await page.focus(`${E} table[data-id="weights-0"] td[data-i="1"][data-j="2"]`);
  await page.keyboard.press('Space');
  await settled(page);
  const mask = new Uint8Array(16).fill(1);
  mask[1 * 4 + 2] = 0;
  const masked = computeExample(attn, config, { X }, mask);
  assert.equal(await cellTexts(page, 'weights-0'), textsOf(masked.heads[0].weights, 4));
  assert.is((await cellTexts(page, 'weights-0'))[1][2], '0.0000');
  const label = await page.$eval(`${E} table[data-id="weights-0"] td[data-i="1"][data-j="2"]`, (td) => td.getAttribute('aria-label'));
  assert.match(label, /row cat, column sat: 0\.0000 \(masked\)/);
  // Hover explains a number.
  await page.hover(`${E} table[data-id="scores-0"] td[data-i="0"][data-j="1"]`);
  const explain = await page.$eval(`${E}`, (el) => el.shadowRoot.querySelector('.popover .formula').textContent);
  assert.match(explain, /^score\(the → cat\) = q_the · k_cat = .+ = -?\d+\.\d{3}$/);
  assert.equal(problems, []);
  await page.context().close();
});

test('one tab stop per table; arrows move between row labels and cells', async ({ env }) => {
  const { page, problems } = await env.page();
  await page.goto(`${env.base}/`);
  await settled(page);
  const stops = await page.$eval(E, (el) => [...el.shadowRoot.querySelectorAll('table')].map((t) => t.querySelectorAll('[tabindex="0"]').length));
  assert.ok(stops.length >= 10);
  assert.ok(stops.every((n) => n === 1), JSON.stringify(stops));
  await page.focus(`${E} table[data-id="scores-0"] td[data-i="1"][data-j="0"]`);
  await page.keyboard.press('ArrowLeft');
  const label = await page.$eval(E, (el) => el.shadowRoot.activeElement.textContent);
  assert.is(label, 'cat');
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowRight');
  const cell = await page.$eval(E, (el) => el.shadowRoot.activeElement.getAttribute('aria-label'));
  assert.match(cell, /^row sat, column the: /);
  const ring = await page.$eval(E, (el) => {
    const s = getComputedStyle(el.shadowRoot.activeElement);
    return { outline: `${s.outlineStyle} ${s.outlineWidth}`, inner: s.boxShadow };
  });
  assert.equal(ring.outline, 'solid 3px', 'the outer ring of the two-colour focus ring');
  assert.match(ring.inner, /inset/, 'the inner ring');
  assert.equal(problems, []);
  await page.context().close();
});

test('at 390 px a cell reached by the arrow keys is never behind the sticky toolbar', async ({ env }) => {
  const { page, context } = await env.page({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
  await page.goto(`${env.base}/?tokens=${Array.from({ length: 16 }, (_, i) => `t${i}`).join('+')}`);
  await settled(page);
  await page.$eval(E, (el) => el.shadowRoot.querySelector('table[data-id="scores-0"] td[data-i="15"][data-j="0"]').focus());
  for (let k = 0; k < 15; k++) {
    await page.keyboard.press('ArrowUp');
    const gap = await page.$eval(E, (el) => {
      const cell = el.shadowRoot.activeElement.getBoundingClientRect();
      return cell.top - el.shadowRoot.querySelector('.toolbar').getBoundingClientRect().bottom;
    });
    assert.ok(gap >= 0, `row ${14 - k}: the focused cell's top is ${-gap} px under the toolbar`);
  }
  await context.close();
});

test('at 390 px every number fits inside its cell', async ({ env }) => {
  const { page, context } = await env.page({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
  await page.goto(`${env.base}/`);
  await settled(page);
  const spill = await page.$eval(E, (el) => {
    const range = document.createRange();
    return [...el.shadowRoot.querySelectorAll('td[data-i]')].filter((td) => {
      range.selectNodeContents(td);
      const text = range.getBoundingClientRect(), cell = td.getBoundingClientRect();
      return text.left < cell.left + 1 || text.right > cell.right - 1;
    }).map((td) => `${td.closest('table').dataset.id}[${td.dataset.i}][${td.dataset.j}] ${td.textContent}`);
  });
  assert.equal(spill, [], `numbers wider than their cell: ${spill.slice(0, 5).join(', ')}`);
  await context.close();
});

for (const heads of [1, 4]) {
  test(`no horizontal overflow at 390 px with ${heads} head(s); every table is visible or scrolls`, async ({ env }) => {
    const { page, problems } = await env.page({ viewport: { width: 390, height: 844 } });
    await page.goto(`${env.base}/?heads=${heads}&tokens=one+two+three+four+five+six`);
    await settled(page);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.is(overflow, 0);
    await checkTablesFit(page, heads * 4 + 7);
    assert.equal(problems, []);
    await page.context().close();
  });
}

for (const width of [1366, 720]) {
  test(`with 4 heads at ${width} px every head's tables are fully visible or scrollable`, async ({ env }) => {
    const { page, problems } = await env.page({ viewport: { width, height: 900 } });
    await page.goto(`${env.base}/?heads=4&tokens=a+b+c+d+e+f+g+h`);
    await settled(page);
    assert.is(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth), 0);
    await checkTablesFit(page, 4 * 4 + 7);
    assert.equal(problems, []);
    await page.context().close();
  });
}

// Every table is inside the explorer's width, or its scroll box is (and scrolls).
async function checkTablesFit(page, expected) {
  const report = await page.$eval(E, async (el) => {
    const frames = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    const out = [];
    // Each table is looked at on screen, as a reader sees it (off screen, sections skip rendering).
    for (const f of el.shadowRoot.querySelectorAll('figure.matrix')) {
      f.scrollIntoView({ block: 'center' });
      await frames();
      const host = el.getBoundingClientRect();
      const box = f.querySelector('.scroll');
      const r = f.querySelector('table').getBoundingClientRect();
      const b = box.getBoundingClientRect();
      const inside = r.left >= host.left - 1 && r.right <= host.right + 1;
      // A table that scrolls says so: its caption reads "scroll →" and its cut edge fades.
      const scrolls = box.scrollWidth > box.clientWidth && getComputedStyle(box).overflowX === 'auto' && b.right <= host.right + 1 &&
        f.classList.contains('overflowing') && getComputedStyle(f.querySelector('figcaption .shape'), '::after').content.includes('scroll');
      out.push({ id: f.dataset.id, ok: inside || scrolls });
    }
    return out;
  });
  assert.is(report.length, expected, 'tables');
  assert.equal(report.filter((r) => !r.ok), []);
}

test('a table\'s Copy button sits by the table, not at the far edge of the page', async ({ env }) => {
  const { page, context } = await env.page({ viewport: { width: 1366, height: 900 } });
  await page.goto(`${env.base}/`);
  await settled(page);
  // The figure is as wide as its table, or as its caption where that is wider.
  const gaps = await page.$eval(E, (el) => [...el.shadowRoot.querySelectorAll('figure.matrix')].map((f) => {
    const copy = f.querySelector('details.copy').getBoundingClientRect();
    return {
      id: f.dataset.id,
      gap: copy.right - f.querySelector('table').getBoundingClientRect().right,
      slack: copy.left - f.querySelector('figcaption .shape').getBoundingClientRect().right,
    };
  }));
  assert.ok(gaps.length >= 8);
  for (const { id, gap, slack } of gaps) assert.ok(gap <= 8 || slack <= 12, `${id}: Copy ends ${gap} px right of its table`);
  await context.close();
});

test('disallowed pairs: −∞ logits and hatched weights, in the page and the export title', async ({ env }) => {
  const { page, problems } = await env.page();
  await page.goto(`${env.base}/?causal=1&mask=1111.1111.0111.1111`);
  await settled(page);
  await page.waitForFunction((sel) => document.querySelector(sel).state.weights.get(2, 0) === 0, E);
  const scaled = await page.$$eval(`${E} table[data-id="scaled-0"] tbody tr`, (rows) => rows.map((r) => [...r.querySelectorAll('td[data-i]')].map((td) => td.textContent)));
  assert.equal(scaled.map((row) => row.map((x) => x === '−∞')), [
    [false, true, true, true], [false, false, true, true], [true, false, false, true], [false, false, false, false]]);
  const hatched = await page.$$eval(`${E} table[data-id="weights-0"] td.masked`, (tds) => tds.length);
  assert.is(hatched, 7);
  const svg = await page.$eval(E, (el) => el.toSVG());
  assert.match(svgTitle(svg), /causal, mask: 1 pair masked, no window, scale 0\.577/);
  assert.is((svg.match(/>−∞</g) ?? []).length, 7);
  assert.equal(problems, []);
  await page.context().close();
});

test('a drag leaves off-screen tables for later: they show the current numbers when they come on screen and when the drag ends', async ({ env }) => {
  const { page, context, problems } = await env.page({ viewport: { width: 1366, height: 900 }, reducedMotion: 'reduce' });
  await page.goto(`${env.base}/?tokens=${Array.from({ length: 16 }, (_, i) => `t${i}`).join('+')}&heads=2`);
  await settled(page);
  // Which cells of the scaled scores and of head 2's weights differ from the element's state.
  const wrong = () => page.evaluate(async (sel) => {
    const { fixed } = await import('/web/worked/format.js');
    const el = document.querySelector(sel);
    const out = [];
    for (const [id, m, digits] of [['scaled-0', el.state.scaled[0], 3], ['weights-1', el.state.weights[1], 4]]) {
      const tds = el.shadowRoot.querySelectorAll(`table[data-id="${id}"] td[data-i]`);
      tds.forEach((td, k) => { if (td.textContent !== fixed(m.data[k], digits)) out.push(`${id}[${k}] ${td.textContent} != ${fixed(m.data[k], digits)}`); });
    }
    return out;
  }, E);
  const drag = (positions) => page.evaluate(async ({ sel, positions }) => {
    const slider = document.querySelector(sel).shadowRoot.querySelector('input[type="range"]');
    for (const p of positions) {
      await new Promise((r) => requestAnimationFrame(r));
      slider.value = String(p);
      slider.dispatchEvent(new Event('input', { bubbles: true }));
    }
  }, { sel: E, positions });
  await drag([0.5, 1, 1.5, 2]);
  // Still dragging (no change event, no pause): bring the scaled scores on screen.
  await page.evaluate((sel) => {
    const box = document.querySelector(sel).shadowRoot.querySelector('section.step-scaled');
    window.scrollTo(0, box.getBoundingClientRect().top + scrollY);
    document.querySelector(sel).shadowRoot.querySelector('input[type="range"]').dispatchEvent(new Event('input', { bubbles: true }));
  }, E);
  // The IntersectionObserver reports the table on screen a few frames later
  // (more on a loaded machine); the drag goes on meanwhile, an input event
  // each frame, so what is checked is the paint during the drag.
  const onScreen = await page.evaluate(async (sel) => {
    const { fixed } = await import('/web/worked/format.js');
    const el = document.querySelector(sel);
    const slider = el.shadowRoot.querySelector('input[type="range"]');
    let out = [];
    for (let frame = 0; frame < 120; frame++) {
      slider.dispatchEvent(new Event('input', { bubbles: true }));
      await new Promise((r) => requestAnimationFrame(r));
      const m = el.state.scaled[0];
      out = [];
      // During a drag a large table writes the cells in view (its scroll box
      // and the window); the rest follow when the drag ends (checked below).
      const table = el.shadowRoot.querySelector('table[data-id="scaled-0"]');
      const box = table.closest('.scroll').getBoundingClientRect();
      table.querySelectorAll('td[data-i]').forEach((td, k) => {
        const r = td.getBoundingClientRect();
        const inView = r.right > box.left && r.left < box.right && r.bottom > Math.max(box.top, 0) && r.top < Math.min(box.bottom, innerHeight);
        if (inView && td.textContent !== fixed(m.data[k], 3)) out.push(`scaled-0[${k}] ${td.textContent} != ${fixed(m.data[k], 3)}`);
      });
      if (out.length === 0) break;
    }
    return out;
  }, E);
  assert.equal(onScreen, [], 'a table that came on screen during the drag shows the current numbers');
  await drag([-1, -2]);
  await page.$eval(E, (el) => el.shadowRoot.querySelector('input[type="range"]').dispatchEvent(new Event('change', { bubbles: true })));
  assert.equal(await wrong(), [], 'after the drag every table shows the current numbers');
  await drag([3]);
  await page.waitForTimeout(400);
  assert.equal(await wrong(), [], 'a pause ends a drag too');
  // What the lines view says follows once the drag ends.
  const spoken = await page.evaluate(async (sel) => {
    const { attendsMost } = await import('/web/worked/text.js');
    const el = document.querySelector(sel);
    return [...el.shadowRoot.querySelectorAll('figure.lines text.query')].map((label, i) => ({
      said: label.getAttribute('aria-label'),
      want: el.state.weights.map((m, h) => `head ${h + 1}: ${attendsMost(el.state.tokens, m, i)}`).join('; '),
    }));
  }, E);
  assert.is(spoken.length, 16);
  for (const { said, want } of spoken) assert.is(said, want);
  assert.equal(problems, []);
  await context.close();
});

test.run();
